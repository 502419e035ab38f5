"""The whole command line fuzzed: random modes and options, odd spellings of numbers, and
special paths (devices, a FIFO, links, /proc, a directory, a missing parent) in every path
argument. Whatever is drawn, `verify` keeps its contract: only the documented exit codes
(1 only for a verdict), one line and no traceback for an error, no hang, and nothing
replaced that is not a regular file, nothing written outside the working directory.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leadercheck.checker.app.main import main
from tests.helpers import deadline, snapshot, special_path

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "counterexamples" / "lease-no-fencing.json"
NUMBERS = ["3", "0", "1", "\uff13", "\u0663", "1_000", "-1", "nan", "inf", "", "1e3", "9" * 30]
SPECIAL = [
    "/dev/full", "/dev/zero", "/dev/null", "proc", "fifo", "symlink", "dangling", "directory",
    "file", "missing-parent", "new",
]  # fmt: skip  # tests/helpers.py's special_path makes each
MADE = {"fifo", "symlink", "target", "dangling", "directory", "file"}  # what the base holds
PROTOCOLS = ["lease-fencing", "bully", "no-such-protocol"]


@st.composite
def command_lines(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A mode and its arguments, every path a special one or a plain new one."""
    path = st.sampled_from(SPECIAL)
    number = st.sampled_from(NUMBERS)
    mode = draw(st.sampled_from(["check", "gate", "list", "replay", "explain", "plot"]))
    args: list[str] = []
    if mode == "check":
        args = ["--protocol", draw(st.sampled_from(PROTOCOLS)), "--max-states", "3000"]
        options: dict[str, Any] = {
            "--max-depth": number, "--nodes": number, "--workers": number, "--seed": number,
            "--out": path, "--html": path, "--checkpoint": path, "--resume": path,
            "--max-memory": st.sampled_from(["1G", "0", "x", "1" * 50]),
            "--strategy": st.sampled_from(["bfs", "simulate", "bitstate", "nope"]),
            "-p": st.sampled_from(["nodes=3", "ttl=2", "x", "nodes=\uff13"]),
            "--json": None, "--symmetry": None, "--por": None,
        }  # fmt: skip
        for flag in draw(st.lists(st.sampled_from(sorted(options)), max_size=4)):
            value = options[flag]
            args += [flag] if value is None else [flag, draw(value)]
    elif mode == "gate":  # always refused before the gate runs: one special path at least
        flag = draw(st.sampled_from(["--junit", "--readme", "--out", "--html"]))
        runs = (
            {"new", "file"}
            if flag in ("--junit", "--readme")
            else {"new", "directory", "missing-parent"}
        )
        kind = draw(st.sampled_from([k for k in SPECIAL if k not in runs]))
        args = ["--all", flag, "{" + kind + "}"]
        if draw(st.booleans()):
            args += ["--max-states", draw(number)]
    elif mode == "list":
        args = ["--list"] + draw(st.sampled_from([[], ["--json"], ["--nodes", "3"]]))
    elif mode in ("replay", "explain"):
        args = [mode, "{" + draw(path) + "}"]
        if draw(st.booleans()):
            args += ["--model", "{" + draw(path) + "}"]
    else:
        kind = draw(st.sampled_from([k for k in SPECIAL if k not in ("new", "file")]))
        args = ["message-cost", "--plot", "{" + kind + "}"]  # refused: no minutes of measures
    return mode, args


@settings(
    max_examples=120, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)  # fmt: skip
@given(drawn=command_lines())
def test_any_command_line_keeps_the_contract(drawn: tuple[str, list[str]]) -> None:
    mode, template = drawn
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        paths = {kind: str(special_path(base, kind)) for kind in SPECIAL}
        args = [a[1:-1] if a.startswith("{") else a for a in template]
        args = [paths.get(a, a) for a in args]
        # a regular file may be replaced (atomically) when it is the output asked for
        watched = [paths[k] for k in SPECIAL if k not in ("new", "missing-parent", "file")]
        before = {p: snapshot(Path(p)) for p in watched}
        cwd = os.getcwd()
        os.chdir(base)
        try:
            with deadline(120):
                result = CliRunner().invoke(main, args)
        finally:
            os.chdir(cwd)
        after = {p: snapshot(Path(p)) for p in watched}
        assert after == before, (args, "a special path was replaced")
        code = result.exit_code
        assert code in (0, 1, 2, 3), (args, code, result.output)
        assert code != 1 or mode in ("check", "replay"), (args, result.output)
        assert "Traceback" not in result.output, (args, result.output)
        assert isinstance(result.exception, SystemExit | None), (args, result.exception)
        if code == 2:
            lines = [ln for ln in result.stderr.splitlines() if not ln.startswith("warning:")]
            assert len(lines) == 1 and lines[0].startswith("error: "), (args, result.stderr)
        for dev in ("/dev/full", "/dev/zero", "/dev/null"):
            assert stat.S_ISCHR(os.lstat(dev).st_mode)
        assert {p.name for p in base.iterdir()} >= MADE
        for written in base.iterdir():  # only the outputs asked for, in the working directory
            assert written.name in MADE | {"new", "counterexamples"}, (args, written)

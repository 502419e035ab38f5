"""The whole command line fuzzed: random modes and options, odd spellings of numbers, and
special paths (devices, a FIFO, links, /proc, a directory, a missing parent) in every path
argument. Whatever is drawn, `verify` keeps its contract: only the documented exit codes
(1 only for a verdict), one line and no traceback for an error, no hang, and nothing
replaced that is not a regular file, nothing written outside the working directory.
"""

from __future__ import annotations

import os
import signal
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leadercheck.checker.app.main import main

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "counterexamples" / "lease-no-fencing.json"
NUMBERS = ["3", "0", "1", "\uff13", "\u0663", "1_000", "-1", "nan", "inf", "", "1e3", "9" * 30]
SPECIAL = [
    "/dev/full", "/dev/zero", "/dev/null", "/proc/self/status", "fifo", "link-to-file",
    "dangling-link", "dir", "file", "missing/parent/x", "new",
]  # fmt: skip
PROTOCOLS = ["lease-fencing", "bully", "no-such-protocol"]


def _path(kind: str, base: Path) -> str:
    return kind if kind.startswith("/") else str(base / kind)


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
            else {"new", "dir", "missing/parent/x"}
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


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    def expired(signum: int, frame: Any) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _snapshot(paths: list[str]) -> dict[str, tuple[int, int] | None]:
    found: dict[str, tuple[int, int] | None] = {}
    for p in paths:
        try:
            st_ = os.lstat(p)
            found[p] = (st_.st_mode, st_.st_ino)
        except FileNotFoundError:
            found[p] = None
    return found


@settings(
    max_examples=120, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)  # fmt: skip
@given(drawn=command_lines())
def test_any_command_line_keeps_the_contract(drawn: tuple[str, list[str]]) -> None:
    mode, template = drawn
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        (base / "dir").mkdir()
        (base / "file").write_text("a regular file\n")
        os.mkfifo(base / "fifo")
        (base / "link-to-file").symlink_to(base / "file")
        (base / "dangling-link").symlink_to(base / "nowhere")
        args = [a[1:-1] if a.startswith("{") else a for a in template]
        args = [_path(a, base) if a in SPECIAL else a for a in args]
        # a regular file may be replaced (atomically) when it is the output asked for
        watched = [_path(k, base) for k in SPECIAL if k not in ("new", "missing/parent/x", "file")]
        before = _snapshot(watched)
        cwd = os.getcwd()
        os.chdir(base)
        try:
            with deadline(120):
                result = CliRunner().invoke(main, args)
        finally:
            os.chdir(cwd)
        after = _snapshot(watched)
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
        assert {p.name for p in base.iterdir()} >= {
            "dir", "file", "fifo", "link-to-file", "dangling-link",
        }  # fmt: skip
        for written in base.iterdir():  # only the outputs asked for, in the working directory
            assert written.name in {
                "dir", "file", "fifo", "link-to-file", "dangling-link", "new", "counterexamples",
            }, (args, written)  # fmt: skip

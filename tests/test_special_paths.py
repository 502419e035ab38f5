"""Special paths in every path argument of the command line: a device, a FIFO, a link, /proc,
a directory where a file goes (and a file where a directory goes), a missing place. Each is
refused before any work: exit 2, one line, no traceback, no hang, nothing replaced, nothing
written beside it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from leadercheck.checker.app.main import main
from tests.helpers import deadline, special_path

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "counterexamples" / "lease-no-fencing.json"
P = "{path}"

# Where a file is written, a directory is written into, or a file is read.
FILE_OUT = [
    ["--all", "--junit", P],
    ["--all", "--readme", P],
    ["message-cost", "--plot", P],
    ["conform", str(TRACE), "--against", "etcd", "--timeline", P],
]
DIR_OUT = [
    ["--all", "--out", P],
    ["--all", "--html", P],
    ["--protocol", "lease-fencing", "--out", P],
    ["--protocol", "lease-fencing", "--html", P],
    ["--protocol", "raft-election", "--checkpoint", P],
]
FILE_IN = [
    ["replay", P],
    ["explain", P],
    ["conform", P, "--against", "etcd"],
]
DEVICES = ["/dev/full", "/dev/zero", "/dev/null"]
FILE_KINDS = ["fifo", "symlink", "directory", "missing-parent"]
CASES = (
    [(line, kind) for line in FILE_OUT for kind in [*DEVICES, *FILE_KINDS]]
    + [(line, kind) for line in DIR_OUT for kind in [*DEVICES, "fifo", "symlink", "file", "proc"]]
    + [
        (line, kind)
        for line in FILE_IN
        for kind in [*DEVICES, "fifo", "directory", "missing", "proc"]
    ]
)


def _state(here: Path, path: Path) -> tuple[Any, ...]:
    """What must not change: the named entry (type, inode) and everything in the scratch dir."""
    try:
        st = os.lstat(path)
        entry: tuple[int, int] | None = (st.st_mode, st.st_ino)
    except OSError:
        entry = None
    inside = sorted(
        (str(p.relative_to(here)), os.lstat(p).st_ino, os.lstat(p).st_size) for p in here.rglob("*")
    )
    return entry, tuple(inside)


@pytest.mark.parametrize(
    ("line", "kind"), CASES, ids=[f"{' '.join(line)}-{kind}" for line, kind in CASES]
)
def test_a_special_path_is_refused_in_one_line_before_any_work(line: list[str], kind: str) -> None:
    before_cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        here = Path(tmp)
        path = special_path(here, kind)
        argv = [str(path) if a == P else a for a in line]
        if "--out" not in argv and argv[0] not in ("replay", "explain", "conform"):
            argv += ["--out", str(here / "out")]  # else the default would be ./counterexamples
        before = _state(here, path)
        os.chdir(here)
        try:
            with deadline(20.0):
                result = CliRunner().invoke(main, argv)
        finally:
            os.chdir(before_cwd)
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            argv,
            result.exc_info,
        )
        assert result.exit_code == 2, (argv, result.output)
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (argv, result.stderr)
        assert "Traceback" not in result.output
        assert _state(here, path) == before, argv  # nothing replaced, nothing written

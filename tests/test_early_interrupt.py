"""Ctrl-C from the first instant: a SIGINT that lands while `verify` is still loading the
checker, z3 and the models ends it with exit 3 and one line, never a KeyboardInterrupt
traceback or death by the signal; the same across `--checkpoint`'s re-run of the process.

The delays below are not a wait for the process: whatever moment each lands in (Python's
imports, click's parsing, the search), the contract is the same, so the test asserts it for
every one of them on any machine, however busy.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.helpers import run_interrupted

ROOT = Path(__file__).resolve().parents[1]
VERIFY = [sys.executable, "-m", "leadercheck.checker.app"]
LONG = ["--protocol", "raft", "--nodes", "4"]  # minutes of search: the signal lands first


@pytest.mark.parametrize("delay", [0.1, 0.3, 0.6])
@pytest.mark.parametrize("checkpoint", [False, True])
def test_ctrl_c_while_verify_starts_exits_3_in_one_line(
    delay: float, checkpoint: bool, tmp_path: Path
) -> None:
    extra = ["--checkpoint", str(tmp_path / "run.ckpt")] if checkpoint else []
    done = run_interrupted([*VERIFY, *LONG, "--out", str(tmp_path), *extra], ROOT, after=delay)
    assert done.returncode == 3, (done.returncode, done.stderr[-600:])
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr
    if not done.stdout.strip():  # stopped before the search began: the one line
        assert done.stderr.strip().splitlines()[-1] == "interrupted", done.stderr[-300:]

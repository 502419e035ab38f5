"""Ctrl-C from the first instant: a SIGINT that lands while `verify` is still loading the
checker, z3 and the models ends it with exit 3 and one line, never a KeyboardInterrupt
traceback or death by the signal; the same across `--checkpoint`'s re-run of the process.

The delays count from the instant the launcher has taken the stop signals (its first act,
before the heavy imports): whatever moment each then lands in (the checker's, z3's and the
models' imports, click's parsing, the re-run, the search), the contract is the same, so the
test asserts it for every one of them on any machine, however busy. Before that instant
the interpreter is still starting, which no code of the product runs in.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from leadercheck.checker.engine import hashing
from tests.helpers import run_interrupted

ROOT = Path(__file__).resolve().parents[1]
VERIFY = [sys.executable, "-m", "leadercheck.checker.app"]
LONG = ["--protocol", "raft", "--nodes", "4"]  # minutes of search: the signal lands first


@pytest.mark.parametrize("delay", [0.0, 0.1, 0.3, 0.6])
@pytest.mark.parametrize("checkpoint", [False, True])
def test_ctrl_c_while_verify_starts_exits_3_in_one_line(
    delay: float, checkpoint: bool, tmp_path: Path
) -> None:
    extra = ["--checkpoint", str(tmp_path / "run.ckpt")] if checkpoint else []
    args = [*VERIFY, *LONG, "--out", str(tmp_path), *extra]
    done = run_interrupted(args, ROOT, after=delay, launched=True)
    assert done.returncode == 3, (done.returncode, done.stderr[-600:])
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr
    if not done.stdout.strip():  # stopped before the search began: the one line
        assert done.stderr.strip().splitlines()[-1] == "interrupted", done.stderr[-300:]


def test_a_signal_sent_while_verify_re_executes_itself_is_delivered_after_it(
    tmp_path: Path,
) -> None:
    """`--checkpoint` re-executes verify with pinned hashing; a Ctrl-C sent in that instant
    (here: by the process itself, just before its exec) is held across the exec and ends
    the new process at once, never lost while a search of minutes runs."""
    code = (
        "import os, signal, sys\n"
        "from leadercheck.checker.engine import hashing\n"
        "real = os.execvpe\n"
        "def exec_after_a_signal(*args):\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    real(*args)\n"
        "os.execvpe = exec_after_a_signal\n"
        "signal.signal(signal.SIGINT, lambda *a: sys.exit('the signal came before the exec'))\n"
        f"hashing.pin_hashing([*{LONG!r}, '--out', {str(tmp_path)!r}])\n"
    )
    env = {k: v for k, v in os.environ.items() if k != hashing.PINNED}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (3, "interrupted\n"), done.stderr
    assert list(tmp_path.iterdir()) == []

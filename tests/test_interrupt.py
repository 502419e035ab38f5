"""Ctrl-C, as a real SIGINT to a real process, in every phase: exit 3 and the statistics so
far, never a traceback, never exit 1, and no worker process left behind."""

from __future__ import annotations

import re
import signal
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers import run_interrupted

ROOT = Path(__file__).resolve().parents[1]
VERIFY = [sys.executable, "-c", "from leadercheck.checker.app.main import main; main()"]


def _interrupted_in(phase: str, signame: str = "SIGINT") -> str:
    """A script that runs `verify` with a real SIGINT (or `signame`) raised inside `phase`."""
    sampling = "leadercheck.checker.engine.strategies.sampling"
    hook = {
        "search": "leadercheck.checker.engine.strategies.bfs.FairnessGraph.visit",
        "fair cycles": "leadercheck.checker.engine.fair_cycles.Judge.judge",
        "walks": f"{sampling}.walks.WalkWorker._walk",
        "bitstate": f"{sampling}.depth_first.BitstateWorker._arrived",
        "shorten": f"{sampling}.shorten.replay_labels",
        "between gate cases": "leadercheck.checker.app.gate.case_lines",
    }[phase]
    module, _, attr = hook.rpartition(".")
    owner, _, cls = module.rpartition(".")
    return textwrap.dedent(
        f"""
        import os, signal, sys, time
        import {owner} as owner
        from leadercheck.checker.app.main import main
        target = getattr(owner, {cls!r})
        original = getattr(target, {attr!r})
        calls = []
        def hooked(*args, **kwargs):
            calls.append(1)
            if len(calls) == 50:
                os.kill(os.getpid(), signal.{signame})
                time.sleep(5)
            return original(*args, **kwargs)
        setattr(target, {attr!r}, hooked)
        main()
        """
    )


def _script(phase: str, *args: str) -> list[str]:
    return [sys.executable, "-c", _interrupted_in(phase), *args]


def test_ctrl_c_in_the_search_phase(tmp_path: Path) -> None:
    done = run_interrupted(
        _script("search", "--protocol", "raft", "--out", str(tmp_path)), tmp_path
    )
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    assert "(interrupted)" in done.stdout and "verdict: INCOMPLETE" in done.stdout
    assert "  search: " in done.stdout


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP"])
def test_kill_or_a_closed_terminal_ends_the_search_as_ctrl_c_does(
    signame: str, tmp_path: Path
) -> None:
    """`kill`, a CI timeout, a closed terminal: the same wind-down, exit 3, not death."""
    script = [sys.executable, "-c", _interrupted_in("search", signame)]
    done = run_interrupted([*script, "--protocol", "raft", "--out", str(tmp_path)], tmp_path)
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    assert "(interrupted)" in done.stdout and "verdict: INCOMPLETE" in done.stdout


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_sigterm_to_the_process_group_stops_a_partitioned_search_as_incomplete(
    tmp_path: Path,
) -> None:
    """A supervisor's SIGTERM reaches the workers too and ends them: that is the stop the
    coordinator was asked for (exit 3), not a worker's failure (exit 2)."""
    args = [*VERIFY, "--protocol", "raft", "--nodes", "4", "--workers", "2", "--progress", "--out",
            str(tmp_path)]  # fmt: skip
    done = run_interrupted(args, tmp_path, ready="progress:", signum=signal.SIGTERM, group=True)
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr and "ended unexpectedly" not in done.stderr
    assert "verdict: INCOMPLETE" in done.stdout


def test_ctrl_c_in_the_fair_cycle_phase(tmp_path: Path) -> None:
    # judge() runs once per liveness property: bully-flapping has one, so hook its 1st call
    script = _interrupted_in("fair cycles").replace("== 50", "== 1")
    args = [sys.executable, "-c", script, "--protocol", "bully-flapping", "--out", str(tmp_path)]
    done = run_interrupted(args, tmp_path)
    assert done.returncode == 1, done.stderr  # single-leader was found VIOLATED first
    assert "Traceback" not in done.stderr
    assert "leadership-settles  INCOMPLETE  interrupted" in done.stdout
    assert "single-leader       VIOLATED" in done.stdout  # what it found is still reported
    assert "fair cycles: " in done.stdout and "(interrupted)" in done.stdout


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_ctrl_c_stops_a_partitioned_search_and_its_workers(tmp_path: Path) -> None:
    args = [*VERIFY, "--protocol", "raft", "--nodes", "4", "--workers", "2", "--progress", "--out",
            str(tmp_path)]  # fmt: skip
    done = run_interrupted(args, tmp_path, ready="progress:")
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    assert "verdict: INCOMPLETE" in done.stdout


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_ctrl_c_stops_the_gate(tmp_path: Path) -> None:
    done = run_interrupted([*VERIFY, "--all", "--out", str(tmp_path / "out")], tmp_path,
                           ready="expected")  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    assert "interrupted during " in done.stderr and "nothing written" in done.stderr
    assert "gate:" not in done.stdout  # it stops: no verdict on the rest
    assert not (tmp_path / "out").exists()


def test_ctrl_c_between_two_cases_of_the_gate_stops_it_in_one_line(tmp_path: Path) -> None:
    """Between two searches (the first case's row printed, the next not begun) the gate
    stops as it does within one: where, how far, nothing written (CI caught it escaping as a
    bare 'interrupted' under load)."""
    script = _interrupted_in("between gate cases").replace("== 50", "== 1")
    args = [sys.executable, "-c", script, "--all", "--out", str(tmp_path / "out")]
    done = run_interrupted(args, tmp_path)
    assert done.returncode == 3, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert re.fullmatch(
        r"interrupted during lease-fencing, after 0 of \d+ protocols; nothing written", line
    ), line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("phase", "args"),
    [
        ("walks", ["--protocol", "lease-fencing", "--strategy", "simulate", "--time", "60"]),
        ("bitstate", ["--protocol", "lease-fencing", "--nodes", "4", "--strategy", "bitstate"]),
    ],
)
def test_ctrl_c_in_a_sampled_search(phase: str, args: list[str], tmp_path: Path) -> None:
    done = run_interrupted(_script(phase, *args, "--out", str(tmp_path)), tmp_path)
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    assert "(interrupted)" in done.stdout and "verdict: INCOMPLETE" in done.stdout
    assert f"{'simulation' if phase == 'walks' else 'bitstate'}: seed 1" in done.stdout


def test_ctrl_c_while_shortening_keeps_the_violation_as_found(tmp_path: Path) -> None:
    script = _interrupted_in("shorten").replace("== 50", "== 3")
    args = ["--protocol", "raft-volatile-vote", "--nodes", "5", "--strategy", "simulate"]
    done = run_interrupted([sys.executable, "-c", script, *args, "--out", str(tmp_path)], tmp_path)
    assert done.returncode == 1, done.stderr  # one run, one verdict: VIOLATED, exit 1
    assert "Traceback" not in done.stderr and "verdict: VIOLATED" in done.stdout
    assert "single-leader   VIOLATED    counterexample of " in done.stdout
    assert "shorten: " in done.stdout and "(interrupted)" in done.stdout
    assert (tmp_path / "raft-volatile-vote.json").exists()  # a real trace, written


def test_ctrl_c_stops_a_swarm_and_its_workers(tmp_path: Path) -> None:
    args = [*VERIFY, "--protocol", "lease-fencing", "--swarm", "2", "--time", "60", "--progress"]
    done = run_interrupted([*args, "--out", str(tmp_path)], tmp_path, ready="progress:")
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    assert "a swarm of 2 diversified workers" in done.stdout
    assert "verdict: INCOMPLETE" in done.stdout

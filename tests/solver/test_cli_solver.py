"""`verify --bmc` and `verify --synthesize` from the command line: verdicts, files, exit
codes, and UNKNOWN (exit 3) whenever z3 runs out of time."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from leadercheck.checker.app.main import main


def test_bmc_finds_the_forgetvote_violation_and_writes_a_replayable_trace(tmp_path: Path) -> None:
    args = ["--protocol", "raft-election", "--bmc", "8", "-p", "MaxTerm=2"]
    args += ["-p", "variant=forgetvote", "--out", str(tmp_path)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert "single-leader (always) within 8 steps: z3 SAT (counterexample of 8 steps)" in (
        result.output
    )
    assert "explicit VIOLATED (counterexample of 8 steps)" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "raft-election.bmc.dot",
        "raft-election.bmc.json",
        "raft-election.bmc.svg",
    ]
    saved = tmp_path / "raft-election.bmc.json"
    assert len(json.loads(saved.read_text())["steps"]) == 9
    replayed = CliRunner().invoke(main, ["replay", str(saved)])
    assert replayed.exit_code == 1, replayed.output  # the violation reproduces
    assert "single-leader is broken again" in replayed.output


def test_bmc_of_a_correct_model_holds_within_the_bound(tmp_path: Path) -> None:
    args = ["--protocol", "lease-bench", "--bmc", "6", "--out", str(tmp_path)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "no-stale-write (always) within 6 steps: z3 UNSAT" in result.output
    assert list(tmp_path.iterdir()) == []  # witnesses are printed, not written


def test_bmc_out_of_time_is_unknown(tmp_path: Path) -> None:
    args = ["--protocol", "raft-election", "--bmc", "30", "--solver-timeout", "0.2"]
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path)])
    assert result.exit_code == 3, result.output
    assert "single-leader (always) within 30 steps: z3 UNKNOWN" in result.output
    assert "UNDECIDED" in result.output and "agree" not in result.output.split("\n")[1]


def test_bmc_needs_an_encoding() -> None:
    result = CliRunner().invoke(main, ["--protocol", "bully", "--bmc", "3"])
    assert result.exit_code == 2
    assert "no symbolic encoding of 'bully'" in result.output


def test_synthesize_prints_the_region_and_a_violating_assignment() -> None:
    result = CliRunner().invoke(main, ["--protocol", "lease-no-fencing", "--synthesize"])
    assert result.exit_code == 0, result.output
    assert "safe exactly when: lease * (1 + drift) + pause <= ttl" in result.output
    assert "violating assignment: lease=2, ttl=3, drift=1/2, pause=1" in result.output


def test_synthesize_out_of_time_is_unknown_never_a_region() -> None:
    args = ["--protocol", "lease-no-fencing", "--synthesize", "--solver-timeout", "0.0001"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 3, result.output
    assert "UNKNOWN" in result.output and "safe exactly when" not in result.output


def test_synthesize_refuses_a_protocol_without_a_timing_problem_and_parameters() -> None:
    none = CliRunner().invoke(main, ["--protocol", "raft", "--synthesize"])
    assert none.exit_code == 2 and "no timing synthesis for 'raft'" in none.output
    sized = CliRunner().invoke(
        main, ["--protocol", "lease-no-fencing", "--synthesize", "-p", "ttl=3"]
    )
    assert sized.exit_code == 2 and "covers every cluster size" in sized.output
    gate = CliRunner().invoke(main, ["--all", "--prove"])
    assert (
        gate.exit_code == 2
        and "--all and --prove/--bmc/--synthesize exclude each other" in gate.output
    )

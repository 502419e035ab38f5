"""The user-model benchmark (checker/app/benchmarks/): Paxos Commit as a user writes it, the
same protocol on one int a state, and the plain breadth-first program over those ints give
one count, TLC's at the TLA+ Examples' size, so `verify bench --user-model` compares the
checker with a loop over the very same successors."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from leadercheck.checker.app.benchmarks import paxos_plain, user_model
from leadercheck.checker.app.benchmarks.paxos_commit import (
    PROPERTIES,
    PaxosCommit,
    PaxosCommitBits,
    search_user_states,
)
from leadercheck.checker.app.main import main
from leadercheck.checker.engine.settings import Reductions
from leadercheck.checker.engine.strategies.bfs import check
from leadercheck.checker.properties import bind
from leadercheck.checker.result import Verdict


@pytest.mark.parametrize("size", [(1, 1, 1), (1, 3, 2), (2, 1, 2), (2, 3, 1)])
def test_the_model_its_int_twin_and_the_plain_program_agree(size: tuple[int, int, int]) -> None:
    plain = paxos_plain.search(*size)
    assert search_user_states(*size) == plain
    for model, exact in ((PaxosCommit(*size), False), (PaxosCommitBits(*size), True)):
        result = check(model, bind(PROPERTIES, model), reductions=Reductions(exact=exact))
        stats = result.stats
        assert (stats.distinct_states, stats.generated_states, stats.depth) == plain
        assert [r.verdict for r in result.results] == [Verdict.HOLDS, Verdict.HOLDS]


@pytest.mark.slow  # 1.3 million states: about 40 s
def test_at_the_examples_size_the_count_is_tlcs() -> None:
    # PaxosCommit.cfg: RM = {r1, r2}, three acceptors, Ballot = {0, 1}; TLC: 1,321,761
    # distinct states, depth 28 counting the initial state as 1
    distinct, _, depth = paxos_plain.search(2, 3, 2)
    assert (distinct, depth + 1) == (1_321_761, 28)
    model = PaxosCommitBits(2, 3, 2)
    result = check(model, bind(PROPERTIES, model), reductions=Reductions(exact=True))
    assert result.stats.distinct_states == 1_321_761


def test_the_bench_times_both_pairs_on_one_count() -> None:
    pairs = user_model.side_by_side(size=(1, 3, 2), repeat=1)
    assert [p.states for p in pairs] == [user_model.USER, user_model.INTS]
    assert {c.states for p in pairs for c in (p.verify, p.bare)} == {1461}
    lines = user_model.user_model_lines(pairs)
    assert len(lines) == 4 and lines[2].startswith("| user's states | 1,461 |")


def test_the_bench_refuses_options_it_does_not_use() -> None:
    result = CliRunner().invoke(main, ["bench", "--user-model", "--spin"])
    assert result.exit_code == 2
    assert "--user-model runs its own model and searches" in result.output


@pytest.mark.parametrize("module", ["paxos_plain", "paxos_commit"])
def test_the_bare_loops_run_as_programs(module: str) -> None:
    name = f"leadercheck.checker.app.benchmarks.{module}"
    run = [sys.executable, "-m", name]
    done = subprocess.run([*run, "1", "3", "2"], capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout.split()) == (0, ["1461", "8844", "14"])
    done = subprocess.run([*run, "x"], capture_output=True, text=True, check=False)
    assert done.returncode == 2 and f"usage: {module}.py RMS ACCEPTORS BALLOTS" in done.stderr

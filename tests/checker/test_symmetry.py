"""Symmetry reduction: orbit counts, canonical representatives, traces mapped back."""

from __future__ import annotations

from itertools import permutations
from math import comb
from typing import Any

import pytest

from leadercheck.checker.engine.settings import Reductions
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.model import Model
from leadercheck.checker.properties import always, sometimes
from leadercheck.checker.search import check
from leadercheck.checker.symmetry import canonicalizer
from leadercheck.models.catalogue import lookup
from leadercheck.specs.expectations import load_expectations
from tests.toys import Counter, Tokens

SYMMETRY = Reductions(symmetry=True)


def _raft(**params: str) -> Any:
    entry = lookup("raft-election")
    return entry.build(entry.resolve(params))


def _reachable(model: Model[Any]) -> list[Any]:
    states: list[Any] = []
    check(model, [always("record", lambda s: states.append(s) is None)])
    return states


def _replays(model: Model[Any], trace: Any) -> bool:
    """Every step's action is enabled in the previous state and leads to the next."""
    return all(
        (step.action, step.state) in list(model.successors(before.state))
        for before, step in zip(trace.steps, trace.steps[1:], strict=False)
    )


@pytest.mark.parametrize("keys", [True, False])
@pytest.mark.parametrize(("n", "top"), [(2, 2), (3, 2), (4, 1), (4, 3)])
def test_one_state_per_orbit(n: int, top: int, keys: bool) -> None:
    plain = check(Tokens(n, top, keys), [always("ok", lambda s: True)])
    reduced = check(Tokens(n, top, keys), [always("ok", lambda s: True)], reductions=SYMMETRY)
    assert plain.stats.distinct_states == (top + 1) ** n
    assert reduced.stats.distinct_states == comb(n + top, top)
    assert reduced.stats.depth == plain.stats.depth == n * top


def test_counterexample_is_mapped_back_to_a_concrete_trace_that_replays() -> None:
    model = Tokens(3, 2)
    prop = always("no-1-2-2", lambda s: sorted(s) != [1, 2, 2])
    plain = check(model, [prop]).result("no-1-2-2").trace
    reduced = check(model, [prop], reductions=SYMMETRY).result("no-1-2-2").trace
    assert plain is not None and reduced is not None
    assert len(reduced) == len(plain) == 5
    assert reduced.steps[0].state == (0, 0, 0)
    assert sorted(reduced.last.state) == [1, 2, 2]
    assert _replays(model, reduced)


def test_a_model_without_symmetry_is_searched_unreduced() -> None:
    assert canonicalizer(Counter(5)) is None
    result = check(Counter(5), [always("ok", lambda s: True)], reductions=SYMMETRY)
    assert result.stats.distinct_states == 6


def test_groups_must_partition_the_node_positions() -> None:
    class Overlapping(Tokens):
        def symmetry_groups(self) -> list[list[int]]:
            return [[0, 1], [1, 2]]

    with pytest.raises(LeadercheckError, match="each node position"):
        check(Overlapping(3, 1), [always("ok", lambda s: True)], reductions=SYMMETRY)


def test_representatives_are_canonical_on_raft_election() -> None:
    """Every state of an orbit gets the same representative, which lies in the orbit."""
    model = _raft(N="3", NC="3", MaxTerm="2")
    states = _reachable(model)
    assert len(states) == 1588
    canonical = canonicalizer(model)
    assert canonical is not None
    group = list(permutations(range(3)))
    orbits = set()
    for s in states:
        orbit = {model.permute(s, p) for p in group}
        assert canonical(s) in orbit
        assert {canonical(t) for t in orbit} == {canonical(s)}
        orbits.add(min(orbit))  # the brute-force count of orbits
    reduced = check(model, [always("ok", lambda s: True)], reductions=SYMMETRY)
    assert reduced.stats.distinct_states == len(orbits) == 288


def test_raft_election_transitions_commute_with_renaming() -> None:
    """What makes the reduction sound: renaming a state renames its successor set."""
    model = _raft(N="3", NC="2", MaxTerm="2")
    groups = model.symmetry_groups()
    assert [list(g) for g in groups] == [[0, 1], [2]]
    swap = (1, 0, 2)
    for s in _reachable(model):
        renamed = {model.permute(t, swap) for t in model.next_states(s)}
        assert set(model.next_states(model.permute(s, swap))) == renamed


@pytest.mark.parametrize(
    "variant", ["correct", "noquorum", pytest.param("forgetvote", marks=pytest.mark.slow)]
)
def test_raft_election_verdicts_and_trace_lengths_survive_symmetry(variant: str) -> None:
    model = _raft(N="4", NC="3", MaxTerm="2", variant=variant)
    props = load_expectations().properties("raft-election")
    plain = check(model, props)
    reduced = check(model, props, reductions=SYMMETRY)
    for p, r in zip(plain.results, reduced.results, strict=True):
        assert r.verdict is p.verdict
        assert (r.trace is None) == (p.trace is None)
        if r.trace is not None and p.trace is not None:
            assert len(r.trace) == len(p.trace)
            assert _replays(model, r.trace)
    assert reduced.stats.distinct_states < plain.stats.distinct_states / 3


def test_sometimes_witness_under_symmetry() -> None:
    model = Tokens(4, 1)
    found = check(model, [sometimes("three", lambda s: sum(s) == 3)], reductions=SYMMETRY)
    trace = found.result("three").trace
    assert trace is not None and len(trace) == 3 and _replays(model, trace)

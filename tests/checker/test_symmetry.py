"""Symmetry reduction: orbit counts, canonical representatives, traces mapped back."""

from __future__ import annotations

import json
import re
from itertools import permutations
from math import comb
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from leadercheck.checker.app.main import main
from leadercheck.checker.engine.reductions.symmetry import canonicalizer, check_orbits
from leadercheck.checker.engine.settings import Reductions
from leadercheck.checker.engine.strategies.bfs import check
from leadercheck.checker.errors import LeadercheckError, ModelError
from leadercheck.checker.model import Model
from leadercheck.checker.properties import always, sometimes
from leadercheck.models.catalogue import lookup
from leadercheck.specs.expectations import load_expectations
from tests.toys import Counter, Tokens
from tests.user_models.frozen_votes import FrozenVotes, PartialOrder

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
    "variant",  # noquorum in the default suite (1.4 s); the others, 2.7 s and more, in -m slow
    [
        pytest.param(v, marks=pytest.mark.slow) if v != "noquorum" else v
        for v in ("correct", "noquorum", "forgetvote")
    ],
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


# -- the order that picks a representative: total, or refused in one line -------------

VOTES = str(Path(__file__).resolve().parents[1] / "user_models" / "frozen_votes.py")


def _orbits(model: Model[Any], n: int) -> int:
    """The orbits of the reachable states, by brute force: every renaming of every state."""
    group = list(permutations(range(n)))
    return len({frozenset(model.permute(s, p) for p in group) for s in _reachable(model)})


@pytest.mark.parametrize("n", [3, pytest.param(4, marks=pytest.mark.slow)])  # 4 nodes: 4 s
def test_states_holding_frozensets_store_one_state_per_orbit(n: int) -> None:
    """Frozensets compare as subsets; the default order_key orders them totally, so each
    orbit has one representative whichever member the search meets first."""
    model = FrozenVotes(n)
    orbits = _orbits(model, n)
    assert orbits == {3: 22, 4: 51}[n]
    canonical = canonicalizer(model)
    assert canonical is not None
    for s in _reachable(model):
        assert {canonical(model.permute(s, p)) for p in permutations(range(n))} == {canonical(s)}
    reduced = check(model, [always("ok", lambda s: True)], reductions=SYMMETRY)
    assert reduced.stats.distinct_states == orbits


def test_a_partial_order_key_is_refused_in_one_line() -> None:
    with pytest.raises(ModelError) as caught:
        check(PartialOrder(3), [always("ok", lambda s: True)], reductions=SYMMETRY)
    assert str(caught.value) == (
        "PartialOrder: order_key does not order two renamings of one state (at state[0].votes: "
        "frozenset({2}) vs frozenset({3}): frozensets compare only as subsets); give an "
        "order_key that orders every state totally"
    )


class _Keyed(Tokens):
    """Tokens with an order_key or node keys of the test's choosing."""

    def __init__(self, order: Any = None, keys: Any = None) -> None:
        super().__init__(3, 2, keys=False)
        self.order, self.keyed = order, keys

    def order_key(self, state: tuple[int, ...]) -> Any:
        return super().order_key(state) if self.order is None else self.order(state)

    def node_keys(self, state: tuple[int, ...]) -> Any:
        return () if self.keyed is None else self.keyed(state)


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (
            _Keyed(order=lambda s: 0),
            r"_Keyed: order_key gives two renamings of one state the same key \(at state\[0\]: "
            r"\d vs \d\); give an order_key that orders every state totally",
        ),
        (
            _Keyed(order=lambda s: s[0] if s[0] else None),
            r"_Keyed: the order_key values of two renamings of one state do not compare "
            r"\('<' not supported between .*\); give an order_key",
        ),
        (
            _Keyed(keys=lambda s: [frozenset({v, 9}) if v else frozenset() for v in s]),
            r"_Keyed: node_keys does not order two nodes of state \(.*\) \(frozenset\(.*\) vs "
            r"frozenset\(.*\): frozensets compare only as subsets\); give node keys that order "
            r"totally \(value_key of each, from checker.total_order\), or none",
        ),
        (
            _Keyed(keys=lambda s: [v or None for v in s]),
            r"_Keyed: the node_keys of state \(.*\) do not compare \(.*\); give node keys",
        ),
    ],
    ids=["constant-key", "key-types-mixed", "partial-node-keys", "node-keys-types-mixed"],
)
def test_an_order_that_does_not_decide_is_refused(model: Model[Any], message: str) -> None:
    with pytest.raises(ModelError) as caught:
        check(model, [always("ok", lambda s: True)], reductions=SYMMETRY)
    assert re.fullmatch(message + ".*", str(caught.value)), str(caught.value)
    assert "\n" not in str(caught.value)


class _Box:
    """A value of a class with its own equality, which the default order cannot see into."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Box) and other.n == self.n

    def __hash__(self) -> int:
        return hash(self.n)

    def __repr__(self) -> str:
        return f"_Box({self.n})"


class _Boxed(Tokens):
    def initial_states(self) -> list[Any]:
        return [tuple(_Box(0) for _ in range(self.n))]

    def successors(self, state: Any) -> Any:
        for action, nxt in super().successors(tuple(b.n for b in state)):
            yield action, tuple(_Box(v) for v in nxt)

    def permute(self, state: Any, perm: Any) -> Any:
        return tuple(_Box(v) for v in super().permute(tuple(b.n for b in state), perm))

    def node_keys(self, state: Any) -> Any:
        return ()


def test_the_default_order_refuses_to_tie_values_it_cannot_see_into() -> None:
    with pytest.raises(ModelError) as caught:
        check(_Boxed(3, 2), [always("ok", lambda s: True)], reductions=SYMMETRY)
    assert re.fullmatch(
        r"_Boxed: the default order_key does not order two renamings of one state \(at "
        r"state\[\d\]: _Box\(\d\) vs _Box\(\d\): it keys _Box values by their class alone\); "
        r"give an order_key that orders every state totally",
        str(caught.value),
    )


def test_check_orbits_finds_node_keys_that_stay_behind() -> None:
    """Keys by position, not carried by the renaming: one orbit, several representatives."""
    stay = _Keyed(keys=lambda s: list(range(len(s))))
    with pytest.raises(ModelError, match="_Keyed: --symmetry gives one orbit two representatives"):
        check_orbits(stay, _reachable(stay))
    assert check_orbits(FrozenVotes(3), _reachable(FrozenVotes(3))) == 94
    assert check_orbits(Counter(3), [0, 1]) == 0


def _verify(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_the_command_line_counts_orbits_and_refuses_a_partial_order(tmp_path: Path) -> None:
    out = str(tmp_path / "out")
    run = _verify("--model", VOTES, "--protocol", "votes", "-p", "nodes=4", "--symmetry", "--json")
    assert run.exit_code == 0, run.output
    assert json.loads(run.stdout)["stats"]["distinct_states"] == _orbits(FrozenVotes(4), 4) == 51
    refused = _verify("--model", VOTES, "--protocol", "votes-partial", "--symmetry", "--out", out)
    assert refused.exit_code == 2
    assert refused.stderr.startswith("error: PartialOrder: order_key does not order two renamings")
    assert len(refused.stderr.strip().splitlines()) == 1
    assert not Path(out).exists()


def test_lint_checks_the_order_of_a_declared_symmetry() -> None:
    ok = _verify("--model", VOTES, "--protocol", "votes", "--lint")
    assert ok.exit_code == 0, ok.output
    assert "; one representative per orbit (--symmetry) on 94 states" in ok.stdout
    refused = _verify("--model", VOTES, "--protocol", "votes-partial", "--lint")
    assert refused.exit_code == 2
    assert "PartialOrder: order_key does not order two renamings of one state" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1

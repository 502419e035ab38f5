"""Every state checked, not sampled (checker/engine/values.py): a state that is no value,
met first deep in a search, is a model error under every strategy, never a verdict or a
count; the error carries the trace that led there."""

from __future__ import annotations

from collections import deque
from typing import Any, NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leadercheck.checker import Action, Model, always, eventually
from leadercheck.checker.engine.settings import Reductions, Sampling, SearchSettings
from leadercheck.checker.engine.strategies import searcher
from leadercheck.checker.engine.strategies.bfs import check
from leadercheck.checker.engine.values import ValueCheck
from leadercheck.checker.errors import ModelError
from leadercheck.models.catalogue import PROTOCOLS as CATALOGUE
from tests.helpers import reachable_count
from tests.strategies import graphs
from tests.user_models.planted import HOWS, MESSAGES, Box, Planted, PlantedGraph, Tag

FINE = always("fine", lambda s: True)
CORNER = eventually("corner", lambda s: s.a == 19 and s.b == 19)  # every walk ends there

STRATEGIES = {
    "bfs": SearchSettings(),
    "exact": SearchSettings(reductions=Reductions(exact=True)),
    "symmetry": SearchSettings(reductions=Reductions(symmetry=True)),
    "por": SearchSettings(reductions=Reductions(por=True)),
    "processes": SearchSettings(workers=2),
    "simulate": SearchSettings(strategy="simulate", sampling=Sampling(seed=3, walks=50)),
    "bitstate": SearchSettings(strategy="bitstate"),
    "swarm": SearchSettings(strategy="simulate", workers=2, sampling=Sampling(walks=50)),
}


def search(options: SearchSettings, model: Any, properties: list[Any]) -> Any:
    with searcher(options) as run:
        return run(model, properties)


@pytest.mark.parametrize("strategy", list(STRATEGIES))
@pytest.mark.parametrize("how", HOWS)
def test_a_misuse_first_met_at_depth_30_is_a_model_error(how: str, strategy: str) -> None:
    """The first 30 levels are clean (a few hundred states: past any sample a guard would
    take of a larger model), then the misuse: an error naming it, with the trace to the
    mutated state (30 steps) or to the successor that carries the bad part (31)."""
    with pytest.raises(ModelError) as caught:
        search(STRATEGIES[strategy], Planted(how, 30), [FINE])
    error = caught.value
    assert MESSAGES[how] in str(error)
    assert "\n" not in str(error)
    assert error.trace is not None
    assert len(error.trace) == (30 if how == "mutate" else 31)
    assert str(error).endswith(f"(reached in {len(error.trace)} steps)")


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("reductions", [Reductions(), Reductions(exact=True)], ids=["fp", "exact"])
def test_the_liveness_search_checks_every_state_too(how: str, reductions: Reductions) -> None:
    """With a liveness claim the search records the fairness graph (its own loop)."""
    with pytest.raises(ModelError, match="reached in 3[01] steps"):
        check(Planted(how, 30), [FINE, CORNER], reductions=reductions)


def test_a_clean_model_still_gives_its_count_and_verdict() -> None:
    result = check(Planted("identity", 100), [FINE, CORNER])  # planted beyond the grid
    assert result.stats.distinct_states == 400
    assert {r.verdict.value for r in result.results} == {"HOLDS"}


def test_a_state_changed_after_it_was_stored_is_named() -> None:
    """Two states share one Box and the second's expansion changes it: the first, taken
    from the frontier later, no longer hashes as it was stored."""
    from leadercheck.checker import Action, Model

    shared = Box(0)

    class Sharing(Model[Any]):
        def initial_states(self) -> list[Any]:
            return [(0, None)]

        def successors(self, state: Any) -> list[Any]:
            node = state[0]
            if node == 0:
                return [(Action("a", "p"), (1, None)), (Action("b", "p"), (2, shared))]
            if node == 1:
                shared.value += 1  # (2, shared) waits in the frontier, changed
                return [(Action("c", "p"), (3, None))]
            return []

    with pytest.raises(ModelError, match="changed after it was stored"):
        check(Sharing(), [FINE])


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize(  # the bit-state search's planted misuses in -m slow (3 s each)
    "strategy", ["bfs", "exact", pytest.param("bitstate", marks=pytest.mark.slow)]
)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph=graphs(max_size=30), pick=st.integers(min_value=0, max_value=1000))
def test_a_planted_misuse_anywhere_reachable_never_gives_a_verdict(
    how: str, strategy: str, graph: tuple[list[int], dict[int, list[int]], int], pick: int
) -> None:
    """Random graphs, the misuse planted at a random reachable node (at any depth): every
    exhaustive strategy ends in a ModelError, never HOLDS or a count."""
    initial, edges, _ = graph
    reachable = _reachable(initial, edges)
    at = reachable[pick % len(reachable)]
    model = PlantedGraph(initial, edges, how, at)
    with pytest.raises(ModelError):
        search(STRATEGIES[strategy], model, [always("fine", lambda s: True)])


def _reachable(initial: list[int], edges: dict[int, list[int]]) -> list[int]:
    seen = dict.fromkeys(initial)
    queue = deque(seen)
    while queue:
        for target in edges.get(queue.popleft(), ()):
            if target not in seen:
                seen[target] = None
                queue.append(target)
    return list(seen)


def test_values_with_their_own_equality_and_records_pass() -> None:
    """A class that defines __eq__ and __hash__ says what equal means; frozen dataclasses
    and frozensets are walked; an identity part inside a dataclass is found."""
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Record:
        part: Any

    values = ValueCheck("M")
    values.stored((1, "x", None, Box(3), frozenset({(1, 2)}), Record((4, 5))))
    with pytest.raises(ModelError, match=r"class Tag, at state\[1\].part,"):
        values.stored((0, Record(Tag())))
    with pytest.raises(ModelError, match="class Tag"):
        values.stored((0, frozenset({Tag()})))


class Net(NamedTuple):
    nodes: tuple[tuple[int, Any], ...]
    msgs: frozenset[Any]


PARENT = Net(((1, 2), (3, 4)), frozenset({(1, "a"), (2, ("b", 5))}))


@pytest.mark.parametrize(
    ("child", "where"),
    [
        (PARENT._replace(nodes=(PARENT.nodes[0], (3, Tag()))), r"state\[0\]\[1\]\[1\]"),
        (PARENT._replace(msgs=PARENT.msgs | {(3, ("c", Tag()))}), "state"),
        (PARENT._replace(msgs=frozenset({(1, "a"), (2, ("b", Tag()))})), "state"),
        (Net(PARENT.nodes, frozenset({(2, ("b", 5)), (9, (Tag(),))})), "state"),
    ],
    ids=["deep-in-a-node", "in-an-added-message", "in-a-replaced-message", "in-a-new-set"],
)
def test_what_a_successor_shares_with_its_parent_is_not_walked_again(
    child: Net, where: str
) -> None:
    """A successor is walked only where it differs from its checked parent (the parts that
    are not the parent's, down through tuples; a frozenset's elements the parent's lacks),
    and a part compared by identity is found there, however deep, with or beside shared
    parts."""
    values = ValueCheck("M")
    values.stored(PARENT)
    values.stored(PARENT._replace(msgs=PARENT.msgs | {(3, ("c", 6))}), PARENT)  # clean
    values.stored(Net(((1, 2), (3, 4)), frozenset({(1, "a"), (2, ("b", 5))})), PARENT)  # equal
    with pytest.raises(ModelError, match=f"class Tag(, at {where},)?"):
        values.stored(child, PARENT)


class Sends(Model[Net]):
    """Each step adds one message to the set; at `depth` the message carries a Tag, deep."""

    def __init__(self, depth: int) -> None:
        self.depth = depth

    def initial_states(self) -> list[Net]:
        return [Net(((0, None),), frozenset())]

    def successors(self, state: Net) -> list[tuple[Action, Net]]:
        k = len(state.msgs)
        if k > 40:
            return []
        body: Any = ("m", (k, Tag())) if k == self.depth else ("m", (k, k))
        return [(Action("send", "n1"), Net(((k, None),), state.msgs | {body}))]


def test_a_misuse_in_the_one_message_a_step_adds_is_found_at_depth_30() -> None:
    with pytest.raises(ModelError, match="class Tag") as caught:
        check(Sends(30), [FINE])
    assert caught.value.trace is not None and len(caught.value.trace) == 31


@pytest.mark.slow  # every built-in protocol at its defaults, every state walked: minutes
@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_every_built_in_protocol_is_made_of_values(name: str) -> None:
    """The built-in catalogue is trusted on the command line (SearchSettings.trust_values:
    no walk for parts compared by identity); this is the proof that it may be. Each
    protocol at its defaults, every reachable state walked: no part compared by identity.
    (`reachable_count` uses check(), which walks unless told to trust.)"""
    assert reachable_count(name) > 0

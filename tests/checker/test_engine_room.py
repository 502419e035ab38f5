"""The engine room's parts (checker/engine/): the store, the frontier, the one exploration
loop and its observers, on toy models whose answers are known by hand."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from leadercheck.checker.engine.expand import make_expander
from leadercheck.checker.engine.explore import Explorer
from leadercheck.checker.engine.graph import state_graph
from leadercheck.checker.engine.observers import EdgeLog, Observer
from leadercheck.checker.engine.settings import SearchSettings, unbounded
from leadercheck.checker.engine.store import NO_PARENT, IndexedStore, Store
from leadercheck.checker.result import EndReason
from tests.toys import Counter, Graph


def explore(
    model: Any, observers: list[Observer] | None = None, **bounds: Any
) -> tuple[Explorer, EndReason]:
    observers = observers or []
    store = IndexedStore() if any(o.edges for o in observers) else Store()
    expand = make_expander(model, store.keys, None)
    explorer = Explorer(
        model, list(model.initial_states()), store, expand, observers, unbounded(**bounds)
    )
    return explorer, explorer.run()


def test_the_store_remembers_parents_and_moves_and_saves_itself() -> None:
    store = Store()
    a = store.add(store.key("a"), NO_PARENT, 0)
    b = store.add(store.key("b"), a, 1)
    c = store.add(store.key("c"), b, 0)
    assert store.moves_to(c) == [0, 1, 0] and len(store) == 3
    assert store.key("b") in store and store.key("z") not in store
    copy = Store()
    copy.load(store.save())
    assert copy.moves_to(c) == [0, 1, 0] and store.key("c") in copy
    exact = IndexedStore(exact=True)
    exact.add("x", NO_PARENT, 0)
    exact.add("y", 0, 0)
    assert exact.index_of("y") == 1 and exact.states() == ("x", "y")


def test_the_frontier_counts_levels_as_breadth_first_discovers_them() -> None:
    """Counter(10): from x, x+1 and x+2; level k holds the states 2k-1 and 2k."""
    explorer, end = explore(Counter(10))
    assert end is EndReason.EXHAUSTED
    assert len(explorer.store) == 11 and explorer.frontier.depth == 5
    assert list(explorer.frontier.levels) == [0, 1, 3, 5, 7, 9]
    assert explorer.generated == 1 + 10 + 9


def test_bounds_stop_the_loop_where_they_say() -> None:
    explorer, end = explore(Counter(100), max_states=7)
    assert end is EndReason.MAX_STATES and len(explorer.store) == 7
    _, end = explore(Counter(100), max_depth=3)
    assert end is EndReason.MAX_DEPTH
    _, end = explore(Counter(6), max_depth=3)  # nothing lies beyond depth 3
    assert end is EndReason.EXHAUSTED


def test_observers_of_edges_see_every_edge_in_order() -> None:
    graph = Graph([0], {0: [1, 2], 1: [2, 0], 2: [2]})
    log = EdgeLog()
    _, end = explore(graph, [log])
    assert end is EndReason.EXHAUSTED
    assert [(a, b) for a, b, _ in log.edges_seen] == [(0, 1), (0, 2), (1, 2), (1, 0), (2, 2)]
    drawn = state_graph(graph)  # the drawn graph walks through the same loop
    assert [(a, b) for a, b, _ in drawn.edges] == [(a, b) for a, b, _ in log.edges_seen]


def test_the_loop_stops_once_every_observer_is_done() -> None:
    class FindFive(Observer):
        done = False

        def visit(self, state: Any, index: int, initial: bool) -> bool:
            self.done = state == 5
            return self.done

    explorer, end = explore(Counter(100), [FindFive()])
    assert end is EndReason.DECIDED and len(explorer.store) == 6  # 0..5, found at depth 3


def test_settings_are_frozen_and_changed_only_by_copy() -> None:
    settings = SearchSettings(max_states=5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.max_states = 6  # type: ignore[misc]
    assert settings.but(max_states=6).max_states == 6 and settings.max_states == 5
    assert unbounded().max_memory is None and SearchSettings().max_memory is not None


def test_a_claim_that_raises_on_an_initial_state_is_a_model_error() -> None:
    """Every visit goes through one place, the initial states' too: the trace is 0 steps."""
    from leadercheck.checker import always, check
    from leadercheck.checker.errors import ModelError

    with pytest.raises(ModelError, match="model raised ZeroDivisionError in bad after 0 steps"):
        check(Counter(3), [always("bad", lambda s: 1 / 0)])
    with pytest.raises(ModelError, match="in bad after 1 steps"):
        check(Counter(3), [always("bad", lambda s: 1 / (s - 2))])

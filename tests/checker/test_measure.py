"""Measuring over reachable states on a toy model with known answers."""

from __future__ import annotations

from leadercheck.checker.engine.measure import measure
from leadercheck.checker.engine.settings import unbounded
from leadercheck.checker.result import EndReason
from tests.toys import Counter


def test_worst_best_and_mean_over_matching_states() -> None:
    m = measure(Counter(9), lambda x: x * 10, lambda x: x % 2 == 1, with_trace=True)
    assert m is not None
    assert (m.worst, m.best, m.count) == (90, 10, 5)
    assert m.mean == 50
    assert m.worst_trace is not None
    assert m.worst_trace.last.state == 9 and len(m.worst_trace) == 5
    assert m.stats.distinct_states == 10


def test_nothing_matching_gives_none() -> None:
    assert measure(Counter(3), value=lambda x: x, where=lambda x: x > 3) is None


def test_a_bound_cuts_a_measure_and_it_says_so() -> None:
    m = measure(Counter(9), lambda x: x, lambda x: x > 0, unbounded(max_states=4))
    assert m is not None and not m.complete
    assert m.end is EndReason.MAX_STATES
    assert (m.worst, m.count, m.stats.distinct_states) == (3, 3, 4)


def test_a_cut_before_any_matching_state_is_not_taken_for_none() -> None:
    m = measure(Counter(9), lambda x: x, lambda x: x > 5, unbounded(max_states=3))
    assert m is not None and m.count == 0 and m.end is EndReason.MAX_STATES

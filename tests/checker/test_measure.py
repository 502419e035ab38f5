"""Measuring over reachable states on a toy model with known answers."""

from __future__ import annotations

from checker.measure import measure
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

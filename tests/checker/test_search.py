"""The breadth-first engine on toy models whose answers are known by hand."""

from __future__ import annotations

import pytest

from leadercheck.checker import EndReason, ModelError, Verdict, always, check, sometimes
from tests.toys import Counter, Exploding, Graph


def test_counter_counts_are_exact() -> None:
    result = check(Counter(10), [always("small", lambda x: x <= 10)])
    assert result.verdict is Verdict.HOLDS
    assert result.end is EndReason.EXHAUSTED
    s = result.stats
    assert s.distinct_states == 11
    assert s.generated_states == 1 + 10 + 9
    assert s.transitions == 19
    assert s.depth == 5  # 10 is reached in five +2 steps


def test_invariant_violation_gives_a_shortest_trace() -> None:
    result = check(Counter(20), [always("below-7", lambda x: x < 7)])
    r = result.result("below-7")
    assert r.verdict is Verdict.VIOLATED
    assert r.trace is not None
    assert len(r.trace) == 4  # 0 -> 2 -> 4 -> 6 -> 7 or any 4-step route to 7
    assert r.trace.last.state == 7
    states = [step.state for step in r.trace.steps]
    assert states[0] == 0
    for before, after, step in zip(states, states[1:], r.trace.steps[1:], strict=False):
        assert step.action is not None
        assert after - before in (1, 2)
        assert step.action.note == f"{before}->{after}"
    assert result.end is EndReason.DECIDED


def test_violation_in_an_initial_state_has_an_empty_trace() -> None:
    r = check(Counter(3), [always("positive", lambda x: x > 0)]).result("positive")
    assert r.verdict is Verdict.VIOLATED
    assert r.trace is not None and len(r.trace) == 0


def test_sometimes_reports_a_shortest_witness() -> None:
    result = check(Counter(9), [sometimes("reach-9", lambda x: x == 9)])
    r = result.result("reach-9")
    assert r.verdict is Verdict.HOLDS
    assert r.trace is not None and len(r.trace) == 5
    assert r.trace.last.state == 9


def test_sometimes_never_met_is_violated_without_a_trace() -> None:
    r = check(Counter(5), [sometimes("reach-6", lambda x: x == 6)]).result("reach-6")
    assert r.verdict is Verdict.VIOLATED
    assert r.trace is None


def test_search_goes_on_until_every_property_is_decided() -> None:
    result = check(
        Counter(10), [always("below-3", lambda x: x < 3), always("below-9", lambda x: x < 9)]
    )
    assert result.result("below-3").verdict is Verdict.VIOLATED
    assert result.result("below-9").verdict is Verdict.VIOLATED
    assert result.result("below-9").trace is not None
    assert len(result.result("below-9").trace) == 5  # type: ignore[arg-type]


def test_max_states_stops_with_incomplete() -> None:
    result = check(Counter(100), [always("ok", lambda x: True)], max_states=10)
    assert result.verdict is Verdict.INCOMPLETE
    assert result.end is EndReason.MAX_STATES
    assert result.stats.distinct_states == 10


def test_max_depth_stops_with_incomplete() -> None:
    result = check(Counter(100), [always("ok", lambda x: True)], max_depth=3)
    assert result.verdict is Verdict.INCOMPLETE
    assert result.end is EndReason.MAX_DEPTH
    assert result.stats.depth == 3
    assert result.stats.distinct_states == 7  # 0..6


def test_a_violation_within_the_depth_bound_is_still_reported() -> None:
    result = check(Counter(100), [always("below-4", lambda x: x < 4)], max_depth=3)
    assert result.result("below-4").verdict is Verdict.VIOLATED


def test_a_depth_bound_that_cuts_nothing_off_is_complete() -> None:
    result = check(Counter(10), [always("ok", lambda x: True)], max_depth=5)
    assert result.verdict is Verdict.HOLDS
    assert result.end is EndReason.EXHAUSTED


def test_cycles_and_self_loops_terminate_and_count() -> None:
    model = Graph([0], {0: [0, 1], 1: [2], 2: [0, 2]})
    result = check(model, [always("ok", lambda x: True)])
    assert result.stats.distinct_states == 3
    assert result.stats.generated_states == 1 + 5
    assert result.stats.depth == 2


def test_duplicate_initial_states_are_one_state() -> None:
    result = check(Graph([1, 1, 2], {}), [always("ok", lambda x: True)])
    assert result.stats.distinct_states == 2
    assert result.stats.generated_states == 3
    assert result.stats.depth == 0


def test_exception_in_model_reports_the_trace_to_it() -> None:
    with pytest.raises(ModelError) as info:
        check(Exploding(10, at=5), [always("ok", lambda x: True)])
    err = info.value
    assert "ValueError in successors" in str(err) and "boom" in str(err)
    assert err.trace is not None
    assert err.trace.last.state == 5
    assert len(err.trace) == 3


def test_exception_in_predicate_is_a_model_error() -> None:
    with pytest.raises(ModelError, match="ZeroDivisionError in bad"):
        check(Counter(5), [always("bad", lambda x: 1 / (x - 2) != 0)])


def test_exploration_is_deterministic() -> None:
    model = Graph([0], {0: [3, 1, 2], 1: [4], 2: [4], 3: [5], 4: [5]})
    traces = [
        check(model, [always("not-5", lambda x: x != 5)]).result("not-5").trace for _ in range(3)
    ]
    assert all(t is not None for t in traces)
    assert len({tuple(s.state for s in t.steps) for t in traces if t}) == 1
    assert [s.state for s in traces[0].steps] == [0, 3, 5]  # type: ignore[union-attr]

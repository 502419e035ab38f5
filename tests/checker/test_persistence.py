"""Persistence (eventually always P) under weak fairness: a fair cycle that keeps returning
to a state where P fails is a livelock lasso; visiting such a state finitely often, or only
on an unfair cycle, is not. Also: every engine routes liveness to the fair-graph check."""

from __future__ import annotations

from leadercheck.checker.engine.strategies.bfs import check
from leadercheck.checker.engine.strategies.processes.partitioned import check_parallel
from leadercheck.checker.properties import always, eventually, eventually_always
from leadercheck.checker.result import Verdict
from tests.toys import Labelled


def _states(trace: object) -> list[int]:
    return [s.state for s in trace.steps]  # type: ignore[attr-defined]


def _not_one(s: int) -> bool:
    return s != 1


def test_a_fair_cycle_through_a_bad_state_is_a_livelock() -> None:
    # 0 -> 1 -> 2 -> 1 -> ...: state 1 comes back forever.
    model = Labelled([0], {0: [(1, "a")], 1: [(2, "a")], 2: [(1, "a")]})
    result = check(model, [eventually_always("settles", _not_one)]).result("settles")
    assert result.verdict is Verdict.VIOLATED
    trace = result.trace
    assert trace is not None and trace.loop_from == 1
    assert _states(trace) == [0, 1, 2, 1]  # to the first bad state, then round back to it
    assert result.reason == "a fair cycle of 2 steps (from step 1) back to where it fails"


def test_a_bad_state_left_for_good_is_fine() -> None:
    # 1 is visited once; every behaviour then cycles 2 <-> 3 where P holds.
    model = Labelled([0], {0: [(1, "a")], 1: [(2, "a")], 2: [(3, "a")], 3: [(2, "a")]})
    result = check(model, [eventually_always("settles", _not_one)]).result("settles")
    assert result.verdict is Verdict.HOLDS and result.trace is None


def test_a_bad_state_on_an_unfair_cycle_only_is_fine() -> None:
    # 0 <-> 1 would revisit 1 forever, but b (to the good sink 2) is enabled on both
    # states and never taken on that cycle: weak fairness forces the way out.
    model = Labelled([0], {0: [(1, "a"), (2, "b")], 1: [(0, "a"), (2, "b")], 2: [(2, "z")]})
    result = check(model, [eventually_always("settles", _not_one)]).result("settles")
    assert result.verdict is Verdict.HOLDS


def test_a_fair_cycle_may_take_an_optional_detour_forever() -> None:
    # 0 <-> 2 avoids 1, but 2 -c-> 1 -a-> 0 is in the same component and nothing forbids
    # taking it every time round: fairness never forces a behaviour to avoid a state.
    model = Labelled([0], {0: [(2, "a")], 2: [(0, "a"), (1, "c")], 1: [(0, "a")]})
    result = check(model, [eventually_always("settles", _not_one)]).result("settles")
    assert result.verdict is Verdict.VIOLATED
    trace = result.trace
    assert trace is not None and trace.loop_from is not None
    assert 1 in _states(trace)[trace.loop_from :]


def test_stuck_in_a_bad_state_is_a_violation() -> None:
    # In 1 only a fault is enabled: nothing forces the behaviour out, so it may stay there.
    model = Labelled([0], {0: [(1, "a")], 1: [(2, "fault")], 2: [(2, "a")]}, unfair=["fault"])
    result = check(model, [eventually_always("settles", _not_one)]).result("settles")
    assert result.verdict is Verdict.VIOLATED
    trace = result.trace
    assert trace is not None and _states(trace) == [0, 1] and trace.loop_from == len(trace)
    assert "no fair action is enabled" in result.reason


def test_stuck_in_a_good_state_is_fine() -> None:
    model = Labelled([0], {0: [(1, "a")], 1: [(2, "a")]})
    result = check(model, [eventually_always("settles", _not_one)]).result("settles")
    assert result.verdict is Verdict.HOLDS


def test_the_partitioned_engine_judges_liveness_on_fair_behaviours() -> None:
    # 2 is reachable, so a search that took these for reachability claims would say HOLDS;
    # on the fair cycle 0 <-> 1 neither ever comes true.
    model = Labelled([0], {0: [(1, "a")], 1: [(0, "a"), (2, "b")], 2: [(2, "z")]})
    props = [
        always("small", lambda s: s < 3),
        eventually("reach-2", lambda s: s == 2),
        eventually_always("at-2", lambda s: s == 2),
    ]
    one = check(model, props)
    two = check_parallel(model, props, workers=2)
    for result in (one, two):
        assert [r.verdict for r in result.results] == [
            Verdict.HOLDS,
            Verdict.VIOLATED,
            Verdict.VIOLATED,
        ]
    assert _states(two.result("reach-2").trace) == _states(one.result("reach-2").trace)

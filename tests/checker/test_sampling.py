"""The sampled strategies (checker/engine/strategies/sampling/): simulation, bitstate and swarms of
either.

They find real violations, shortened to the shortest where the tests know it; the same
seed gives the same walk and the same trace; a bitstate search counts what it visited;
and none of them ever says HOLDS of anything but a witnessed `sometimes` claim.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from leadercheck.checker import Action, Model, always, sometimes
from leadercheck.checker.engine.bits import BitArray, implied_states, usable_bytes
from leadercheck.checker.engine.settings import BITSTATE, SIMULATE, Sampling, unbounded
from leadercheck.checker.engine.strategies.bfs import check
from leadercheck.checker.engine.strategies.sampling.run import LIVENESS_NOT_SAMPLED, check_sampled
from leadercheck.checker.engine.strategies.sampling.shorten import shorten
from leadercheck.checker.engine.successors import decides
from leadercheck.checker.errors import ModelError
from leadercheck.checker.properties import Kind
from leadercheck.checker.result import CheckResult, EndReason, Verdict
from leadercheck.checker.trace import Trace
from tests.strategies import graphs
from tests.toys import Counter, DeepLock, Exploding, Graph, Tokens, lock_closed

LOCK = DeepLock(depth=5, dials=6)  # about 6 million states; the lock opens in 9 steps at best
CLOSED = lock_closed(5)


def simulate(
    model: Model[Any], props: Sequence[Any], workers: int = 1, **options: Any
) -> CheckResult:
    settings = unbounded(workers=workers, sampling=Sampling(**options))
    return check_sampled(model, props, settings, SIMULATE)


def bitstate(
    model: Model[Any], props: Sequence[Any], workers: int = 1, **options: Any
) -> CheckResult:
    settings = unbounded(workers=workers, sampling=Sampling(**options))
    return check_sampled(model, props, settings, BITSTATE)


def steps(result: CheckResult) -> list[tuple[str, str, Any]]:
    """Every trace of `result` as (property, action, state) rows: what must not vary."""
    return [
        (r.prop.name, str(step.action), step.state)
        for r in result.results
        if r.trace is not None
        for step in r.trace.steps
    ]


# -- simulation ----------------------------------------------------------------


def test_simulation_finds_a_deep_violation_in_a_wide_space_and_shortens_it() -> None:
    result = simulate(LOCK, [CLOSED], seed=1, walks=1000)
    found = result.result("lock-closed")
    assert found.verdict is Verdict.VIOLATED
    assert found.trace is not None and len(found.trace) == 9  # 2 * depth - 1: the shortest
    assert found.found_length is not None and found.found_length > 20  # a walk's long way round
    assert result.end is EndReason.DECIDED  # its one claim decided
    assert result.coverage is not None and result.coverage.walks < 1000
    assert is_real(LOCK, found.trace)  # every step one the model takes


def is_real(model: Model[Any], trace: Trace) -> bool:
    """Whether `trace` starts in an initial state and each step is a successor of the last."""
    states = [step.state for step in trace.steps]
    if states[0] not in model.initial_states():
        return False
    return all(
        (step.action, step.state) in list(model.successors(before))
        for before, step in zip(states, trace.steps[1:], strict=False)
    )


def test_the_same_seed_gives_the_same_walk_and_trace() -> None:
    first = simulate(LOCK, [CLOSED], seed=7, walks=1000)
    again = simulate(LOCK, [CLOSED], seed=7, walks=1000)
    assert steps(first) == steps(again)
    assert first.result("lock-closed").found_length == again.result("lock-closed").found_length
    assert first.coverage == again.coverage
    lengths = {
        simulate(LOCK, [CLOSED], seed=s, walks=1000).result(CLOSED.name).found_length
        for s in range(1, 6)
    }
    assert len(lengths) > 1  # other seeds, other walks


def test_a_swarm_finds_the_same_trace_in_every_run() -> None:
    runs = [simulate(LOCK, [CLOSED], workers=2, seed=3, walks=2000) for _ in range(2)]
    assert all(r.result("lock-closed").verdict is Verdict.VIOLATED for r in runs)
    assert steps(runs[0]) == steps(runs[1])
    assert runs[0].coverage is not None and runs[0].coverage.workers == 2


def test_a_bitstate_swarm_finds_the_same_trace_in_every_run() -> None:
    props = [always("below-40", lambda s: s < 40)]
    runs = [bitstate(Counter(60), props, workers=2, memory=1 << 16) for _ in range(2)]
    assert steps(runs[0]) == steps(runs[1])
    trace = runs[0].result("below-40").trace
    assert trace is not None and len(trace) == 20  # ceil(40 / 2): shortened to the shortest


def test_walks_stop_at_the_budget_and_say_how_far_they_went() -> None:
    result = simulate(Counter(1000), [always("small", lambda s: s < 10_000)], walks=30, depth=12)
    assert result.end is EndReason.BUDGET
    assert result.verdict is Verdict.INCOMPLETE
    c = result.coverage
    assert c is not None and (c.walks, c.steps, c.deepest, c.walk_depth) == (30, 360, 12, 12)
    assert result.stats.distinct_states <= 1 + 24  # a walk of 12 steps reaches 24 at most


def test_a_time_budget_ends_a_simulation() -> None:
    result = simulate(Counter(10_000), [always("small", lambda s: s < 100_000)], seconds=0.5)
    assert result.end is EndReason.BUDGET
    assert result.stats.seconds < 5


@pytest.mark.parametrize("kind", [SIMULATE, BITSTATE])
def test_the_state_bound_ends_a_sampled_search(kind: str) -> None:
    settings = unbounded(max_states=100)
    result = check_sampled(Tokens(4, 9), [always("any", lambda s: True)], settings, kind)
    assert result.end is EndReason.MAX_STATES and result.verdict is Verdict.INCOMPLETE
    assert 100 <= result.stats.distinct_states < 100 + 10_000  # checked between rounds


@pytest.mark.parametrize("kind", [SIMULATE, BITSTATE])
def test_the_memory_bound_ends_a_sampled_search(kind: str) -> None:
    settings = unbounded(max_memory=1 << 20)  # far below what the interpreter holds already
    result = check_sampled(Counter(100), [always("any", lambda s: True)], settings, kind)
    assert result.end is EndReason.MAX_MEMORY and result.verdict is Verdict.INCOMPLETE


def test_liveness_is_not_judged_by_a_sampled_search() -> None:
    result = check_sampled(*_raft(), unbounded(sampling=Sampling(walks=20)), SIMULATE)
    live = [r for r in result.results if r.prop.kind in (Kind.LEADS_TO, Kind.PERSISTS)]
    assert live and all(r.verdict is Verdict.INCOMPLETE for r in live)
    assert all(r.reason == LIVENESS_NOT_SAMPLED for r in live)


def _raft() -> tuple[Model[Any], Sequence[Any]]:
    from leadercheck.models.catalogue import lookup  # noqa: PLC0415
    from leadercheck.specs import load_expectations  # noqa: PLC0415

    entry = lookup("raft")
    return entry.build(entry.resolve({})), load_expectations().properties("raft")


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("run", [simulate, bitstate])
def test_model_errors_carry_the_trace_that_led_to_them(run: Any, workers: int) -> None:
    with pytest.raises(
        ModelError, match=r"model raised ValueError in successors after \d+ steps: boom"
    ) as raised:
        run(Exploding(10, 5), [always("small", lambda s: s < 100)], workers, walks=20)
    assert raised.value.trace is not None and raised.value.trace.last.state == 5
    with pytest.raises(ModelError, match=r"ZeroDivisionError in bad"):
        run(Counter(10), [always("bad", lambda s: 1 / (s - 7) < 100)], workers, walks=20)


# -- bitstate ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "count"), [(Counter(50), 51), (Tokens(3, 3), 64), (Tokens(4, 4, keys=False), 625)]
)
def test_bitstate_visits_every_state_with_room_to_spare(model: Model[Any], count: int) -> None:
    result = bitstate(model, [always("any", lambda s: True)], memory=1 << 16)
    exhaustive = check(model, [always("any", lambda s: True)])
    assert exhaustive.stats.distinct_states == count
    assert result.stats.distinct_states == count
    assert result.stats.generated_states == exhaustive.stats.generated_states
    assert result.end is EndReason.HASHED and result.verdict is Verdict.INCOMPLETE
    c = result.coverage
    assert c is not None and abs(c.implied - count) <= 2 and c.omitted < 1e-6  # an estimate


class Recording(Model[Any]):
    """A model that remembers every state whose successors the search asked for."""

    def __init__(self, model: Model[Any]) -> None:
        self.model = model
        self.expanded: set[Any] = set()

    def initial_states(self) -> Sequence[Any]:
        return self.model.initial_states()

    def successors(self, state: Any) -> Iterable[tuple[Action, Any]]:
        self.expanded.add(state)
        return self.model.successors(state)


def test_a_tiny_bit_array_skips_states_and_reports_what_it_visited() -> None:
    model = Recording(Tokens(4, 4, keys=False))  # 625 states
    result = bitstate(model, [always("any", lambda s: True)], memory=32)  # 256 bits
    visited = len(model.expanded)
    assert result.stats.distinct_states == visited < 625
    c = result.coverage
    assert c is not None and c.bits == 256 and 0 < c.bits_set <= 256
    assert c.omitted == (c.bits_set / 256) ** 3 > 0.01  # says collisions were likely


def test_bitstate_finds_a_violation_and_shortens_the_depth_first_trace() -> None:
    result = bitstate(Counter(100), [always("below-30", lambda s: s < 30)])
    found = result.result("below-30")
    assert found.verdict is Verdict.VIOLATED
    assert found.found_length == 30  # depth first: +1 thirty times
    assert found.trace is not None and len(found.trace) == 15  # shortened: +2 fifteen times


def test_the_depth_bound_cuts_a_bitstate_search() -> None:
    result = check_sampled(
        Counter(100), [always("any", lambda s: True)], unbounded(max_depth=10), BITSTATE
    )
    assert result.end is EndReason.MAX_DEPTH
    assert result.stats.depth == 10


def test_bit_arrays_are_powers_of_two_and_their_estimate_is_right() -> None:
    assert usable_bytes(100 << 20) == 64 << 20 and usable_bytes(1) == 1
    bits = BitArray(1 << 12, 3)  # 32,768 bits
    added = sum(bits.add((k, 2 * k + 1)) for k in range(3000))  # ints hash alike in every run
    # about a quarter of the bits are set by the end, so about 1.4% of new states collide
    # there and a dozen in all: what `false_positive` and `implied_states` estimate
    assert 2960 <= added < 3000
    assert 0.005 < bits.false_positive() < 0.03
    assert abs(implied_states(bits.size, bits.set_bits, 3) - 3000) < 150  # within 5%
    assert not bits.add((5, 11))  # added before: its bits are all set


# -- never HOLDS ---------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_no_sampled_strategy_ever_says_holds(
    drawn: tuple[list[int], dict[int, list[int]], int],
) -> None:
    initial, edges, target = drawn
    model = Graph(initial, edges)
    props = [always("avoids", lambda s: s != target), sometimes("meets", lambda s: s == target)]
    truth = check(model, props)
    for kind in (SIMULATE, BITSTATE):
        settings = unbounded(sampling=Sampling(walks=50, depth=20))
        result = check_sampled(model, props, settings, kind)
        assert result.verdict is not Verdict.HOLDS
        avoids, meets = result.result("avoids"), result.result("meets")
        assert avoids.verdict is not Verdict.HOLDS
        assert meets.verdict is not Verdict.VIOLATED  # only an exhaustive search refutes it
        for r in (avoids, meets):
            if r.trace is not None:  # a real trace, at least as long as the shortest
                assert decides(r.prop, r.trace.last.state) and is_real(model, r.trace)
                shortest = truth.result(r.prop.name).trace
                assert shortest is not None and len(r.trace) >= len(shortest)
                assert r.verdict is truth.result(r.prop.name).verdict
        if kind == BITSTATE and truth.result("meets").trace is not None:
            assert meets.verdict is Verdict.HOLDS  # depth first with room: it finds it


# -- shortening ----------------------------------------------------------------


def test_shortening_removes_loops_detours_and_idle_steps() -> None:
    # turn dial 2 ten times (a loop), dial 3 once, then open the lock the shortest way
    moves = [0] + [1] * 10 + [2]
    state = LOCK.initial_states()[0]
    for move in moves[1:]:
        state = list(LOCK.next_states(state))[move]
    path = _open_from(state)
    short = shorten(
        LOCK, LOCK.initial_states(), moves + path, lambda s: not CLOSED.predicate(s), 500, 10_000
    )
    assert short.found == 11 + len(path)
    assert short.length == 9
    assert "loops" in short.passes


def _open_from(state: Any) -> list[int]:
    """The moves that open the lock from `state`, alternating lock and dial 0."""
    moves = []
    while CLOSED.predicate(state):
        succs = list(LOCK.successors(state))
        move = next((k for k, (a, _) in enumerate(succs) if a.actor == "lock"), 0)
        moves.append(move)
        state = succs[move][1]
    return moves

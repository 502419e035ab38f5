"""The partitioned search gives check()'s answers: counts, verdicts and the very same traces."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import psutil
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leadercheck.checker import (
    Action,
    CheckResult,
    EndReason,
    LeadercheckError,
    Model,
    ModelError,
    Progress,
    Property,
    Verdict,
    always,
    check,
    sometimes,
)
from leadercheck.checker.engine.interrupts import interrupt_handler
from leadercheck.checker.engine.settings import Reductions
from leadercheck.checker.engine.strategies.processes.partitioned import (
    ProcessTransport,
    check_parallel,
)
from leadercheck.models.catalogue import lookup
from leadercheck.specs.expectations import load_expectations
from tests.strategies import graphs
from tests.toys import Counter, Exploding, Graph

WORKERS = (1, 2, 3)


@pytest.fixture(autouse=True)
def no_worker_left_behind() -> Iterator[None]:
    """Every test ends with no child process alive (and none left a zombie)."""
    yield
    assert psutil.Process().children(recursive=True) == []


def same_as_check(
    model: Model[Any], props: Sequence[Property], workers: int, **options: Any
) -> CheckResult:
    """Run both searches; assert the same verdicts and traces; counts too if exhaustive."""
    single = check(model, props, **options)
    parallel = check_parallel(model, props, workers=workers, **options)
    assert parallel.end is single.end
    for a, b in zip(single.results, parallel.results, strict=True):
        assert (b.prop.name, b.verdict, b.reason) == (a.prop.name, a.verdict, a.reason)
        assert b.trace == a.trace  # every step: action, views, summaries, state
    s, p = single.stats, parallel.stats
    assert p.depth == s.depth
    if single.end in (EndReason.EXHAUSTED, EndReason.MAX_DEPTH):
        assert (p.distinct_states, p.generated_states, p.transitions) == (
            s.distinct_states,
            s.generated_states,
            s.transitions,
        )
    else:  # the level is finished: the counts may only be larger
        assert p.distinct_states >= s.distinct_states
        assert p.generated_states >= s.generated_states
    return parallel


def protocol(name: str, **params: int) -> tuple[Model[Any], tuple[Property, ...]]:
    entry = lookup(name)
    model = entry.build(entry.resolve({k: str(v) for k, v in params.items()}))
    return model, load_expectations().properties(name)


# -- toy models -----------------------------------------------------------------


@pytest.mark.parametrize("workers", WORKERS)
def test_counter_counts_are_exact(workers: int) -> None:
    result = same_as_check(Counter(10), [always("small", lambda x: x <= 10)], workers)
    assert result.end is EndReason.EXHAUSTED
    assert result.stats.distinct_states == 11
    assert result.stats.generated_states == 20
    assert result.stats.depth == 5


@pytest.mark.parametrize("workers", WORKERS)
def test_violation_and_witness_traces_are_check_s(workers: int) -> None:
    props = [always("below-7", lambda x: x < 7), sometimes("reach-9", lambda x: x == 9)]
    result = same_as_check(Counter(20), props, workers)
    assert result.end is EndReason.DECIDED
    assert len(result.result("below-7").trace or ()) == 4
    assert len(result.result("reach-9").trace or ()) == 5


@pytest.mark.parametrize("workers", WORKERS)
def test_initial_state_violation_and_unmet_sometimes(workers: int) -> None:
    same_as_check(Counter(3), [always("positive", lambda x: x > 0)], workers)
    same_as_check(Counter(5), [sometimes("reach-6", lambda x: x == 6)], workers)


@pytest.mark.parametrize("workers", WORKERS)
def test_cycles_self_loops_and_duplicate_initial_states(workers: int) -> None:
    cyclic = Graph([0], {0: [0, 1], 1: [2], 2: [0, 2]})
    assert same_as_check(cyclic, [always("ok", lambda x: True)], workers).stats.depth == 2
    result = same_as_check(Graph([1, 1, 2], {}), [always("ok", lambda x: True)], workers)
    assert (result.stats.distinct_states, result.stats.generated_states) == (2, 3)
    repeated = Graph([5, 3, 5, 4], {3: [5, 6], 4: [6], 5: [7]})
    same_as_check(repeated, [always("not-7", lambda x: x != 7)], workers)


@pytest.mark.parametrize("workers", WORKERS)
def test_the_smallest_parent_then_the_smallest_move_wins(workers: int) -> None:
    # 5 is reached from 1 (rank 1) and from 2 (rank 2), and twice from 1: check() keeps 1's
    # first edge; the parallel search must pick the same among arrivals from all workers.
    model = Graph([0], {0: [2, 1, 3], 1: [4, 5, 5], 2: [5], 3: [5], 5: [6]})
    same_as_check(model, [always("not-6", lambda x: x != 6)], workers)


@pytest.mark.parametrize("workers", WORKERS)
@pytest.mark.parametrize("bound", [0, 1, 3, 5, 6])
def test_depth_bounds_as_check(workers: int, bound: int) -> None:
    # Counter(10) is exhausted at depth 5: bounds 5 and 6 cut nothing off.
    result = same_as_check(Counter(10), [always("ok", lambda x: True)], workers, max_depth=bound)
    expected = EndReason.MAX_DEPTH if bound < 5 else EndReason.EXHAUSTED
    assert result.end is expected
    same_as_check(Counter(100), [always("below-4", lambda x: x < 4)], workers, max_depth=bound)


@pytest.mark.parametrize("workers", WORKERS)
@pytest.mark.parametrize("bound", [1, 4, 10])
def test_a_state_bound_keeps_check_s_verdicts(workers: int, bound: int) -> None:
    props = [always("below-9", lambda x: x < 9), sometimes("reach-3", lambda x: x == 3)]
    single = check(Counter(100), props, max_states=bound)
    parallel = check_parallel(Counter(100), props, workers=workers, max_states=bound)
    # check() decides both at 9, the tenth state: a bound of 10 lets it, 4 does not
    assert parallel.end is single.end
    assert single.end is (EndReason.DECIDED if bound == 10 else EndReason.MAX_STATES)
    assert [(r.verdict, r.trace) for r in parallel.results] == [
        (r.verdict, r.trace) for r in single.results
    ]
    assert parallel.stats.distinct_states >= bound  # checked at the end of a level


@pytest.mark.parametrize("workers", WORKERS)
def test_model_error_carries_check_s_message_and_trace(workers: int) -> None:
    with pytest.raises(ModelError) as single:
        check(Exploding(10, at=5), [always("ok", lambda x: True)])
    with pytest.raises(ModelError) as parallel:
        check_parallel(Exploding(10, at=5), [always("ok", lambda x: True)], workers=workers)
    assert str(parallel.value) == str(single.value)
    assert "ValueError in successors after 3 steps: boom" in str(parallel.value)
    assert parallel.value.trace == single.value.trace
    assert parallel.value.trace is not None and parallel.value.trace.last.state == 5


@pytest.mark.parametrize("workers", WORKERS)
def test_predicate_error_and_a_decision_before_a_model_error(workers: int) -> None:
    bad = [always("bad", lambda x: 1 / (x - 2) != 0)]
    with pytest.raises(ModelError) as single:
        check(Counter(5), bad)
    with pytest.raises(ModelError) as parallel:
        check_parallel(Counter(5), bad, workers=workers)
    assert str(parallel.value) == str(single.value)
    assert parallel.value.trace == single.value.trace
    # every property is decided at 2, before 5's expansion raises: no error, as in check()
    same_as_check(Exploding(10, at=5), [always("below-2", lambda x: x < 2)], workers)


class _BrokenInitial(Counter):
    def initial_states(self) -> Sequence[int]:
        raise RuntimeError("no start")


def test_initial_states_error_as_check() -> None:
    with pytest.raises(ModelError) as single:
        check(_BrokenInitial(3), [always("ok", lambda x: True)])
    with pytest.raises(ModelError) as parallel:
        check_parallel(_BrokenInitial(3), [always("ok", lambda x: True)], workers=2)
    assert str(parallel.value) == str(single.value)


@pytest.mark.slow  # 8 s; the catalogue's protocols as check stay in the default set
@settings(max_examples=50, deadline=None)
@given(graphs(), st.sampled_from(WORKERS))
def test_random_graphs_as_check(
    case: tuple[list[int], dict[int, list[int]], int], workers: int
) -> None:
    initial, edges, target = case
    model = Graph(initial, edges)
    same_as_check(model, [always("ok", lambda x: True)], workers)
    props = [always("avoid", lambda x: x != target), sometimes("odd", lambda x: x % 2 == 1)]
    same_as_check(model, props, workers)


# -- real protocols -------------------------------------------------------------


@pytest.mark.parametrize("workers", WORKERS)
def test_raft_election_as_check(workers: int) -> None:
    model, props = protocol("raft-election", N=3, NC=2, MaxTerm=2)
    result = same_as_check(model, props, workers)
    assert result.end is EndReason.EXHAUSTED
    assert result.stats.distinct_states == 321


@pytest.mark.parametrize("workers", (2, 3))
def test_broken_raft_election_traces_as_check(workers: int) -> None:
    model, props = protocol("raft-election", N=4, NC=2, MaxTerm=2, variant=1)
    result = same_as_check(model, props, workers)
    assert result.result("single-leader").verdict is Verdict.VIOLATED


@pytest.mark.parametrize("workers", (1, 3))
def test_a_string_heavy_protocol_as_check(workers: int) -> None:
    model, props = protocol("bully", crashes=0)  # node names, roles and messages are strings
    same_as_check(model, props, workers)
    anything = [always("anything", lambda s: True)]
    result = same_as_check(model, anything, workers)
    assert result.end is EndReason.EXHAUSTED


@pytest.mark.slow  # 2.3 s; the toy models' agreement stays
def test_a_cluster_protocol_with_violations_as_check() -> None:
    model, props = protocol("lease-no-fencing", nodes=2)
    result = same_as_check(model, props, 2)
    assert result.verdict is Verdict.VIOLATED


@pytest.mark.parametrize("workers", (1, 2))
def test_symmetry_as_check_with_the_same_reduction(workers: int) -> None:
    symmetry = Reductions(symmetry=True)
    model, props = protocol("raft-election", N=3, NC=3, MaxTerm=2)
    reduced = same_as_check(model, props, workers, reductions=symmetry)
    assert reduced.stats.distinct_states < check(model, props).stats.distinct_states
    model, props = protocol("raft-election", N=4, NC=2, MaxTerm=2, variant=1)
    same_as_check(model, props, workers, reductions=symmetry)


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_partial_order_reduction_with_one_worker_as_check() -> None:
    model, props = protocol("lease-no-fencing", nodes=2)
    same_as_check(model, props, 1, reductions=Reductions(por=True))
    same_as_check(model, props, 1, reductions=Reductions(por=True, symmetry=True))


def test_partial_order_reduction_needs_one_worker() -> None:
    with pytest.raises(LeadercheckError, match="one worker"):
        check_parallel(Counter(3), [], workers=2, reductions=Reductions(por=True))


# -- bounds, progress, interruption, failures -------------------------------------


def test_progress_is_called_once_per_level() -> None:
    seen: list[Progress] = []
    result = check_parallel(
        Counter(10), [always("ok", lambda x: True)], workers=2, progress=seen.append
    )
    assert [p.depth for p in seen] == list(range(result.stats.depth + 1))
    assert seen[-1].distinct_states == result.stats.distinct_states == 11
    assert seen[0].queue == 1


def test_memory_bound_stops_the_search() -> None:
    result = check_parallel(Counter(50), [always("ok", lambda x: True)], workers=2, max_memory=1)
    assert result.end is EndReason.MAX_MEMORY
    assert result.verdict is Verdict.INCOMPLETE
    assert result.stats.peak_memory_bytes > 0


def test_interrupt_keeps_the_stats_and_ends_the_workers() -> None:
    def interrupt(p: Progress) -> None:
        if p.depth == 3:
            raise KeyboardInterrupt

    props = [always("below-2", lambda x: x < 2), always("ok", lambda x: True)]
    result = check_parallel(Counter(100), props, workers=2, progress=interrupt)
    assert result.end is EndReason.INTERRUPTED
    assert result.stats.depth == 3 and result.stats.distinct_states == 7
    assert result.result("below-2").verdict is Verdict.VIOLATED  # found before the interrupt
    assert result.result("ok").verdict is Verdict.INCOMPLETE


class _Slow(Counter):
    def successors(self, state: int) -> Iterable[tuple[Action, int]]:
        time.sleep(0.002)
        return super().successors(state)


def test_ctrl_c_while_workers_run_ends_them() -> None:
    """With the handler `verify` installs: its record of the Ctrl-C ends the search even
    where Python loses the KeyboardInterrupt (in a finalizer the collector runs then)."""
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with interrupt_handler(keep_ignoring=False):
            result = check_parallel(_Slow(100_000), [always("ok", lambda x: True)], workers=2)
    finally:
        timer.cancel()
    assert result.end is EndReason.INTERRUPTED
    assert result.result("ok").verdict is Verdict.INCOMPLETE
    assert result.stats.distinct_states > 0


class _PidHashed(int):
    """A state whose hash depends on the process computing it."""

    def __hash__(self) -> int:
        return hash((int(self), os.getpid()))


class _PidModel(Model[int]):
    def initial_states(self) -> Sequence[int]:
        return [_PidHashed(i) for i in range(20)]

    def successors(self, state: int) -> Iterable[tuple[Action, int]]:
        return ()


def test_states_hashing_differently_in_workers_fail_loudly() -> None:
    with pytest.raises(LeadercheckError, match="hash states differently"):
        check_parallel(_PidModel(), [always("ok", lambda x: True)], workers=2)


class _Dying(Counter):
    def successors(self, state: int) -> Iterable[tuple[Action, int]]:
        if state == 3:
            os._exit(7)  # the worker process dies without a word
        return super().successors(state)


def test_a_dead_worker_is_an_error_not_a_hang() -> None:
    with pytest.raises(LeadercheckError, match="ended unexpectedly"):
        check_parallel(_Dying(10), [always("ok", lambda x: True)], workers=2)


def test_workers_must_match_the_transport_and_be_positive() -> None:
    with pytest.raises(LeadercheckError):
        check_parallel(Counter(3), [], workers=0)
    with ProcessTransport(3) as transport, pytest.raises(LeadercheckError, match="runs 3"):
        check_parallel(Counter(3), [], workers=2, transport=transport)


def test_a_given_transport_serves_several_searches() -> None:
    with ProcessTransport(2) as transport:
        for limit in (5, 9):
            props = [always("ok", lambda x: True)]
            result = check_parallel(Counter(limit), props, workers=2, transport=transport)
            assert result.stats.distinct_states == limit + 1
            assert transport.processes == []  # each search ends its workers

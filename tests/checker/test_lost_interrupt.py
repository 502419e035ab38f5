"""A Ctrl-C whose KeyboardInterrupt Python loses on the way still ends the search.

Python runs a signal's handler in whatever code runs next; where that is a `__del__`
(the garbage collector runs them anywhere), what the handler raises is printed and
ignored. The application's handler records the Ctrl-C all the same, and every search
looks at that record between levels (rounds, for sampling): it ends INTERRUPTED, not
EXHAUSTED after running on as if nothing had come.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest

from leadercheck.checker import EndReason, Progress, Verdict, always
from leadercheck.checker.engine.interrupts import ctrl_c_arrived, interrupt_handler
from leadercheck.checker.engine.settings import SIMULATE, Sampling, unbounded
from leadercheck.checker.engine.strategies.bfs import breadth_first
from leadercheck.checker.engine.strategies.processes.partitioned import partitioned
from leadercheck.checker.engine.strategies.sampling.run import check_sampled
from leadercheck.checker.result import CheckResult
from tests.toys import Counter

LIMIT = 20_000


class _SwallowsInterrupt:
    """Sends SIGINT while being collected, as garbage may be when Ctrl-C comes."""

    def __del__(self) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # the handler runs here, inside __del__: its raise is ignored


class _LoseCtrlC:
    """A progress callback that lets Ctrl-C come, and its KeyboardInterrupt be lost, once."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, progress: Progress) -> None:
        self.calls += 1
        if self.calls == 1:
            _SwallowsInterrupt()  # collected at once: SIGINT comes inside its __del__
            assert ctrl_c_arrived()  # recorded by the handler, though nothing was raised


@pytest.fixture
def handler() -> Iterator[None]:
    """The application's SIGINT handler, as `verify` installs it."""
    with interrupt_handler(keep_ignoring=False):
        yield


def _search(engine: str, progress: Any) -> CheckResult:
    settings = unbounded().but(progress=progress)
    model, claims = Counter(LIMIT), [always("ok", lambda x: True)]
    if engine == "bfs":
        return breadth_first(model, claims, settings)
    if engine == "workers-2":
        return partitioned(model, claims, settings.but(workers=2))
    sampling = Sampling.of(seed=1, walks=50, depth=LIMIT)
    return check_sampled(model, claims, settings.but(sampling=sampling), SIMULATE)


@pytest.mark.usefixtures("handler")
@pytest.mark.parametrize("engine", ["bfs", "workers-2", "simulate"])
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_ctrl_c_lost_in_a_finalizer_still_ends_the_search(engine: str) -> None:
    lose = _LoseCtrlC()
    result = _search(engine, lose)
    assert lose.calls >= 1
    assert result.end is EndReason.INTERRUPTED
    assert result.result("ok").verdict is Verdict.INCOMPLETE
    assert result.stats.distinct_states < LIMIT + 1


def test_without_a_ctrl_c_the_same_search_runs_to_the_end() -> None:
    """The callback alone, with no signal, ends nothing (the test above can fail)."""
    result = _search("bfs", lambda progress: None)
    assert result.end is EndReason.EXHAUSTED
    assert result.stats.distinct_states == LIMIT + 1

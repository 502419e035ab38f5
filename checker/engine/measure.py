"""Measuring a quantity over the reachable states: worst case, best case and mean.

The engine checks an invariant on every distinct reachable state exactly once, so a
measurement is an invariant that never fails and records a value as it goes. The
worst case comes with the shortest trace that reaches it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from leadercheck.checker.engine.settings import SearchSettings, unbounded
from leadercheck.checker.engine.strategies.bfs import breadth_first
from leadercheck.checker.model import Model
from leadercheck.checker.properties import always
from leadercheck.checker.result import EndReason, Measurement


def measure(
    model: Model[Any],
    value: Callable[[Any], int],
    where: Callable[[Any], bool],
    settings: SearchSettings | None = None,
    with_trace: bool = False,
) -> Measurement | None:
    """`value` over every reachable state satisfying `where`; None if there is none.

    The settings' bounds (none if not given), the memory limit and Ctrl-C apply as to any
    search; a measurement they cut
    short says so in its `end` (its figures are then those of the states explored).
    `with_trace` adds the shortest trace to a worst state, at the cost of a second search.
    """
    settings = settings if settings is not None else unbounded()
    seen: list[int] = []

    def record(state: Any) -> bool:
        if where(state):
            seen.append(value(state))
        return True

    first = breadth_first(model, [always("measure", record)], settings)
    if not seen:
        if first.end in (EndReason.EXHAUSTED, EndReason.DECIDED):
            return None
        return Measurement(0, 0, 0.0, 0, None, first.stats, first.end)  # cut before any
    worst = max(seen)
    trace = None
    if with_trace:
        reach = always("below-worst", lambda s: not (where(s) and value(s) == worst))
        trace = breadth_first(model, [reach], settings).result("below-worst").trace
    count = len(seen)
    return Measurement(worst, min(seen), sum(seen) / count, count, trace, first.stats, first.end)

"""Measuring a quantity over the reachable states: worst case, best case and mean.

The engine checks an invariant on every distinct reachable state exactly once, so a
measurement is an invariant that never fails and records a value as it goes. The
worst case comes with the shortest trace that reaches it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from checker.model import Model
from checker.properties import always
from checker.result import Measurement
from checker.search import check


def measure(
    model: Model[Any],
    value: Callable[[Any], int],
    where: Callable[[Any], bool],
    max_states: int | None = None,
    with_trace: bool = False,
) -> Measurement | None:
    """`value` over every reachable state satisfying `where`; None if there is none.

    `with_trace` adds the shortest trace to a worst state, at the cost of a second search.
    """
    seen: list[int] = []

    def record(state: Any) -> bool:
        if where(state):
            seen.append(value(state))
        return True

    first = check(model, [always("measure", record)], max_states=max_states)
    if not seen:
        return None
    worst = max(seen)
    trace = None
    if with_trace:
        reach = always("below-worst", lambda s: not (where(s) and value(s) == worst))
        trace = check(model, [reach], max_states=max_states).result("below-worst").trace
        assert trace is not None, "the worst state was reached once, so it is reachable"
    return Measurement(worst, min(seen), sum(seen) / len(seen), len(seen), trace, first.stats)

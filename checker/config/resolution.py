"""Seconds into ticks: the resolution a question needs, and rounding that never flatters.

The catalogue's timing models count whole ticks. A configuration's durations are real
numbers, so each is rounded to ticks of some length, and the rounding decides what a
verdict means. Every duration either harms the claim when it grows (the holder's belief,
a pause, a delay) or protects it (the store's TTL). Rounded *against* the claim (harmful
up, protective down), a model that still holds proves the real configuration safe;
rounded *for* it (harmful down, protective up), a model that still fails proves it
unsafe, and its trace is a real schedule (each figure in it is within the real bound).
When the two disagree the margin is below a tick: a finer tick is tried, up to a cap on
the model's size. Tick lengths are round numbers (1, 2 or 5 times a power of ten), so
a chart's time column reads as seconds a person would write.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

LADDER = tuple(m * 10.0**e for e in range(-3, 10) for m in (1, 2, 5))  # 1 ms up


@dataclass(frozen=True)
class Duration:
    """One model parameter in real seconds, and which way it pushes the claim."""

    seconds: float
    harmful: bool  # larger makes the claim likelier to break
    least: int = 0  # the model's smallest value for it


def tick_lengths(durations: Mapping[str, Duration], budget: int, cap: int) -> list[float]:
    """Tick lengths to try: first the finest that puts the largest duration within
    `budget` ticks, then finer ones while it stays within `cap` ticks."""
    largest = max((d.seconds for d in durations.values()), default=0.0)
    if largest <= 0:
        return [1.0]
    first = min((t for t in LADDER if largest / t <= budget), default=LADDER[-1])
    return [first] + [t for t in sorted(LADDER, reverse=True) if t < first and largest / t <= cap]


def in_ticks(
    durations: Mapping[str, Duration], tick: float, against: bool
) -> dict[str, int] | None:
    """Each duration in whole ticks, rounded against the claim (`against`) or for it;
    None when a value falls below what the model accepts."""
    ticks = {}
    for name, d in durations.items():
        exact = round(d.seconds / tick, 9)  # 0.3 / 0.1 is 2.9999999999999996
        up = d.harmful == against
        value = math.ceil(exact) if up else math.floor(exact)
        if value < d.least:
            return None
        ticks[name] = value
    return ticks

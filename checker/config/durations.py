"""Durations as configuration files write them: seconds as numbers, Go's `1m30s`, `500ms`.

One parser for every system, strict about what it accepts (ASCII digits, known units), so
a typo is one line naming the knob, never a silently different number.
"""

from __future__ import annotations

import math
import re

from leadercheck.checker.config.document import shown
from leadercheck.checker.errors import LeadercheckError

_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 0.001,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
LONGEST = 1_000_000.0  # seconds (11.6 days): past any timeout a leader election runs on
_PART = re.compile(r"([0-9]{1,9}(?:\.[0-9]{0,9})?|\.[0-9]{1,9})(ns|us|µs|μs|ms|s|m|h)")
_NUMBER = re.compile(r"[0-9]{1,9}(?:\.[0-9]{1,9})?")


def seconds(value: object, knob: str, unit: float = 1.0) -> float:
    """`value` in seconds: a number (in `unit` seconds: 0.001 for milliseconds), or a Go
    duration string such as `15s`, `1m30s` or `500ms`."""
    if isinstance(value, bool):
        raise LeadercheckError(f"{knob}: expected a duration, got {shown(value)}")
    if isinstance(value, int | float):
        number = float(value) * unit
    elif isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        number = float(value.strip()) * unit
    elif isinstance(value, str) and value.strip():
        text, number, at = value.strip(), 0.0, 0
        for found in _PART.finditer(text):
            if found.start() != at:
                break
            number += float(found.group(1)) * _UNITS[found.group(2)]
            at = found.end()
        if at != len(text):
            raise LeadercheckError(
                f"{knob}: {shown(value)} is not a duration (write 15s, 1m30s or 500ms)"
            )
    else:
        raise LeadercheckError(f"{knob}: expected a duration, got {shown(value)}")
    if not math.isfinite(number) or number < 0:
        raise LeadercheckError(f"{knob}: {shown(value)} must be a non-negative duration")
    if number > LONGEST:
        raise LeadercheckError(
            f"{knob}: {shown(value)} is {number:.3g} s, past any timeout a leader election runs "
            f"on (at most {LONGEST:,.0f} s)"
        )
    return number


def within(number: float, knob: str, value: object) -> float:
    """`number` seconds, refused past LONGEST (a knob of 1e300 s would size a search)."""
    if not math.isfinite(number) or number > LONGEST:
        raise LeadercheckError(
            f"{knob}: {number:.3g} s is past any timeout a leader election runs on (at most "
            f"{LONGEST:,.0f} s)"
        )
    return number


def period(value: object, knob: str, unit: float = 1.0) -> float:
    """A duration that must be positive: a TTL, an interval, a timeout (0 means none of
    them, and the systems refuse it or read it as a different setting)."""
    number = seconds(value, knob, unit)
    if number <= 0:
        raise LeadercheckError(f"{knob}: {shown(value)} must be a positive duration")
    return number


def count(value: object, knob: str, low: int = 0) -> int:
    """A whole number at least `low` (a retry count, a number of masters)."""
    if isinstance(value, bool) or not (
        isinstance(value, int)
        or (isinstance(value, str) and value.strip().isascii() and value.strip().isdigit())
    ):
        raise LeadercheckError(f"{knob}: expected a whole number, got {shown(value)}")
    number = int(value)
    if number < low:
        raise LeadercheckError(f"{knob}: {number} is below {low}")
    return number


def fraction(value: object, knob: str) -> float:
    """A rate such as a clock-drift factor: 0.01, or 1%."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise LeadercheckError(f"{knob}: expected a number such as 0.01, got {shown(value)}")
    text = str(value).strip()
    scale = 1.0
    if text.endswith("%"):  # 1% is 0.01
        text, scale = text[:-1].strip(), 0.01
    if not _NUMBER.fullmatch(text):
        raise LeadercheckError(f"{knob}: {shown(value)} is not a number such as 0.01 or 1%")
    number = float(text) * scale
    if number >= 1:
        raise LeadercheckError(f"{knob}: {number} must be below 1 (0.01 is 1%)")
    return number

"""Sizes as a user writes them ('512M', '8G', '1.5GiB'): one reading for every option and
spec that takes one (--max-memory, --memory, a gate case's bit array), and one way to
write them back."""

from __future__ import annotations

import re

from leadercheck.checker.errors import LeadercheckError

MAX_SIZE_TEXT = 40  # characters: a longer size is a typo, and float() would overflow on it
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str) -> int:
    """'512M', '8G', '1.5GiB' or a number of bytes (at most 2^63 - 1)."""
    if len(text) > MAX_SIZE_TEXT:
        raise LeadercheckError(f"memory size {text[:20]}... ({len(text)} characters) is too large")
    found = _SIZE.match(text)
    if not found:
        raise LeadercheckError(f"memory size {text!r}: expected a number with K, M, G or T")
    value = int(float(found.group(1)) * _UNITS[found.group(2).lower()])
    if value <= 0:
        raise LeadercheckError(f"memory size {text!r} must be positive")
    if value >= 1 << 63:
        raise LeadercheckError(f"memory size {text!r} is too large")
    return value


def format_size(nbytes: int) -> str:
    """'64 MiB', '512 KiB', or '1,000 bytes' when no unit divides it."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale} {unit}"
    return f"{nbytes:,} bytes"

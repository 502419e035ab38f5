"""Bit tricks the kernels share, compiled: the lowest set bit, the number of set bits."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

ONE = np.uint64(1)
_DEBRUIJN = np.uint64(0x03F79D71B4CB0A89)
# the position of the one set bit of x, indexed by (x * _DEBRUIJN) >> 58
_POSITION = np.zeros(64, dtype=np.int64)
for _bit in range(64):
    _POSITION[((1 << _bit) * int(_DEBRUIJN) % (1 << 64)) >> 58] = _bit


@njit(cache=True, inline="always")
def lowest(x: Any) -> Any:
    """The position of the lowest set bit of the non-zero uint64 `x` (a De Bruijn sequence)."""
    alone = x & (~x + ONE)
    return _POSITION[(alone * _DEBRUIJN) >> np.uint64(58)]


@njit(cache=True, inline="always")
def popcount(x: Any) -> Any:
    """The number of set bits of the small non-negative integer `x`."""
    c = 0
    while x:
        x &= x - 1
        c += 1
    return c

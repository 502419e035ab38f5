"""What the kernels share, compiled: bit tricks, and a successor begun as a copy of its row."""

from __future__ import annotations

from collections.abc import Sequence
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


@njit(cache=True, inline="always")
def begin(rows: Any, i: Any, out: Any, c: Any, parents: Any, moves: Any, m: Any) -> Any:
    """Successor c begins as a copy of rows[i], its parent i and its move m: the row to
    change."""
    row = out[c]
    for w in range(rows.shape[1]):
        row[w] = rows[i, w]
    parents[c] = i
    moves[c] = m
    return row


@njit(cache=True, inline="always")
def smaller(row: Any, than: Any) -> bool:
    """Whether `row` comes before `than`, word 0 first (how a representative is chosen)."""
    for w in range(row.shape[0]):
        if row[w] != than[w]:
            return row[w] < than[w]
    return False


def pair_index(n: int, s: int, d: int) -> int:
    """The number of the ordered pair (s, d), s != d, ids from 1: by s, then d (the bit of
    a message between them in a kernel's row)."""
    return (s - 1) * (n - 1) + (d - 1 if d < s else d - 2)


def renaming_tables(n: int, perms: Sequence[Sequence[int]]) -> tuple[Any, Any]:
    """Per renaming (perm[k]: node k's new position, from 0): each pair's new number, and
    each set of nodes' new set (5-bit sets, bit j for node j + 1)."""
    pair_maps = np.array(
        [
            [pair_index(n, q[s] + 1, q[d] + 1) for s in range(n) for d in range(n) if s != d]
            for q in perms
        ],
        dtype=np.int64,
    )
    bits_maps = np.array(
        [[sum(1 << q[j] for j in range(n) if bits >> j & 1) for bits in range(32)] for q in perms],
        dtype=np.int64,
    )
    return pair_maps, bits_maps

"""The compiled search's visited set: an open-addressing table of 60-bit fingerprints.

A row (a packed state, checker/kernel.py) is remembered by a 60-bit fingerprint of its
words, as the one-process search remembers `hash(state) & FP_MASK` (the same collision
estimate applies, checker/result.py); with `exact` the table keeps each row beside its
fingerprint and compares rows, so no collision is possible. Slots are probed linearly; the
table grows (twice the slots) before it is LOAD full, so a lookup stays a probe or two:
8 bytes a slot, about 12 per state (24 + 8 * words with `exact`). Where a growth would pass
the memory bound, the table fills up to LAST_LOAD first: slower lookups, not a stopped
search.

The functions are compiled once and cached on disk (numba's cache), and take any number of
words per row, so every model's kernel shares them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from leadercheck.checker.engine.store import FP_MASK

LOAD = 0.7  # the table grows before this share of its slots is used
# ...unless growing would pass the memory bound: then it fills up to this share instead
# (lookups slow down as the table fills, but the search goes on)
LAST_LOAD = 0.9
FIRST_SLOTS = 1 << 16
_MASK = np.uint64(FP_MASK)
_SEED = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, inline="always")
def _mix(h: Any) -> Any:
    """splitmix64's finaliser: every bit of `h` moves every bit of the result."""
    h ^= h >> np.uint64(30)
    h *= _M1
    h ^= h >> np.uint64(27)
    h *= _M2
    h ^= h >> np.uint64(31)
    return h


@njit(cache=True, inline="always")
def _fingerprint(rows: Any, i: int) -> Any:
    h = _SEED
    for w in range(rows.shape[1]):
        h = _mix(h ^ rows[i, w])
    fp = h & _MASK
    return fp if fp != 0 else np.uint64(1)  # 0 marks an empty slot


@njit(cache=True, inline="always")
def _same(kept: Any, slot: Any, rows: Any, i: int) -> bool:
    for w in range(rows.shape[1]):
        if kept[slot, w] != rows[i, w]:
            return False
    return True


@njit(cache=True)
def insert(
    table: Any,
    kept: Any,
    exact: bool,
    used: int,
    limit: int,
    rows: Any,
    start: int,
    count: int,
    fresh: Any,
) -> Any:
    """Add rows[start:count] that are not yet in `table`, in order, until `used` reaches
    `limit`: each new row's index goes to `fresh`. With `exact`, `kept` holds each slot's
    row and rows are compared whole. Returns (next row, new rows, used)."""
    mask = np.uint64(table.shape[0] - 1)
    new = 0
    i = start
    while i < count and used < limit:
        fp = _fingerprint(rows, i)
        slot = fp & mask
        while True:
            held = table[slot]
            if held == 0:
                table[slot] = fp
                if exact:
                    for w in range(rows.shape[1]):
                        kept[slot, w] = rows[i, w]
                fresh[new] = i
                new += 1
                used += 1
                break
            if held == fp and (not exact or _same(kept, slot, rows, i)):
                break
            slot = (slot + np.uint64(1)) & mask
        i += 1
    return i, new, used


@njit(cache=True)
def contains_any(table: Any, kept: Any, exact: bool, rows: Any, count: int) -> bool:
    """Whether any of rows[:count] is not in the table (a depth bound's question)."""
    mask = np.uint64(table.shape[0] - 1)
    for i in range(count):
        fp = _fingerprint(rows, i)
        slot = fp & mask
        while True:
            held = table[slot]
            if held == 0:
                return True
            if held == fp and (not exact or _same(kept, slot, rows, i)):
                break
            slot = (slot + np.uint64(1)) & mask
    return False


@njit(cache=True)
def rehash(old: Any, old_kept: Any, table: Any, kept: Any, exact: bool) -> None:
    """Move every fingerprint (and row, with `exact`) of `old` into the larger `table`."""
    mask = np.uint64(table.shape[0] - 1)
    for s in range(old.shape[0]):
        fp = old[s]
        if fp == 0:
            continue
        slot = fp & mask
        while table[slot] != 0:
            slot = (slot + np.uint64(1)) & mask
        table[slot] = fp
        if exact:
            for w in range(kept.shape[1]):
                kept[slot, w] = old_kept[s, w]


class Table:
    """The visited set: fingerprints (and rows, with `exact`) and how many are used."""

    def __init__(self, words: int, exact: bool) -> None:
        self.words = words
        self.exact = exact
        self.used = 0
        self._allocate(FIRST_SLOTS)

    def _allocate(self, slots: int) -> None:
        self.slots = np.zeros(slots, dtype=np.uint64)
        width = self.words if self.exact else 1
        self.kept = np.zeros((slots if self.exact else 1, width), dtype=np.uint64)
        self.limit = int(slots * LOAD)

    @property
    def bytes(self) -> int:
        return int(self.slots.nbytes + self.kept.nbytes)

    def growth(self) -> int:
        """The bytes the next growth allocates."""
        return 2 * self.bytes

    def fill_up(self) -> bool:
        """Let the table fill up to LAST_LOAD instead of growing; False if it already may."""
        last = int(self.slots.shape[0] * LAST_LOAD)
        if self.limit >= last:
            return False
        self.limit = last
        return True

    def grow(self) -> None:
        old, old_kept = self.slots, self.kept
        self._allocate(2 * old.shape[0])
        rehash(old, old_kept, self.slots, self.kept, self.exact)

    def add(self, rows: Any, start: int, count: int, fresh: Any) -> tuple[int, int]:
        """Add rows[start:count] until the table is full or they are all in: (next row,
        new rows written to `fresh`)."""
        nxt, new, self.used = insert(
            self.slots, self.kept, self.exact, self.used, self.limit, rows, start, count, fresh
        )
        return int(nxt), int(new)

    @property
    def full(self) -> bool:
        return self.used >= self.limit

    def any_new(self, rows: Any, count: int) -> bool:
        return bool(contains_any(self.slots, self.kept, self.exact, rows, count))

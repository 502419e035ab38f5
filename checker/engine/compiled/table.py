"""The compiled search's visited set: an open-addressing table of 96-bit fingerprints.

A row (a packed state, checker/kernel.py) is remembered by a 96-bit fingerprint of its
words: a 64-bit hash, which also places it, and a 32-bit check from an independent hash
beside it. Two rows are taken for one only if both agree, so the collision estimate
(checker/result.py) is on 2^96, and a 5-node search of 10^8 states and 10^9 transitions
stays near 10^-12 where 60 bits, as the one-process search keeps, would give 0.2. With
`exact` the table keeps each row instead of the check and compares rows, so no collision is
possible. Slots are probed linearly; the table grows (twice the slots) before it is LOAD
full, so a lookup stays a probe or two: 12 bytes a slot, about 17 per state (24 + 8 * words
with `exact`). Where a growth would pass the memory bound, the table fills up to LAST_LOAD
first (slower lookups, not a stopped search), then the search moves its fingerprints to
disk (`drain`, disk.py) and goes on with it empty.

The functions are compiled once and cached on disk (numba's cache), and take any number of
words per row, so every model's kernel shares them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from leadercheck.checker.engine.compiled.disk import sort_pairs

LOAD = 0.7  # the table grows before this share of its slots is used
# ...unless growing would pass the memory bound: then it fills up to this share instead
# (lookups slow down as the table fills, but the search goes on)
LAST_LOAD = 0.9
FIRST_SLOTS = 1 << 16
BITS = 96  # the fingerprint's width: the hash's 64 and the check's 32
_SEED = np.uint64(0x9E3779B97F4A7C15)
_CHECK_SEED = np.uint64(0xD6E8FEB86659FD93)  # a second, independent hash of the same words
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
def _hash(rows: Any, i: int, seed: Any) -> Any:
    h = seed
    for w in range(rows.shape[1]):
        h = _mix(h ^ rows[i, w])
    return h


@njit(cache=True, inline="always")
def _fingerprint(rows: Any, i: int) -> Any:
    fp = _hash(rows, i, _SEED)
    return fp if fp != 0 else np.uint64(1)  # 0 marks an empty slot


@njit(cache=True, inline="always")
def _check(rows: Any, i: int) -> Any:
    return np.uint32(_hash(rows, i, _CHECK_SEED) >> np.uint64(32))


@njit(cache=True, inline="always")
def _same(kept: Any, slot: Any, exact: bool, rows: Any, i: int, check: Any) -> bool:
    """Whether the row in `slot`, whose hash is row i's, is row i: compared whole with
    `exact`, else by the check (kept[slot, 0] holds it then)."""
    if not exact:
        return kept[slot, 0] == check
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
    `limit`: each new row's index goes to `fresh`. `kept` holds each slot's check, or with
    `exact` its row. Returns (next row, new rows, used)."""
    mask = np.uint64(table.shape[0] - 1)
    new = 0
    i = start
    while i < count and used < limit:
        fp = _fingerprint(rows, i)
        check = np.uint32(0) if exact else _check(rows, i)
        slot = fp & mask
        while True:
            held = table[slot]
            if held == 0:
                table[slot] = fp
                if exact:
                    for w in range(rows.shape[1]):
                        kept[slot, w] = rows[i, w]
                else:
                    kept[slot, 0] = check
                fresh[new] = i
                new += 1
                used += 1
                break
            if held == fp and _same(kept, slot, exact, rows, i, check):
                break
            slot = (slot + np.uint64(1)) & mask
        i += 1
    return i, new, used


@njit(cache=True, inline="always")
def _holds(table: Any, kept: Any, exact: bool, rows: Any, i: int) -> bool:
    """Whether the table holds rows[i] (its hash and check; with `exact`, the row)."""
    mask = np.uint64(table.shape[0] - 1)
    fp = _fingerprint(rows, i)
    check = np.uint32(0) if exact else _check(rows, i)
    slot = fp & mask
    while True:
        held = table[slot]
        if held == 0:
            return False
        if held == fp and _same(kept, slot, exact, rows, i, check):
            return True
        slot = (slot + np.uint64(1)) & mask


@njit(cache=True)
def _missing(table: Any, kept: Any, exact: bool, rows: Any, count: int, out: Any) -> int:
    """The indices of rows[:count] not in the table, into `out`; how many."""
    n = 0
    for i in range(count):
        if not _holds(table, kept, exact, rows, i):
            out[n] = i
            n += 1
    return n


@njit(cache=True)
def rehash(old: Any, old_kept: Any, table: Any, kept: Any, exact: bool) -> None:
    """Move every fingerprint and its check (or row, with `exact`) into the larger `table`."""
    mask = np.uint64(table.shape[0] - 1)
    for s in range(old.shape[0]):
        fp = old[s]
        if fp == 0:
            continue
        slot = fp & mask
        while table[slot] != 0:
            slot = (slot + np.uint64(1)) & mask
        table[slot] = fp
        for w in range(kept.shape[1]):
            kept[slot, w] = old_kept[s, w]


@njit(cache=True)
def _fingerprints(rows: Any, picked: Any, keys: Any, checks: Any) -> None:
    for k in range(picked.shape[0]):
        keys[k] = _fingerprint(rows, picked[k])
        checks[k] = _check(rows, picked[k])


def fingerprints(rows: Any, picked: Any) -> tuple[Any, Any]:
    """The hashes and checks of rows[picked], in that order (for the disk set)."""
    keys = np.empty(len(picked), dtype=np.uint64)
    checks = np.empty(len(picked), dtype=np.uint32)
    _fingerprints(rows, picked, keys, checks)
    return keys, checks


@njit(cache=True)
def _pack(table: Any, kept: Any) -> int:
    """Move the used slots' hashes and checks to the front, in slot order; how many."""
    n = 0
    for s in range(table.shape[0]):
        if table[s] != 0:
            table[n] = table[s]
            kept[n, 0] = kept[s, 0]
            n += 1
    return n


class Table:
    """The visited set: fingerprints and their checks (rows, with `exact`), and how many
    are used."""

    def __init__(self, words: int, exact: bool) -> None:
        self.words = words
        self.exact = exact
        self.used = 0
        self._allocate(FIRST_SLOTS)

    def _allocate(self, slots: int) -> None:
        self.slots = np.zeros(slots, dtype=np.uint64)
        if self.exact:
            self.kept = np.zeros((slots, self.words), dtype=np.uint64)
        else:
            self.kept = np.zeros((slots, 1), dtype=np.uint32)
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

    def drain(self) -> tuple[Any, Any]:
        """Every entry, sorted by hash: (hashes, checks), views of the table's own arrays,
        valid until `clear` (for the disk set; not with `exact`, whose rows do not go)."""
        assert not self.exact
        n = int(_pack(self.slots, self.kept))
        keys, checks = self.slots[:n], self.kept[:n, 0]
        if n:
            sort_pairs(keys, checks, n)
        return keys, checks

    def clear(self) -> None:
        """Empty the table, keeping its size."""
        self.slots[:] = 0
        self.kept[:] = 0
        self.used = 0

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

    def missing(self, rows: Any, count: int) -> Any:
        """The indices of rows[:count] the table does not hold."""
        out = np.empty(count, dtype=np.int64)
        n = int(_missing(self.slots, self.kept, self.exact, rows, count, out))
        return out[:n]

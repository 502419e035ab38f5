"""The compiled search's visited fingerprints on disk, once the table cannot grow in memory.

When the fingerprint table (table.py) is full and growing it would pass the memory bound,
its fingerprints are sorted in place and merged into a sorted file, and the table starts
empty again, as TLC's DiskFPSet keeps what memory cannot. A state then counts as new only
if neither the table nor the file holds its fingerprint. The file is read in order, never
at random: the search asks it about a whole level's new states at once (search.py:
delayed duplicate detection, a level being the unit a breadth-first search needs exact),
sorted, in one pass; merging a table in is one pass too.

Two files, in a private temporary directory removed with the search: the 64-bit hashes,
sorted, and beside each its 32-bit check (table.py). Entries with one hash are adjacent and
compared by their checks, so the file keeps the table's 96 bits. A failed write (a full
disk) is SpillFailed: the search stops, incomplete, and says why.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from leadercheck.checker.engine.compiled.levels import SpillFailed

CHUNK = 1 << 20  # entries read from the file at a time (12 MiB of hashes and checks)


@njit(cache=True)
def sort_pairs(keys: Any, vals: Any, count: int) -> None:
    """Sort keys[:count] in place, each vals entry moving with its key (an iterative
    quicksort, median of three, insertion sort below 16): no index array, so sorting a
    table at the memory bound allocates nothing."""
    stack = np.empty(128, dtype=np.int64)
    top = 0
    stack[0], stack[1] = 0, count - 1
    top = 2
    while top:
        top -= 2
        lo, hi = stack[top], stack[top + 1]
        while hi - lo > 16:
            mid = (lo + hi) // 2
            if keys[mid] < keys[lo]:
                keys[mid], keys[lo] = keys[lo], keys[mid]
                vals[mid], vals[lo] = vals[lo], vals[mid]
            if keys[hi] < keys[lo]:
                keys[hi], keys[lo] = keys[lo], keys[hi]
                vals[hi], vals[lo] = vals[lo], vals[hi]
            if keys[hi] < keys[mid]:
                keys[hi], keys[mid] = keys[mid], keys[hi]
                vals[hi], vals[mid] = vals[mid], vals[hi]
            pivot = keys[mid]
            i, j = lo, hi
            while i <= j:
                while keys[i] < pivot:
                    i += 1
                while keys[j] > pivot:
                    j -= 1
                if i <= j:
                    keys[i], keys[j] = keys[j], keys[i]
                    vals[i], vals[j] = vals[j], vals[i]
                    i += 1
                    j -= 1
            # the smaller side next, the larger one on the stack: the stack stays shallow
            if j - lo < hi - i:
                if i < hi:
                    stack[top], stack[top + 1] = i, hi
                    top += 2
                hi = j
            else:
                if lo < j:
                    stack[top], stack[top + 1] = lo, j
                    top += 2
                lo = i
        for k in range(lo + 1, hi + 1):
            key, val = keys[k], vals[k]
            m = k - 1
            while m >= lo and keys[m] > key:
                keys[m + 1], vals[m + 1] = keys[m], vals[m]
                m -= 1
            keys[m + 1], vals[m + 1] = key, val


@njit(cache=True)
def _found(
    chunk_keys: Any, chunk_vals: Any, keys: Any, vals: Any, lo: int, hi: int, out: Any
) -> None:
    """Mark out[q] for the queries keys[lo:hi] (sorted) that the chunk holds."""
    p = 0
    n = chunk_keys.shape[0]
    for q in range(lo, hi):
        key = keys[q]
        while p < n and chunk_keys[p] < key:
            p += 1
        r = p
        while r < n and chunk_keys[r] == key:
            if chunk_vals[r] == vals[q]:
                out[q] = True
                break
            r += 1


@njit(cache=True)
def _merge(a_keys: Any, a_vals: Any, b_keys: Any, b_vals: Any, o_keys: Any, o_vals: Any) -> int:
    """Merge two sorted runs into o_*, an entry in both once; returns the entries written."""
    i = j = k = 0
    na, nb = a_keys.shape[0], b_keys.shape[0]
    while i < na or j < nb:
        if j >= nb or (i < na and a_keys[i] < b_keys[j]):
            o_keys[k], o_vals[k] = a_keys[i], a_vals[i]
            i += 1
        elif i >= na or b_keys[j] < a_keys[i]:
            o_keys[k], o_vals[k] = b_keys[j], b_vals[j]
            j += 1
        else:  # one hash: keep b's entry, and a's unless it is the same check
            o_keys[k], o_vals[k] = b_keys[j], b_vals[j]
            if a_vals[i] != b_vals[j]:
                k += 1
                o_keys[k], o_vals[k] = a_keys[i], a_vals[i]
            i += 1
            j += 1
        k += 1
    return k


class DiskSet:
    """Sorted fingerprints in two files under `directory` (made and removed by the search)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.count = 0
        self._generation = 0
        self.keys_path = directory / "visited-0.keys"
        self.vals_path = directory / "visited-0.checks"

    def _chunks(self) -> Iterator[tuple[Any, Any]]:
        """The file's entries in order, CHUNK at a time, read (not mapped: a mapped file's
        pages would count as the process's memory, against its bound)."""
        if not self.count:
            return
        with open(self.keys_path, "rb") as keys, open(self.vals_path, "rb") as vals:
            for _ in range(0, self.count, CHUNK):
                k = np.fromfile(keys, dtype=np.uint64, count=CHUNK)
                v = np.fromfile(vals, dtype=np.uint32, count=CHUNK)
                yield k, v

    def holds(self, keys: Any, vals: Any) -> Any:
        """Which of the entries (in any order) the file holds, as a mask in their order:
        sorted for one pass over the file, the answers put back in place."""
        order = np.argsort(keys, kind="stable")
        found = np.empty(len(keys), dtype=np.bool_)
        found[order] = self.contains(keys[order], vals[order])
        return found

    def contains(self, keys: Any, vals: Any) -> Any:
        """Which of the entries (keys sorted, vals beside them) the file holds."""
        found = np.zeros(len(keys), dtype=np.bool_)
        if not self.count or not len(keys):
            return found
        for chunk_keys, chunk_vals in self._chunks():
            lo = int(np.searchsorted(keys, chunk_keys[0], side="left"))
            hi = int(np.searchsorted(keys, chunk_keys[-1], side="right"))
            if lo < hi:
                _found(chunk_keys, chunk_vals, keys, vals, lo, hi, found)
        return found

    def merge(self, keys: Any, vals: Any) -> None:
        """Add the entries (keys sorted, vals beside them): one pass into new files, at
        most two CHUNKs of entries in memory at a time."""
        self._generation += 1
        g = self._generation
        keys_out = self.directory / f"visited-{g}.keys"
        vals_out = self.directory / f"visited-{g}.checks"
        try:
            with open(keys_out, "wb") as ko, open(vals_out, "wb") as vo:
                written = self._merge_into(keys, vals, ko, vo)
        except OSError as exc:
            keys_out.unlink(missing_ok=True)
            vals_out.unlink(missing_ok=True)
            raise SpillFailed(f"writing visited fingerprints to {self.directory}: {exc}") from exc
        old = (self.keys_path, self.vals_path)
        self.keys_path, self.vals_path, self.count = keys_out, vals_out, written
        for path in old:
            path.unlink(missing_ok=True)

    def _merge_into(self, keys: Any, vals: Any, ko: Any, vo: Any) -> int:
        written, pos, n = 0, 0, len(keys)
        for chunk_keys, chunk_vals in self._chunks():
            at = 0
            while at < len(chunk_keys):
                # the new entries up to this chunk's last, CHUNK at most; then the chunk's
                # entries up to the last of those (all of it if none were held back)
                last = int(np.searchsorted(keys, chunk_keys[-1], side="right"))
                upto = min(last, pos + CHUNK)
                if upto < last:
                    stop = int(np.searchsorted(chunk_keys, keys[upto - 1], side="right"))
                    stop = max(stop, at)
                else:
                    stop = len(chunk_keys)
                written += _write(
                    chunk_keys[at:stop], chunk_vals[at:stop], keys[pos:upto], vals[pos:upto], ko, vo
                )
                at, pos = stop, upto
        for start in range(pos, n, CHUNK):  # beyond the file's last entry
            piece = slice(start, min(start + CHUNK, n))
            np.ascontiguousarray(keys[piece]).tofile(ko)
            np.ascontiguousarray(vals[piece]).tofile(vo)
            written += piece.stop - piece.start
        return written


def _write(a_keys: Any, a_vals: Any, b_keys: Any, b_vals: Any, ko: Any, vo: Any) -> int:
    """Merge two sorted runs and write them out; the entries written."""
    n = len(a_keys) + len(b_keys)
    if not n:
        return 0
    o_keys = np.empty(n, dtype=np.uint64)
    o_vals = np.empty(n, dtype=np.uint32)
    k = int(_merge(a_keys, a_vals, b_keys, b_vals, o_keys, o_vals))
    o_keys[:k].tofile(ko)
    o_vals[:k].tofile(vo)
    return k

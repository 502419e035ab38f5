"""lease-bench's kernel: the lease-fencing benchmark over packed rows, compiled.

The reference is models/lease_bench.py, action for action and in its order (Acquire(i) for
each i, or the holder's Renew, then Write(i), Pause(i), Resume(i), then Tick); tests hold
the two together on every reachable state of the benchmark sizes.

Layout (N <= 4, every time, expiry and token below 256), a row of two words:

- word 0: now (bits 0-7), holder (8-15, 0: never taken), expiresAt (16-23), token
  (24-31), hiEpoch (32-39), stale (40), paused[i] (41 + i - 1);
- word 1, node i at bit 16(i - 1): myTok (8 bits), myExp (8).

Symmetry: every node is interchangeable and ids occur only as `holder`. The representative
lists the nodes in ascending order of (myTok, myExp, paused, is the holder); nodes with
equal keys are equal in every field, so the order of a tie changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit

from leadercheck.checker.kernel import Kernel, defined_in
from leadercheck.checker.properties import Property

SHARED_CLAIMS = "leadercheck.specs.claims"
# The shared claims that read only what the claim key keeps: each node's token (its
# leadership, epoch and tenure) and pause, and the storage (hiEpoch, stale).
COVERED = frozenset(
    {"single-leader", "no-stale-write", "leader-elected", "write-accepted", "failover"}
)
BYTE = np.uint64(0xFF)
NODE = np.uint64(0xFFFF)
STALE = np.uint64(1 << 40)
PAUSED = 41


@njit(cache=True, inline="always")
def _get(word: Any, shift: Any) -> Any:
    return np.int64((word >> np.uint64(shift)) & BYTE)


@njit(cache=True, inline="always")
def _put(word: Any, shift: Any, value: Any) -> Any:
    return (word & ~(BYTE << np.uint64(shift))) | (np.uint64(value) << np.uint64(shift))


@njit(cache=True, inline="always")
def _emit(out: Any, c: Any, w0: Any, w1: Any, parents: Any, moves: Any, i: Any, m: Any) -> None:
    out[c, 0] = w0
    out[c, 1] = w1
    parents[c] = i
    moves[c] = m


@njit(cache=True)
def expand(
    rows: Any,
    start: int,
    stop: int,
    out: Any,
    parents: Any,
    moves: Any,
    n: int,
    ttl: int,
    max_time: int,
    fencing: bool,
    max_successors: int,
) -> tuple[int, int]:
    """See checker/kernel.py: Kernel.expand."""
    c = 0
    i = start
    cap = out.shape[0]
    while i < stop and c + max_successors <= cap:
        w0 = rows[i, 0]
        w1 = rows[i, 1]
        now = _get(w0, 0)
        holder = _get(w0, 8)
        expires_at = _get(w0, 16)
        token = _get(w0, 24)
        hi = _get(w0, 32)
        new_exp = now + ttl
        m = 0
        if now >= expires_at:  # Acquire(j)
            k = token + 1
            for j in range(n):
                paused = (w0 >> np.uint64(PAUSED + j)) & np.uint64(1)
                if not paused and _get(w1, 16 * j) == 0:
                    a0 = _put(_put(_put(w0, 8, j + 1), 16, new_exp), 24, k)
                    a1 = _put(_put(w1, 16 * j, k), 16 * j + 8, new_exp)
                    _emit(out, c, a0, a1, parents, moves, i, m)
                    c += 1
                    m += 1
        elif holder:  # Renew: the holder of the current lease, running
            j = holder - 1
            paused = (w0 >> np.uint64(PAUSED + j)) & np.uint64(1)
            if token == _get(w1, 16 * j) and not paused:
                _emit(out, c, _put(w0, 16, new_exp), _put(w1, 16 * j + 8, new_exp),
                      parents, moves, i, m)  # fmt: skip
                c += 1
                m += 1
        for j in range(n):  # Write(j)
            tok = _get(w1, 16 * j)
            paused = (w0 >> np.uint64(PAUSED + j)) & np.uint64(1)
            if tok and not paused:
                if tok >= hi:
                    a0 = _put(w0, 32, tok)
                elif fencing:
                    a0 = w0
                else:
                    a0 = w0 | STALE
                _emit(out, c, a0, w1, parents, moves, i, m)
                c += 1
                m += 1
        for j in range(n):  # Pause(j)
            bit = np.uint64(1) << np.uint64(PAUSED + j)
            if not w0 & bit:
                _emit(out, c, w0 | bit, w1, parents, moves, i, m)
                c += 1
                m += 1
        for j in range(n):  # Resume(j)
            bit = np.uint64(1) << np.uint64(PAUSED + j)
            if w0 & bit:
                _emit(out, c, w0 & ~bit, w1, parents, moves, i, m)
                c += 1
                m += 1
        if now < max_time:  # Tick
            t = now + 1
            a1 = w1
            for j in range(n):
                tok = _get(w1, 16 * j)
                paused = (w0 >> np.uint64(PAUSED + j)) & np.uint64(1)
                if tok and not paused and t >= _get(w1, 16 * j + 8):
                    a1 &= ~(NODE << np.uint64(16 * j))  # the believer drops its lease
            _emit(out, c, _put(w0, 0, t), a1, parents, moves, i, m)
            c += 1
            m += 1
        i += 1
    return i, c


@njit(cache=True)
def claim_keys(rows: Any, count: int, out: Any, n: int) -> None:
    """Tokens, pauses and the storage: all the covered claims read of a state."""
    for i in range(count):
        key = (rows[i, 0] >> np.uint64(32)) & np.uint64((1 << (9 + n)) - 1)
        for j in range(n):
            key = (key << np.uint64(8)) | np.uint64(_get(rows[i, 1], 16 * j))
        out[i] = key


@njit(cache=True)
def canonicalize(rows: Any, count: int, n: int) -> None:
    """See checker/kernel.py: Kernel.canonicalize."""
    keys = np.zeros(n, dtype=np.int64)
    order = np.zeros(n, dtype=np.int64)
    for i in range(count):
        w0 = rows[i, 0]
        w1 = rows[i, 1]
        holder = _get(w0, 8)
        for j in range(n):
            paused = np.int64((w0 >> np.uint64(PAUSED + j)) & np.uint64(1))
            keys[j] = (np.int64((w1 >> np.uint64(16 * j)) & NODE) << 2) | (paused << 1)
            keys[j] |= 1 if holder == j + 1 else 0
            order[j] = j
        for a in range(1, n):  # insertion sort of the node positions by key
            b = a
            while b > 0 and keys[order[b - 1]] > keys[order[b]]:
                order[b - 1], order[b] = order[b], order[b - 1]
                b -= 1
        a0 = w0 & ~(np.uint64((1 << n) - 1) << np.uint64(PAUSED))
        a1 = np.uint64(0)
        for q in range(n):
            j = order[q]
            a1 |= ((w1 >> np.uint64(16 * j)) & NODE) << np.uint64(16 * q)
            a0 |= ((w0 >> np.uint64(PAUSED + j)) & np.uint64(1)) << np.uint64(PAUSED + q)
            if holder == j + 1:
                a0 = _put(a0, 8, q + 1)
        rows[i, 0] = a0
        rows[i, 1] = a1


class LeaseBenchKernel(Kernel[Any]):
    """The kernel of one LeaseBenchModel; `state` builds its state from the nine fields."""

    words = 2

    def __init__(
        self, n: int, ttl: int, max_time: int, fencing: bool, symmetric: bool, state: Any
    ) -> None:
        self.n, self.ttl, self.max_time, self.fencing = n, ttl, max_time, fencing
        self.state = state
        self.symmetric = symmetric
        self.max_successors = 4 * n + 1

    def encode(self, state: Any) -> tuple[int, int]:
        w0 = (
            state.now
            | state.holder << 8
            | state.expires_at << 16
            | state.token << 24
            | state.hi_epoch << 32
            | int(state.stale) << 40
        )
        w1 = 0
        for j in range(self.n):
            w0 |= int(state.paused[j]) << (PAUSED + j)
            w1 |= (state.my_tok[j] | state.my_exp[j] << 8) << (16 * j)
        return w0, w1

    def decode(self, row: Sequence[int]) -> Any:
        w0, w1 = row
        n = self.n
        return self.state(
            w0 & 0xFF,
            w0 >> 8 & 0xFF,
            w0 >> 16 & 0xFF,
            w0 >> 24 & 0xFF,
            tuple(w1 >> (16 * j) & 0xFF for j in range(n)),
            tuple(w1 >> (16 * j + 8) & 0xFF for j in range(n)),
            tuple(bool(w0 >> (PAUSED + j) & 1) for j in range(n)),
            w0 >> 32 & 0xFF,
            bool(w0 >> 40 & 1),
        )

    def expand(self, rows: Any, start: int, stop: int, out: Any, parents: Any, moves: Any) -> Any:
        return expand(
            rows, start, stop, out, parents, moves,
            self.n, self.ttl, self.max_time, self.fencing, self.max_successors,
        )  # fmt: skip

    def canonicalize(self, rows: Any, count: int) -> None:
        if self.symmetric and count:
            canonicalize(rows, count, self.n)

    def claim_keys(self, rows: Any, count: int, out: Any) -> None:
        claim_keys(rows, count, out, self.n)

    def covers(self, prop: Property) -> bool:
        return prop.name in COVERED and defined_in(prop, SHARED_CLAIMS)

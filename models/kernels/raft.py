"""The kernel of the catalogue's Raft models (raft, raft-no-quorum, raft-volatile-vote,
even-quorum): models/raft.py over packed rows, compiled.

The reference is `RaftModel.successors` with the moves `ClusterModel` adds, action for
action and in its order: each running node's timeout and write, each delivery (messages in
their sorted order: RequestVote, VoteGranted, VoteRefused, then source, destination,
epoch), the tick, the faults (crash or restart per node, pause or resume per node, every
split, the heal, every loss), each followed by dropping the messages that became useless,
then the step that stabilizes timing. Tests hold the kernel to the model on every reachable
state of several sizes and variants.

Layout (N <= 5, terms below 7, budgets below 8), a row of 2 + E words, E the highest term
a node can reach (terms, or terms + 1 where timing stabilizes):

- a node record in 15 bits: up, paused, role (2), term (3), votedFor (3: 0 nobody, else
  the id), votes received (5: bit j - 1 for node j); nodes 1-4 in word 0 at bit 15(i - 1),
  node 5 in word 1 at bit 0;
- word 1 from bit 15: the storage's hiEpoch (3), stale (1), hiTenure (3), the island of a
  split (5: bit i - 1 for node i), the budgets left of crashes, partitions, losses and
  pauses (3 each), and whether timing has stabilized (1);
- word 1 + e for epoch e: one bit per possible message of that epoch, RequestVote at
  [0, P), VoteGranted at [P, 2P), VoteRefused at [2P, 3P), P = N(N - 1) ordered pairs.

The store, the ghost epoch, the store links and declared fault kinds are not in the row:
these models do not use them (the model offers its kernel only then).

Symmetry: all nodes are interchangeable. A row's representative is the smallest row (word 0
first) among its renamings that list the nodes in ascending order of a key that renaming
carries along (the record with votes as who: nobody, itself, another, and how many; its side
of a split; a sum over the messages it sends and receives of a weight per kind, epoch and
direction); nodes with equal keys are tried in every order. A split of exactly half is named
by the half holding node 1, as the model names it.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import permutations
from typing import Any

import numpy as np
from numba import njit

from leadercheck.checker.kernel import Kernel, defined_in
from leadercheck.checker.properties import Property
from leadercheck.models.kernels.common import (
    begin,
    lowest,
    pair_index,
    popcount,
    renaming_tables,
    smaller,
)

# The model's words (models/raft.py, which imports this module; the tests hold the two to
# one another).
ROLES = ("follower", "candidate", "leader")
KINDS = ("RequestVote", "VoteGranted", "VoteRefused")  # in their sorted order
FOLLOWER, CANDIDATE, LEADER = 0, 1, 2
RV, GRANTED, REFUSED = 0, 1, 2
SHARED_CLAIMS = "leadercheck.specs.claims"
# The shared claims that read only what the claim key keeps: each node's liveness, role and
# term, the storage, and whether the nodes are split.
COVERED = frozenset(
    {"single-leader", "no-stale-write", "leader-elected", "write-accepted", "failover",
     "election-started", "leader-during-partition"}
)  # fmt: skip

NODE = np.uint64(0x7FFF)
ONE = np.uint64(1)
HI, STALE, HIT, ISLAND, CRASHES, PARTITIONS, LOSSES, PAUSES, STABLE = (
    15, 18, 19, 22, 27, 30, 33, 36, 39
)  # fmt: skip
# fixed random weights of a message's kind, epoch and direction in a node's key
WEIGHTS = np.random.default_rng(42).integers(0, 2**63, size=128, dtype=np.uint64) | ONE
_NOBODY: frozenset[int] = frozenset()


@njit(cache=True, inline="always")
def _get(row: Any, k: Any) -> Any:
    if k < 4:
        return np.int64((row[0] >> np.uint64(15 * k)) & NODE)
    return np.int64(row[1] & NODE)


@njit(cache=True, inline="always")
def _put(row: Any, k: Any, node: Any) -> None:
    if k < 4:
        shift = np.uint64(15 * k)
        row[0] = (row[0] & ~(NODE << shift)) | (np.uint64(node) << shift)
    else:
        row[1] = (row[1] & ~NODE) | np.uint64(node)


@njit(cache=True, inline="always")
def _field(row: Any, shift: Any, width: Any) -> Any:
    return np.int64((row[1] >> np.uint64(shift)) & np.uint64((1 << width) - 1))


@njit(cache=True, inline="always")
def _set_field(row: Any, shift: Any, width: Any, value: Any) -> None:
    mask = np.uint64((1 << width) - 1) << np.uint64(shift)
    row[1] = (row[1] & ~mask) | (np.uint64(value) << np.uint64(shift))


@njit(cache=True, inline="always")
def _make(up: Any, paused: Any, role: Any, term: Any, voted: Any, votes: Any) -> Any:
    return up | (paused << 1) | (role << 2) | (term << 4) | (voted << 7) | (votes << 10)


@njit(cache=True, inline="always")
def _connected(island: Any, a: Any, b: Any) -> bool:
    return ((island >> a) & 1) == ((island >> b) & 1)


@njit(cache=True, inline="always")
def _reachable(row: Any, n: Any, k: Any, island: Any) -> Any:
    """Nodes up on node k's side, itself included (whether up or not: it is running)."""
    count = 0
    for j in range(n):
        if (j == k or _get(row, j) & 1) and _connected(island, k, j):
            count += 1
    return count


@njit(cache=True, inline="always")
def _quorum(row: Any, n: Any, k: Any, island: Any, visible: Any) -> Any:
    if visible:
        return _reachable(row, n, k, island) // 2 + 1
    return n // 2 + 1


@njit(cache=True, inline="always")
def _has_msgs(row: Any) -> bool:
    for w in range(2, row.shape[0]):
        if row[w]:
            return True
    return False


@njit(cache=True, inline="always")
def _useful(row: Any, kind: Any, s: Any, d: Any, e: Any, last_term: Any) -> bool:
    """Whether delivering the message could still change anything (RaftModel._useful)."""
    node = _get(row, d - 1)
    term = (node >> 4) & 7
    if kind == GRANTED:
        return ((node >> 2) & 3) == CANDIDATE and term == e
    if kind == REFUSED:
        return e > term
    voted = (node >> 7) & 7
    if e > term or (e == term and (voted == 0 or voted == s)):
        return True
    return ((_get(row, s - 1) >> 4) & 7) < last_term


@njit(cache=True, inline="always")
def _drop_useless(row: Any, k: Any, pairs: Any, src: Any, dst: Any, last_term: Any,
                  touch: Any) -> None:  # fmt: skip
    """Drop the messages that became useless when node k's record changed: whether a
    message is useful reads only its two nodes' records (and the last term, which only
    stabilizing changes), so only the messages to or from node k need a look."""
    near = touch[k]
    for w in range(2, row.shape[0]):
        e = w - 1
        for kind in range(3):
            bits = (row[w] >> np.uint64(kind * pairs)) & near
            while bits:
                p = lowest(bits)
                bits &= bits - ONE
                if not _useful(row, kind, src[p], dst[p], e, last_term):
                    row[w] &= ~(ONE << np.uint64(kind * pairs + p))


@njit(cache=True, inline="always")
def _present(row: Any, kind: Any, pairs: Any, pmask: Any, top: Any) -> Any:
    """The pairs with a message of `kind` in flight, of any epoch (a bit per pair): the
    messages in their sorted order are these pairs in order, then their epochs."""
    present = np.uint64(0)
    for e in range(1, top + 1):
        present |= (row[1 + e] >> np.uint64(kind * pairs)) & pmask
    return present


@njit(cache=True, inline="always")
def _number(perm: Any, n: Any) -> Any:
    """A renaming's number: its images as the digits of a base-n number (perm_index's)."""
    code = 0
    for k in range(n - 1, -1, -1):
        code = code * n + perm[k]
    return code


@njit(cache=True)
def expand(
    rows: Any,
    start: int,
    stop: int,
    out: Any,
    parents: Any,
    moves: Any,
    n: int,
    terms: int,
    visible: bool,
    durable: bool,
    stabilizes: bool,
    heals: bool,
    splits: Any,
    pair_of: Any,
    src: Any,
    dst: Any,
    touch: Any,
    max_successors: int,
) -> tuple[int, int]:
    """See checker/kernel.py: Kernel.expand."""
    words = rows.shape[1]
    top = words - 2  # the highest epoch
    pairs = n * (n - 1)
    pmask = np.uint64((1 << pairs) - 1)
    c = 0
    i = start
    cap = out.shape[0]
    while i < stop and c + max_successors <= cap:
        here = rows[i]
        stable = _field(here, STABLE, 1)
        last_term = terms + 1 if stable else terms
        island = _field(here, ISLAND, 5)
        m = 0
        # -- each running node's steps: timeout, then write ---------------------------
        for k in range(n):
            node = _get(here, k)
            if not node & 1 or (node >> 1) & 1:
                continue
            role = (node >> 2) & 3
            term = (node >> 4) & 7
            may = True
            if stable:
                may = not _has_msgs(here) and 2 * _reachable(here, n, k, island) > n
            if role != LEADER and term < last_term and may:
                t = term + 1
                row = begin(rows, i, out, c, parents, moves, m)
                for j in range(n):
                    if j != k and _get(here, j) & 1 and _connected(island, k, j):
                        row[1 + t] |= ONE << np.uint64(RV * pairs + pair_of[k, j])
                need = _quorum(here, n, k, island, visible)
                won = LEADER if 1 >= need else CANDIDATE
                _put(row, k, _make(1, 0, won, t, k + 1, 1 << k))
                _drop_useless(row, k, pairs, src, dst, last_term, touch)
                c += 1
                m += 1
            if role == LEADER:
                row = begin(rows, i, out, c, parents, moves, m)
                hit = _field(here, HIT, 3)
                if term < hit:
                    _set_field(row, STALE, 1, 1)
                _set_field(row, HI, 3, max(term, _field(here, HI, 3)))
                _set_field(row, HIT, 3, max(term, hit))
                c += 1
                m += 1
        # -- deliveries, in the sorted order of the messages --------------------------
        blocked = False
        for kind in range(3):
            present = _present(here, kind, pairs, pmask, top)
            while present:
                p = lowest(present)
                present &= present - ONE
                s, d = src[p], dst[p]
                for e in range(1, top + 1):
                    bit = ONE << np.uint64(kind * pairs + p)
                    if not here[1 + e] & bit:
                        continue
                    before = _get(here, d - 1)
                    if not before & 1 or (before >> 1) & 1:
                        continue
                    blocked = True
                    row = begin(rows, i, out, c, parents, moves, m)
                    row[1 + e] &= ~bit
                    node = before
                    if e > (node >> 4) & 7:  # adopt the newer term
                        node = _make(1, 0, FOLLOWER, e, 0, 0)
                    term = (node >> 4) & 7
                    if kind == RV:
                        voted = (node >> 7) & 7
                        if e == term and (voted == 0 or voted == s):
                            node = (node & ~(7 << 7)) | (s << 7)
                        granted = ((node >> 7) & 7) == s and e == term
                        if _get(here, s - 1) & 1 and _connected(island, d - 1, s - 1):
                            kind_back = GRANTED if granted else REFUSED
                            reply = kind_back * pairs + pair_of[d - 1, s - 1]
                            row[1 + term] |= ONE << np.uint64(reply)
                    elif kind == GRANTED:
                        votes = ((node >> 10) & 31) | (1 << (s - 1))
                        node = (node & ~(31 << 10)) | (votes << 10)
                        if popcount(votes) >= _quorum(here, n, d - 1, island, visible):
                            node = (node & ~(3 << 2)) | (LEADER << 2)
                    _put(row, d - 1, node)
                    _drop_useless(row, d - 1, pairs, src, dst, last_term, touch)
                    c += 1
                    m += 1
        # -- the tick, when nothing is in flight to a running node ---------------------
        if not blocked:  # a tick changes nothing here
            row = begin(rows, i, out, c, parents, moves, m)
            c += 1
            m += 1
        # -- faults and recoveries ------------------------------------------------------
        crashes = _field(here, CRASHES, 3)
        partitions = _field(here, PARTITIONS, 3)
        losses = _field(here, LOSSES, 3)
        pauses = _field(here, PAUSES, 3)
        for k in range(n):
            node = _get(here, k)
            if node & 1 and crashes:  # crash: the messages to it are lost
                row = begin(rows, i, out, c, parents, moves, m)
                for w in range(2, words):
                    for kind in range(3):
                        for j in range(n):
                            if j != k:
                                p = pair_of[j, k]
                                row[w] &= ~(ONE << np.uint64(kind * pairs + p))
                voted = (node >> 7) & 7 if durable else 0
                _put(row, k, _make(0, 0, FOLLOWER, (node >> 4) & 7, voted, 0))
                _set_field(row, CRASHES, 3, crashes - 1)
                _drop_useless(row, k, pairs, src, dst, last_term, touch)
                c += 1
                m += 1
            elif not node & 1:  # restart
                row = begin(rows, i, out, c, parents, moves, m)
                _put(row, k, node | 1)
                c += 1
                m += 1
        for k in range(n):
            node = _get(here, k)
            if node & 1 and not (node >> 1) & 1 and pauses:
                row = begin(rows, i, out, c, parents, moves, m)
                _put(row, k, node | 2)
                _set_field(row, PAUSES, 3, pauses - 1)
                c += 1
                m += 1
            elif node & 1 and (node >> 1) & 1:
                row = begin(rows, i, out, c, parents, moves, m)
                _put(row, k, node & ~2)
                c += 1
                m += 1
        if partitions and island == 0:
            for x in range(splits.shape[0]):
                side = splits[x]
                row = begin(rows, i, out, c, parents, moves, m)
                for w in range(2, words):  # messages between the two sides are lost
                    bits = row[w]
                    while bits:
                        b = lowest(bits)
                        bits &= bits - ONE
                        p = b % pairs
                        if not _connected(side, src[p] - 1, dst[p] - 1):
                            row[w] &= ~(ONE << np.uint64(b))
                _set_field(row, ISLAND, 5, side)
                _set_field(row, PARTITIONS, 3, partitions - 1)
                c += 1
                m += 1
        if heals and island != 0:
            row = begin(rows, i, out, c, parents, moves, m)
            _set_field(row, ISLAND, 5, 0)
            c += 1
            m += 1
        if losses:
            for kind in range(3):
                present = _present(here, kind, pairs, pmask, top)
                while present:
                    p = lowest(present)
                    present &= present - ONE
                    for e in range(1, top + 1):
                        bit = ONE << np.uint64(kind * pairs + p)
                        if here[1 + e] & bit:
                            row = begin(rows, i, out, c, parents, moves, m)
                            row[1 + e] &= ~bit
                            _set_field(row, LOSSES, 3, losses - 1)
                            c += 1
                            m += 1
        # -- timing stabilizes: no fault from here on ---------------------------------
        if stabilizes and not stable:
            row = begin(rows, i, out, c, parents, moves, m)
            for shift in (CRASHES, PARTITIONS, LOSSES, PAUSES):
                _set_field(row, shift, 3, 0)
            _set_field(row, STABLE, 1, 1)
            c += 1
            m += 1
        i += 1
    return i, c


@njit(cache=True)
def claim_keys(rows: Any, count: int, out: Any, n: int) -> None:
    """What the covered claims read: each node's role while it is up, and its term while
    it leads (its epoch and tenure); the storage; whether the nodes are split."""
    for i in range(count):
        row = rows[i]
        key = np.uint64(row[1] >> np.uint64(HI)) & np.uint64(0x7F)
        key |= np.uint64(1 if _field(row, ISLAND, 5) else 0) << np.uint64(7)
        for k in range(n):
            node = _get(row, k)
            if node & 1:
                role = (node >> 2) & 3
                term = (node >> 4) & 7 if role == LEADER else 0
                key |= np.uint64(1 | (role << 1) | (term << 3)) << np.uint64(8 + 6 * k)
        out[i] = key


@njit(cache=True, inline="always")
def _keys(row: Any, n: Any, pairs: Any, src: Any, dst: Any, keys: Any, first: Any) -> None:
    """Per node, a key renaming carries along: its record (votes as who: nobody, itself,
    another, and how many), its side of a split, its messages by kind, epoch and direction;
    then refined once by the keys of the nodes it votes for, has votes from and exchanges
    messages with (so fewer nodes tie)."""
    island = _field(row, ISLAND, 5)
    size = popcount(island)
    for k in range(n):
        node = _get(row, k)
        voted = (node >> 7) & 7
        vote = 0 if voted == 0 else (1 if voted == k + 1 else 2)
        votes = (node >> 10) & 31
        side = 0 if not island else (size if (island >> k) & 1 else n - size)
        own = (node & 127) | (vote << 7) | (popcount(votes) << 9) | (((votes >> k) & 1) << 12)
        keys[k] = np.uint64(own | (side << 13))
    for w in range(2, row.shape[0]):
        bits = row[w]
        while bits:
            b = lowest(bits)
            bits &= bits - ONE
            slot = ((b // pairs) * 8 + w) * 4  # kind and epoch; then sent, received
            p = b % pairs
            keys[src[p] - 1] += WEIGHTS[slot]
            keys[dst[p] - 1] += WEIGHTS[slot + 1]
    for k in range(n):
        first[k] = keys[k]
    for k in range(n):  # one round of refinement by the neighbours' keys
        node = _get(row, k)
        voted = (node >> 7) & 7
        if voted and voted != k + 1:
            keys[k] += (first[voted - 1] ^ WEIGHTS[0]) * WEIGHTS[1]
        votes = (node >> 10) & 31
        for j in range(n):
            if j != k and (votes >> j) & 1:
                keys[k] += (first[j] ^ WEIGHTS[2]) * WEIGHTS[3]
    for w in range(2, row.shape[0]):
        bits = row[w]
        while bits:
            b = lowest(bits)
            bits &= bits - ONE
            slot = ((b // pairs) * 8 + w) * 4
            p = b % pairs
            keys[src[p] - 1] += (first[dst[p] - 1] ^ WEIGHTS[slot + 2]) * (WEIGHTS[slot] | ONE)
            keys[dst[p] - 1] += (first[src[p] - 1] ^ WEIGHTS[slot + 3]) * (WEIGHTS[slot + 1] | ONE)


@njit(cache=True, inline="always")
def _rename(row: Any, n: Any, pairs: Any, perm: Any, pair_map: Any, bits_map: Any,
            into: Any) -> None:  # fmt: skip
    into[0] = 0
    into[1] = row[1] & ~(NODE | (np.uint64(31) << np.uint64(ISLAND)))
    for k in range(n):
        node = _get(row, k)
        voted = (node >> 7) & 7
        moved = voted if voted == 0 else perm[voted - 1] + 1
        node = (node & 127) | (moved << 7) | (bits_map[(node >> 10) & 31] << 10)
        _put(into, perm[k], node)
    island = bits_map[_field(row, ISLAND, 5)]
    if 2 * popcount(island) == n and not island & 1:
        island = ((1 << n) - 1) & ~island
    _set_field(into, ISLAND, 5, island)
    for w in range(2, row.shape[0]):
        bits = row[w]
        moved_word = np.uint64(0)
        while bits:
            b = lowest(bits)
            bits &= bits - ONE
            moved_word |= ONE << np.uint64((b // pairs) * pairs + pair_map[b % pairs])
        into[w] = moved_word


@njit(cache=True)
def canonicalize(
    rows: Any,
    count: int,
    n: int,
    perms: Any,
    perm_index: Any,
    pair_maps: Any,
    bits_maps: Any,
    src: Any,
    dst: Any,
    orders: Any,
    factorial: Any,
) -> None:
    """See checker/kernel.py: Kernel.canonicalize. The nodes sorted by key give the
    renaming; the nodes of a run of equal keys are tried in every order (`orders[r]`: the
    orders of r things), and the smallest row is kept."""
    pairs = n * (n - 1)
    words = rows.shape[1]
    keys = np.zeros(n, dtype=np.uint64)
    first = np.zeros(n, dtype=np.uint64)
    order = np.zeros(n, dtype=np.int64)
    trying = np.zeros(n, dtype=np.int64)
    perm = np.zeros(n, dtype=np.int64)
    starts = np.zeros(n, dtype=np.int64)
    lengths = np.zeros(n, dtype=np.int64)
    counters = np.zeros(n, dtype=np.int64)
    best = np.zeros(words, dtype=np.uint64)
    trial = np.zeros(words, dtype=np.uint64)
    for i in range(count):
        _keys(rows[i], n, pairs, src, dst, keys, first)
        for k in range(n):
            order[k] = k
        for a in range(1, n):  # insertion sort of the nodes by key
            b = a
            while b > 0 and keys[order[b - 1]] > keys[order[b]]:
                order[b - 1], order[b] = order[b], order[b - 1]
                b -= 1
        runs = 0
        q = 0
        while q < n:
            r = q + 1
            while r < n and keys[order[r]] == keys[order[q]]:
                r += 1
            if r - q > 1:
                starts[runs] = q
                lengths[runs] = r - q
                counters[runs] = 0
                runs += 1
            q = r
        kept = 0  # runs whose order matters: a run of twins (each swap of neighbours in
        for x in range(runs):  # it leaves the row as it is) gives one row in every order
            twins = True
            for t in range(lengths[x] - 1):
                a, b = order[starts[x] + t], order[starts[x] + t + 1]
                for k in range(n):
                    perm[k] = k
                perm[a], perm[b] = b, a
                y = perm_index[_number(perm, n)]
                _rename(rows[i], n, pairs, perms[y], pair_maps[y], bits_maps[y], trial)
                for w in range(words):
                    if trial[w] != rows[i, w]:
                        twins = False
                        break
                if not twins:
                    break
            if not twins:
                starts[kept] = starts[x]
                lengths[kept] = lengths[x]
                kept += 1
        runs = kept
        found = False
        while True:
            for k in range(n):
                trying[k] = order[k]
            for x in range(runs):
                at, size = starts[x], lengths[x]
                for t in range(size):
                    trying[at + t] = order[at + orders[size, counters[x], t]]
            for q in range(n):
                perm[trying[q]] = q
            x = perm_index[_number(perm, n)]
            _rename(rows[i], n, pairs, perms[x], pair_maps[x], bits_maps[x], trial)
            if not found or smaller(trial, best):
                best[:] = trial
                found = True
            x = 0  # the next combination of orders, the first run fastest
            while x < runs:
                counters[x] += 1
                if counters[x] < factorial[lengths[x]]:
                    break
                counters[x] = 0
                x += 1
            if x == runs:
                break
        rows[i, :] = best


class RaftKernel(Kernel[Any]):
    """The kernel of one RaftModel (or SplitRaftModel). `build` holds the model's own
    records (RaftNode, ClusterState, Store, Storage, Network, Message, Faults, Timing)."""

    def __init__(self, model: Any, symmetric: bool, build: dict[str, Any]) -> None:
        self.n = n = model.n
        self.terms = model.terms
        self.visible = model.visible_quorum
        self.durable = model.durable_vote
        self.stabilizes = model.stabilizes
        self.heals = model.heals
        self.build = build
        self._store = build["Store"]()
        self.top = self.terms + (1 if self.stabilizes else 0)
        self.words = 2 + self.top
        self.pairs = n * (n - 1)
        self.symmetric = symmetric
        self.pair_of = np.zeros((n, n), dtype=np.int64)
        self.src = np.zeros(max(self.pairs, 1), dtype=np.int64)
        self.dst = np.zeros(max(self.pairs, 1), dtype=np.int64)
        for s in range(n):
            for d in range(n):
                if s != d:
                    p = pair_index(n, s + 1, d + 1)
                    self.pair_of[s, d] = p
                    self.src[p], self.dst[p] = s + 1, d + 1
        self.touch = np.array(  # per node, the pairs it is one end of
            [sum(1 << p for p in range(self.pairs) if k + 1 in (self.src[p], self.dst[p]))
             for k in range(n)],
            dtype=np.uint64,
        )  # fmt: skip
        self.splits = np.array(
            [sum(1 << (i - 1) for i in side) for side in build["islands"](n)], dtype=np.int64
        )
        self.max_successors = 4 * n + len(self.splits) + 4 + 2 * 3 * self.pairs * self.top
        if symmetric:
            perms = list(permutations(range(n)))
            self.perms = np.array(perms, dtype=np.int64)
            self.factorial = np.array([1, 1, 2, 6, 24, 120], dtype=np.int64)
            self.orders = np.zeros((6, 120, 5), dtype=np.int64)
            for size in range(1, 6):
                for x, q in enumerate(permutations(range(size))):
                    self.orders[size, x, :size] = q
            self.perm_index = np.zeros(n**n, dtype=np.int64)
            for x, q in enumerate(perms):  # a renaming's number (_number): images in base n
                self.perm_index[sum(q[k] * n**k for k in range(n))] = x
            self.pair_maps, self.bits_maps = renaming_tables(n, perms)

    # -- rows and states ------------------------------------------------------------

    def encode(self, state: Any) -> tuple[int, ...]:
        n, pairs = self.n, self.pairs
        row = [0] * self.words
        for k, node in enumerate(state.nodes):
            bits = (
                int(node.up)
                | int(node.paused) << 1
                | ROLES.index(node.role) << 2
                | node.term << 4
                | node.voted << 7
                | sum(1 << (j - 1) for j in node.votes) << 10
            )
            if k < 4:
                row[0] |= bits << (15 * k)
            else:
                row[1] |= bits
        storage, faults = state.storage, state.faults
        row[1] |= (
            storage.hi_epoch << HI
            | int(storage.stale) << STALE
            | storage.hi_tenure << HIT
            | sum(1 << (i - 1) for i in state.net.island) << ISLAND
            | faults.crashes << CRASHES
            | faults.partitions << PARTITIONS
            | faults.losses << LOSSES
            | faults.pauses << PAUSES
            | int(bool(state.extra is not None and state.extra.stable)) << STABLE
        )
        for msg in state.net.msgs:
            p = int(self.pair_of[msg.src - 1, msg.dst - 1])
            row[1 + msg.epoch] |= 1 << (KINDS.index(msg.kind) * pairs + p)
        assert n == len(state.nodes)
        return tuple(row)

    def decode(self, row: Sequence[int]) -> Any:
        b = self.build
        n, pairs = self.n, self.pairs
        node_record, roles = b["RaftNode"], ROLES
        nodes = []
        for k in range(n):
            bits = (row[0] >> (15 * k) if k < 4 else row[1]) & 0x7FFF
            votes = bits >> 10
            nodes.append(
                node_record(
                    bool(bits & 1),
                    bool(bits & 2),
                    roles[bits >> 2 & 3],
                    bits >> 4 & 7,
                    bits >> 7 & 7,
                    frozenset(j + 1 for j in range(n) if votes >> j & 1) if votes else _NOBODY,
                )
            )
        w1 = row[1]
        msgs = []
        message = b["Message"]
        for e in range(1, self.top + 1):
            word = row[1 + e]
            while word:
                bit = (word & -word).bit_length() - 1
                word &= word - 1
                kind, p = divmod(bit, pairs)
                msgs.append(message(KINDS[kind], int(self.src[p]), int(self.dst[p]), e))
        island = frozenset(i + 1 for i in range(n) if w1 >> (ISLAND + i) & 1)
        return b["ClusterState"](
            nodes=tuple(nodes),
            store=self._store,
            storage=b["Storage"](w1 >> HI & 7, bool(w1 >> STALE & 1), w1 >> HIT & 7),
            net=b["Network"](island, _NOBODY, tuple(sorted(msgs)), False),
            faults=b["Faults"](
                w1 >> CRASHES & 7, w1 >> PARTITIONS & 7, w1 >> LOSSES & 7, w1 >> PAUSES & 7, ()
            ),
            ghost=0,
            extra=b["Timing"](bool(w1 >> STABLE & 1)) if self.stabilizes else None,
        )

    # -- batches --------------------------------------------------------------------

    def expand(self, rows: Any, start: int, stop: int, out: Any, parents: Any, moves: Any) -> Any:
        return expand(
            rows, start, stop, out, parents, moves,
            self.n, self.terms, self.visible, self.durable, self.stabilizes, self.heals,
            self.splits, self.pair_of, self.src, self.dst, self.touch, self.max_successors,
        )  # fmt: skip

    def canonicalize(self, rows: Any, count: int) -> None:
        if self.symmetric and count:
            canonicalize(
                rows, count, self.n, self.perms, self.perm_index, self.pair_maps,
                self.bits_maps, self.src, self.dst, self.orders, self.factorial,
            )  # fmt: skip

    def claim_keys(self, rows: Any, count: int, out: Any) -> None:
        claim_keys(rows, count, out, self.n)

    def covers(self, prop: Property) -> bool:
        return prop.name in COVERED and defined_in(prop, SHARED_CLAIMS)

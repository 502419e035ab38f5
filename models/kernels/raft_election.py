"""raft-election's kernel: the benchmark's transition system over packed rows, compiled.

The reference is models/raft_election.py, action for action and in its order; tests hold
the two together on every reachable state of the benchmark sizes.

Layout (N <= 5, MaxTerm <= 4), a row of MaxTerm words:

- word 0, node k (0-based) at bit 12k: term - 1 (2 bits), role (2), votedFor (3: 0 nobody,
  else the node's id), votesGranted (5: bit j - 1 for node j);
- word t - 1 for each message term t in 2..MaxTerm: one bit per possible message of that
  term, RequestVote at bits [0, P), refused responses at [P, 2P), granted ones at [2P, 3P),
  where P = N(N - 1) ordered pairs (s, d), s != d, numbered by s then d. A set of messages
  is a set of bits, as in the benchmark's compact Promela.

Successors are generated as `RaftElectionModel._moves` orders them: per node Timeout then
BecomeLeader, then each message in the order of the sorted message tuple (requests before
responses, then by term, source, destination, refused before granted), handling it and
then dropping it.

Symmetry: the model's groups are nodes 1..NC and NC+1..N. A row's representative is the
smallest row (word 0 first) among its renamings that list each group's nodes in ascending
order of a key that renaming carries along (term, role, whom it voted for: nobody, itself
or another, how many votes it has, and how many messages of each kind and term it sent and
receives); nodes with equal keys are tried in every order.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import permutations, product
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

# The model's numbers (models/raft_election.py, which imports this module; the tests hold
# the two to one another): roles, message kinds, the variant that forgets votes.
CANDIDATE, LEADER = 1, 2
REQUEST_VOTE, RESPONSE = 0, 1
NOQUORUM, FORGETVOTE = 1, 2
NODE_BITS = 12
# The shared claims (specs/claims.py) that read only what the claim key keeps: each node's
# role, term and liveness (always up here) and the storage (constant here).
SHARED_CLAIMS = "leadercheck.specs.claims"
COVERED = frozenset(
    {"single-leader", "no-stale-write", "leader-elected", "write-accepted", "failover",
     "election-started"}
)  # fmt: skip
FIELD = np.uint64(0xFFF)
ONE = np.uint64(1)


@njit(cache=True, inline="always")
def _pair_nodes(n: Any, b: Any) -> tuple[Any, Any]:
    s = b // (n - 1) + 1
    r = b % (n - 1)
    d = r + 1 if r + 1 < s else r + 2
    return s, d


@njit(cache=True, inline="always")
def _pair(n: Any, s: Any, d: Any) -> Any:
    return (s - 1) * (n - 1) + (d - 1 if d < s else d - 2)


@njit(cache=True, inline="always")
def _set_node(out: Any, c: Any, k: Any, node: Any) -> None:
    shift = np.uint64(NODE_BITS * k)
    out[c, 0] = (out[c, 0] & ~(FIELD << shift)) | (np.uint64(node) << shift)


@njit(cache=True)
def expand(
    rows: Any,
    start: int,
    stop: int,
    out: Any,
    parents: Any,
    moves: Any,
    n: int,
    nc: int,
    max_term: int,
    forget: bool,
    need: int,
    max_successors: int,
) -> tuple[int, int]:
    """See checker/kernel.py: Kernel.expand."""
    pairs = n * (n - 1)
    field_mask = np.uint64((1 << pairs) - 1)
    c = 0
    i = start
    cap = out.shape[0]
    while i < stop and c + max_successors <= cap:
        w0 = rows[i, 0]
        m = 0
        for k in range(n):
            node = np.int64((w0 >> np.uint64(NODE_BITS * k)) & FIELD)
            term = (node & 3) + 1
            role = (node >> 2) & 3
            if k < nc and role != LEADER and term < max_term:  # Timeout(k + 1)
                # the new term, term + 1, is stored as term and its requests go to word term
                begin(rows, i, out, c, parents, moves, m)
                _set_node(out, c, k, term | (CANDIDATE << 2) | ((k + 1) << 4) | ((1 << k) << 7))
                requests = np.uint64((1 << (n - 1)) - 1) << np.uint64(k * (n - 1))
                out[c, term] |= requests
                c += 1
                m += 1
            if role == CANDIDATE and popcount(node >> 7) >= need:  # BecomeLeader(k + 1)
                begin(rows, i, out, c, parents, moves, m)
                _set_node(out, c, k, (node & ~(3 << 2)) | (LEADER << 2))
                c += 1
                m += 1
        for t in range(2, max_term + 1):  # requests: HandleRequestVote, DropMessage
            pending = rows[i, t - 1] & field_mask
            while pending:
                b = lowest(pending)
                pending &= pending - ONE
                j, d = _pair_nodes(n, b)  # candidate j asks node d
                k = d - 1
                node = np.int64((w0 >> np.uint64(NODE_BITS * k)) & FIELD)
                term = (node & 3) + 1
                higher = t > term
                ti = t if higher else term
                vf = 0 if higher else (node >> 4) & 7
                grant = t == ti and (forget or vf == 0 or vf == j)
                vote = j if grant and not forget else vf
                bit = ONE << np.uint64(b)
                begin(rows, i, out, c, parents, moves, m)
                out[c, t - 1] &= ~bit
                reply = (2 if grant else 1) * pairs + _pair(n, d, j)
                out[c, ti - 1] |= ONE << np.uint64(reply)
                if higher:
                    _set_node(out, c, k, (ti - 1) | (vote << 4))
                else:
                    _set_node(out, c, k, (node & ~(7 << 4)) | (vote << 4))
                c += 1
                begin(rows, i, out, c, parents, moves, m + 1)
                out[c, t - 1] &= ~bit
                c += 1
                m += 2
        for t in range(2, max_term + 1):  # responses: HandleRequestVoteResponse, DropMessage
            word = rows[i, t - 1]
            refused = (word >> np.uint64(pairs)) & field_mask
            granted = (word >> np.uint64(2 * pairs)) & field_mask
            pending = refused | granted
            while pending:
                b = lowest(pending)
                pending &= pending - ONE
                j, d = _pair_nodes(n, b)  # node j answers candidate d
                k = d - 1
                for g in range(2):
                    if not ((granted if g else refused) >> np.uint64(b)) & ONE:
                        continue
                    bit = ONE << np.uint64((1 + g) * pairs + b)
                    node = np.int64((w0 >> np.uint64(NODE_BITS * k)) & FIELD)
                    term = (node & 3) + 1
                    begin(rows, i, out, c, parents, moves, m)
                    out[c, t - 1] &= ~bit
                    if t > term:
                        _set_node(out, c, k, t - 1)
                    elif t == term and (node >> 2) & 3 == CANDIDATE and g:
                        _set_node(out, c, k, node | ((1 << (j - 1)) << 7))
                    c += 1
                    begin(rows, i, out, c, parents, moves, m + 1)
                    out[c, t - 1] &= ~bit
                    c += 1
                    m += 2
        i += 1
    return i, c


@njit(cache=True)
def claim_keys(rows: Any, count: int, out: Any, mask: Any) -> None:
    """Terms and roles: all the claims read of a raft-election state."""
    for i in range(count):
        out[i] = rows[i, 0] & mask


@njit(cache=True, inline="always")
def _node_keys(row: Any, n: int, max_term: int, keys: Any) -> None:
    pairs = n * (n - 1)
    for k in range(n):
        node = np.int64((row[0] >> np.uint64(NODE_BITS * k)) & FIELD)
        voted = (node >> 4) & 7
        vclass = 0 if voted == 0 else (1 if voted == k + 1 else 2)
        keys[k] = (node & 15) | (vclass << 4) | (popcount(node >> 7) << 6)
    for t in range(2, max_term + 1):
        word = row[t - 1]
        while word:
            b = lowest(word)
            word &= word - ONE
            kind = b // pairs
            s, d = _pair_nodes(n, b % pairs)
            slot = (kind * 3 + (t - 2)) * 2  # 3 kinds x 3 terms x (sent, received)
            keys[s - 1] += 1 << (9 + 3 * slot)
            keys[d - 1] += 1 << (9 + 3 * (slot + 1))


@njit(cache=True, inline="always")
def _renamed(row: Any, n: int, perm: Any, pair_map: Any, vote_map: Any, bits_map: Any,
             into: Any) -> None:  # fmt: skip
    pairs = n * (n - 1)
    w0 = np.uint64(0)
    for k in range(n):
        node = np.int64((row[0] >> np.uint64(NODE_BITS * k)) & FIELD)
        moved = (node & 15) | (vote_map[(node >> 4) & 7] << 4) | (bits_map[node >> 7] << 7)
        w0 |= np.uint64(moved) << np.uint64(NODE_BITS * perm[k])
    into[0] = w0
    for w in range(1, row.shape[0]):
        word = row[w]
        moved_word = np.uint64(0)
        while word:
            b = lowest(word)
            word &= word - ONE
            kind = b // pairs
            moved_word |= ONE << np.uint64(kind * pairs + pair_map[b % pairs])
        into[w] = moved_word


@njit(cache=True)
def canonicalize(
    rows: Any,
    count: int,
    n: int,
    max_term: int,
    perms: Any,
    group_of: Any,
    pair_maps: Any,
    vote_maps: Any,
    bits_maps: Any,
) -> None:
    """See checker/kernel.py: Kernel.canonicalize."""
    words = rows.shape[1]
    keys = np.zeros(n, dtype=np.int64)
    placed = np.zeros(n, dtype=np.int64)
    best = np.zeros(words, dtype=np.uint64)
    trial = np.zeros(words, dtype=np.uint64)
    for i in range(count):
        keys[:] = 0
        _node_keys(rows[i], n, max_term, keys)
        found = False
        for p in range(perms.shape[0]):
            perm = perms[p]
            for k in range(n):
                placed[perm[k]] = keys[k]
            ordered = True
            for q in range(n - 1):
                if group_of[q] == group_of[q + 1] and placed[q] > placed[q + 1]:
                    ordered = False
                    break
            if not ordered:
                continue
            _renamed(rows[i], n, perm, pair_maps[p], vote_maps[p], bits_maps[p], trial)
            if not found or smaller(trial, best):
                best[:] = trial
                found = True
        rows[i, :] = best


class RaftElectionKernel(Kernel[Any]):
    """The kernel of one RaftElectionModel (its N, NC, MaxTerm and variant); `state` builds
    the model's state from its five variables."""

    def __init__(
        self, n: int, nc: int, max_term: int, variant: int, symmetric: bool, state: Any
    ) -> None:
        self.n, self.nc, self.max_term = n, nc, max_term
        self.state = state
        self.forget = variant == FORGETVOTE
        self.need = 2 if variant == NOQUORUM else n // 2 + 1
        self.pairs = n * (n - 1)
        self.words = max_term
        self.max_successors = 2 * n + 2 * 3 * self.pairs * (max_term - 1)
        self.symmetric = symmetric
        self.role_mask = np.uint64(sum(15 << (NODE_BITS * k) for k in range(n)))
        if symmetric:
            self._symmetry_tables()

    def _symmetry_tables(self) -> None:
        n, nc = self.n, self.nc
        groups = (tuple(range(nc)), tuple(range(nc, n)))
        perms = []
        for parts in product(*(permutations(g) for g in groups)):
            perm = [0] * n
            for group, image in zip(groups, parts, strict=True):
                for k, to in zip(group, image, strict=True):
                    perm[k] = to
            perms.append(perm)
        self.perms = np.array(perms, dtype=np.int64)
        self.group_of = np.array([0 if k < nc else 1 for k in range(n)], dtype=np.int64)
        self.pair_maps, self.bits_maps = renaming_tables(n, perms)
        self.vote_maps = np.array(
            [[0, *(perm[v - 1] + 1 for v in range(1, n + 1))] + [0] * (7 - n) for perm in perms],
            dtype=np.int64,
        )

    # -- rows and states ------------------------------------------------------------

    def encode(self, state: Any) -> tuple[int, ...]:
        n = self.n
        row = [0] * self.words
        for k in range(n):
            node = (
                (state.terms[k] - 1)
                | (state.roles[k] << 2)
                | (state.voted[k] << 4)
                | ((state.granted[k] >> 1) << 7)
            )
            row[0] |= node << (NODE_BITS * k)
        for kind, t, s, d, g in state.msgs:
            field = 0 if kind == REQUEST_VOTE else 1 + g
            row[t - 1] |= 1 << (field * self.pairs + pair_index(n, s, d))
        return tuple(row)

    def decode(self, row: Sequence[int]) -> Any:
        n, pairs = self.n, self.pairs
        nodes = [(row[0] >> (NODE_BITS * k)) & 0xFFF for k in range(n)]
        msgs: list[tuple[int, int, int, int, int]] = []
        for t in range(2, self.max_term + 1):
            word = row[t - 1]
            for b in range(3 * pairs):
                if word >> b & 1:
                    field, p = divmod(b, pairs)
                    s = p // (n - 1) + 1
                    r = p % (n - 1)
                    d = r + 1 if r + 1 < s else r + 2
                    kind = REQUEST_VOTE if field == 0 else RESPONSE
                    msgs.append((kind, t, s, d, 1 if field == 2 else 0))
        return self.state(
            tuple((node & 3) + 1 for node in nodes),
            tuple((node >> 2) & 3 for node in nodes),
            tuple((node >> 4) & 7 for node in nodes),
            tuple(((node >> 7) & 31) << 1 for node in nodes),
            tuple(sorted(msgs)),
        )

    # -- batches --------------------------------------------------------------------

    def expand(self, rows: Any, start: int, stop: int, out: Any, parents: Any, moves: Any) -> Any:
        return expand(
            rows, start, stop, out, parents, moves,
            self.n, self.nc, self.max_term, self.forget, self.need, self.max_successors,
        )  # fmt: skip

    def canonicalize(self, rows: Any, count: int) -> None:
        if self.symmetric and count:
            canonicalize(
                rows, count, self.n, self.max_term,
                self.perms, self.group_of, self.pair_maps, self.vote_maps, self.bits_maps,
            )  # fmt: skip

    def claim_keys(self, rows: Any, count: int, out: Any) -> None:
        claim_keys(rows, count, out, self.role_mask)

    def covers(self, prop: Property) -> bool:
        return prop.name in COVERED and defined_in(prop, SHARED_CLAIMS)

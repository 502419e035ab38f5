"""Leader election with the lease in a database row: a conditional UPDATE, or a blind write.

Many services elect a leader without etcd or ZooKeeper, with one row of a table in
the database they already run: `leader(node, token, expires)`. A node that wants to
lead first reads the row; if the lease is free (never taken, or expired) it remembers
the token it saw and then, in a second statement, takes the row:

    UPDATE leader SET node = me, token = token + 1, expires = now() + ttl
     WHERE token = $seen AND expires < now()

The WHERE clause turns the read and the update into one compare-and-swap: if another
node took the row in between, no row matches, nothing changes and the node stays a
follower, whatever happened between its two statements (another node, a pause). From
then on the holder leads exactly as in `lease-fencing`: it renews
(`SET expires = ... WHERE node = me AND token = $mine`), believes it leads until its own
copy of the lease runs out, checks that it still leads and then writes to the storage
with its token, and the storage rejects a token below one it has accepted.

The anti-pattern, `lease-blind-write`, drops the WHERE clause:

    UPDATE leader SET node = me, token = $seen + 1, expires = now() + ttl

Two nodes that both read the free row, at the same moment or with one paused between
its read and its update, both update it, and both believe they hold the lease with the
same token: two leaders of one epoch (single-leader breaks in four steps). Fencing does
not help: their writes carry equal tokens, so the storage accepts both, and a write by
the leader the row no longer names, after its successor's, is the stale write
no-stale-write forbids (it judges which leadership made each write, not the token:
eight steps). A late blind write can even take the token back down; the storage rejects
the writes made under the lowered token.

The row is the shared `Store`: holder is the row's node, token its token, ttl_left the
ticks before `expires`, revision the number of times the row has been taken (a renewal
leaves it alone). A node starts a read only while the revision is below `tokens`; that
bounds the acquisitions of both variants (the token alone would not, since a blind
write can lower it). Between its read and its update a running node owes the update
before time passes, so only a pause can delay it; a crash forgets the read, an update
sent while the link to the store is cut fails, and a lost reply to the update leaves the
node a follower that does not know the row is now its. Renewal, the checked write and
the clock are `LeaseModel`'s. A crash is off by default (it only ends a read or a
lease early, and triples the states).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import NamedTuple

from leadercheck.checker.model import Action
from leadercheck.models.cluster import STORE, ClusterState, FaultBounds, Store
from leadercheck.models.cluster.base import Successor
from leadercheck.models.cluster.nodes import node_name
from leadercheck.models.lease import ExtendsLeaseNode, LeaseModel, lease_params
from leadercheck.models.params import Param, ProtocolEntry


class _RowFields(NamedTuple):
    up: bool = True
    paused: bool = False
    token: int = 0  # the lease token it believes it holds; 0: not leader
    left: int = 0  # ticks its own copy of the lease has left
    pending: int = 0  # token of a write it has decided to send; 0: none
    leadership: int = 0  # ghost: which leadership its token belongs to
    pending_tenure: int = 0  # ghost: the leadership its pending write was decided in
    seen: int | None = None  # token of the free row it read and will update; None: no read


class RowNode(_RowFields, ExtendsLeaseNode):
    """A `LeaseNode` that also remembers the token it saw when it read the free row."""

    __slots__ = ()

    def describe(self) -> dict[str, object]:
        return {**self.lease.describe(), "seen_token": self.seen}

    def summary(self) -> str:
        line = self.lease.summary()
        return line if self.seen is None else f"{line}, read t{self.seen}"


class LeaseRowModel(LeaseModel):
    """A lease taken by read-then-UPDATE of a row, with or without `WHERE token = $seen`."""

    # Partial-order reduction: a stopped node still only falls silent (the read and the
    # update touch only the node's own record and the store; a read makes the node
    # urgent, and only its own update clears that), but a cut link does more than block:
    # an update sent while the store is unreachable fails, a step of its own.
    stop_only_delays = True
    cut_only_blocks = False

    def __init__(self, nodes: int, ttl: int, tokens: int, blind: bool, faults: FaultBounds):
        super().__init__(nodes, ttl, tokens, fencing=True, faults=faults)
        self.blind = blind

    def initial_node(self, i: int) -> RowNode:
        return RowNode()

    def node_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        yield from self._take_row(s, i)
        if s.net.reaches_store(i):
            yield from self.renew_steps(s, i)
        yield from self.leader_steps(s, i)

    def _take_row(self, s: ClusterState, i: int) -> Iterator[Successor]:
        """Read the row, then UPDATE it (an update is tried even when the store is unreachable)."""
        node: RowNode = s.node(i)
        name = node_name(i)
        if node.seen is None:
            free = s.store.lease_free() and s.store.revision < self.tokens
            if not node.token and free and s.net.reaches_store(i):
                note = f"row free: token {s.store.token}"
                yield (
                    Action("read", name, STORE, note),
                    s.with_node(i, node._replace(seen=s.store.token)),
                )
            return
        forgot = s.with_node(i, node._replace(seen=None))
        if not s.net.reaches_store(i):
            yield Action("update", name, STORE, "fails: store unreachable"), forgot
            return
        store = self._update(s.store, i, node.seen)
        if store is None:
            note = f"0 rows: token is {s.store.token}, not {node.seen}"
            yield Action("update", name, STORE, note), forgot
            return
        where = "blind" if self.blind else f"WHERE token = {node.seen}"
        note = f"{where}: token {store.token}, ttl {self.ttl}"
        granted, tenure = self.grant(forgot)
        leader = node._replace(seen=None, token=store.token, left=self.ttl, leadership=tenure)
        yield from self.store_call(granted, i, Action("update", name, STORE, note), store, leader)

    def _update(self, row: Store, i: int, seen: int) -> Store | None:
        """The row after node i's UPDATE, or None when no row matches its WHERE clause."""
        if self.blind:
            return Store(i, seen + 1, self.ttl, row.revision + 1)
        return row.acquire(i, self.ttl) if row.token == seen else None

    def urgent(self, s: ClusterState, i: int) -> bool:
        node: RowNode = s.node(i)
        return node.seen is not None or super().urgent(s, i)

    def crash_node(self, node: RowNode) -> RowNode:
        return RowNode(up=False)

    def restart_node(self, node: RowNode, i: int) -> RowNode:
        return RowNode()


ROW_TAKES = Param("tokens", 3, 1, 6, "times the row may be taken (bounds tokens and revisions)")


def _params(**faults: int) -> tuple[Param, ...]:
    return lease_params(ROW_TAKES, **faults)


def _builder(blind: bool) -> Callable[..., LeaseRowModel]:
    def build(nodes: int, ttl: int, tokens: int, **faults: int) -> LeaseRowModel:
        return LeaseRowModel(nodes, ttl, tokens, blind, FaultBounds(**faults))

    return build


PROTOCOLS = (
    ProtocolEntry(
        "lease-cas",
        "lease in a database row: read, then UPDATE ... WHERE token = $seen",
        _params(crashes=0, partitions=1, losses=1, pauses=1),
        _builder(blind=False),
    ),
    ProtocolEntry(
        "lease-blind-write",
        "lease in a database row: read, then UPDATE without a WHERE clause",
        _params(crashes=0, partitions=0, losses=0, pauses=1),
        _builder(blind=True),
    ),
)

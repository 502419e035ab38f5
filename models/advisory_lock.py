"""Leader election with a PostgreSQL session advisory lock, with and without fencing.

Many services that already run PostgreSQL elect a leader with
`SELECT pg_try_advisory_lock(key)` on a connection of their own: the lock is held by that
session until it unlocks or ends. There is no TTL: a holder stopped by a pause keeps its
session (its kernel still answers TCP), so nobody else can take the lock, which is what
makes the lock attractive. The session ends when its connection does: the holder crashes,
or its connection is reset (a proxy, a load balancer or a firewall in between gives up on
it). The server then lets the lock go at once, and another node takes it, while the old
holder learns of it only when it next uses its connection.

A holder checks that it still holds the lock (its session's row in `pg_locks`) before
it writes, then writes. A check on a connection that has gone tells it that it lost the
lock; cut off from the server it cannot check. What breaks: the old holder's write,
decided before its connection was reset, lands after the new holder's (no-stale-write),
and for a while both believe they hold the one lock (single-leader: the lock has no token).

`advisory-lock-fencing` draws a token from a sequence on the storage when it takes the
lock, and the storage refuses a write whose token is below one it accepted.

The store is the server's lock table (a `Store`: the holder and the token counter, the
sequence's, which the server keeps); the connection's end is `connection_lost`. A lost
reply is off: a client whose call timed out closes its connection, which ends the session
it may just have taken the lock in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from leadercheck.checker.model import Action
from leadercheck.models.cluster import STORE, ClusterState, FaultBounds, Store
from leadercheck.models.cluster.base import Successor
from leadercheck.models.cluster.nodes import node_name
from leadercheck.models.lease import TOKENS, LeaseModel
from leadercheck.models.lock_holder import LockHolderNodes
from leadercheck.models.params import NODES, ProtocolEntry, fault_params

HELD = 1  # the store's ttl_left while a session holds the lock: it never counts down


class AdvisoryLockModel(LockHolderNodes, LeaseModel):
    """A session advisory lock; `fencing`: a token from a sequence, checked by the storage.

    Partial-order reduction is off: a crash or a cut ends the holder's session, which
    changes the store (LeaseModel's promises do not hold here).
    """

    stop_only_delays = False
    cut_only_blocks = False
    remote_check = True  # the session's row in pg_locks

    def __init__(self, nodes: int, tokens: int, fencing: bool, faults: FaultBounds) -> None:
        super().__init__(nodes, HELD, tokens, fencing, faults)

    def renew_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        """Nothing to renew: the session holds the lock while it lives."""
        return iter(())

    def leader_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        """The check reads the session's lock back; a lock found gone is let go."""
        node = s.node(i)
        if node.token and not node.pending and s.net.reaches_store(i):
            if s.store.holder != i or not s.store.ttl_left:
                lost = self.let_go(s, i)
                note = "not leader: its session ended, and the lock with it"
                yield Action("check", node_name(i), None, note), lost
                return
        yield from super().leader_steps(s, i)

    def acquire_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        """pg_try_advisory_lock: true when no session holds the lock."""
        node = s.node(i)
        if not node.token and s.store.token < self.tokens:
            store = s.store.acquire(i, HELD)
            if store is not None:
                granted, tenure = self.grant(s)
                leader = node._replace(token=store.token, left=HELD, leadership=tenure)
                note = f"locked: token {store.token} drawn"
                action = Action("acquire", node_name(i), STORE, note)
                yield from self.store_call(granted, i, action, store, leader)

    def check_note(self, node: Any) -> str:
        return f"still leader: its session holds the lock (token {node.token})"

    def tick_node(self, node: Any) -> Any:
        return node  # no timer: a holder believes until its connection tells it otherwise

    def tick_store(self, store: Store) -> Store:
        return store  # no TTL: the lock is the session's

    def connection_lost(self, s: ClusterState, i: int) -> ClusterState:
        """The server ends node i's session, and lets go of the lock it held."""
        if s.store.holder == i and s.store.ttl_left:
            return s._replace(store=s.store._replace(holder=0, ttl_left=0))
        return s


ADVISORY_PARAMS = (NODES, TOKENS, *fault_params(crashes=1, partitions=1, losses=0, pauses=1))


def _builder(fencing: bool) -> Callable[..., AdvisoryLockModel]:
    def build(nodes: int, tokens: int, **faults: int) -> AdvisoryLockModel:
        return AdvisoryLockModel(nodes, tokens, fencing, FaultBounds(**faults))

    return build


PROTOCOLS = (
    ProtocolEntry(
        "advisory-lock",
        "PostgreSQL session advisory lock (pg_try_advisory_lock); no TTL, no token: a reset"
        " connection hands the lock on while its holder still believes it holds it",
        ADVISORY_PARAMS,
        _builder(fencing=False),
    ),
    ProtocolEntry(
        "advisory-lock-fencing",
        "the same lock, a token from a sequence; the storage rejects stale tokens",
        ADVISORY_PARAMS,
        _builder(fencing=True),
    ),
)

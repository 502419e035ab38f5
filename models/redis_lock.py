"""A lock on one Redis instance, as redis-py's `Lock` takes it, with and without fencing.

redis-py's `Lock(name, timeout)` is the single-instance algorithm of Redis's own
documentation: `acquire()` is `SET name <uuid> NX PX <ttl>`, `extend()` and
`reacquire()` reset the expiry only while the key still holds the client's uuid (a Lua
script), and `owned()` reads the key back. A holder checks `owned()` before it writes,
then writes; the lock gives no token.

Two things break it. The pause between the check and the write (the key expires, another
client takes the lock and writes, the late write lands), as in `lease-no-fencing`. And
Redis itself: an instance without `appendfsync always` that restarts (a crash, an OOM
kill, a failover to a replica that had not yet received the key) comes back without the
lock, and the next client takes it while the holder still believes it holds it. With
no token, both hold *the* lock: two leaders at once (single-leader breaks), and the old
holder's write after the new one's is a stale write.

`redis-lock-fencing` takes a token when it takes the lock (`INCR` of a counter on the
storage, which survives the lock instance's restart) and the storage refuses a write
whose token is below one it accepted: the late write is refused, and the two holders
after a restart hold different tokens (one leader per token).

The store is the one Redis instance (a `Store`: holder, ticks left, and the token
counter, which is the storage's and survives a restart); the check is `owned()`, so a
node cut off from Redis checks nothing. Faults: crashes, partitions, lost replies,
pauses, and `store-crashes`, a restart of the Redis instance that loses the lock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from leadercheck.checker.model import Action
from leadercheck.models.cluster import STORE, ClusterState, FaultBounds, Store, countdown
from leadercheck.models.cluster.base import Successor
from leadercheck.models.cluster.faults import STORE_CRASH
from leadercheck.models.cluster.nodes import node_name
from leadercheck.models.lease import LeaseModel, lease_params
from leadercheck.models.lock_holder import LockHolderNodes
from leadercheck.models.params import ProtocolEntry


class RedisLockModel(LockHolderNodes, LeaseModel):
    """redis-py's Lock on one Redis instance; `fencing`: a token from the storage's INCR.

    redis-py keeps no timer of its own: a holder believes it holds the lock until a call
    tells it otherwise. Its check (`owned()`) and its renewal (`extend()`) ask Redis, and
    either may find the lock gone (expired, taken by another, lost in a restart): the
    holder then lets it go. Cut off from Redis it can do neither, and goes on believing.
    """

    fault_kinds = (STORE_CRASH,)
    remote_check = True  # owned(): a GET of the lock key
    # Partial-order reduction: a cut link still only blocks (check and renew need Redis,
    # as acquire does); a stopped node only falls silent. LeaseModel's promises stand.

    def renew_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        """extend(): the expiry reset while the key is still this holding's, else the
        holder learns it lost the lock (LockNotOwnedError)."""
        node = s.node(i)
        if node.token and node.left < self.ttl and not node.pending:
            store = s.store.renew(i, node.token, self.ttl)
            if store is None:
                lost = self.let_go(s, i)
                yield Action("renew", node_name(i), STORE, "refused: the lock is not its own"), lost
                return
            yield from super().renew_steps(s, i)

    def leader_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        """owned() before a write: the key read back; a lock found gone is let go."""
        node = s.node(i)
        if node.token and not node.pending and s.net.reaches_store(i):
            if s.store.renew(i, node.token, self.ttl) is None:  # not its own any more
                lost = self.let_go(s, i)
                yield Action("check", node_name(i), None, "not leader: the lock is gone"), lost
                return
        yield from super().leader_steps(s, i)

    def tick_node(self, node: Any) -> Any:
        """The holder's copy counts down (when to extend), but it stops believing only
        when Redis tells it: redis-py has no timer of its own."""
        return node._replace(left=countdown(node.left))

    def restart_store(self, store: Store) -> Store:
        """Redis restarts without the lock key; the token counter is the storage's."""
        return Store(token=store.token)


REDIS_LOCK_PARAMS = (
    # no lost reply by default: redis-py retries a command whose reply it did not get, so
    # a lost reply to its SET comes back as "not acquired" (the retry finds the key taken)
    *lease_params(crashes=0, partitions=1, losses=0, pauses=1),
    STORE_CRASH.param(),
)


def _builder(fencing: bool) -> Callable[..., RedisLockModel]:
    def build(nodes: int, ttl: int, tokens: int, **faults: int) -> RedisLockModel:
        return RedisLockModel(nodes, ttl, tokens, fencing, FaultBounds.of(**faults))

    return build


PROTOCOLS = (
    ProtocolEntry(
        "redis-lock",
        "redis-py's Lock on one Redis (SET NX PX, owned()); no token: a pause or a restart of"
        " Redis makes two holders",
        REDIS_LOCK_PARAMS,
        _builder(fencing=False),
    ),
    ProtocolEntry(
        "redis-lock-fencing",
        "the same lock, a token from the storage's INCR; the storage rejects stale tokens",
        REDIS_LOCK_PARAMS,
        _builder(fencing=True),
    ),
)

"""Patroni-style Postgres failover, with asynchronous or synchronous replication.

The algorithm: every Postgres node runs a Patroni agent. The agents share a leader key in
the DCS (the store): holder, token, TTL. An agent that sees the key free (never taken, or
expired) takes it by compare-and-swap and promotes its Postgres to primary. The holder
renews the key on every loop; when a renewal fails (the DCS cannot be reached) it demotes
its Postgres back to a read-only replica at once, while the key still has time left in
the DCS (Patroni's retry_timeout margin), and an agent that finds its own view of the
key run out (after a pause) demotes too. Replicas stream the WAL of the key's holder; a
replica whose WAL has diverged (an old primary coming back) is rewound first, as
Patroni's pg_rewind does, and loses its divergent tail. A proxy (HAProxy fed from the
DCS) routes client writes to the node it believes primary; it learns a change of
primary late, whenever it next refreshes. Postgres itself knows nothing of the key: a
primary accepts writes until its agent demotes it, and the primary's writes to the
shared storage carry the token it was promoted with, with no fencing. So in both
variants below a primary paused past its key's expiry, resuming after another node has
promoted and written, still writes with the old token before its agent demotes it: the
no-stale-write claim breaks. Patroni's watchdog, the defence against a hung agent, is not
modelled.

`patroni` (asynchronous replication, Patroni's default): the primary commits a client
write to its own WAL and acknowledges it at once; replicas get it later. The bug: a
primary that acknowledges a write and crashes (or pauses, or loses the DCS) before any
replica has streamed it lets a replica take the key and promote without the write. The
client was told the write is durable; it is gone, and the old primary's copy is rewound
away when it rejoins. Patroni's `maximum_lag_on_failover` and its "healthiest replica"
check do not help: every replica lacks the write. They are not modelled.

`patroni-sync` (`synchronous_mode`): the primary acknowledges a write only once the
synchronous standby named in the DCS's /sync key has it, and only the node /sync names
as leader or as synchronous standby may take the leader key. A primary names a new
synchronous standby only once that replica has caught up with its WAL. Every
acknowledged write is then on each node allowed to promote. Writes wait while there is
no synchronous standby (`synchronous_mode_strict`). A promotion also rewrites /sync in
the same step: Patroni does it right after taking the key.

`ClusterState.extra` holds the proxy's route, /sync, the node that committed each client
write (the client waits on its connection to it) and, as ghost state, the writes
acknowledged so far and `ack_lost`, set when a node promotes lacking an acknowledged
write. Faults: crash (the WAL is durable, the key and the Postgres role are not), a
node cut from the DCS (its next renewal fails), a lost reply to an acquire or renew, and
a pause (the whole node stops while time passes). Acquisitions are bounded by `tokens`,
client writes by `writes`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import NamedTuple

from leadercheck.checker.model import Action
from leadercheck.models.cluster import (
    STORAGE,
    STORE,
    ClusterModel,
    ClusterState,
    FaultBounds,
    InterchangeableNodes,
    countdown,
)
from leadercheck.models.cluster.base import Successor
from leadercheck.models.cluster.nodes import LeadsWithToken, node_name, with_life
from leadercheck.models.params import NODES, Param, ProtocolEntry, fault_params

PROXY = "proxy"


def _wal(log: tuple[int, ...]) -> str:
    return "wal [" + ",".join(f"w{w}" for w in log) + "]"


class _PatroniFields(NamedTuple):
    up: bool = True
    paused: bool = False
    key: int = 0  # token of the leader key its agent believes it holds; 0: none
    left: int = 0  # ticks its agent's view of the key has left
    pg: int = 0  # token its Postgres was promoted with; 0: a read-only replica
    log: tuple[int, ...] = ()  # the client writes in its WAL, in order (durable)


class PatroniNode(_PatroniFields, LeadsWithToken):
    __slots__ = ()

    @property
    def lead_token(self) -> int:
        return self.pg

    def describe(self) -> dict[str, object]:
        return {
            "up": self.up,
            "paused": self.paused,
            "role": "primary" if self.is_leader else "replica",  # Patroni's own words
            "key_token": self.key,
            "key_left": self.left,
            "postgres": f"primary t{self.pg}" if self.pg else "replica",
            "wal": [f"w{w}" for w in self.log],
        }

    def summary(self) -> str:
        role = f"primary t{self.pg}" if self.pg else "replica"
        return with_life(self.up, self.paused, f"{role}, {_wal(self.log)}")


class Sync(NamedTuple):
    """The DCS's /sync key: the leader that wrote it and its synchronous standby (0: none)."""

    leader: int = 0
    standby: int = 0


class PatroniExtra(NamedTuple):
    route: int = 0  # the node the proxy sends client writes to; 0: none
    origin: tuple[int, ...] = ()  # origin[w - 1]: the node that committed write w
    acked: frozenset[int] = frozenset()  # writes acknowledged to the client (ghost)
    sync: Sync = Sync()  # only used in synchronous mode
    ack_lost: bool = False  # a node promoted lacking an acknowledged write (ghost)


class PatroniModel(InterchangeableNodes, ClusterModel):
    """Leader key in the DCS, Postgres promoted and demoted by it, replication async or sync.

    Nodes are interchangeable (`--symmetry`): any caught-up replica may become the
    standby; the proxy's route, the writes' committers and /sync name nodes.
    """

    def rename_extra(self, extra: PatroniExtra, new_id: Sequence[int]) -> PatroniExtra:
        return extra._replace(
            route=new_id[extra.route],
            origin=tuple(new_id[n] for n in extra.origin),
            sync=Sync(new_id[extra.sync.leader], new_id[extra.sync.standby]),
        )

    def __init__(
        self, nodes: int, ttl: int, tokens: int, writes: int, sync: bool, faults: FaultBounds
    ):
        super().__init__(nodes, faults)
        self.ttl = ttl
        self.tokens = tokens
        self.writes = writes
        self.sync = sync

    def initial_node(self, i: int) -> PatroniNode:
        return PatroniNode()

    def initial_extra(self) -> dict[str, PatroniExtra]:
        return {"extra": PatroniExtra()}

    # -- the agent and its Postgres ------------------------------------------

    def node_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        yield from self._acquire(s, i)
        yield from self._renew(s, i)
        node: PatroniNode = s.node(i)
        if node.pg and not node.key:
            note = "key lost: Postgres restarts read-only"
            yield Action("demote", node_name(i), None, note), s.with_node(i, node._replace(pg=0))
        if node.pg:
            yield from self._primary_steps(s, i)
        else:
            yield from self._replicate(s, i)

    def _may_take_key(self, s: ClusterState, i: int) -> bool:
        sync: Sync = s.extra.sync
        return not self.sync or sync.leader == 0 or i in sync

    def _acquire(self, s: ClusterState, i: int) -> Iterator[Successor]:
        node: PatroniNode = s.node(i)
        if node.key or not s.net.reaches_store(i) or s.store.token >= self.tokens:
            return
        if not self._may_take_key(s, i):
            return
        store = s.store.acquire(i, self.ttl)
        if store is None:
            return
        extra: PatroniExtra = s.extra
        note = f"CAS ok: token {store.token}, promotes Postgres"
        if self.sync:
            standby = 0 if extra.sync.standby == i else extra.sync.standby
            extra = extra._replace(sync=Sync(i, standby))
            note += f", /sync leader {node_name(i)}"
        promoted = node._replace(key=store.token, left=self.ttl, pg=store.token)
        action = Action("acquire", node_name(i), STORE, note)
        lacking = any(w not in node.log for w in extra.acked)
        for step, after in self.store_call(s._replace(extra=extra), i, action, store, promoted):
            if lacking and after.node(i).pg == store.token:  # promoted: the reply arrived
                after = after._replace(extra=extra._replace(ack_lost=True))
            yield step, after

    def _renewal_due(self, s: ClusterState, i: int) -> bool:
        node: PatroniNode = s.node(i)
        return bool(node.key) and node.left < self.ttl

    def _renew(self, s: ClusterState, i: int) -> Iterator[Successor]:
        """Renew the key on this loop; if the DCS cannot be reached, give it up and demote."""
        if not self._renewal_due(s, i):
            return
        node: PatroniNode = s.node(i)
        name = node_name(i)
        if not s.net.reaches_store(i):
            note = "renewal failed: DCS unreachable"
            yield (
                Action("demote", name, None, note),
                s.with_node(i, node._replace(key=0, left=0, pg=0)),
            )
            return
        store = s.store.renew(i, node.key, self.ttl)
        assert store is not None, "the DCS's TTL never runs out before the holder's own view"
        action = Action("renew", name, STORE, f"token {node.key}, ttl {self.ttl}")
        yield from self.store_call(s, i, action, store, node._replace(left=self.ttl))

    def _primary_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        node: PatroniNode = s.node(i)
        name = node_name(i)
        extra: PatroniExtra = s.extra
        if self.sync and node.key and extra.sync.leader == i and s.net.reaches_store(i):
            yield from self._choose_standby(s, i)
        if self.sync:
            yield from self._acknowledge(s, i)
        storage, _ = s.storage.write(node.pg, fencing=False)
        if storage != s.storage:
            note = f"token {node.pg} accepted" + (", STALE" if storage.stale else "")
            yield Action("write", name, STORAGE, note), s._replace(storage=storage)

    def _choose_standby(self, s: ClusterState, i: int) -> Iterator[Successor]:
        """Name a caught-up replica in /sync when there is no live synchronous standby."""
        extra: PatroniExtra = s.extra
        if extra.sync.standby and s.node(extra.sync.standby).up:
            return
        log = s.node(i).log
        for j in self.ids:
            other: PatroniNode = s.node(j)
            if j != i and other.up and not other.pg and other.log == log:
                after = extra._replace(sync=Sync(i, j))
                note = f"/sync standby {node_name(j)}, caught up"
                yield Action("set sync", node_name(i), STORE, note), s._replace(extra=after)

    def _acknowledge(self, s: ClusterState, i: int) -> Iterator[Successor]:
        """Acknowledge the writes this primary committed that its sync standby now has."""
        extra: PatroniExtra = s.extra
        if extra.sync.leader != i or not extra.sync.standby:
            return
        standby: PatroniNode = s.node(extra.sync.standby)
        for w, committer in enumerate(extra.origin, start=1):
            if committer == i and w not in extra.acked and w in standby.log:
                after = extra._replace(acked=extra.acked | {w})
                note = f"w{w} acked: on sync standby {node_name(extra.sync.standby)}"
                yield Action("ack", node_name(i), PROXY, note), s._replace(extra=after)

    def _replicate(self, s: ClusterState, j: int) -> Iterator[Successor]:
        """Replica j streams the WAL of the key's holder, rewinding a diverged tail first."""
        src = s.store.holder
        if src == 0 or src == j or not s.running(src):
            return
        primary: PatroniNode = s.node(src)
        node: PatroniNode = s.node(j)
        if not primary.pg or node.log == primary.log:
            return
        note = _wal(primary.log)
        if node.log != primary.log[: len(node.log)]:
            note = f"rewound, {note}"
        after = s.with_node(j, node._replace(log=primary.log))
        yield Action("replicate", node_name(src), node_name(j), note), after

    # -- the proxy and the client --------------------------------------------

    def successors(self, s: ClusterState) -> Iterator[Successor]:
        yield from self._proxy_steps(s)
        yield from super().successors(s)

    def _proxy_steps(self, s: ClusterState) -> Iterator[Successor]:
        extra: PatroniExtra = s.extra
        if len(extra.origin) == self.writes:
            return  # every client write is sent: the proxy has nothing left to route
        primary = 0 if s.store.lease_free() else s.store.holder
        if primary != extra.route:
            note = f"primary {node_name(primary)}" if primary else "no primary"
            after = s._replace(extra=extra._replace(route=primary))
            yield Action("refresh", PROXY, STORE, note), after
        i = extra.route
        if i and s.running(i) and s.node(i).pg:
            w = len(extra.origin) + 1
            node: PatroniNode = s.node(i)
            committed = s.with_node(i, node._replace(log=node.log + (w,)))
            written = extra._replace(origin=extra.origin + (i,))
            note = f"w{w} committed"
            if not self.sync:
                written = written._replace(acked=written.acked | {w})
                note += ", acked before any replica has it"
            action = Action("client write", PROXY, node_name(i), note)
            yield action, committed._replace(extra=written)

    # -- time and faults -----------------------------------------------------

    def urgent(self, s: ClusterState, i: int) -> bool:
        node: PatroniNode = s.node(i)
        demote_due = bool(node.pg and not node.key)
        return demote_due or self._renewal_due(s, i)  # the agent renews on every loop

    def tick_node(self, node: PatroniNode) -> PatroniNode:
        left = countdown(node.left)
        return node._replace(left=left, key=node.key if left else 0)

    def crash_node(self, node: PatroniNode) -> PatroniNode:
        return PatroniNode(up=False, log=node.log)

    def restart_node(self, node: PatroniNode, i: int) -> PatroniNode:
        return PatroniNode(log=node.log)

    # -- views ---------------------------------------------------------------

    def describe(self, s: ClusterState) -> Mapping[str, Mapping[str, object]]:
        view = dict(super().describe(s))
        extra: PatroniExtra = s.extra
        if self.sync:
            sync = {
                "sync_leader": node_name(extra.sync.leader) if extra.sync.leader else None,
                "sync_standby": node_name(extra.sync.standby) if extra.sync.standby else None,
            }
            view[STORE] = {**view[STORE], **sync}
        view[PROXY] = {
            "routes_to": node_name(extra.route) if extra.route else None,
            "writes": {f"w{w}": node_name(n) for w, n in enumerate(extra.origin, start=1)},
            "acked": [f"w{w}" for w in sorted(extra.acked)],
            "acked_write_lost": extra.ack_lost,
        }
        return view

    def summary(self, s: ClusterState) -> Mapping[str, str]:
        lines = dict(super().summary(s))
        extra: PatroniExtra = s.extra
        if self.sync and extra.sync.standby:
            lines[STORE] += f", sync {node_name(extra.sync.standby)}"
        route = f"to {node_name(extra.route)}" if extra.route else "no route"
        acked = ",".join(f"w{w}" for w in sorted(extra.acked))
        lines[PROXY] = f"{route}, acked [{acked}]" + (", ACK LOST" if extra.ack_lost else "")
        return lines


PATRONI_PARAMS = (
    NODES,
    Param("ttl", 2, 2, 5, "leader key time-to-live in ticks (at least 2: renewed each tick)"),
    Param("tokens", 2, 1, 6, "most leader-key tokens the DCS grants (bounds acquisitions)"),
    Param("writes", 1, 1, 3, "client writes the proxy sends"),
    *fault_params(crashes=1, partitions=0, losses=0, pauses=1),
)


def _builder(sync: bool) -> Callable[..., PatroniModel]:
    def build(nodes: int, ttl: int, tokens: int, writes: int, **faults: int) -> PatroniModel:
        return PatroniModel(nodes, ttl, tokens, writes, sync, FaultBounds(**faults))

    return build


PROTOCOLS = (
    ProtocolEntry(
        "patroni",
        "Patroni leader key in the DCS, asynchronous replication: acks before replicas have it",
        PATRONI_PARAMS,
        _builder(sync=False),
    ),
    ProtocolEntry(
        "patroni-sync",
        "Patroni synchronous_mode: acks once the /sync standby has it; only it may promote",
        PATRONI_PARAMS,
        _builder(sync=True),
    ),
)

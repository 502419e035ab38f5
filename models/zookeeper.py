"""Leader election by the ZooKeeper recipe: the lowest ephemeral sequential znode leads.

The algorithm, as the ZooKeeper recipes page gives it (and Solr's LeaderElector and
many client libraries run it): each node opens a session with the ensemble and
creates an EPHEMERAL_SEQUENTIAL znode under /election; the ensemble appends a
sequence number that grows with every creation. The node then lists the children:
if its own znode has the lowest number it leads; otherwise it sets a watch on its
predecessor (the next lower znode) and waits. When the watch fires (the predecessor
was deleted) it lists the children again, since the predecessor may have been a
waiting candidate rather than the leader. Watching only the predecessor avoids the
herd effect: one deletion wakes one node.

An ephemeral znode lives as long as its session. The ensemble counts a session's
timeout down, tick by tick, and every heartbeat resets it; only a running node that
reaches the ensemble sends heartbeats, from a background thread that sends one the
moment its node is resumed or reconnected (a heal), not only at ticks. A crashed,
paused, or cut-off node's session therefore expires after the timeout, its znode is
deleted and the successor's watch fires. The node itself learns of the expiry only when
it next talks to the ensemble (SESSION_EXPIRED on reconnect); then it drops everything
and may join again with a new session and a new znode.

The bug: a leader leads because of what it last read, not because of what the
ensemble holds now. A leader that is paused (garbage collection, a stalled VM) or
cut off from the ensemble for longer than the session timeout loses its znode, the
successor takes over and writes, and the old leader, still running its leadership
code, writes too before it hears of the expiry. Leaders write with their znode's
sequence number as epoch, so that late write carries an older epoch than one the
storage has already accepted: no-stale-write is violated. Each leadership has its
own znode and so its own epoch, so single-leader (at most one leader per epoch)
holds, although two nodes do believe they lead at the same instant. With fencing
(`zookeeper-fencing`) the storage remembers the highest sequence number it accepted
and refuses a lower one, which is safe because leaderships take increasing numbers:
a znode leads only once every lower one is gone, and new znodes are numbered higher.
The same safety can be had from the ensemble itself (`zookeeper-multi`, Curator's way):
the storage lives in ZooKeeper and each write is one multi whose first op checks that
the writer's own znode still exists, so the server refuses the write of a leader whose
session expired; the write then needs the ensemble, so a node cut from it cannot make one.

Modelling choices. The ensemble is one linearizable service whose /election
directory lives in `ClusterState.extra`; the lease `Store` is unused. In this recipe
a session creates exactly one znode, so a session is named by its znode and expires
with it. Listing the children and setting the watch on the predecessor are one
atomic step (`check`): the recipe's retry when the predecessor vanishes between
the two calls only adds stuttering steps. A watch notification is not stored; it is
due whenever the watched znode is gone while the watcher's own session lives, and
is delivered over the session, so a paused or cut-off node receives it late. The
notifications and the SESSION_EXPIRED notice are urgent for a running node that
reaches the ensemble, and so is the check after a create or a fired watch; joining
(create) and writing are not. Faults: crash, a cut between a node and the ensemble,
pause. Lost replies are not modelled: a connection loss during create leaves an
orphan znode alive in a live session, a liveness hazard (the reason for "protected"
creates) rather than a safety one. Sequence numbers are bounded by `seqs`, which
bounds the number of znodes (and sessions) ever created.
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
from leadercheck.models.cluster.nodes import node_name, with_life
from leadercheck.models.params import NODES, Param, ProtocolEntry, fault_params


class Znode(NamedTuple):
    seq: int  # the sequence number the ensemble appended: /election/n_<seq>
    owner: int  # the node whose session created it
    ttl: int  # ticks its session has left without a heartbeat


class Election(NamedTuple):
    """The /election directory in the ensemble, and its sequence counter."""

    znodes: tuple[Znode, ...] = ()  # live znodes, by increasing sequence number
    last_seq: int = 0  # the highest sequence number issued so far

    def alive(self, seq: int) -> bool:
        return any(z.seq == seq for z in self.znodes)

    def create(self, owner: int, ttl: int) -> Election:
        seq = self.last_seq + 1
        return Election(self.znodes + (Znode(seq, owner, ttl),), seq)

    def predecessor(self, seq: int) -> int:
        """The next lower live znode, which `seq` watches; 0 when `seq` is the lowest."""
        return max((z.seq for z in self.znodes if z.seq < seq), default=0)

    def refresh(self, beating: frozenset[int], ttl: int) -> Election:
        """Heartbeats between ticks: these sessions' countdowns start again."""
        znodes = tuple(z._replace(ttl=ttl) if z.seq in beating else z for z in self.znodes)
        return self._replace(znodes=znodes)

    def tick(self, beating: frozenset[int], ttl: int) -> tuple[Election, tuple[Znode, ...]]:
        """One tick: heartbeated sessions are reset, the rest count down; returns the expired."""
        kept: list[Znode] = []
        expired: list[Znode] = []
        for z in self.znodes:
            left = ttl if z.seq in beating else countdown(z.ttl)
            (kept if left else expired).append(z._replace(ttl=left))
        return self._replace(znodes=tuple(kept)), tuple(expired)

    def describe(self) -> dict[str, object]:
        return {
            "znodes": [
                {"seq": z.seq, "owner": node_name(z.owner), "session_ttl_left": z.ttl}
                for z in self.znodes
            ],
            "last_seq": self.last_seq,
        }

    def summary(self) -> str:
        if not self.znodes:
            return "/election empty"
        return "/election: " + ", ".join(f"z{z.seq} {node_name(z.owner)}" for z in self.znodes)


class ZkNode(NamedTuple):
    up: bool = True
    paused: bool = False
    seq: int = 0  # its znode, which names its session; 0: none
    leader: bool = False  # it found its znode the lowest and has not heard otherwise
    watch: int = 0  # the predecessor znode it watches; 0: none

    @property
    def is_leader(self) -> bool:
        return self.leader

    @property
    def role(self) -> str:
        if self.leader:
            return "leader"
        return "candidate" if self.seq else "follower"

    @property
    def epoch(self) -> int | None:
        return self.seq or None  # its znode's sequence number, the epoch it leads in

    @property
    def tenure(self) -> int:
        return self.seq if self.leader else 0

    def describe(self) -> dict[str, object]:
        return {
            "up": self.up,
            "paused": self.paused,
            "role": self.role,
            "znode": self.seq,
            "watches": self.watch,
        }

    def summary(self) -> str:
        if self.leader:
            role = f"leader z{self.seq}"
        elif self.seq:
            role = f"candidate z{self.seq}" + (f", watches z{self.watch}" if self.watch else "")
        else:
            role = "follower"
        return with_life(self.up, self.paused, role)


class ZooKeeperModel(InterchangeableNodes, ClusterModel):
    """Lowest ephemeral sequential znode leads; sessions expire; the storage may fence.

    Nodes are interchangeable (`--symmetry`): the order that matters is the znodes'
    sequence numbers, not the node ids; a znode names its owner.
    """

    def rename_extra(self, extra: Election, new_id: Sequence[int]) -> Election:
        znodes = tuple(z._replace(owner=new_id[z.owner]) for z in extra.znodes)
        return extra._replace(znodes=znodes)

    def __init__(self, nodes: int, timeout: int, seqs: int, fence: str, faults: FaultBounds):
        super().__init__(nodes, faults)
        self.timeout = timeout
        self.seqs = seqs
        self.fence = fence  # NO_FENCE, EPOCH_FENCE or ZNODE_FENCE

    def initial_node(self, i: int) -> ZkNode:
        return ZkNode()

    def initial_extra(self) -> dict[str, Election]:
        return {"extra": Election()}

    def _owed(self, s: ClusterState, i: int) -> Successor | None:
        """The step node i owes the ensemble before time passes, if any."""
        node: ZkNode = s.node(i)
        election: Election = s.extra
        if not node.seq or not s.net.reaches_store(i):
            return None
        name = node_name(i)
        if not election.alive(node.seq):
            note = f"session of z{node.seq} expired"
            return Action("expired", STORE, name, note), s.with_node(i, ZkNode())
        if node.watch and not election.alive(node.watch):
            note = f"z{node.watch} deleted"
            return Action("watch fires", STORE, name, note), s.with_node(i, node._replace(watch=0))
        if not node.leader and not node.watch:
            before = election.predecessor(node.seq)
            if before:
                after, note = node._replace(watch=before), f"z{before} is next lower: watch it"
            else:
                after, note = node._replace(leader=True), f"z{node.seq} is lowest: lead"
            return Action("check", name, STORE, note), s.with_node(i, after)
        return None

    def node_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        node: ZkNode = s.node(i)
        election: Election = s.extra
        name = node_name(i)
        owed = self._owed(s, i)
        if owed is not None:
            yield owed
        if not node.seq and s.net.reaches_store(i) and election.last_seq < self.seqs:
            created = election.create(i, self.timeout)
            note = f"z{created.last_seq}, ephemeral sequential"
            after = s.with_node(i, node._replace(seq=created.last_seq))._replace(extra=created)
            yield Action("create", name, STORE, note), after
        if node.leader and self.fence == ZNODE_FENCE:
            if s.net.reaches_store(i):  # the multi runs in the ensemble
                if election.alive(node.seq):
                    storage, _ = s.storage.write(node.seq, fencing=False)
                    note = f"epoch {node.seq} accepted: multi(check z{node.seq}, create)"
                else:
                    storage, note = s.storage, f"epoch {node.seq} rejected: z{node.seq} is gone"
                yield Action("write", name, STORAGE, note), s._replace(storage=storage)
        elif node.leader:
            storage, accepted = s.storage.write(node.seq, self.fence == EPOCH_FENCE)
            verdict = "accepted" if accepted else f"rejected: {node.seq} < {s.storage.hi_epoch}"
            note = f"epoch {node.seq} {verdict}"
            yield Action("write", name, STORAGE, note), s._replace(storage=storage)

    def urgent(self, s: ClusterState, i: int) -> bool:
        return self._owed(s, i) is not None

    @staticmethod
    def _beating(s: ClusterState) -> frozenset[int]:
        """The sessions whose heartbeats get through: of running nodes that reach the store."""
        return frozenset(
            n.seq for i, n in enumerate(s.nodes, start=1) if s.running(i) and s.net.reaches_store(i)
        )

    def back_in_touch(self, before: ClusterState, after: ClusterState) -> ClusterState:
        """A resumed or reconnected node's heartbeat thread sends at once (kazoo's pings
        the moment it runs again), so its session's countdown starts again then, not at
        the next tick: a live session silent for a tick, then resumed and cut, still has
        the whole timeout to go."""
        again = self._beating(after) - self._beating(before)
        if not again:
            return after
        return after._replace(extra=after.extra.refresh(again, self.timeout))

    def tick_extra(self, s: ClusterState) -> tuple[Election, str]:
        """Sessions of running, connected nodes are refreshed; the others count down."""
        election, expired = s.extra.tick(self._beating(s), self.timeout)
        if not expired:
            return election, ""
        gone = ", ".join(f"z{z.seq} ({node_name(z.owner)})" for z in expired)
        return election, f"session expires: {gone} deleted"

    def crash_node(self, node: ZkNode) -> ZkNode:
        return ZkNode(up=False)

    def restart_node(self, node: ZkNode, i: int) -> ZkNode:
        return ZkNode()

    def describe(self, s: ClusterState) -> Mapping[str, Mapping[str, object]]:
        return {**super().describe(s), STORE: s.extra.describe()}

    def summary(self, s: ClusterState) -> Mapping[str, str]:
        return {**super().summary(s), STORE: s.extra.summary()}


ZOOKEEPER_PARAMS = (
    NODES,
    Param("timeout", 2, 1, 5, "session timeout: ticks without a heartbeat before expiry"),
    Param("seqs", 3, 1, 6, "most znodes created (bounds sequence numbers and sessions)"),
    *(
        p
        for p in fault_params(crashes=0, partitions=1, losses=0, pauses=1)
        if p.name != "losses"  # lost replies are not modelled (see the module docstring)
    ),
)


#: how the storage decides a write: it takes every one; it refuses an epoch below the
#: highest it took; the ensemble refuses one whose writer's znode is gone
NO_FENCE, EPOCH_FENCE, ZNODE_FENCE = "none", "epoch", "znode"


def _builder(fence: str) -> Callable[..., ZooKeeperModel]:
    def build(nodes: int, timeout: int, seqs: int, **faults: int) -> ZooKeeperModel:
        return ZooKeeperModel(nodes, timeout, seqs, fence, FaultBounds(**faults))

    return build


PROTOCOLS = (
    ProtocolEntry(
        "zookeeper",
        "lowest ephemeral sequential znode leads; the storage accepts every write",
        ZOOKEEPER_PARAMS,
        _builder(NO_FENCE),
    ),
    ProtocolEntry(
        "zookeeper-fencing",
        "the same recipe; the storage rejects a znode sequence number below one it accepted",
        ZOOKEEPER_PARAMS,
        _builder(EPOCH_FENCE),
    ),
    ProtocolEntry(
        "zookeeper-multi",
        "the same recipe; each write is a ZooKeeper multi that checks the writer's znode exists",
        ZOOKEEPER_PARAMS,
        _builder(ZNODE_FENCE),
    ),
)

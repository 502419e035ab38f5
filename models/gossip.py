"""Leadership by gossip: every node leads by its own view, and views only agree eventually.

The algorithm, as gossip-membership systems (Cassandra-style failure detection, SWIM
descendants) pick a leader without any vote: each node keeps a heartbeat table, one
entry per other node, here the ticks left before it deems that node dead. Once a
tick, every node contacts its next peer, going round the other nodes in id order as
SWIM's round-robin probing does, and the two exchange tables (push-pull): each keeps,
per entry, the fresher of the two, and marks its partner fresh. A peer that is down
or cut off does not answer. A node's view of the leader is the highest id its table
says is alive (itself included); it acts as leader, and writes, while its own view
says it is the leader. A node that restarts knows nobody's state and gives every node
the benefit of the doubt: all entries fresh, so it suspects no one for a full timeout.

Views converge once the faults are repaired: the freshest news wins every merge, and
reaches everyone within a few rounds. The bug is the time in between: nothing makes
two nodes agree before they act. A node cut off from the leader takes over when its
entry runs out, while the leader leads on; when the old leader restarts it leads at
once (no one is above it in its view) while the node that took over in its absence
leads until gossip tells it otherwise. The protocol has no epochs, so single-leader
means at most one leader at any instant; each take-over draws a ghost epoch, carried
on the new leader's writes, so no-stale-write can be judged too.

Node N (the highest) starts as leader. Faults: crash, node partition, a lost gossip
reply (the peer merged the initiator's table, the initiator learns nothing) and
pause. A timeout too short for the round-robin period (2 ticks with four nodes)
makes live nodes suspect each other with no fault at all, over and over; so the
search follows at most `epochs` ghost epochs: past that, a node whose view says it
should take over stays as it is (as `tokens` bounds acquisitions in the lease model).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from leadercheck.checker.model import FAULT, Action
from leadercheck.models.cluster import STORAGE, ClusterModel, ClusterState, FaultBounds, countdown
from leadercheck.models.cluster.base import Successor
from leadercheck.models.cluster.nodes import node_name, with_life
from leadercheck.models.cluster.storage import leadership_note
from leadercheck.models.params import NODES, Param, ProtocolEntry, fault_params


class GossipNode(NamedTuple):
    up: bool = True
    paused: bool = False
    view: tuple[int, ...] = ()  # per node, ticks left before it is deemed dead (own entry: 0)
    leader: int = 0  # its view of the leader: the highest id it believes alive
    leading: bool = False  # it acts as leader (its view said so when it last settled)
    ghost: int = 0  # ghost epoch of its leadership, carried on its writes
    due: bool = False  # it owes this tick's gossip round
    peer: int = 0  # whom it gossips with next

    @property
    def is_leader(self) -> bool:
        return self.leading

    @property
    def role(self) -> str:
        return "leader" if self.leading else "follower"

    @property
    def epoch(self) -> int | None:
        return None  # no epochs in this protocol

    @property
    def tenure(self) -> int:
        return self.ghost if self.leading else 0

    def describe(self) -> dict[str, object]:
        return {
            "up": self.up,
            "paused": self.paused,
            "role": self.role,
            "believes_leader": node_name(self.leader) if self.leader else None,
            "view_ticks_left": {node_name(k): t for k, t in enumerate(self.view, start=1)},
            "ghost_epoch": self.ghost,
            "gossip_due": self.due,
            "next_peer": node_name(self.peer) if self.peer else None,
        }

    def summary(self) -> str:
        if self.leading:
            role = "LEADER"
        else:
            role = f"follows {node_name(self.leader)}" if self.leader else "follower"
        return with_life(self.up, self.paused, role)


class GossipModel(ClusterModel):
    """Each node leads while its gossiped view says it is the highest live id."""

    uses_store = False
    node_partitions = True
    uses_ghost = True

    def __init__(self, nodes: int, timeout: int, epochs: int, faults: FaultBounds):
        super().__init__(nodes, faults)
        self.timeout = timeout
        self.epochs = epochs

    def next_peer(self, i: int, after: int) -> int:
        """The node after `after` in id order, wrapping round and skipping i itself."""
        j = after % self.n + 1
        return j if j != i else j % self.n + 1

    def fresh_view(self, i: int) -> tuple[int, ...]:
        """Every other node alive for a full timeout; the own entry is unused and kept 0."""
        return tuple(0 if k == i else self.timeout for k in self.ids)

    def initial_node(self, i: int) -> GossipNode:
        top = i == self.n
        return GossipNode(
            view=self.fresh_view(i),
            leader=self.n,
            leading=top,
            ghost=int(top),
            due=True,
            peer=self.next_peer(i, i),
        )

    def initial_extra(self) -> dict[str, object]:
        return {"ghost": 1}

    # -- the algorithm's moves ---------------------------------------------

    def believed_leader(self, node: GossipNode, i: int) -> int:
        return max(k for k in self.ids if k == i or node.view[k - 1])

    def settle(self, s: ClusterState, i: int) -> tuple[ClusterState, str]:
        """Node i acts on its view: it follows the highest live id, leading if that is itself.

        Returns the state and what changed ("" if nothing did).
        """
        node: GossipNode = s.node(i)
        leader = self.believed_leader(node, i)
        if leader == i and not node.leading:
            if s.ghost == self.epochs:
                return s, ""  # the search follows no more take-overs
            ghost = s.ghost + 1
            node = node._replace(leader=i, leading=True, ghost=ghost)
            return s.with_node(i, node)._replace(ghost=ghost), f"{node_name(i)} takes over"
        if leader != i and node.leading:
            node = node._replace(leader=leader, leading=False, ghost=0)
            return s.with_node(i, node), f"{node_name(i)} steps down for {node_name(leader)}"
        if leader != node.leader:
            note = f"{node_name(i)} follows {node_name(leader)}"
            return s.with_node(i, node._replace(leader=leader)), note
        return s, ""

    def merged(self, mine: GossipNode, theirs: GossipNode, i: int, j: int) -> GossipNode:
        """Node i's table after merging node j's: the fresher entry wins, j is fresh."""
        view = tuple(
            0 if k == i else self.timeout if k == j else max(a, b)
            for k, a, b in zip(self.ids, mine.view, theirs.view, strict=True)
        )
        return mine._replace(view=view)

    def gossip(self, s: ClusterState, i: int) -> Iterator[Successor]:
        """Node i's round with its next peer j: an exchange, or nothing if j cannot answer."""
        a = s.node(i)._replace(due=False, peer=self.next_peer(i, s.node(i).peer))
        j = s.node(i).peer
        b = s.node(j)
        done = s.with_node(i, a)
        action = Action("gossip", node_name(i), node_name(j))
        if not (s.running(j) and s.net.connected(i, j)):
            yield action._replace(note="no answer"), done
            return
        pushed = done.with_node(j, self.merged(b, a, j, i))
        pushed, told = self.settle(pushed, j)
        both = pushed.with_node(i, self.merged(a, b, i, j))
        both, learned = self.settle(both, i)
        yield action._replace(note="; ".join(filter(None, ("views merged", told, learned)))), both
        if s.faults.losses:
            note = "; ".join(filter(None, ("reply lost", told)))
            lost = action._replace(note=note, kind=FAULT)
            yield lost, pushed._replace(faults=s.faults.spend("losses"))

    # -- ClusterModel hooks --------------------------------------------------

    def node_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        node: GossipNode = s.node(i)
        name = node_name(i)
        after, note = self.settle(s, i)
        if note:
            why = f"{node_name(node.leader)} timed out" if node.leader else "restarted"
            yield Action("settle", name, None, f"{why}; {note}"), after
        if node.due:
            yield from self.gossip(s, i)
        if node.leading:
            storage, _ = s.storage.write(node.ghost, fencing=False)
            note = leadership_note(node.ghost)
            yield Action("write", name, STORAGE, note), s._replace(storage=storage)

    def urgent(self, s: ClusterState, i: int) -> bool:
        node: GossipNode = s.node(i)
        return node.due or bool(self.settle(s, i)[1])

    def tick_node(self, node: GossipNode) -> GossipNode:
        return node._replace(view=tuple(countdown(t) for t in node.view), due=True)

    def crash_node(self, node: GossipNode) -> GossipNode:
        return GossipNode(up=False)

    def restart_node(self, node: GossipNode, i: int) -> GossipNode:
        # no leader known yet: it settles on one at once
        return GossipNode(view=self.fresh_view(i), due=True, peer=self.next_peer(i, i))


def _build(nodes: int, timeout: int, epochs: int, **faults: int) -> GossipModel:
    return GossipModel(nodes, timeout, epochs, FaultBounds(**faults))


PROTOCOLS = (
    ProtocolEntry(
        "gossip",
        "each node leads while its gossiped membership view says it is the highest live id",
        (
            NODES,
            Param("timeout", 3, 2, 5, "ticks without fresh gossip before a node is deemed dead"),
            Param("epochs", 3, 2, 6, "most ghost epochs (take-overs) the search follows"),
            *fault_params(crashes=1, partitions=1, losses=0, pauses=0),
        ),
        _build,
    ),
)

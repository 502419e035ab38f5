"""The Bully algorithm: the highest live id takes over, and nothing stops an isolated one.

The algorithm (Garcia-Molina, 1982): the coordinator is the highest id alive, and it
says so by sending COORDINATOR to every lower id, once when it takes over and again
on every tick as a heartbeat. A node that hears no COORDINATOR for `timeout` ticks
believes the coordinator is gone and holds an election: it sends ELECTION to every
higher id and waits one tick for an OK. A node that receives ELECTION answers OK and
holds an election of its own unless it is already holding one (the coordinator too:
it stands again and wins again). A node that gets an OK waits `timeout` ticks for
the winner's COORDINATOR and starts over if none comes; a node that gets no OK
declares itself coordinator and sends COORDINATOR to every lower id. A node that
receives COORDINATOR adopts the sender. A restarted node holds an election at once.

The bug is in the assumption the algorithm rests on: a synchronous network, where
silence means death. A partition that isolates the coordinator leaves it leading its
side (nothing ever tells it to stop: there is no lease, no quorum) while the other
side hears nothing, holds an election and declares the highest id on its side; both
write. A lost OK does the same on a smaller scale. The protocol has no epochs, so
single-leader means at most one leader at any instant; each declaration draws a
ghost epoch, carried on the declarer's writes, so no-stale-write can be judged too.

Node N (the highest) starts as coordinator. Faults: crash, node partition, message
loss, pause (loss is off by default: it makes the search six times larger and needs
two losses, a heartbeat and then an OK, to break anything). Without a fault nobody
ever holds an election, so the fault budgets bound the ghost epochs.

`WORST_ELECTION` (shown by `verify --protocol bully --stats`) measures the messages
of an election after the coordinator crashes, over every interleaving of a
fault-free election. The textbook says O(N^2); the search finds a worst case of
2(N-1)^2 - 1 for N = 3..6 (N = 7 is out of its reach),
more than the usual count because a node that notices the crash late, after the new
coordinator has spoken, makes every node above it, the new coordinator included,
hold a second election.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

from checker.model import Action
from models.cluster import STORAGE, ClusterModel, ClusterState, FaultBounds, Message, countdown
from models.cluster.base import Successor
from models.cluster.nodes import node_name, with_life
from models.params import NODES, Measure, Param, ProtocolEntry, fault_params

ELECTION, OK, COORDINATOR = "ELECTION", "OK", "COORDINATOR"
FOLLOWER, ELECTING, WAITING, LEADER = "follower", "electing", "waiting", "leader"
ANSWER_WAIT = 1  # ticks to wait for an OK: a live, reachable higher node answers within the tick


def _names(nodes: Iterable[int]) -> str:
    return ", ".join(node_name(j) for j in nodes)


class BullyNode(NamedTuple):
    up: bool = True
    paused: bool = False
    phase: str = FOLLOWER  # follower, electing (awaiting OK), waiting (for COORDINATOR), leader
    coord: int = 0  # whom it believes is coordinator; 0: nobody
    timer: int = 0  # ticks left before the phase times out (followers: before an election)
    ghost: int = 0  # ghost epoch of its leadership, carried on its writes
    due: bool = False  # a leader owes this tick's COORDINATOR heartbeat

    @property
    def is_leader(self) -> bool:
        return self.phase == LEADER

    @property
    def role(self) -> str:
        if self.phase in (ELECTING, WAITING):
            return "candidate"
        return self.phase

    @property
    def epoch(self) -> int | None:
        return None  # no epochs in this protocol

    @property
    def tenure(self) -> int:
        return self.ghost if self.is_leader else 0

    def describe(self) -> dict[str, object]:
        return {
            "up": self.up,
            "paused": self.paused,
            "role": self.role,
            "phase": self.phase,
            "coordinator": node_name(self.coord) if self.coord else None,
            "timer": self.timer,
            "ghost_epoch": self.ghost,
            "heartbeat_due": self.due,
        }

    def summary(self) -> str:
        if self.phase == LEADER:
            role = "LEADER"
        elif self.phase == ELECTING:
            role = "electing"
        elif self.phase == WAITING:
            role = "awaits COORDINATOR"
        else:
            role = f"follows {node_name(self.coord)}" if self.coord else "follower"
        return with_life(self.up, self.paused, role)


class BullyModel(ClusterModel):
    """The Bully algorithm with heartbeats: an isolated coordinator keeps leading."""

    uses_store = False
    node_partitions = True
    uses_ghost = True

    def __init__(self, nodes: int, timeout: int, faults: FaultBounds):
        super().__init__(nodes, faults)
        self.timeout = timeout
        self.top = nodes  # the highest id in the cluster

    def initial_node(self, i: int) -> BullyNode:
        if i == self.top:
            return BullyNode(phase=LEADER, coord=i, ghost=1, due=True)
        return BullyNode(coord=self.top, timer=self.timeout)

    def initial_extra(self) -> dict[str, object]:
        return {"ghost": 1}

    # -- the algorithm's moves ---------------------------------------------

    def counted(self, s: ClusterState, sent: int) -> ClusterState:
        """`s` after `sent` more messages; only the election model keeps count."""
        return s

    def send(
        self, s: ClusterState, i: int, kind: str, to: Iterable[int]
    ) -> tuple[ClusterState, str]:
        """Node i sends `kind` to each of `to`; one to a crashed or unreachable node is lost."""
        to = tuple(to)
        live = [j for j in to if j <= self.n and s.node(j).up and s.net.connected(i, j)]
        net = s.net.send(*(Message(kind, i, j) for j in live))
        note = f"{kind} to {_names(to) or 'nobody'}"
        if lost := [j for j in to if j not in live]:
            note += f" ({_names(lost)} unreachable)"
        return self.counted(s._replace(net=net), len(to)), note

    def elect(self, s: ClusterState, i: int) -> tuple[ClusterState, str]:
        """Node i holds an election: ELECTION to every higher id, then it awaits an OK."""
        s, note = self.send(s, i, ELECTION, range(i + 1, self.top + 1))
        node = BullyNode(phase=ELECTING, timer=ANSWER_WAIT, paused=s.node(i).paused)
        return s.with_node(i, node), note

    def declare(self, s: ClusterState, i: int) -> tuple[ClusterState, str]:
        """No OK came: node i takes over with a new ghost epoch and tells every lower id."""
        ghost = s.ghost + 1
        s, note = self.send(s, i, COORDINATOR, range(1, i))
        node = BullyNode(phase=LEADER, coord=i, ghost=ghost, paused=s.node(i).paused)
        return s.with_node(i, node)._replace(ghost=ghost), note

    # -- ClusterModel hooks --------------------------------------------------

    def node_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        node: BullyNode = s.node(i)
        name = node_name(i)
        if node.phase == LEADER:
            if node.due:
                after, note = self.send(
                    s.with_node(i, node._replace(due=False)), i, COORDINATOR, range(1, i)
                )
                yield Action("heartbeat", name, None, note), after
            storage, _ = s.storage.write(node.ghost, fencing=False)
            note = f"ghost epoch {node.ghost} accepted"
            yield Action("write", name, STORAGE, note), s._replace(storage=storage)
        elif node.timer == 0:
            yield self.time_out(s, i)

    def time_out(self, s: ClusterState, i: int) -> Successor:
        """Running node i acts on its expired timer."""
        node: BullyNode = s.node(i)
        name = node_name(i)
        if node.phase == ELECTING:
            after, note = self.declare(s, i)
            return Action("declare", name, None, f"no OK; {note}"), after
        if node.phase == WAITING:
            why = "no COORDINATOR after an OK"
        elif node.coord:
            why = f"no COORDINATOR for {self.timeout} ticks"
        else:
            why = "restarted"
        after, note = self.elect(s, i)
        return Action("election", name, None, f"{why}; {note}"), after

    def deliver(self, s: ClusterState, msg: Message) -> Successor:
        i, j = msg.dst, msg.src
        node: BullyNode = s.node(i)
        action = Action(msg.kind, node_name(j), node_name(i))
        if msg.kind == ELECTION:
            s, _ = self.send(s, i, OK, (j,))
            if node.phase in (ELECTING, WAITING):
                return action._replace(note="OK; already electing"), s
            s, note = self.elect(s, i)
            return action._replace(note=f"OK, then its own election: {note}"), s
        if msg.kind == OK:
            if node.phase != ELECTING:
                return action._replace(note="ignored"), s
            waiting = node._replace(phase=WAITING, timer=self.timeout)
            return action._replace(note="awaits COORDINATOR"), s.with_node(i, waiting)
        adopted = BullyNode(coord=j, timer=self.timeout, paused=node.paused)
        note = "steps down" if node.phase == LEADER else ""
        return action._replace(note=note), s.with_node(i, adopted)

    def urgent(self, s: ClusterState, i: int) -> bool:
        node: BullyNode = s.node(i)
        return node.due if node.phase == LEADER else node.timer == 0

    def tick_node(self, node: BullyNode) -> BullyNode:
        if node.phase == LEADER:
            return node._replace(due=True)
        return node._replace(timer=countdown(node.timer))

    def crash_node(self, node: BullyNode) -> BullyNode:
        return BullyNode(up=False)

    def restart_node(self, node: BullyNode, i: int) -> BullyNode:
        return BullyNode()  # no coordinator known and its timer at zero: it elects at once


# -- the worst-case election -------------------------------------------------


class BullyElection(BullyModel):
    """The election right after coordinator `nodes` crashed: fault-free, with a message count.

    Only nodes 1..nodes-1 are in the state; the crashed coordinator is the id above
    them, so ELECTION messages to it are sent (and counted) and never answered. A
    node that still follows the crashed coordinator may notice at any moment (no
    heartbeat timer); no heartbeats or writes. `ClusterState.extra` is the ghost count
    of ELECTION, OK and COORDINATOR messages sent so far.

    One sound reduction keeps the search small: an OK is delivered the moment it is
    sent. Its only effect is to move an electing node to waiting; the two phases
    answer ELECTION, OK and COORDINATOR alike, and only a tick tells them apart. No
    tick passes while a message is in flight, and by the next tick the node has its
    answer either way (the highest live node answers every ELECTION within the tick).
    So delivering an OK at once changes no count and no state at any tick; it cuts
    the interleavings (N = 5: 79,898 states become 4,612).
    """

    def __init__(self, nodes: int) -> None:
        super().__init__(nodes - 1, timeout=2, faults=FaultBounds())
        self.top = nodes

    def initial_node(self, i: int) -> BullyNode:
        return BullyNode(coord=self.top)

    def initial_extra(self) -> dict[str, object]:
        return {"ghost": 1, "extra": 0}

    def counted(self, s: ClusterState, sent: int) -> ClusterState:
        return s._replace(extra=s.extra + sent)

    def send(
        self, s: ClusterState, i: int, kind: str, to: Iterable[int]
    ) -> tuple[ClusterState, str]:
        s, note = super().send(s, i, kind, to)
        for msg in s.net.msgs:
            if msg.kind == OK:  # delivered at once: see the class docstring
                _, s = self.deliver(s._replace(net=s.net.remove(msg)), msg)
        return s, note

    def node_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        node: BullyNode = s.node(i)
        if node.phase == FOLLOWER and node.coord == self.top:
            after, note = self.elect(s, i)
            yield Action("election", node_name(i), None, f"notices; {note}"), after
        elif self.urgent(s, i):
            yield self.time_out(s, i)

    def urgent(self, s: ClusterState, i: int) -> bool:
        node: BullyNode = s.node(i)
        return node.phase in (ELECTING, WAITING) and node.timer == 0

    def tick_node(self, node: BullyNode) -> BullyNode:
        if node.phase in (ELECTING, WAITING):
            return node._replace(timer=countdown(node.timer))
        return node

    def complete(self, s: ClusterState) -> bool:
        return election_complete(s)


def election_messages(s: ClusterState) -> int:
    """The ghost count of ELECTION, OK and COORDINATOR messages sent in a `BullyElection`."""
    return int(s.extra)


def election_complete(s: ClusterState) -> bool:
    """Every live node agrees that the new coordinator, the highest live id, leads."""
    top = len(s.nodes)
    return all(n.coord == top for n in s.nodes) and s.node(top).is_leader


WORST_ELECTION = Measure(
    "messages per election after the coordinator crashes (ELECTION + OK + COORDINATOR)",
    "nodes",
    (3, 4, 5, 6),
    BullyElection,
    election_messages,
    election_complete,
)


def _build(nodes: int, timeout: int, **faults: int) -> BullyModel:
    return BullyModel(nodes, timeout, FaultBounds(**faults))


PROTOCOLS = (
    ProtocolEntry(
        "bully",
        "highest live id takes over by ELECTION/OK/COORDINATOR; no quorum (split brain)",
        (
            NODES,
            Param("timeout", 2, 2, 4, "ticks without COORDINATOR before a node holds an election"),
            *fault_params(crashes=1, partitions=1, losses=0, pauses=0),
        ),
        _build,
        measures=(WORST_ELECTION,),
    ),
)

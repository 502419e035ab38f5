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
fault-free election, on `CompactBullyElection` (the election of `BullyElection` cut
down to what decides the count). The textbook says O(N^2); the search finds a worst
case of 2(N-1)^2 - 1 for N = 3..7, more than the usual count because a node that
notices the crash late, after the new coordinator has spoken, makes every node above
it, the new coordinator included, hold a second election. The best case is N - 1:
n(N-1) notices first and alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

from leadercheck.checker.model import Action, Model
from leadercheck.models.cluster import (
    STORAGE,
    ClusterModel,
    ClusterState,
    FaultBounds,
    Message,
    countdown,
)
from leadercheck.models.cluster.base import Successor
from leadercheck.models.cluster.nodes import CLOCK, NETWORK, node_name, with_life
from leadercheck.models.cluster.storage import leadership_note
from leadercheck.models.params import NODES, Measure, Param, ProtocolEntry, fault_params

ELECTION, OK, COORDINATOR = "ELECTION", "OK", "COORDINATOR"
FOLLOWER, ELECTING, WAITING, LEADER = "follower", "electing", "waiting", "leader"
ANSWER_WAIT = 1  # ticks to wait for an OK: a live, reachable higher node answers within the tick


def _names(nodes: Iterable[int]) -> str:
    return ", ".join(node_name(j) for j in nodes)


class Sent(NamedTuple):
    """What a send leaves: the state, the note that says it, and what could not leave."""

    state: ClusterState
    note: str
    unreached: tuple[Message, ...]

    def step(self, action: Action, why: str = "") -> Successor:
        """The step that made this send, its note led by `why`."""
        return action._replace(note=why + self.note, unreached=self.unreached), self.state


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

    def message(self, s: ClusterState, kind: str, i: int, j: int) -> Message:
        """The message node i sends node j (one equal to a message in flight merges with it)."""
        return Message(kind, i, j)

    def send(self, s: ClusterState, i: int, kind: str, to: Iterable[int]) -> Sent:
        """Node i sends `kind` to each of `to`; one to a crashed or unreachable node is lost
        (a node beyond the modelled ones, in the election count, never answers)."""
        to = tuple(to)
        modelled = [self.message(s, kind, i, j) for j in to if j <= self.n]
        after, unreached = s.post(*modelled)
        note = f"{kind} to {_names(to) or 'nobody'}"
        lost = [j for j in to if j > self.n] + [m.dst for m in unreached]
        if lost:
            note += f" ({_names(sorted(lost))} unreachable)"
        return Sent(self.counted(after, len(to)), note, unreached)

    def elect(self, s: ClusterState, i: int) -> Sent:
        """Node i holds an election: ELECTION to every higher id, then it awaits an OK."""
        sent = self.send(s, i, ELECTION, range(i + 1, self.top + 1))
        node = BullyNode(phase=ELECTING, timer=ANSWER_WAIT, paused=s.node(i).paused)
        return sent._replace(state=sent.state.with_node(i, node))

    def declare(self, s: ClusterState, i: int) -> Sent:
        """No OK came: node i takes over with a new ghost epoch and tells every lower id."""
        ghost = self.next_ghost(s)
        sent = self.send(s, i, COORDINATOR, range(1, i))
        node = BullyNode(phase=LEADER, coord=i, ghost=ghost, paused=s.node(i).paused)
        return sent._replace(state=sent.state.with_node(i, node)._replace(ghost=ghost))

    def next_ghost(self, s: ClusterState) -> int:
        """The ghost epoch of a new declaration: one past the last."""
        return s.ghost + 1

    # -- ClusterModel hooks --------------------------------------------------

    def node_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        node: BullyNode = s.node(i)
        name = node_name(i)
        if node.phase == LEADER:
            if node.due:
                sent = self.send(
                    s.with_node(i, node._replace(due=False)), i, COORDINATOR, range(1, i)
                )
                yield sent.step(Action("heartbeat", name))
            storage, _ = s.storage.write(node.ghost, fencing=False)
            note = leadership_note(node.ghost)
            yield Action("write", name, STORAGE, note), s._replace(storage=storage)
        elif node.timer == 0:
            yield self.time_out(s, i)

    def time_out(self, s: ClusterState, i: int) -> Successor:
        """Running node i acts on its expired timer."""
        node: BullyNode = s.node(i)
        name = node_name(i)
        if node.phase == ELECTING:
            return self.declare(s, i).step(Action("declare", name), "no OK; ")
        if node.phase == WAITING:
            why = "no COORDINATOR after an OK"
        elif node.coord:
            why = f"no COORDINATOR for {self.timeout} ticks"
        else:
            why = "restarted"
        return self.elect(s, i).step(Action("election", name), f"{why}; ")

    def deliver(self, s: ClusterState, msg: Message) -> Successor:
        i, j = msg.dst, msg.src
        node: BullyNode = s.node(i)
        action = Action(msg.kind, node_name(j), node_name(i))
        if msg.kind == ELECTION:
            ok = self.send(s, i, OK, (j,))
            action = action._replace(unreached=ok.unreached)
            if node.phase in (ELECTING, WAITING):
                return action._replace(note="OK; already electing"), ok.state
            sent = self.elect(ok.state, i)
            sent = sent._replace(unreached=ok.unreached + sent.unreached)
            return sent.step(action, "OK, then its own election: ")
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


class FlappingBully(BullyModel):
    """Bully on a healthy cluster except for one link that fails and heals without end.

    The coordinator's links (node N to the rest) flap: cut and restored any number of
    times, with no budget (`ClusterModel.flapping`); no other fault. Every cut, the
    others hear no COORDINATOR, hold an election and declare n(N-1); every heal, nN's
    next heartbeat makes it step down. Repeated forever, that is a livelock: elections
    never stop. No ghost epochs are drawn (each declaration would need a new one, and the
    state space would be infinite), so this scenario judges no-stale-write nowhere.
    """

    uses_ghost = False

    def __init__(self, nodes: int, timeout: int) -> None:
        super().__init__(nodes, timeout, FaultBounds())
        self.flapping = frozenset({nodes})

    def next_ghost(self, s: ClusterState) -> int:
        return s.ghost


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
    the interleavings.

    Every message sent is a message delivered: a node that holds a second election
    while an ELECTION of its first is still in flight sends a second copy (tagged by
    `Message.epoch`, otherwise unused here), which is delivered and answered on its
    own. (The network is a set, so an untagged copy would merge with the first: the
    count would take the send but no delivery and no OK, and a total such as 16 for
    N = 4 would appear that no election has.)
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

    def message(self, s: ClusterState, kind: str, i: int, j: int) -> Message:
        """A copy of its own, numbered past the equal messages in flight: see the docstring."""
        copies = {m.epoch for m in s.net.msgs if (m.kind, m.src, m.dst) == (kind, i, j)}
        return Message(kind, i, j, min(set(range(len(copies) + 1)) - copies))

    def send(self, s: ClusterState, i: int, kind: str, to: Iterable[int]) -> Sent:
        sent = super().send(s, i, kind, to)
        s = sent.state
        for msg in s.net.msgs:
            if msg.kind == OK:  # delivered at once: see the class docstring
                _, s = self.deliver(s._replace(net=s.net.remove(msg)), msg)
        return sent._replace(state=s)

    def node_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        node: BullyNode = s.node(i)
        if node.phase == FOLLOWER and node.coord == self.top:
            yield self.elect(s, i).step(Action("election", node_name(i)), "notices; ")
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


def election_over(s: ClusterState) -> bool:
    """`election_complete` with nothing left in flight: nothing more can happen."""
    return election_complete(s) and not s.net.msgs


# -- the same election, cut down to what decides the count -------------------

# The phase of a live node n1..n(N-1) in an `ElectionCount`.
FOLLOWS_OLD = 0  # follows the crashed coordinator: may notice at any moment
FOLLOWS_NEW = 1  # follows n(N-1)
BUSY = (2, 3, 4)  # n1..n(N-2) electing or awaiting COORDINATOR, 2 (the timeout), 1, 0 ticks left
STANDS, DECLARES, LEADS = 5, 6, 7  # n(N-1): electing, its answer wait over, coordinator
_TICK = {BUSY[0]: BUSY[1], BUSY[1]: BUSY[2], STANDS: DECLARES}


class ElectionCount(NamedTuple):
    """A `BullyElection` state reduced to what its future count depends on."""

    phases: tuple[int, ...]  # node i at i - 1
    elections: tuple[int, ...]  # ELECTIONs in flight to node i, at i - 1 (copies counted)
    informs: int  # bit i - 1: a COORDINATOR to node i is in flight
    sent: int  # ELECTION + OK + COORDINATOR messages sent so far


class CompactBullyElection(Model[ElectionCount]):
    """`BullyElection` with every count-irrelevant distinction merged: the same totals.

    The live nodes are n1..n(N-1); nN has crashed and every follower still follows it.
    Moves, in order: each node's own step (a follower of nN notices and holds an
    election; a node whose wait for COORDINATOR ran out holds another; n(N-1), its
    wait for an OK over, declares), then each node's deliveries (an ELECTION: OK, and
    an election of its own unless it is already holding one; a COORDINATOR: it follows
    n(N-1)), then the tick, when nothing is in flight and nobody is due (a tick that
    changes nothing is left out). An election by node i sends N - i ELECTIONs, the
    one to nN included (counted, never answered); a declaration sends N - 2
    COORDINATORs. Three merges, each sound for the count:

    - OKs are delivered at once, as in `BullyElection` (see its docstring).
    - For n1..n(N-2), electing and awaiting COORDINATOR are one phase with the
      awaiting timer. Such a node's ELECTION to the node above it (alive: only nN has
      crashed) is answered before the next tick (time stops while a message is in
      flight, and the OK comes at once), and until then the two phases answer
      ELECTION (OK only), OK (awaiting) and COORDINATOR (follow) alike; so at every
      tick the node is awaiting with `timeout` ticks left either way. Hence only
      n(N-1) ever declares, and at most one COORDINATOR per node is in flight.
    - The ELECTIONs in flight to a node are a count: after the merge above, the
      effect of delivering one does not depend on its sender (n(N-1) sends only to
      nN, so every sender is a lower node).

    Ghost epochs, timers of followers, the store, the storage, the network's links
    and the fault budgets are left out: nothing in an election reads them. The tests
    check that the totals reached equal `BullyElection`'s.
    """

    def __init__(self, nodes: int) -> None:
        self.nodes = nodes
        self.live = nodes - 1

    def initial_states(self) -> list[ElectionCount]:
        live = self.live
        return [ElectionCount((FOLLOWS_OLD,) * live, (0,) * live, 0, 0)]

    def _elect(self, s: ElectionCount, i: int, why: str) -> tuple[Action, ElectionCount]:
        """Node i holds an election: ELECTION to every higher id, nN's lost."""
        phases = list(s.phases)
        phases[i - 1] = STANDS if i == self.live else BUSY[0]
        elections = s.elections[:i] + tuple(c + 1 for c in s.elections[i:])
        after = ElectionCount(tuple(phases), elections, s.informs, s.sent + self.nodes - i)
        note = f"{why}; ELECTION to {_names(range(i + 1, self.nodes + 1))}"
        return Action("election", node_name(i), None, note), after

    def successors(self, s: ElectionCount) -> Iterator[tuple[Action, ElectionCount]]:
        phases, elections, informs, sent = s
        for i, phase in enumerate(phases, start=1):
            if phase == FOLLOWS_OLD:
                yield self._elect(s, i, "notices")
            elif phase == BUSY[-1]:
                yield self._elect(s, i, "no COORDINATOR after an OK")
            elif phase == DECLARES:
                lower = (1 << (i - 1)) - 1
                after = ElectionCount(
                    phases[: i - 1] + (LEADS,) + phases[i:],
                    elections,
                    informs | lower,
                    sent + i - 1,
                )
                note = f"no OK; COORDINATOR to {_names(range(1, i)) or 'nobody'}"
                yield Action("declare", node_name(i), None, note), after
        for i, phase in enumerate(phases, start=1):
            name = node_name(i)
            if elections[i - 1]:
                rest = elections[: i - 1] + (elections[i - 1] - 1,) + elections[i:]
                got = ElectionCount(phases, rest, informs, sent + 1)  # its OK, delivered at once
                if phase in (FOLLOWS_OLD, FOLLOWS_NEW, LEADS):
                    action, after = self._elect(got, i, "OK, then its own election")
                    yield action._replace(name=ELECTION, actor=NETWORK, target=name), after
                else:
                    yield Action(ELECTION, NETWORK, name, "OK; already electing"), got
            if informs >> (i - 1) & 1:
                after = ElectionCount(
                    phases[: i - 1] + (FOLLOWS_NEW,) + phases[i:],
                    elections,
                    informs & ~(1 << (i - 1)),
                    sent,
                )
                yield Action(COORDINATOR, node_name(self.live), name), after
        if not informs and not any(elections):
            if not any(p in (BUSY[-1], DECLARES) for p in phases):
                ticked = tuple(_TICK.get(p, p) for p in phases)
                if ticked != phases:
                    yield Action("tick", CLOCK), ElectionCount(ticked, elections, informs, sent)

    def describe(self, s: ElectionCount) -> dict[str, dict[str, object]]:
        view: dict[str, dict[str, object]] = {
            node_name(i): {
                "phase": _PHASE_NAMES[p],
                "elections_in_flight": s.elections[i - 1],
                "coordinator_in_flight": bool(s.informs >> (i - 1) & 1),
            }
            for i, p in enumerate(s.phases, start=1)
        }
        view[NETWORK] = {"messages_sent": s.sent}
        return view

    def summary(self, s: ElectionCount) -> dict[str, str]:
        return {node_name(i): _PHASE_NAMES[p] for i, p in enumerate(s.phases, start=1)}


_PHASE_NAMES = (
    "follows the crashed coordinator",
    "follows the new coordinator",
    "electing (2 ticks)",
    "electing (1 tick)",
    "electing (0 ticks)",
    "electing",
    "electing (no OK)",
    "LEADER",
)


def messages_sent(s: ElectionCount) -> int:
    """ELECTION + OK + COORDINATOR messages sent so far in a `CompactBullyElection`."""
    return s.sent


def election_ended(s: ElectionCount) -> bool:
    """n(N-1) leads, every other live node follows it, and no message is in flight."""
    if s.informs or any(s.elections) or s.phases[-1] != LEADS:
        return False
    return all(p == FOLLOWS_NEW for p in s.phases[:-1])


# The election after the coordinator nN crashes, from every follower still following nN
# and without any other fault, until it is over: nothing in flight, n(N-1) leading and every
# live node following it. Counted: every ELECTION (the ones to the crashed nN included), OK
# and COORDINATOR sent. Worst and best over every interleaving; the mean is over the distinct
# reachable end states, and since they differ only in the count, over the distinct totals.
WORST_ELECTION = Measure(
    "messages per election after the coordinator crashes (ELECTION + OK + COORDINATOR "
    "until all follow the new one; mean over the distinct totals)",
    "nodes",
    (3, 4, 5, 6, 7),
    CompactBullyElection,
    messages_sent,
    election_ended,
)


def _build(nodes: int, timeout: int, **faults: int) -> BullyModel:
    return BullyModel(nodes, timeout, FaultBounds(**faults))


TIMEOUT = Param("timeout", 2, 2, 4, "ticks without COORDINATOR before a node holds an election")

PROTOCOLS = (
    ProtocolEntry(
        "bully",
        "highest live id takes over by ELECTION/OK/COORDINATOR; no quorum (split brain)",
        (NODES, TIMEOUT, *fault_params(crashes=1, partitions=1, losses=0, pauses=0)),
        _build,
        measures=(WORST_ELECTION,),
    ),
    ProtocolEntry(
        "bully-flapping",
        "bully with the coordinator's link failing and healing without end (livelock)",
        (NODES, TIMEOUT),
        FlappingBully,
    ),
)

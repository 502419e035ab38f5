"""Lease renewal over a slow network: how long failover takes, and when a healthy leader is deposed.

The algorithm, as a leader on an etcd lease or a Kubernetes Lease runs it, with time made
explicit. The store holds one lease: holder, token, ticks left. Every `renew` ticks (R)
each node sends one request to the store: the holder a renewal ("reset my TTL"), a
follower an acquire (compare-and-swap: "grant me the next token if the lease is free"),
polling like client-go's retryPeriod. A node has at most one request in flight; it takes
0 to `delay` (D) ticks to reach the store, and the reply comes back at once. The holder
counts its own copy of the lease from when it *sent* the request the store granted or
renewed, so its copy runs out no later than the store's, and it stops leading when it
does: at most one leader per token, whatever the timing. A process may pause (garbage
collection) for up to `gc` (G) ticks, which is normal operation: its timers run on, its
request already sent still travels and arrives, and it resumes before G ticks have passed.
Every initial phase is a start state (node i's first request is due within 0..R-1 ticks),
since nothing keeps the nodes' timers in step.

Two questions, both about time, each answered by a ghost in `ClusterState.extra`.

Failover time. When the leader crashes (its renewal in flight is lost with it), the
store's lease runs out at most `ttl` ticks later, since the last renewal to arrive did so
before the crash; then the first follower request to arrive takes it. The worst case,
as the search finds it for N nodes and a budget of P pauses (tests/models/test_lease_renewal.py
checks it for N = 2 and 3 with one pause; N = 2 with P = 2, 3 and N = 3 with P = 2, 3 were
checked by hand):

    worst failover = ttl + R + D - 1 + G * floor(P / (N - 1))

The crash comes just as a renewal lands; a follower's poll lands one tick before the
lease runs out and is refused; its next poll is due R ticks later, is stalled by the
pauses the budget can spend on every surviving follower alike, and travels D ticks. With
a leader and one standby and one pause it is ttl + R + D + G - 1: each tick of TTL is a
tick of failover. The ghost `outage` counts the ticks since the crash of a node that
held the lease and believed it led (only with a token left to grant); the grant that ends
it, to any node, the restarted one included, sets `failover` for that one step.

False failover. The store's TTL restarts when a renewal *arrives*. Two arrivals are at
most R + D + P * G ticks apart: one arrives at once, the next is sent R ticks later (or
as soon as the first arrives, if that is later), stalled by pauses, and travels D ticks.
Exactly (for N >= 2 and tokens >= 2; G counts only when pauses exist, gc >= 1 and P >= 1;
the tests check it over a grid of timings):

    a healthy leader can be deposed  <=>  ttl <= R + D + P * G

If the gap can reach the TTL, the lease lapses in the store while its holder is up; a
follower whose poll arrives in that window (in the same tick as the late renewal but
first, at the latest) is granted it, and the holder, whose own copy ran out meanwhile,
steps down. It is `<=`, not `<`: at ttl = R + D + G the store's lease reaches 0 in the
very instant the late renewal must arrive, and a poll arriving in that instant may come
first. It is P * G, not G: the budget allows pauses back to
back (a resumed node may pause again before it sends what it owes), one longer stall;
at the default P = 1 it is R + D + G. The ghost `deposed` is set when the store grants
the lease to another node while the previous holder is up and has not crashed since it
was granted it (`holder_crashed`); a paused holder counts as healthy.

Details. A renewal that reaches the store after the holder's own copy ran out but before
the store's did succeeds, and the holder leads again under the same token (the store
never let the lease go); only a lapse in the store is a failover. A grant or renewal that
has travelled `ttl` ticks or more (possible only when ttl <= D) leaves the node a
follower, its own copy already over. An acquire of a lease that is held, even by the
node itself, is refused. Faults: crash (everything is volatile: the node comes back a
fresh follower whose first poll is due at once) and pause; no partitions and no losses
(a lost renewal is a delay beyond D, which the question rules out).

The state space is finite: `wait` <= R, a request's travel <= D (its arrival is urgent
then), a pause <= G (the tick waits for the resume), a node's copy and the store's lease
<= ttl, and `tokens` bounds acquisitions, so the token and the store's revision. `outage`
is bounded by the worst failover above: a crash during an outage ends the timing (a
second failure is not a failover time), so while it runs the crashed node is the only
one down, at least one other node polls every R ticks, pauses are bounded by the budget
and requests arrive within D, and a token is left to grant. `failover` is a past value
of `outage`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from itertools import product
from typing import NamedTuple, cast

from leadercheck.checker.model import Action
from leadercheck.models.cluster import (
    STORE,
    ClusterModel,
    ClusterState,
    FaultBounds,
    InterchangeableNodes,
    countdown,
)
from leadercheck.models.cluster.base import CRASH, RESUME, Successor
from leadercheck.models.cluster.nodes import LeadsWithToken, node_name, with_life
from leadercheck.models.params import NODES, Measure, Param, ProtocolEntry, fault_params

IDLE = -1  # `flight` when no request is in flight; `outage` and `failover` when not timing


class _RenewalFields(NamedTuple):
    up: bool = True
    paused: bool = False
    token: int = 0  # the lease token it believes it holds; 0: follower
    left: int = 0  # ticks its own copy of the lease has left (it leads while positive)
    wait: int = 0  # ticks until its next request is due
    flight: int = IDLE  # ticks its request in flight has travelled; IDLE: none in flight
    renews: int = 0  # token the request in flight renews; 0: the request is an acquire
    stalled: int = 0  # ticks paused so far (0 while running)


class RenewalNode(_RenewalFields, LeadsWithToken):
    __slots__ = ()

    @property
    def lead_token(self) -> int:
        return self.token

    @property
    def request(self) -> str | None:
        """The request in flight, in words; None when there is none."""
        if self.flight == IDLE:
            return None
        return f"renew t{self.renews}" if self.renews else "acquire"

    def describe(self) -> dict[str, object]:
        return {
            "up": self.up,
            "paused": self.paused,
            "role": self.role,
            "lease_token": self.token,
            "lease_left": self.left,
            "next_request_in": self.wait,
            "request_in_flight": self.request,
            "request_travelled": self.flight if self.flight != IDLE else None,
            "paused_for": self.stalled,
        }

    def summary(self) -> str:
        role = f"leader t{self.token}" if self.token else "follower"
        if self.request:
            role += f", {self.request} sent"
        return with_life(self.up, self.paused, role)


class Ghosts(NamedTuple):
    """What no node can see, kept for the claims and the failover measure."""

    deposed: bool = False  # the lease was granted away from a holder up and never crashed since
    outage: int = IDLE  # ticks since the leader crashed, until a new lease is granted
    failover: int = IDLE  # the outage a grant just ended (this step only)
    holder_crashed: bool = False  # the store's holder crashed since it was granted the lease

    def describe(self) -> dict[str, object]:
        return {
            "healthy_leader_deposed": self.deposed,
            "outage_ticks": self.outage if self.outage != IDLE else None,
            "failover_ticks": self.failover if self.failover != IDLE else None,
            "holder_crashed": self.holder_crashed,
        }


def healthy_leader_deposed(state: ClusterState) -> bool:
    """The store has granted the lease away from a holder that was up (paused counts as up)."""
    return bool(state.extra.deposed)


def failover_done(state: ClusterState) -> bool:
    """The step into this state granted a new lease after the leader crashed."""
    return bool(state.extra.failover >= 0)


def failover_ticks(state: ClusterState) -> int:
    """Ticks from the leader's crash to the grant that ended the outage (see failover_done)."""
    return int(state.extra.failover)


class LeaseRenewalModel(InterchangeableNodes, ClusterModel):
    """A lease renewed every `renew` ticks by requests the network delays up to `delay` ticks.

    Nodes are interchangeable (`--symmetry`): every node runs the same steps, the records
    and the ghosts hold no node ids, and the initial phases are every combination.
    """

    # Partial-order reduction (ClusterModel.local_moves): neither promise holds. A paused
    # node does not only fall silent (its request in flight still arrives, and its pause
    # blocks time at `gc`), and the tick reads `paused` to count the pause.
    stop_only_delays = False
    cut_only_blocks = False

    def __init__(
        self,
        nodes: int,
        ttl: int,
        renew: int,
        delay: int,
        gc: int,
        tokens: int,
        faults: FaultBounds,
    ) -> None:
        if gc == 0:  # a pause that lasts no tick is no pause: no pause steps at all
            faults = faults._replace(pauses=0)
        super().__init__(nodes, faults._replace(partitions=0, losses=0))
        self.ttl = ttl
        self.renew = renew
        self.delay = delay
        self.gc = gc
        self.tokens = tokens

    # -- the nodes ------------------------------------------------------------

    def initial_node(self, i: int) -> RenewalNode:
        return RenewalNode()

    def initial_extra(self) -> dict[str, Ghosts]:
        return {"extra": Ghosts()}

    def initial_states(self) -> list[ClusterState]:
        """Every phase: each node's first request is due within 0..renew-1 ticks."""
        start = super().initial_states()[0]
        phases = product(range(self.renew), repeat=self.n)
        return [start._replace(nodes=tuple(RenewalNode(wait=w) for w in p)) for p in phases]

    def node_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        """Send the request that is due, or have the one in flight arrive (never both)."""
        node: RenewalNode = s.node(i)
        if node.flight == IDLE and node.wait == 0:
            kind = f"renew t{node.token}" if node.token else "acquire"
            sent = node._replace(wait=self.renew, flight=0, renews=node.token)
            yield Action("send", node_name(i), STORE, kind), s.with_node(i, sent)
        if node.flight != IDLE:
            yield self._arrive(s, i)

    def _arrive(self, s: ClusterState, i: int) -> Successor:
        """The store handles node i's request in flight; the reply reaches the node at once."""
        node: RenewalNode = s.node(i)
        done = node._replace(flight=IDLE, renews=0)
        left = self.ttl - node.flight  # its own copy counts from when it sent the request
        if node.renews:
            store = s.store.renew(i, node.renews, self.ttl)
            if store is None:
                why = (
                    f"t{node.renews} expired"
                    if s.store.token == node.renews
                    else f"lease t{s.store.token} held by {node_name(s.store.holder)}"
                )
                after = s.with_node(i, done._replace(token=0, left=0))
                return self._store_step(i, "renew", f"renewal refused: {why}"), after
            note = f"renewed t{node.renews}, ttl {self.ttl}"
            renewed = done._replace(token=node.renews, left=left)
            if left <= 0:
                note += ", too late for its own copy: steps down"
                renewed = done._replace(token=0, left=0)
            return self._store_step(i, "renew", note), s.with_node(i, renewed)._replace(store=store)
        lease = s.store
        if not lease.lease_free():
            note = f"lease held by {node_name(lease.holder)}: refused"
            return self._store_step(i, "acquire", note), s.with_node(i, done)
        if lease.token >= self.tokens:
            return self._store_step(i, "acquire", "no token left: refused"), s.with_node(i, done)
        granted = lease.acquire(i, self.ttl)
        assert granted is not None
        note = f"CAS ok: token {granted.token}"
        leader = done._replace(token=granted.token, left=left)
        if left <= 0:
            note += ", too late for its own copy: stays follower"
            leader = done
        after = s.with_node(i, leader)._replace(store=granted, extra=self._granted(s, i))
        return self._store_step(i, "acquire", note), after

    def _store_step(self, i: int, kind: str, note: str) -> Action:
        return Action(kind, node_name(i), STORE, note)

    def _granted(self, s: ClusterState, i: int) -> Ghosts:
        """The ghosts after the store grants node i a new lease."""
        g: Ghosts = s.extra
        before = s.store.holder
        healthy = before not in (0, i) and s.node(before).up and not g.holder_crashed
        return Ghosts(
            deposed=g.deposed or healthy,
            outage=IDLE,
            failover=g.outage,  # IDLE unless this grant ends an outage
            holder_crashed=False,
        )

    # -- time -------------------------------------------------------------------

    def urgent(self, s: ClusterState, i: int) -> bool:
        """A due request is sent, and one that has travelled `delay` ticks arrives, in the tick."""
        node: RenewalNode = s.node(i)
        return (node.flight == IDLE and node.wait == 0) or node.flight >= self.delay

    def _time_blocked(self, s: ClusterState) -> bool:
        """Also for a paused node: its overdue request arrives, and its pause ends at `gc`."""
        if super()._time_blocked(s):
            return True
        return any(
            n.up and n.paused and (n.flight >= self.delay or n.stalled >= self.gc) for n in s.nodes
        )

    def tick_node(self, node: RenewalNode) -> RenewalNode:
        left = countdown(node.left)
        return node._replace(
            token=node.token if left else 0,
            left=left,
            wait=countdown(node.wait),
            flight=node.flight + 1 if node.flight != IDLE else IDLE,
            stalled=node.stalled + 1 if node.paused else 0,
        )

    def tick_extra(self, s: ClusterState) -> tuple[Ghosts, str]:
        g: Ghosts = s.extra
        notes = []
        if s.store.holder and s.store.ttl_left == 1:
            notes.append(f"lease t{s.store.token} expires")
        notes += [
            f"{node_name(i)}'s own copy runs out"
            for i, n in enumerate(s.nodes, start=1)
            if n.up and n.token and n.left == 1
        ]
        if g.outage != IDLE:
            return g._replace(outage=g.outage + 1), ", ".join(notes)
        return g, ", ".join(notes)

    # -- the moves ----------------------------------------------------------------

    def successors(self, s: ClusterState) -> Iterator[Successor]:
        """ClusterModel's order, with a paused node's request arriving in its node's place.

        `failover` marks only the grant that ends an outage, so every step starts from it
        cleared.
        """
        g: Ghosts = s.extra
        if g.failover != IDLE:
            s = s._replace(extra=g._replace(failover=IDLE))
        for i in self.ids:
            node: RenewalNode = s.node(i)
            if s.running(i):
                yield from self.node_steps(s, i)
            elif node.up and node.flight != IDLE:  # the network does not know it is paused
                yield self._arrive(s, i)
        if not self._time_blocked(s):
            yield self._tick(s)
        yield from self._faults(s)

    def _faults(self, s: ClusterState) -> Iterator[Successor]:
        """ClusterModel's faults; a resume clears the pause count, a crash updates the ghosts."""
        moves = zip(self._fault_moves(s), super()._faults(s), strict=True)  # one step per move
        for (kind, i), (action, after) in moves:
            if kind == RESUME:
                after = after.with_node(i, after.node(i)._replace(stalled=0))
            elif kind == CRASH:
                after = after._replace(extra=self._crashed(s, i))
            yield action, after

    def _crashed(self, s: ClusterState, i: int) -> Ghosts:
        """The ghosts after node i crashes: a leader's crash starts the outage clock."""
        g: Ghosts = s.extra
        lease = s.store
        holder = lease.holder == i
        if g.outage != IDLE:  # a second crash during an outage: no longer a single failure
            outage = IDLE
        elif holder and s.node(i).token == lease.token and lease.token < self.tokens:
            outage = 0
        else:
            outage = IDLE
        return g._replace(outage=outage, holder_crashed=g.holder_crashed or holder)

    def crash_node(self, node: RenewalNode) -> RenewalNode:
        return RenewalNode(up=False)  # everything is volatile; its request in flight is dropped

    def restart_node(self, node: RenewalNode, i: int) -> RenewalNode:
        return RenewalNode()  # a fresh follower, whose first poll is due at once

    # -- views ------------------------------------------------------------------

    def describe(self, s: ClusterState) -> Mapping[str, Mapping[str, object]]:
        view = dict(super().describe(s))
        # each node's request on its way to the store, as a message the chart can draw
        requests = [
            f"{str(n.request).split()[0]}({node_name(i)}->{STORE})"
            for i, n in enumerate(s.nodes, start=1)
            if n.request
        ]
        network = dict(view.get("network", {}))
        network["in_flight"] = [*cast(list[str], network.get("in_flight", [])), *requests]
        view["network"] = network
        view[STORE] = {**s.store.describe(), "ttl": self.ttl}
        view["ghost"] = s.extra.describe()
        return view

    def summary(self, s: ClusterState) -> Mapping[str, str]:
        lines = {node_name(i): n.summary() for i, n in enumerate(s.nodes, start=1)}
        lines[STORE] = s.store.summary()  # no storage line: nothing is written to it
        return lines


TTL = Param("ttl", 4, 1, 48, "store lease time-to-live in ticks")
RENEW = Param("renew", 1, 1, 48, "ticks between renewals (and between a follower's polls)")
DELAY = Param("delay", 1, 0, 48, "most ticks a request may take to reach the store")
GC = Param("gc", 1, 0, 48, "longest process pause in ticks (0: no pauses)")
TOKENS = Param("tokens", 3, 1, 6, "most lease tokens the store grants (bounds acquisitions)")


def renewal_params(ttl: int = TTL.default, crashes: int = 1) -> tuple[Param, ...]:
    """nodes, the four timings, tokens, and the crash and pause budgets (no partitions, no
    losses: a lost renewal would be a delay beyond `delay`, which the question rules out)."""
    faults = fault_params(crashes=crashes, partitions=0, losses=0, pauses=1)
    return (
        NODES,
        replace(TTL, default=ttl),
        RENEW,
        DELAY,
        GC,
        TOKENS,
        *(p for p in faults if p.name in ("crashes", "pauses")),
    )


def build(
    nodes: int, ttl: int, renew: int, delay: int, gc: int, tokens: int, crashes: int, pauses: int
) -> LeaseRenewalModel:
    faults = FaultBounds(crashes=crashes, pauses=pauses)
    return LeaseRenewalModel(nodes, ttl, renew, delay, gc, tokens, faults)


def _failover_model(size: tuple[int, int]) -> LeaseRenewalModel:
    ttl, renew = size
    return build(2, ttl, renew, delay=1, gc=1, tokens=2, crashes=1, pauses=1)


# The failover after the leader crashes, in a leader-and-standby pair (so the one pause
# can stall the only node able to take over), with requests delayed up to 1 tick and
# pauses up to 1 tick. Worst and best over every schedule; the mean is over the distinct
# states a grant ending an outage leads to. Worst = ttl + renew + delay + gc - 1.
FAILOVER = Measure(
    "ticks from the leader's crash to a new lease granted (2 nodes, delay 1, gc 1, one "
    "crash, one pause), worst over every schedule; mean over the distinct failover "
    "completions",
    "ttl/renew",
    ((2, 1), (3, 1), (4, 1), (5, 1), (4, 2), (5, 2), (5, 3)),
    _failover_model,
    failover_ticks,
    failover_done,
)

PROTOCOLS = (
    ProtocolEntry(
        "lease-renewal",
        "lease renewed every `renew` ticks over a network that delays requests; the TTL "
        "covers renew interval + delay + pause",
        renewal_params(),
        build,
        measures=(FAILOVER,),
    ),
    ProtocolEntry(
        "too-short-timeout",
        "the same lease with a TTL no longer than renew interval + worst delay: a late "
        "renewal deposes a healthy leader",
        renewal_params(ttl=2, crashes=0),
        build,
        measures=(FAILOVER,),
    ),
)

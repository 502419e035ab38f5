"""The lease without fencing as a question of timing: which lease, TTL, drift and pause are safe.

One lease term, in ticks, with the timing made the parameters. n1 holds the lease from
tick 0: it sent its acquire at 0 and the store granted it at once, so the store's lease
is valid while now < `ttl`. n1 counts its own copy of the lease, `lease` ticks of its
own clock, from 0 (the safe practice: from when it asked, not from when it heard back).
Its clock runs slow: it may lag real time by up to `drift` ticks in total over the
lease (the integer stand-in for a drift rate rho = drift / lease); each lag is a step
of its own (`drift`: the clock loses a tick, so n1's copy ends a tick later in real
time). While its copy runs n1 may check that it still leads and then write to the
storage with its token; between the check and the write taking effect it may be paused
(one pause, of up to `pause` ticks; a pause is the only thing that delays the write past
the tick of its check). n2 acquires as soon as the store's lease has expired (urgent:
before time passes), with token 2, and writes under it. The storage checks no tokens.

When is n1's write stale? n1 checks at a real tick t while its copy has ticks left:
lease + d - t > 0, where d <= drift is the lag so far, so t <= lease + drift - 1. Its
write lands at t + p with p <= pause, so no later than lease + drift + pause - 1. n2
takes the lease at tick ttl at the earliest and writes in that same tick, and within a
tick the steps interleave, so n2's write can come first. The write of token 1 after
token 2 is the stale write no-stale-write forbids, and it happens exactly when

    lease + drift - 1 + pause >= ttl,   that is   lease + drift + pause > ttl.

Conversely, when it holds: n1's clock loses all `drift` ticks at once, n1 checks at
tick min(ttl, lease + drift - 1), with a tick of its copy still left, is paused until
tick ttl if that is later (at most `pause` ticks), and writes after n2 has taken the
lease and written in tick ttl.

On the boundary, lease + drift + pause = ttl, the latest write of n1 lands in tick
ttl - 1, while the store still holds n1's lease: safe. This is the integer image of the
continuous region the solver synthesizes (checker/solver/encodings/lease_timing.py):
there A checks at a real time c < lease * (1 + rho) and its write lands at c + p with
p <= pause, B acquires at ttl, and the hazard is c + p >= ttl; with every time an
integer, c < K is c <= K - 1, so the two agree at every integer point with
rho = drift / lease, the boundary included (tests/solver/test_synthesis.py checks it).

The check and the write are lease.py's (`LeaseModel.leader_steps`), and so are n2's
compare-and-swap and the ticking of each node's copy. Only n1 pauses, only while its
write is pending, and only once; nothing crashes, no link fails and no reply is lost:
the question is the timing alone. n1 never renews and n2 takes at most one lease
(token 2), so the state space is finite and small (223 states at the defaults).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from leadercheck.checker.model import Action
from leadercheck.models.cluster import STORE, ClusterState, FaultBounds, Store
from leadercheck.models.cluster.base import PAUSE, Successor
from leadercheck.models.cluster.nodes import node_name
from leadercheck.models.lease import ExtendsLeaseNode, LeaseModel
from leadercheck.models.params import Param, ProtocolEntry

HOLDER, TAKER = 1, 2  # n1 holds the lease from tick 0; n2 takes it once it expires


class _TimingFields(NamedTuple):
    up: bool = True
    paused: bool = False
    token: int = 0  # the lease token it believes it holds; 0: not leader
    left: int = 0  # real ticks its own copy of the lease has left
    pending: int = 0  # token of a write it has decided to send; 0: none
    leadership: int = 0  # ghost: which leadership its token belongs to
    pending_tenure: int = 0  # ghost: the leadership its pending write was decided in
    lagged: int = 0  # ticks its clock has lost so far (at most `drift`)
    stalled: int = 0  # ticks paused so far (0 while running)


class TimingNode(_TimingFields, ExtendsLeaseNode):
    """A `LeaseNode` whose clock may lag and whose pause is timed."""

    __slots__ = ()

    def describe(self) -> dict[str, object]:
        return {**self.lease.describe(), "clock_lag": self.lagged, "paused_ticks": self.stalled}

    def summary(self) -> str:
        line = self.lease.summary()
        return f"{line}, clock {self.lagged} behind" if self.lagged else line


class LeaseTimingModel(LeaseModel):
    """`lease-no-fencing`'s check and write, one lease term: n1's slow clock and pause
    against the store's TTL.

    n1 and n2 play different parts, so the nodes are not interchangeable (no symmetry
    declared), and n2's urgency reads the store, so neither promise of partial-order
    reduction holds.
    """

    stop_only_delays = False
    cut_only_blocks = False

    def __init__(self, lease: int, ttl: int, drift: int, pause: int) -> None:
        faults = FaultBounds(pauses=1 if pause else 0)
        super().__init__(2, ttl, tokens=2, fencing=False, faults=faults)
        self.lease = lease
        self.drift = drift
        self.pause = pause

    def symmetry_groups(self) -> tuple[tuple[int, ...], ...]:
        return ()

    def initial_node(self, i: int) -> TimingNode:
        return TimingNode(token=1, left=self.lease, leadership=1) if i == HOLDER else TimingNode()

    def initial_states(self) -> list[ClusterState]:
        """n1 holds token 1 from tick 0; the store's lease has `ttl` ticks left."""
        start = super().initial_states()[0]
        return [start._replace(store=Store(HOLDER, 1, self.ttl, 1), ghost=1)]

    def node_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        """n1 may lag; n2 takes the expired lease; both check and write as leaders do."""
        if i == HOLDER:
            yield from self._lag_steps(s, i)
        else:
            yield from self.acquire_steps(s, i)  # token 2 once the lease is free
        yield from self.leader_steps(s, i)

    def _lag_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        node: TimingNode = s.node(i)
        if node.token and node.lagged < self.drift:
            lagged = node._replace(left=node.left + 1, lagged=node.lagged + 1)
            note = (
                f"clock loses a tick: its lease ends a tick later ({lagged.lagged} of {self.drift})"
            )
            yield Action("drift", node_name(i), None, note), s.with_node(i, lagged)

    def urgent(self, s: ClusterState, i: int) -> bool:
        """A checked write is sent, and n2 takes the expired lease, before time passes."""
        if super().urgent(s, i):
            return True
        taker = i == TAKER and not s.node(i).token
        return taker and s.store.token < self.tokens and s.store.lease_free()

    def _time_blocked(self, s: ClusterState) -> bool:
        """Also while n1 has been paused `pause` ticks: its pause ends first."""
        if super()._time_blocked(s):
            return True
        return any(n.paused and n.stalled >= self.pause for n in s.nodes)

    def tick_node(self, node: Any) -> Any:
        ticked = super().tick_node(node)
        return ticked._replace(stalled=node.stalled + 1 if node.paused else 0)

    def _fault_moves(self, s: ClusterState) -> Iterator[tuple[str, Any]]:
        """The only fault: n1 pauses between its check and its write (then resumes)."""
        for kind, what in super()._fault_moves(s):
            if kind != PAUSE or (what == HOLDER and s.node(HOLDER).pending):
                yield kind, what

    def crash_node(self, node: Any) -> Any:
        return TimingNode(up=False)  # never called: the fault budgets allow no crash

    def restart_node(self, node: Any, i: int) -> Any:
        return TimingNode()

    def describe(self, s: ClusterState) -> Mapping[str, Mapping[str, object]]:
        view = dict(super().describe(s))
        view[STORE] = {**s.store.describe(), "ttl": self.ttl}
        return view


PARAMS = (
    Param("lease", 3, 1, 200, "ticks of its own clock the leader counts its lease"),
    Param("ttl", 5, 1, 200, "ticks the store keeps the lease"),
    Param("drift", 1, 0, 200, "most ticks the leader's clock lags real time over the lease"),
    Param("pause", 1, 0, 200, "longest pause, in ticks, between the leader's check and its write"),
)


def build(lease: int, ttl: int, drift: int, pause: int) -> LeaseTimingModel:
    return LeaseTimingModel(lease, ttl, drift, pause)


PROTOCOLS = (
    ProtocolEntry(
        "lease-timing",
        "one lease term without fencing: the leader's slow clock and pause against the "
        "store's TTL; unsafe exactly when lease + drift + pause > ttl",
        PARAMS,
        build,
    ),
)

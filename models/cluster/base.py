"""`ClusterModel`: the moves every cluster shares, so a protocol only says what its nodes do.

A cluster state holds the nodes (one protocol-defined record each), the store, the
storage, the network and the fault budgets. This class generates, in a fixed order:
each running node's own steps (the protocol's), message deliveries, the clock tick,
and the faults (crash and restart, pause and resume, partition and heal, message
loss). Time passes only when no running node has something urgent to do (the
protocol says what is urgent, and any message in flight to a running node is), so
a process can only be delayed past a tick by a pause, a crash or the network,
never just by being slow.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple, Protocol

from checker.model import Action, Model
from models.cluster.faults import Faults
from models.cluster.network import Message, Network, islands
from models.cluster.nodes import CLOCK, NETWORK, STORAGE, STORE, node_name, node_set
from models.cluster.storage import Storage
from models.cluster.store import Store

Successor = tuple[Action, "ClusterState"]


class NodeState(Protocol):
    """What the shared machinery and the specs need from any protocol's node record."""

    up: bool
    paused: bool

    @property
    def is_leader(self) -> bool: ...

    @property
    def role(self) -> str:
        """'leader', 'candidate' or 'follower' (what it believes, whether up or not)."""

    @property
    def epoch(self) -> int | None:
        """The epoch it leads in (term or lease token); None in a protocol without epochs."""

    @property
    def tenure(self) -> int:
        """The epoch its leadership carries on writes, ghost where the protocol has none.

        0 when not leader. Epochs count from 1 for the first leadership, so a tenure of 2
        or more means a failover has happened.
        """

    def describe(self) -> dict[str, object]: ...

    def summary(self) -> str: ...


class ClusterState(NamedTuple):
    nodes: tuple[Any, ...]  # node i is nodes[i - 1]
    store: Store
    storage: Storage
    net: Network
    faults: Faults
    ghost: int = 0  # last ghost epoch issued, for protocols without epochs of their own
    extra: Any = None  # protocol-specific shared state (hashable), e.g. znodes or replicas

    def node(self, i: int) -> Any:
        return self.nodes[i - 1]

    def with_node(self, i: int, node: Any) -> ClusterState:
        nodes = self.nodes[: i - 1] + (node,) + self.nodes[i:]
        return self._replace(nodes=nodes)

    def running(self, i: int) -> bool:
        node = self.nodes[i - 1]
        return bool(node.up and not node.paused)

    def leaders(self) -> tuple[tuple[int, int | None], ...]:
        """(node, epoch) of every live node that believes it is leader."""
        return tuple(
            (i, n.epoch) for i, n in enumerate(self.nodes, start=1) if n.up and n.is_leader
        )


class FaultBounds(NamedTuple):
    """How many of each fault a search may inject (the initial budget)."""

    crashes: int = 0
    partitions: int = 0
    losses: int = 0
    pauses: int = 0


class ClusterModel(Model[ClusterState]):
    """Base of every cluster protocol: subclasses define the node record and its steps."""

    uses_store = True  # draw the store lifeline, allow node-store partitions
    node_partitions = False  # allow node-to-node partitions (protocols whose nodes talk)
    uses_ghost = False  # writes carry a ghost epoch (protocols without epochs)
    heals = True  # a partition may heal (False: a scenario whose split lasts for good)

    def __init__(self, nodes: int, faults: FaultBounds) -> None:
        self.n = nodes
        self.bounds = faults
        self.ids = tuple(range(1, nodes + 1))

    # -- hooks for protocols -----------------------------------------------

    def initial_node(self, i: int) -> Any:
        raise NotImplementedError

    def node_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        """The steps of running node i (up, not paused), in a fixed order."""
        raise NotImplementedError

    def deliver(self, s: ClusterState, msg: Message) -> Successor:
        """Running node msg.dst handles msg; the message is already removed from `s`."""
        raise NotImplementedError(f"{type(self).__name__} sends no messages")

    def tick_node(self, node: Any) -> Any:
        """What one tick does to a live node (paused or not)."""
        return node

    def tick_extra(self, s: ClusterState) -> tuple[Any, str]:
        """What one tick does to the protocol's shared state (`extra`), and a note for the step."""
        return s.extra, ""

    def urgent(self, s: ClusterState, i: int) -> bool:
        """Whether running node i must act before time may pass."""
        return False

    def crash_node(self, node: Any) -> Any:
        """The node after a crash: down, keeping only its durable state."""
        raise NotImplementedError

    def restart_node(self, node: Any, i: int) -> Any:
        raise NotImplementedError

    def initial_network(self) -> Network:
        """The network in the initial state: healthy unless a scenario starts split."""
        return Network()

    def initial_extra(self) -> dict[str, Any]:
        """Fields of the initial ClusterState a protocol sets (for example `ghost`)."""
        return {}

    # -- shared building blocks for protocols -------------------------------

    def store_call(
        self, s: ClusterState, i: int, action: Action, store: Store, node_after: Any
    ) -> Iterator[Successor]:
        """A request node i makes to the store that changes it to `store`.

        Yields the call with its reply delivered (the node becomes `node_after`) and,
        while the loss budget lasts, the same call with the reply lost: the store has
        changed but the node does not know it.
        """
        yield action, s.with_node(i, node_after)._replace(store=store)
        if s.faults.losses:
            lost = action._replace(note=f"{action.note}, reply lost")
            yield lost, s._replace(store=store, faults=s.faults.spend("losses"))

    # -- Model -------------------------------------------------------------

    def initial_states(self) -> list[ClusterState]:
        b = self.bounds
        state = ClusterState(
            nodes=tuple(self.initial_node(i) for i in self.ids),
            store=Store(),
            storage=Storage(),
            net=self.initial_network(),
            faults=Faults(b.crashes, b.partitions, b.losses, b.pauses),
            **self.initial_extra(),
        )
        return [state]

    def successors(self, s: ClusterState) -> Iterator[Successor]:
        for i in self.ids:
            if s.running(i):
                yield from self.node_steps(s, i)
        for msg in s.net.msgs:
            if s.running(msg.dst):
                yield self.deliver(s._replace(net=s.net.remove(msg)), msg)
        if not self._time_blocked(s):
            yield self._tick(s)
        yield from self._faults(s)

    def _time_blocked(self, s: ClusterState) -> bool:
        if any(s.running(m.dst) for m in s.net.msgs):
            return True
        return any(s.running(i) and self.urgent(s, i) for i in self.ids)

    def _tick(self, s: ClusterState) -> Successor:
        nodes = tuple(self.tick_node(n) if n.up else n for n in s.nodes)
        extra, note = self.tick_extra(s)
        after = s._replace(nodes=nodes, store=s.store.tick(), extra=extra)
        return Action("tick", CLOCK, None, note), after

    def _faults(self, s: ClusterState) -> Iterator[Successor]:
        f = s.faults
        for i in self.ids:
            node, name = s.node(i), node_name(i)
            if node.up and f.crashes:
                lost = {m for m in s.net.msgs if m.dst == i}
                after = s.with_node(i, self.crash_node(node))
                after = after._replace(net=s.net.drop_where(lost), faults=f.spend("crashes"))
                yield Action("crash", name, None, "volatile state lost"), after
            elif not node.up:
                yield Action("restart", name), s.with_node(i, self.restart_node(node, i))
        for i in self.ids:
            node, name = s.node(i), node_name(i)
            if node.up and not node.paused and f.pauses:
                after = s.with_node(i, node._replace(paused=True))._replace(
                    faults=f.spend("pauses")
                )
                yield Action("pause", name, None, "process pause begins"), after
            elif node.up and node.paused:
                yield (
                    Action("resume", name, None, "process pause ends"),
                    s.with_node(i, node._replace(paused=False)),
                )
        if f.partitions:
            spent = f.spend("partitions")
            if self.node_partitions and not s.net.island:
                for island in islands(self.n):
                    rest = frozenset(self.ids) - island
                    net = s.net.split(island)
                    note = f"{node_set(island)} | {node_set(rest)}"
                    if dropped := len(s.net.msgs) - len(net.msgs):
                        note += f", {dropped} in flight lost"
                    after = s._replace(net=net, faults=spent)
                    yield Action("partition", NETWORK, None, note), after
            if self.uses_store:
                for i in self.ids:
                    if s.net.reaches_store(i):
                        yield (
                            Action("partition", node_name(i), STORE, "link cut"),
                            s._replace(net=s.net.cut_store(i), faults=spent),
                        )
        if self.heals and not s.net.healthy:
            yield Action("heal", NETWORK, None, "every link restored"), s._replace(net=s.net.heal())
        if f.losses:
            for msg in s.net.msgs:
                yield (
                    Action("lose", NETWORK, None, f"{msg} lost"),
                    s._replace(net=s.net.remove(msg), faults=f.spend("losses")),
                )

    # -- views for traces and diagrams ------------------------------------

    def describe(self, s: ClusterState) -> Mapping[str, Mapping[str, object]]:
        view: dict[str, Mapping[str, object]] = {
            node_name(i): n.describe() for i, n in enumerate(s.nodes, start=1)
        }
        if self.uses_store:
            view[STORE] = s.store.describe()
        view[STORAGE] = s.storage.describe()
        view[NETWORK] = s.net.describe()
        view["faults"] = s.faults.describe()
        if self.uses_ghost:
            view["ghost"] = {"last_epoch": s.ghost}
        return view

    def summary(self, s: ClusterState) -> Mapping[str, str]:
        lines = {node_name(i): n.summary() for i, n in enumerate(s.nodes, start=1)}
        if self.uses_store:
            lines[STORE] = s.store.summary()
        lines[STORAGE] = s.storage.summary()
        return lines

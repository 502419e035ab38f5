"""`ClusterModel`: the moves every cluster shares, so a protocol only says what its nodes do.

A cluster state holds the nodes (one protocol-defined record each), the store, the
storage, the network and the fault budgets. This class generates, in a fixed order:
each running node's own steps (the protocol's), message deliveries, the clock tick,
the faults (crash and restart, pause and resume, partition and heal, message loss)
and then the fault kinds the protocol declares (`fault_kinds`, each with its own
budget; `STORE_CRASH`, with the store's restart, is one the cluster provides). Time
passes only when no running node has something urgent to do (the protocol says what
is urgent, and any message in flight to a running node is), so a process can only be
delayed past a tick by a pause, a crash or the network, never just by being slow.

Partial-order reduction (`local_moves`): starting a stopped node (restart, resume) and
healing a cut link to the store are local moves when the protocol promises that a
stopped node only falls silent and a cut link only blocks (`stop_only_delays`,
`cut_only_blocks`, both off by default) and the fault budgets rule out the fault that
would undo them. `local_moves` says why each is independent of every other move.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import partial
from typing import Any, NamedTuple, Protocol

from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.model import FAULT, RECOVERY, TICK, Action, Model
from leadercheck.models.cluster.faults import STORE_CRASH, FaultKind, Faults
from leadercheck.models.cluster.network import Message, Network, islands
from leadercheck.models.cluster.nodes import CLOCK, NETWORK, STORAGE, STORE, node_name, node_set
from leadercheck.models.cluster.records import quick_replace
from leadercheck.models.cluster.storage import Storage
from leadercheck.models.cluster.store import Store

Successor = tuple[Action, "ClusterState"]

# The kinds of fault and recovery moves, in the order `ClusterModel` generates them.
CRASH, RESTART, PAUSE, RESUME, SPLIT, FLAP, CUT, HEAL, LOSE = (
    "crash",
    "restart",
    "pause",
    "resume",
    "split",
    "flap",
    "cut",
    "heal",
    "lose",
)


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


@quick_replace
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

    def post(self, *msgs: Message) -> tuple[ClusterState, tuple[Message, ...]]:
        """This state with `msgs` sent: each to a node that is up and on the sender's side
        of any partition goes in flight; the others cannot leave and are returned, for the
        step's `Action.unreached` (a chart draws them ending in a cross)."""
        sent = [m for m in msgs if self.node(m.dst).up and self.net.connected(m.src, m.dst)]
        unreached = tuple(m for m in msgs if m not in sent) if len(sent) < len(msgs) else ()
        return self._replace(net=self.net.send(*sent)), unreached

    def leaders(self) -> tuple[tuple[int, int | None], ...]:
        """(node, epoch) of every live node that believes it is leader."""
        return tuple(
            (i, n.epoch) for i, n in enumerate(self.nodes, start=1) if n.up and n.is_leader
        )


BUILT_IN_FAULTS = ("crashes", "partitions", "losses", "pauses")
_KIND_NAME = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")  # written like a parameter name


class FaultBounds(NamedTuple):
    """How many of each fault a search may inject (the initial budget).

    `extra` holds the budgets of the kinds the protocol declares, by name; a declared
    kind it does not mention has none.
    """

    crashes: int = 0
    partitions: int = 0
    losses: int = 0
    pauses: int = 0
    # (name, budget) of each declared kind given one. Typed Any so that the protocols'
    # `FaultBounds(**faults)`, with int budgets from their parameters, still type-checks.
    extra: Any = ()

    @classmethod
    def of(cls, **budgets: int) -> FaultBounds:
        """Built-in budgets by their names, every other name a declared kind's:
        `FaultBounds.of(**{"pauses": 1, "clock-jumps": 1})`, or the `**faults` a
        protocol's builder receives from its parameters."""
        built_in = {k: v for k, v in budgets.items() if k in BUILT_IN_FAULTS}
        extra = tuple((k, v) for k, v in budgets.items() if k not in BUILT_IN_FAULTS)
        return cls(**built_in, extra=extra)


class ClusterModel(Model[ClusterState]):
    """Base of every cluster protocol: subclasses define the node record and its steps."""

    uses_store = True  # draw the store lifeline, allow node-store partitions
    # Fault kinds of the protocol's own (each with a budget, see `fault_steps`), generated
    # after the built-in faults in this order; list STORE_CRASH to let the store crash.
    fault_kinds: tuple[FaultKind, ...] = ()
    node_partitions = False  # allow node-to-node partitions (protocols whose nodes talk)
    uses_ghost = False  # writes carry a ghost epoch (protocols without epochs)
    heals = True  # a partition may heal (False: a scenario whose split lasts for good)
    # An island whose links to the rest fail and come back without limit (a flapping link):
    # cutting it off spends no budget, so it can happen again after every heal.
    flapping: frozenset[int] = frozenset()

    # Promises for partial-order reduction (see `local_moves`). Each is a claim about every
    # step of the protocol, subclasses included: a subclass that adds or changes steps
    # must check it again and set it to False where it no longer holds. Either also
    # promises that `successors` ends with ClusterModel's faults, in their order (the
    # positions `local_moves` returns are counted back from the end).
    #
    # stop_only_delays: a stopped (crashed or paused) node only falls silent.
    #   (a) the protocol sends no messages;
    #   (b) no step reads or writes node i's record, or asks whether node i is up or
    #       paused, except node i's own steps and ClusterModel's tick and faults (no other
    #       node's steps, no steps the protocol adds outside `node_steps`, no `tick_extra`);
    #   (c) `urgent(s, i)` reads only node i's record, and `tick_node` never turns a
    #       record that is not urgent into one that is;
    #   (d) `tick_node` neither reads nor writes `paused`.
    # cut_only_blocks: a node cut off from the store only loses steps. Every step enabled
    #   while node i cannot reach the store is enabled, with the same next state, when it
    #   can; nothing else (`urgent`, `tick_node`, `tick_extra`) reads the store links.
    # The steps of declared fault kinds (`fault_steps`) count as the protocol's steps here:
    # one that touches a stopped node's record or reads the links breaks a promise.
    stop_only_delays = False
    cut_only_blocks = False

    def __init__(self, nodes: int, faults: FaultBounds) -> None:
        self.n = nodes
        self.bounds = faults
        self.ids = tuple(range(1, nodes + 1))
        self.kind_budgets = self._declared_budgets(faults)

    def _declared_budgets(self, faults: FaultBounds) -> tuple[int, ...]:
        """The initial budget of each declared kind, in order; a bad declaration or an
        unknown budget is the user's error, said in one line."""
        model = type(self).__name__
        names: list[str] = []
        for kind in self.fault_kinds:
            if not isinstance(kind, FaultKind):
                raise LeadercheckError(f"{model}: fault_kinds holds {kind!r}, not a FaultKind")
            if not _KIND_NAME.fullmatch(kind.name):
                raise LeadercheckError(
                    f"{model}: fault kind {kind.name!r} must be written like a parameter "
                    "name (lowercase words joined by '-')"
                )
            if kind.name in BUILT_IN_FAULTS:
                raise LeadercheckError(f"{model}: fault kind {kind.name!r} is a built-in budget")
            if kind.name in names:
                raise LeadercheckError(f"{model}: fault kind {kind.name!r} is declared twice")
            if not 0 <= kind.default <= kind.high:
                raise LeadercheckError(
                    f"{model}: fault kind {kind.name!r} has default {kind.default} "
                    f"outside 0..{kind.high}"
                )
            if kind.name == STORE_CRASH.name and not self.uses_store:
                raise LeadercheckError(f"{model}: {kind.name} needs a protocol with a store")
            names.append(kind.name)
        given = dict(faults.extra)
        for name, budget in faults.extra:
            if name not in names:
                declared = ", ".join(names) or "none"
                raise LeadercheckError(
                    f"{model}: no fault kind {name!r} is declared (declared: {declared})"
                )
            if budget < 0:
                raise LeadercheckError(f"{model}: fault budget {name}={budget} is negative")
        return tuple(given.get(name, 0) for name in names)

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

    def fault_steps(self, s: ClusterState, kind: FaultKind) -> Iterator[Successor]:
        """The enabled faults of a kind the protocol declares, in a fixed order.

        Called only while the kind's budget lasts; the base class spends one unit on
        each step yielded and declares it a fault (never forced, not local), so a
        protocol only says what the fault does. STORE_CRASH is the cluster's own.
        """
        raise NotImplementedError(f"{type(self).__name__} declares {kind.name} but no fault_steps")

    def back_in_touch(self, before: ClusterState, after: ClusterState) -> ClusterState:
        """The state once a resume or a heal (`before` -> `after`) has taken effect.

        A protocol whose nodes keep something alive in a background thread (a session's
        heartbeats) refreshes it here: that thread runs again the moment its node is
        resumed or reconnected, not at the next tick. By default nothing changes.
        """
        return after

    def connection_lost(self, s: ClusterState, i: int) -> ClusterState:
        """The state once node i's connection to the store is gone (it crashed, or its
        link was cut and reset). A store that ties what a node holds to its session (a
        PostgreSQL advisory lock) lets it go here; by default nothing changes: a lease
        outlives its holder's connection until its TTL runs out."""
        return s

    def tick_store(self, store: Store) -> Store:
        """The store after one tick: a lease's TTL counts down. A store without TTLs
        (a session's lock) keeps it as it is."""
        return store.tick()

    def restart_store(self, store: Store) -> Store:
        """The store after it restarts (STORE_CRASH): by default durable, like etcd with
        its write-ahead log, it keeps everything. A volatile store returns what it keeps
        (`Store()`: nothing, not even the token counter)."""
        return store

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
            lost = action.then(", reply lost")._replace(kind=FAULT, fairness=None, local=False)
            yield lost, s._replace(store=store, faults=s.faults.spend("losses"))

    # -- Model -------------------------------------------------------------

    def initial_states(self) -> list[ClusterState]:
        b = self.bounds
        state = ClusterState(
            nodes=tuple(self.initial_node(i) for i in self.ids),
            store=Store(),
            storage=Storage(),
            net=self.initial_network(),
            faults=Faults(b.crashes, b.partitions, b.losses, b.pauses, self.kind_budgets),
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
        if self.fault_kinds:
            yield from self._declared_faults(s)

    # -- fairness ---------------------------------------------------------------

    def step_class(self, action: Action) -> str:
        """Every kind of node step and delivery is weakly fair per kind, actor and target
        (faults and recoveries are never forced and time passes: `Model.fairness`)."""
        return f"{action.actor} {action.name} {action.target or ''}".rstrip()

    # -- partial-order reduction -----------------------------------------------

    def _local_recoveries(self, s: ClusterState) -> frozenset[tuple[str, Any]]:
        """The restarts, resumes and the heal of `s` that are local: `_faults` marks them.

        Each is local under the conditions of `Model.local_moves`: (1) invisible, (2)
        independent of every move that can happen before it, (3) disabled only by itself.

        restart(i), with `stop_only_delays`, when the restarted record R is a follower
        (not leader, not candidate, tenure 0) that is not urgent and that a tick leaves
        unchanged. (1) A crashed node and R look the same to every claim: the claims look
        at a node's role, epoch and tenure only while it is up, and R neither leads nor
        stands nor holds a tenure, so restarting it changes no claim's value. (3) Only
        a restart brings a node up. (2) While node i is down nothing writes its record
        (b; the tick skips down nodes), so R is the same whenever the restart comes; no
        other step reads node i (b); a tick before or after the restart leaves R as it is,
        and R neither blocks time (not urgent, no messages: a, c) nor reads the clock;
        the faults of other nodes, partitions, heals and losses touch neither node i nor
        anything a restart touches; crash(i) and pause(i) only become enabled by it.

        resume(i), with `stop_only_delays`, when no crash is left in the budget and node
        i is not urgent. (1) No claim reads `paused`. (3) Only a resume ends a pause, and
        with no crash left nothing else can take node i out of its pause. (2) While node
        i is paused only a tick changes its record (b), which keeps it not urgent (c), so
        resuming never blocks time (a, c); a tick commutes with the resume (d); no other
        step asks whether node i is running (b); other faults do not touch it.

        heal, with `cut_only_blocks`, when no partition is left in the budget, some node
        is cut off from the store and the nodes are not split. (1) The claims read the
        network only as whether the nodes are split, which a heal (nodes not split)
        leaves alone, and with no partition left (and no flapping link) nothing can split
        them. (3) With no partition left only a heal changes the links. (2) A heal only
        enables the steps a cut blocked, each with the same effect (`cut_only_blocks`),
        and messages in flight are kept; no other move reads the store links (a cut
        needs a partition).
        """
        if not (self.stop_only_delays or self.cut_only_blocks):
            return frozenset()
        wanted: list[tuple[str, Any]] = []
        f = s.faults
        if self.stop_only_delays:
            for i, node in enumerate(s.nodes, start=1):
                if node.up:
                    if node.paused and not f.crashes and not self.urgent(s, i):
                        wanted.append((RESUME, i))
                elif self._quiet_restart(s, i, self.restart_node(node, i)):
                    wanted.append((RESTART, i))
        net = s.net
        if self.cut_only_blocks and self.heals and not f.partitions and not self.flapping:
            if net.store_cut and not net.island:
                wanted.append((HEAL, None))
        return frozenset(wanted)

    def _quiet_restart(self, s: ClusterState, i: int, restarted: Any) -> bool:
        """Whether restarting node i as `restarted` is invisible and starts nothing urgent."""
        if restarted.is_leader or restarted.role != "follower" or restarted.tenure:
            return False
        if self.tick_node(restarted) != restarted:
            return False
        return not self.urgent(s.with_node(i, restarted), i)

    def _time_blocked(self, s: ClusterState) -> bool:
        if any(s.running(m.dst) for m in s.net.msgs):
            return True
        return any(s.running(i) and self.urgent(s, i) for i in self.ids)

    def _tick(self, s: ClusterState) -> Successor:
        nodes = tuple(self.tick_node(n) if n.up else n for n in s.nodes)
        extra, note = self.tick_extra(s)
        after = s._replace(nodes=nodes, store=self.tick_store(s.store), extra=extra)
        return Action("tick", CLOCK, None, note, TICK), after

    def _fault_moves(self, s: ClusterState) -> Iterator[tuple[str, Any]]:
        """The enabled faults and recoveries of `s`, in order, named cheaply: (kind, what).

        `what` is the node, the island of a split, or the message lost; `_faults` builds
        the steps from exactly these, so `local_moves` can place them without building any.
        """
        f = s.faults
        for i in self.ids:
            node = s.node(i)
            if node.up and f.crashes:
                yield CRASH, i
            elif not node.up:
                yield RESTART, i
        for i in self.ids:
            node = s.node(i)
            if node.up and not node.paused and f.pauses:
                yield PAUSE, i
            elif node.up and node.paused:
                yield RESUME, i
        if f.partitions:
            if self.node_partitions and not s.net.island:
                for island in islands(self.n):
                    yield SPLIT, island
            if self.uses_store:
                for i in self.ids:
                    if s.net.reaches_store(i):
                        yield CUT, i
        if self.flapping and not s.net.island:
            yield FLAP, self.flapping
        if self.heals and not s.net.healthy:
            yield HEAL, None
        if f.losses:
            for msg in s.net.msgs:
                yield LOSE, msg

    def _faults(self, s: ClusterState) -> Iterator[Successor]:
        """The faults (never forced) and recoveries, declared as such; a recovery that is
        local in `s` (`_local_recoveries`) says so, for partial-order reduction."""
        f = s.faults
        moves = list(self._fault_moves(s))
        recoveries = any(kind in (RESTART, RESUME, HEAL) for kind, _ in moves)
        local = self._local_recoveries(s) if recoveries else frozenset()
        for kind, what in moves:
            if kind == CRASH:
                node, name = s.node(what), node_name(what)
                lost = {m for m in s.net.msgs if m.dst == what}
                after = s.with_node(what, self.crash_node(node))
                after = after._replace(net=s.net.drop_where(lost), faults=f.spend("crashes"))
                after = self.connection_lost(after, what)
                yield Action("crash", name, None, "volatile state lost", FAULT), after
            elif kind == RESTART:
                node, name = s.node(what), node_name(what)
                action = Action("restart", name, None, "", RECOVERY, local=(kind, what) in local)
                yield action, s.with_node(what, self.restart_node(node, what))
            elif kind == PAUSE:
                node, name = s.node(what), node_name(what)
                after = s.with_node(what, node._replace(paused=True))._replace(
                    faults=f.spend("pauses")
                )
                yield Action("pause", name, None, "process pause begins", FAULT), after
            elif kind == RESUME:
                node, name = s.node(what), node_name(what)
                local_move = (kind, what) in local
                resumed = s.with_node(what, node._replace(paused=False))
                yield (
                    Action("resume", name, None, "process pause ends", RECOVERY, local=local_move),
                    self.back_in_touch(s, resumed),
                )
            elif kind in (SPLIT, FLAP):
                net = s.net.split(what)
                spent = f if kind == FLAP else f.spend("partitions")
                note = partial(
                    self._split_note, what, kind == FLAP, len(s.net.msgs) - len(net.msgs)
                )
                yield (
                    Action("partition", NETWORK, None, note, FAULT),
                    s._replace(net=net, faults=spent),
                )
            elif kind == CUT:
                cut = s._replace(net=s.net.cut_store(what), faults=f.spend("partitions"))
                yield (
                    Action("partition", node_name(what), STORE, "link cut", FAULT),
                    self.connection_lost(cut, what),
                )
            elif kind == HEAL:
                yield (
                    Action(
                        "heal",
                        NETWORK,
                        None,
                        "every link restored",
                        RECOVERY,
                        local=(kind, what) in local,
                    ),
                    self.back_in_touch(s, s._replace(net=s.net.heal())),
                )
            else:
                yield (
                    Action("lose", NETWORK, None, partial(_lost_note, what), FAULT),
                    s._replace(net=s.net.remove(what), faults=f.spend("losses")),
                )

    def _declared_faults(self, s: ClusterState) -> Iterator[Successor]:
        """The declared kinds' faults while their budgets last, in declaration order;
        a store that is down restarts (free) whatever is left of its budget."""
        for index, kind in enumerate(self.fault_kinds):
            if kind.name == STORE_CRASH.name:
                yield from self._store_crash_steps(s, index)
                continue
            if not s.faults.extra[index]:
                continue
            for action, after in self.fault_steps(s, kind):
                action = action._replace(kind=FAULT, fairness=None, local=False)
                yield action, after._replace(faults=after.faults.spend_extra(index))

    def _store_crash_steps(self, s: ClusterState, index: int) -> Iterator[Successor]:
        """The store crashes (nobody reaches it; time goes on) or, once down, restarts."""
        if s.net.store_down:
            note = partial(self._restart_note, s.store)
            after = s._replace(
                store=self.restart_store(s.store), net=s.net._replace(store_down=False)
            )
            yield Action("restart", STORE, None, note, RECOVERY), after
        elif s.faults.extra[index]:
            after = s._replace(
                net=s.net._replace(store_down=True), faults=s.faults.spend_extra(index)
            )
            yield Action("crash", STORE, None, "no node reaches the store", FAULT, None), after

    def _restart_note(self, store: Store) -> str:
        """What the store kept across its crash, written only when the step is shown."""
        kept = self.restart_store(store)
        return "state kept" if kept == store else f"state not kept, now: {kept.summary()}"

    def _split_note(self, island: frozenset[int], flap: bool, dropped: int) -> str:
        """The note of a split, written only when the step is shown."""
        note = f"{node_set(island)} | {node_set(frozenset(self.ids) - island)}"
        if flap:
            note += ", the link flaps"
        if dropped:
            note += f", {dropped} in flight lost"
        return note

    # -- views for traces and diagrams ------------------------------------

    def describe(self, s: ClusterState) -> Mapping[str, Mapping[str, object]]:
        view: dict[str, Mapping[str, object]] = {
            node_name(i): vocabulary(n) for i, n in enumerate(s.nodes, start=1)
        }
        if self.uses_store:
            view[STORE] = s.store.describe()
            if s.net.store_down:
                view[STORE] = {**view[STORE], "down": True}
        view[STORAGE] = s.storage.describe()
        view[NETWORK] = s.net.describe()
        view["faults"] = s.faults.describe(self.fault_kinds)
        if self.uses_ghost:
            view["ghost"] = {"last_epoch": s.ghost}
        return view

    def summary(self, s: ClusterState) -> Mapping[str, str]:
        lines = {node_name(i): n.summary() for i, n in enumerate(s.nodes, start=1)}
        if self.uses_store:
            lines[STORE] = s.store.summary()
            if s.net.store_down:
                lines[STORE] = f"DOWN ({lines[STORE]})"
        lines[STORAGE] = s.storage.summary()
        return lines


def vocabulary(node: Any) -> dict[str, object]:
    """A node's view as the chart, the HTML page and `explain` read it: its own
    `describe()`, with what the claims read of it wherever that leaves it out (`up`,
    `paused`, `role`) and `leads` wherever its `role` would say otherwise than its
    `is_leader`, so every reader sees the leadership the claims judge."""
    view = dict(node.describe())
    view.setdefault("up", node.up)
    view.setdefault("paused", node.paused)
    view.setdefault("role", node.role)
    if (view["role"] == "leader") != bool(node.is_leader):
        view["leads"] = bool(node.is_leader)
    return view


def _lost_note(msg: Message) -> str:
    return f"{msg} lost"

"""How a protocol's model steps become calls on a real system, and what is compared after each.

A binding is the one place that knows a protocol's vocabulary on the real side: which
client operation a model action is (acquire is a transaction on etcd, an UPDATE on
PostgreSQL), what the model predicts a call returns (granted, refused, no reply, the
write accepted or rejected) and the facts to compare after every step, read from the
model's view of the state on one side and from the real store and storage on the other.

Faults are the harness's (the same on every system): pause and resume, crash and
restart, a node cut from the store and healed, a reply lost, time passing. A binding says
which it can make real (`faults`) and which operations need a lease granted first.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from leadercheck.checker.conform.replies import Fields
from leadercheck.checker.conform.world import GIVEN, Facts, Timing, World, settle_window
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.model import Action

View = Mapping[str, Mapping[str, Any]]

NO_REPLY = "no reply"


def note_of(action: Action) -> str:
    """The action's note, written out (a model may compute notes lazily)."""
    note = action.shown().note
    return note if isinstance(note, str) else str(note)


def reply_lost(action: Action) -> bool:
    """The model's own mark of a call whose reply was lost (models.cluster store_call)."""
    return note_of(action).endswith("reply lost")


class Binding(ABC):
    """One protocol on one system: setup, the calls of its steps, the facts on both sides."""

    system: str = ""
    #: model fault actions this binding makes real (the harness performs them)
    faults: frozenset[str] = frozenset(
        {"pause", "resume", "crash", "restart", "partition", "heal", "tick"}
    )

    #: how late the server itself may carry out a lease's expiry (its own timer's period):
    #: the settle window is at least this (world.settle_window)
    expiry_lag: float = 0.0
    #: whether a client under test (`--client`) can be driven on this binding: its
    #: operations and configuration are the ones the README documents
    user_clients: bool = False
    #: the user's own client program (`--client`), one process per node; None: ours
    client_command: list[str] | None = None
    #: processes the harness starts like nodes but that are no model node (Redis's clock
    #: process): they always run this project's client, whatever `--client` says
    harness_nodes: tuple[str, ...] = ()
    #: how a partition cuts a node's link (`--partition`): False resets every connection
    #: at once; True holds every byte until the heal (a silent partition: nobody hears
    #: anything until its own timeouts fire)
    silent_cuts: bool = False
    #: whether the model's `drift` step (a node's clock loses a tick) is made real: each
    #: client process then runs on a clock the harness can set back (clocks.py)
    drifting_clocks: bool = False
    #: the store's servers run with wall clocks the harness can make jump (a Redis master's:
    #: clocks.WallClock), when they are started here
    wall_clocks: bool = False
    #: a store member's fault outside the model (`--kill-member`, `--cut-member`): "kill"
    #: or "cut" (off from its peers), its role (the leader or a follower) and the step
    #: before which it happens (None: a step drawn for each random schedule); None: every
    #: member lives and talks
    member_fault: tuple[str, str, int | None] | None = None
    #: the fields each operation's result carries, as the client protocol documents them
    #: (replies.py): a client's answer without them, or with a field of the wrong kind,
    #: is its protocol error; an operation not named here answers anything
    replies: Mapping[str, Fields] = {}
    #: for an operation whose reply a lost-reply step loses, the bytes its request to the
    #: store holds ("kv/txn"): an operation that makes several requests (a lease grant,
    #: then the transaction) loses the reply the model means; not named, the next reply
    lost_replies: Mapping[str, bytes] = {}

    def __init__(self, protocol: str, params: Mapping[str, int]) -> None:
        self.protocol = protocol
        self.params = dict(params)

    def risky(self, action: Action) -> bool:
        """A step where the real system's safety rests on the client: a write the model's
        storage refuses as stale (a client that does not fence would make it land).
        Random schedules are drawn toward these (guidance.py)."""
        return action.name == "write" and "rejected" in note_of(action)

    def settled(self, timing: Timing) -> Timing:
        """`timing` with its settle window: the one given (--settle), or the one derived
        from the tick and this system's expiry lag."""
        if timing.settle_why == GIVEN:
            return timing
        window, why = settle_window(timing.tick, self.expiry_lag, self.system)
        return replace(timing, settle=window, settle_why=why)

    @property
    def nodes(self) -> tuple[str, ...]:
        return tuple(f"n{i}" for i in range(1, int(self.params["nodes"]) + 1))

    def caller(self, action: Action) -> str | None:
        """The node whose client process runs `action`'s calls: its actor, or, for an event
        the store sends a node (a ZooKeeper watch, a session expiry), its target."""
        if action.actor in self.nodes:
            return action.actor
        return action.target if action.target in self.nodes else None

    @abstractmethod
    def client_config(self, world: World, node: str) -> dict[str, Any]:
        """What node's client process is started with (its link to the store, the storage)."""

    @abstractmethod
    def reset(self, world: World) -> None:
        """Empty store and storage, as in the model's initial state (before every run)."""

    def initial_state(self, world: World) -> None:  # noqa: B027 (most start empty)
        """Once the clients run, before step 0: make real what the model's initial state
        already holds beyond an empty store (nothing, but for a lease held from tick 0)."""

    @abstractmethod
    def calls(self, action: Action) -> list[str] | None:
        """The client operations a node's action is, in order; the last is the one whose
        reply a lost-reply step loses. None: the action is not supported on this system."""

    @abstractmethod
    def outcome(self, op_reply: Mapping[str, Any]) -> str:
        """How the last call ended on the real system, in the words `expected_outcome` uses."""

    @abstractmethod
    def expected_outcome(self, action: Action, before: View, after: View) -> str:
        """How the model says the action's last call ends."""

    @abstractmethod
    def model_facts(self, view: View) -> Facts:
        """The facts of the model's state (its `describe()` view)."""

    @abstractmethod
    def real_facts(self, world: World) -> Facts:
        """The same facts read from the real store and storage now."""

    #: the result an operation's refusal is (`{"accepted": false}` for a write): a failed
    #: reply the client marks `"refused": true` is compared as it; an operation not named
    #: here has no refusal, and its failure is no reply whatever the client says
    refusals: Mapping[str, Mapping[str, Any]] = {}

    def refused_result(self, op: str) -> Mapping[str, Any] | None:
        """The result `op`'s refusal stands for, or None when it cannot be refused."""
        return self.refusals.get(op)

    def heard(self, node: str, op: str, reply: Mapping[str, Any]) -> None:  # noqa: B027
        """Every reply a node's client gave, as it came (after its check): a binding that
        learns from replies (which value a node's lock is stored under) overrides this."""

    def describe_call(self, node: str, op: str, reply: Mapping[str, Any]) -> str:
        """The real event, as the timeline shows it."""
        if not reply.get("ok"):
            refused = " (refused)" if reply.get("refused") is True else ""
            return f"{node} {op}: {reply.get('error', NO_REPLY)}{refused}"
        result = reply.get("result") or {}
        shown = ", ".join(f"{k}={v}" for k, v in sorted(result.items()))
        return f"{node} {op}: {shown}" if shown else f"{node} {op}"

    #: how many --endpoint addresses the system takes (None: any number from one)
    endpoints: int | None = None
    #: how many servers to start for it (None: the system's own number)
    instances: int | None = None
    #: whether the model's store crash and restart are made real (the store's server
    #: killed and started again, empty); only on servers started here
    store_crashes: bool = False

    @property
    def client_module(self) -> str:
        """This project's client for the binding (checker/conform/clients/<module>.py)."""
        return self.system

    def split_endpoints(
        self, endpoints: list[tuple[str, int]]
    ) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
        """The store's addresses and the storage's, of the servers running (both all of
        them, unless the binding keeps its storage on a server of its own)."""
        return list(endpoints), list(endpoints)

    def check_endpoints(self, count: int) -> None:
        """Refuse (LeadercheckError) a number of --endpoint addresses this binding cannot use."""
        if self.endpoints is not None and count != self.endpoints:
            wanted = f"{self.endpoints} address{'es' * (self.endpoints != 1)}"
            raise LeadercheckError(
                f"--endpoint: {self.system} ({self.protocol}) takes {wanted}, not {count}"
            )

    def check_timing(self, timing: Timing) -> None:
        """Refuse (LeadercheckError) a time mapping this system cannot honour."""
        if timing.tick <= 0 or timing.ttl_scale <= 0:
            raise LeadercheckError(f"a tick of {timing.tick:g} s cannot be made real")

"""Leader election with a lease in a coordination store, with and without fencing.

The algorithm, as etcd- or ZooKeeper-backed leaders run it: a node that sees the
lease free (never taken, or expired) takes it by compare-and-swap; the store grants
a new token (token + 1) and a TTL. The holder renews before the TTL runs out and
believes it leads until its own copy of the lease runs out. To write, a leader
first checks that it still holds the lease and then, as a separate step, sends the
write with its token. The two steps are a window: a process pause (garbage
collection, a stalled VM) between them lets the lease expire and pass to another
node, and the old leader's write arrives late.

With fencing the storage remembers the highest token it has accepted and rejects a
lower one ("409 STALE TOKEN"), so the late write is refused. Without fencing it is
accepted after the new leader's write: the no-stale-write claim breaks.

Faults: crash (the node forgets its lease), a partition between a node and the
store (renewals fail; the lease runs out on both sides at the same tick), a lost
reply to an acquire or renew (the store changed but the node does not know), and a
pause. Tokens are bounded by `tokens`, which bounds the number of acquisitions.

`check=store` is the check many lock libraries make (etcd3gw's `Lock.is_acquired()`, a
GET of the lock key): it asks the store, so a node cut off from the store cannot check
(its library raises) and decides no write; reached, the store answers as the node's own
copy does (both count the same ticks). The pause between the check and the write is
the same window either way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

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
from leadercheck.models.params import NODES, Param, ProtocolEntry, choice, fault_params


class _LeaseFields(NamedTuple):
    up: bool = True
    paused: bool = False
    token: int = 0  # the lease token it believes it holds; 0: not leader
    left: int = 0  # ticks its own copy of the lease has left
    pending: int = 0  # token of a write it has decided to send; 0: none
    leadership: int = 0  # ghost: which leadership its token belongs to (grants numbered in order)
    pending_tenure: int = 0  # ghost: the leadership its pending write was decided in


TENURE_FIELDS = 7  # LeaseNode's fields, the first of every lease variant's node record


class LeaseNode(_LeaseFields, LeadsWithToken):
    __slots__ = ()

    @property
    def lead_token(self) -> int:
        return self.token

    @property
    def tenure(self) -> int:  # the ghost field's name differs, so no field hides a property
        return self.leadership

    def describe(self) -> dict[str, object]:
        view: dict[str, object] = {
            "up": self.up,
            "paused": self.paused,
            "role": self.role,
            "lease_token": self.token,
            "lease_left": self.left,
            "pending_write_token": self.pending,
        }
        if (self.tenure, self.pending_tenure) != (self.token, self.pending):
            view["leadership"] = self.tenure  # its token was handed out before: say which
            view["pending_write_leadership"] = self.pending_tenure
        return view

    def summary(self) -> str:
        role = f"leader t{self.token}" if self.token else "follower"
        if self.pending:
            role += f", write t{self.pending} pending"
        return with_life(self.up, self.paused, role)


class ExtendsLeaseNode(tuple[Any, ...], LeadsWithToken):
    """Role properties for a node record whose first seven fields are LeaseNode's.

    Lease variants keep LeaseNode's fields and add their own (a NamedTuple cannot
    extend another), so every LeaseModel step works on them unchanged. Declare the
    fields in a NamedTuple and mix this in: `class RowNode(_RowFields, ExtendsLeaseNode)`.
    """

    __slots__ = ()

    @property
    def lease(self) -> LeaseNode:
        """The record without its extra fields: what lease.py's lease holder looks like."""
        return LeaseNode(*self[:TENURE_FIELDS])

    @property
    def lead_token(self) -> int:
        token: int = self[2]  # LeaseNode's `token`
        return token

    @property
    def tenure(self) -> int:
        tenure: int = self[5]  # LeaseNode's `leadership`
        return tenure


class LeaseModel(InterchangeableNodes, ClusterModel):
    """A lease held in the store by compare-and-swap; the storage may check tokens.

    Nodes are interchangeable (`--symmetry`): every node runs the same steps and the
    records hold no node ids; the holder in the store is renamed by the mixin.
    """

    # Partial-order reduction (ClusterModel.local_moves). A stopped node only falls
    # silent: no messages; a node's steps touch only its own record, the store and the
    # storage; urgency is its own pending write, which a tick never sets; the tick does
    # not look at `paused`. A cut link only blocks: acquire and renew need the store,
    # nothing else looks at the links. Subclasses that change the steps say again.
    stop_only_delays = True
    cut_only_blocks = True

    #: whether a leader's check asks the store (`check=store`) rather than its own copy
    remote_check = False

    def __init__(self, nodes: int, ttl: int, tokens: int, fencing: bool, faults: FaultBounds):
        super().__init__(nodes, faults)
        self.ttl = ttl
        self.tokens = tokens
        self.fencing = fencing

    # Node hooks take and return `Any`: subclasses keep LeaseNode's fields and add their
    # own (a NamedTuple cannot extend another), and every step here works on either.

    def initial_node(self, i: int) -> Any:
        return LeaseNode()

    def node_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        """Taking the lease, keeping it, then acting as leader: each overridable alone."""
        if s.net.reaches_store(i):
            yield from self.acquire_steps(s, i)
            yield from self.renew_steps(s, i)
        yield from self.leader_steps(s, i)

    def acquire_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        """Compare-and-swap on the store when the lease is free (node i reaches the store)."""
        node = s.node(i)
        if not node.token and s.store.token < self.tokens:
            store = s.store.acquire(i, self.ttl)
            if store is not None:
                note = f"CAS ok: token {store.token}, ttl {self.ttl}"
                granted, tenure = self.grant(s)
                leader = node._replace(token=store.token, left=self.ttl, leadership=tenure)
                action = Action("acquire", node_name(i), STORE, note)
                yield from self.store_call(granted, i, action, store, leader)

    def grant(self, s: ClusterState) -> tuple[ClusterState, int]:
        """A new leadership: the state with the grant counted (the ghost counter, kept
        whatever the store forgets) and the tenure it gives its holder."""
        return s._replace(ghost=s.ghost + 1), s.ghost + 1

    def renew_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        """The holder resets the TTL before it runs out (node i reaches the store)."""
        node = s.node(i)
        if node.token and node.left < self.ttl:
            store = s.store.renew(i, node.token, self.ttl)
            if store is not None:
                note = f"token {node.token}, ttl {self.ttl}"
                renewed = node._replace(left=self.ttl)
                action = Action("renew", node_name(i), STORE, note)
                yield from self.store_call(s, i, action, store, renewed)

    def leader_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        """Check "am I still leader?", then, as a separate step, write with the token."""
        node = s.node(i)
        name = node_name(i)
        checks = not self.remote_check or s.net.reaches_store(i)
        if node.token and not node.pending and checks:
            note = self.check_note(node)
            checked = s.with_node(i, node._replace(pending=node.token, pending_tenure=node.tenure))
            yield Action("check", name, None, note), checked
        if node.pending:
            storage, accepted = s.storage.write(node.pending, self.fencing, node.pending_tenure)
            verdict = "accepted" if accepted else f"rejected: {node.pending} < {s.storage.hi_epoch}"
            note = f"token {node.pending} {verdict}"
            done = node._replace(pending=0, pending_tenure=0)
            after = s.with_node(i, done)._replace(storage=storage)
            yield Action("write", name, STORAGE, note), after

    def check_note(self, node: Any) -> str:
        """What a passing check says (the lease's own ticks, where it counts them)."""
        return f"still leader: token {node.token}, {node.left} ticks left"

    def urgent(self, s: ClusterState, i: int) -> bool:
        return bool(s.node(i).pending)  # a running node sends a checked write within the tick

    def tick_node(self, node: Any) -> Any:
        left = countdown(node.left)
        if left:
            return node._replace(left=left)
        return node._replace(left=left, token=0, leadership=0)

    def crash_node(self, node: Any) -> Any:
        return LeaseNode(up=False)

    def restart_node(self, node: Any, i: int) -> Any:
        return LeaseNode()


TTL = Param("ttl", 2, 1, 5, "lease time-to-live in ticks")
TOKENS = Param("tokens", 3, 1, 6, "most lease tokens the store grants (bounds acquisitions)")


def lease_params(tokens: Param = TOKENS, **faults: int) -> tuple[Param, ...]:
    """The parameters every lease variant takes: nodes, ttl, tokens and its fault budgets."""
    return (NODES, TTL, tokens, *fault_params(**faults))


CHECK = choice(
    "check",
    "local",
    ("local", "store"),
    "where a leader checks its lease: its own copy, or the store (a lock library's GET)",
)
LEASE_PARAMS = (*lease_params(crashes=1, partitions=1, losses=1, pauses=1), CHECK)


def _builder(fencing: bool) -> Callable[..., LeaseModel]:
    def build(nodes: int, ttl: int, tokens: int, check: int = 0, **faults: int) -> LeaseModel:
        model = LeaseModel(nodes, ttl, tokens, fencing, FaultBounds(**faults))
        model.remote_check = bool(check)
        return model

    return build


PROTOCOLS = (
    ProtocolEntry(
        "lease-fencing",
        "lease by compare-and-swap with TTL; the storage rejects stale tokens",
        LEASE_PARAMS,
        _builder(fencing=True),
    ),
    ProtocolEntry(
        "lease-no-fencing",
        "the same lease; the storage accepts every write",
        LEASE_PARAMS,
        _builder(fencing=False),
    ),
)

"""Leader election with a Kubernetes Lease, as client-go's leaderelection package runs it.

The algorithm: the candidates share one `coordination.k8s.io/v1` Lease object in the API
server (the store). Its spec says who holds it (`holderIdentity`), for how long
(`leaseDurationSeconds`), when the holder last renewed it (`renewTime`) and how often the
holder has changed (`leaseTransitions`); its `metadata.resourceVersion` changes on every
write. Every `retryPeriod` a node runs `tryAcquireOrRenew`: it GETs the Lease and, if the
Lease does not exist yet, CREATEs it; if the node is the holder, it renews; if another
node holds it and `renewTime + leaseDuration` has passed (the Lease looks expired), it
takes over, writing `leaseTransitions + 1`; otherwise it tries again later. The write is an
UPDATE carrying the resourceVersion of the GET, which the API server applies only if
nobody wrote the Lease in between (409 Conflict otherwise; a CREATE of a Lease that now
exists is 409 AlreadyExists). The API server checks nothing else, neither the holder nor
the expiry: expiry is each client's judgement of what it read. The leader renews every
`retryPeriod` and stops leading once `renewDeadline` (< `leaseDuration`) has passed
without a successful renewal, so it stops before any other node can see the Lease
expire. To write, the leader checks that it still leads and then, as a separate step,
writes: a pause between the two can outlast the Lease, exactly as in `lease-no-fencing`.

`k8s-lease`: the storage checks no token, as with plain client-go leader election (whose
documentation warns that it does not guarantee that only one client acts as leader). The
bug: the paused leader's write lands after the new leader's. `k8s-lease-fencing`: the
leader passes `leaseTransitions + 1` as its fencing token (plus one so that the first
leadership is epoch 1, as everywhere in leadercheck), and the storage rejects a token
below one it has accepted. Optimistic concurrency keeps single-leader true in both: two
takeovers from the same read cannot both succeed, so no two nodes lead under one
leaseTransitions.

The Lease is the shared `Store`: `holder` is holderIdentity (0: no Lease yet), `token` is
leaseTransitions + 1, `ttl_left` the ticks until renewTime + leaseDuration. The node is
lease.py's `LeaseNode` (its `left`: ticks before its renewDeadline runs out) plus its
read and its retry timer; the check, the write and the clock are `LeaseModel`'s.

The abstraction of resourceVersion: it grows on every write, renewals included, so it is
unbounded. But the API server only ever compares the version a node read with the current
one, so the model keeps, per node holding a read, one boolean `fresh`: "no write of the
Lease since my GET". A GET sets it, every successful write of the Lease clears it for
every node, and an UPDATE from a node whose read is not fresh gets 409. This is exact:
whatever the versions are, the read one equals the current one exactly while no write
has happened since the read.

Simplifications, each keeping every behaviour that matters: client-go measures expiry
from `observedTime` (when the node first saw the current version), never earlier than
renewTime; judging by renewTime on one shared clock lets a follower take over at least as
early as client-go would. Candidates retry with jitter (`JitterUntil`, factor 1.2), so a
follower's GET is not urgent: it may come at any time. The leader's renewals are not
jittered: when its retry period is up it owes the GET, and after any GET the request is
sent before time passes. A GET that decides nothing (another node holds the Lease and it
has not expired) changes nothing and is not a step; for the same reason lost GET replies
are not modelled. A request to an unreachable API server fails within the tick; a request
that reaches it late is a pause between GET and UPDATE, which is modelled. Identities are
stable (the node's name), so a restarted node, or one that lost the reply to its own
takeover, finds itself the holder and renews without a transition.

Faults: crash (the node forgets its leadership, its read and its pending write; off by
default, as it multiplies the states fivefold and a lost reply already leaves a node
holding the Lease without knowing it), a partition between a node and the API server (the
leader cannot renew and stops at its renewDeadline), a lost reply to a CREATE or UPDATE
(the Lease changed but the node believes the request failed), and a pause. Takeovers are
bounded by `transitions`, the largest leaseTransitions the Lease may reach.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import NamedTuple

from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.model import Action
from leadercheck.models.cluster import STORE, ClusterState, FaultBounds, Store, countdown
from leadercheck.models.cluster.base import Successor
from leadercheck.models.cluster.nodes import node_name
from leadercheck.models.lease import ExtendsLeaseNode, LeaseModel
from leadercheck.models.params import NODES, Param, ProtocolEntry, fault_params

CREATE = "create"
UPDATE = "update"


class _K8sFields(NamedTuple):
    up: bool = True
    paused: bool = False
    token: int = 0  # leaseTransitions + 1 of the Lease it leads under; 0: not leader
    left: int = 0  # ticks before its renewDeadline runs out (while leader)
    pending: int = 0  # token of a write it has decided to send; 0: none
    leadership: int = 0  # ghost: which leadership its token belongs to
    pending_tenure: int = 0  # ghost: the leadership its pending write was decided in
    plan: str = ""  # the request its GET decided on: CREATE or UPDATE; "": no read
    fresh: bool = False  # no write of the Lease since its GET (the resourceVersion matches)
    wait: int = 0  # ticks before the leader's next renewal attempt


class K8sNode(_K8sFields, ExtendsLeaseNode):
    """A `LeaseNode` that also holds its pending read of the Lease and its retry timer."""

    __slots__ = ()

    def describe(self) -> dict[str, object]:
        view = self.lease.describe()
        view["renew_deadline_left"] = view.pop("lease_left")
        return {
            **view,
            "planned_request": self.plan or None,
            "read_is_current": self.fresh,
            "retry_wait": self.wait,
        }

    def summary(self) -> str:
        return self.lease.summary()


class K8sLeaseModel(LeaseModel):
    """client-go leader election on a Lease: GET, then UPDATE with the resourceVersion read."""

    # Partial-order reduction: neither promise of LeaseModel holds. A successful write
    # clears every node's `fresh` (a step that writes other nodes' records), a leader's
    # urgency depends on the Lease in the store (a tick can make a paused leader owe its
    # renewal), and a request sent while the API server is unreachable is a step of its own.
    stop_only_delays = False
    cut_only_blocks = False

    def __init__(
        self,
        nodes: int,
        lease_duration: int,
        renew_deadline: int,
        retry_period: int,
        transitions: int,
        fencing: bool,
        faults: FaultBounds,
    ):
        super().__init__(nodes, lease_duration, transitions + 1, fencing, faults)
        self.renew_deadline = renew_deadline
        self.retry = retry_period

    def initial_node(self, i: int) -> K8sNode:
        return K8sNode()

    def node_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        node: K8sNode = s.node(i)
        if node.plan:
            yield from self._send(s, i, node)
        elif (decision := self._read(s, i, node)) is not None:
            plan, note = decision
            read = node._replace(plan=plan, fresh=True)
            yield Action("get", node_name(i), STORE, note), s.with_node(i, read)
        yield from self.leader_steps(s, i)  # the Lease is taken and kept by GET, then UPDATE

    def _read(self, s: ClusterState, i: int, node: K8sNode) -> tuple[str, str] | None:
        """The request a GET by node i would decide on now, and why; None: no GET step.

        A GET needs the API server, and a leader GETs once per retry period. A GET that
        decides nothing (another node holds the Lease and it has not expired) changes
        nothing and is not a step.
        """
        if not s.net.reaches_store(i) or (node.token and node.wait):
            return None
        lease = s.store
        if lease.holder == 0:
            return CREATE, "404 NotFound: will create it"
        if lease.holder == i:
            return UPDATE, f"holder is me: will renew t{lease.token}"
        if lease.ttl_left == 0 and lease.token < self.tokens:
            return UPDATE, f"{node_name(lease.holder)}'s t{lease.token} expired: will take over"
        return None

    def _send(self, s: ClusterState, i: int, node: K8sNode) -> Iterator[Successor]:
        """The CREATE or UPDATE its GET decided on, applied only if the Lease is unchanged."""
        name = node_name(i)
        failed = node._replace(plan="", fresh=False, wait=self.retry if node.token else 0)
        if not s.net.reaches_store(i):
            yield Action(node.plan, name, None, "API server unreachable"), s.with_node(i, failed)
            return
        if not node.fresh:
            why = "409 AlreadyExists" if node.plan == CREATE else "409 Conflict: resourceVersion"
            yield Action(node.plan, name, STORE, why), s.with_node(i, failed)
            return
        lease = s.store
        if lease.holder == 0:
            token, note = 1, "t1 (leaseTransitions 0)"
        elif lease.holder == i:
            token, note = lease.token, f"renew t{lease.token}"
        else:
            token = lease.token + 1
            note = f"take over: t{token} (leaseTransitions {token - 1})"
        if lease.holder == i:  # the same Lease kept: the last leadership granted, its own
            tenure = s.ghost
        else:
            s, tenure = self.grant(s)
        written = Store(holder=i, token=token, ttl_left=self.ttl)
        leader = failed._replace(
            token=token, left=self.renew_deadline, wait=self.retry, leadership=tenure
        )
        stale = tuple(n._replace(fresh=False) for n in s.nodes)  # the resourceVersion moved on
        before = s._replace(nodes=stale).with_node(i, failed)
        yield from self.store_call(before, i, Action(node.plan, name, STORE, note), written, leader)

    def urgent(self, s: ClusterState, i: int) -> bool:
        """Within the tick: a decided request is sent, a checked write made, a due renewal tried."""
        node: K8sNode = s.node(i)
        if node.plan or super().urgent(s, i):
            return True
        return bool(node.token) and self._read(s, i, node) is not None

    def tick_node(self, node: K8sNode) -> K8sNode:
        ticked: K8sNode = super().tick_node(node)
        if node.token and not ticked.token:  # renewDeadline passed: stop leading, drop the read
            return ticked._replace(plan="", fresh=False, wait=0)
        return ticked._replace(wait=countdown(ticked.wait))

    def crash_node(self, node: K8sNode) -> K8sNode:
        return K8sNode(up=False)

    def restart_node(self, node: K8sNode, i: int) -> K8sNode:
        return K8sNode()

    def describe(self, s: ClusterState) -> dict[str, dict[str, object]]:
        view = {k: dict(v) for k, v in super().describe(s).items()}
        lease = s.store
        view[STORE] = {
            "holderIdentity": node_name(lease.holder) if lease.holder else None,
            "leaseTransitions": lease.token - 1 if lease.holder else None,
            "leaseDurationSeconds": self.ttl,
            "ticks_until_renewTime_plus_leaseDuration": lease.ttl_left,
        }
        return view


K8S_PARAMS = (
    NODES,
    Param("lease_duration", 3, 3, 6, "leaseDurationSeconds, in ticks"),
    Param("renew_deadline", 2, 2, 5, "renewDeadline in ticks (< lease_duration)"),
    Param("retry_period", 1, 1, 4, "retryPeriod in ticks (renew_deadline > 1.2 x this)"),
    Param("transitions", 2, 1, 5, "largest leaseTransitions the Lease may reach"),
    *fault_params(crashes=0, partitions=1, losses=1, pauses=1),
)


def _builder(fencing: bool) -> Callable[..., K8sLeaseModel]:
    def build(
        nodes: int,
        lease_duration: int,
        renew_deadline: int,
        retry_period: int,
        transitions: int,
        **faults: int,
    ) -> K8sLeaseModel:
        if lease_duration <= renew_deadline:  # client-go's NewLeaderElector refuses these too
            raise LeadercheckError(
                f"lease_duration={lease_duration} must exceed renew_deadline={renew_deadline}"
            )
        if 5 * renew_deadline <= 6 * retry_period:
            raise LeadercheckError(
                f"renew_deadline={renew_deadline} must exceed 1.2 x retry_period={retry_period}"
            )
        return K8sLeaseModel(
            nodes,
            lease_duration,
            renew_deadline,
            retry_period,
            transitions,
            fencing,
            FaultBounds(**faults),
        )

    return build


PROTOCOLS = (
    ProtocolEntry(
        "k8s-lease",
        "client-go leader election on a Kubernetes Lease; the storage checks no token",
        K8S_PARAMS,
        _builder(fencing=False),
    ),
    ProtocolEntry(
        "k8s-lease-fencing",
        "the same Lease election; writes carry leaseTransitions, stale ones are rejected",
        K8S_PARAMS,
        _builder(fencing=True),
    ),
)

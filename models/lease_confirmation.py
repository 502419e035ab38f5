"""A lease whose holder extends its own timer without waiting for the store to confirm.

The lease is `lease-no-fencing`'s: taken by compare-and-swap in the store (token + 1,
a TTL), renewed by the holder, and a leader checks that its own copy of the lease is
still running before it writes to the storage with its token; the storage checks no
tokens. What matters is how the holder renews. Done right, it extends its own copy of
the lease only once the store has confirmed the renewal: a renewal that is lost, sent
into a partition or refused leaves its copy running down, so it runs out no later than
the store's, and the next holder is granted the lease only after the old one has
stopped believing.

The bug, `lease-no-confirmation`: the holder sends the renewal and at once restarts its
own timer, as if sending were renewing, and never looks at the answer. When the
request is lost (or cannot reach the store, or the store refuses it because the lease
already ran out) the store lets the lease expire and grants it to another node, while
the first still believes it leads for a whole TTL more, and keeps renewing itself as
long as it likes. Two nodes believe they lead at once. Their tokens differ, so the
single-leader claim (one leader per epoch) holds; what breaks is the storage: the new
leader writes under token 2, then the old one under token 1, and a storage that checks
no tokens takes the stale write (no-stale-write, in nine steps). A fencing storage
would reject it; confirming the renewal keeps the second leader from existing at all.

Faults by default: a partition between a node and the store and one lost message (the
renewal request, or the reply to an acquire or a confirmed renewal). A reply to an
unconfirmed renewal is never read, so losing it changes nothing and is not modelled.
Pauses are off by default: a pause between a leader's check and its write breaks
no-stale-write even with confirmed renewals (that is `lease-no-fencing`'s bug).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from leadercheck.checker.model import FAULT, Action
from leadercheck.models.cluster import STORE, ClusterState, FaultBounds
from leadercheck.models.cluster.base import Successor
from leadercheck.models.cluster.nodes import node_name
from leadercheck.models.lease import LeaseModel, LeaseNode, lease_params
from leadercheck.models.params import ProtocolEntry


class LeaseConfirmationModel(LeaseModel):
    """`LeaseModel` without fencing, whose renewals are confirmed or merely sent."""

    # Partial-order reduction: a stopped node still only falls silent (the unconfirmed
    # renewal touches only the node's own record, the store and the loss budget), but a
    # cut link does more than block: a renewal sent into it is a step of its own.
    stop_only_delays = True
    cut_only_blocks = False

    def __init__(self, nodes: int, ttl: int, tokens: int, confirm: bool, faults: FaultBounds):
        super().__init__(nodes, ttl, tokens, fencing=False, faults=faults)
        self.confirm = confirm

    def node_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        yield from super().node_steps(s, i)
        if not self.confirm:
            yield from self._renew_unconfirmed(s, i)

    def renew_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        return super().renew_steps(s, i) if self.confirm else iter(())

    def _renew_unconfirmed(self, s: ClusterState, i: int) -> Iterator[Successor]:
        """Send a renewal and extend its own lease at once, whatever becomes of the request."""
        node: LeaseNode = s.node(i)
        if not node.token or node.left == self.ttl:
            return
        extended = s.with_node(i, node._replace(left=self.ttl))
        action = Action("renew", node_name(i), STORE, f"token {node.token}, own lease extended")
        if not s.net.reaches_store(i):
            yield action._replace(note=f"{action.note}, store unreachable"), extended
            return
        store = s.store.renew(i, node.token, self.ttl)
        if store is None:
            yield action._replace(note=f"{action.note}, refused: lease lost"), extended
            return
        yield (
            action._replace(note=f"{action.note}, store ttl {self.ttl}"),
            extended._replace(store=store),
        )
        if s.faults.losses:
            lost = action._replace(note=f"{action.note}, request lost", kind=FAULT)
            yield lost, extended._replace(faults=s.faults.spend("losses"))


def _builder(confirm: bool) -> Callable[..., LeaseConfirmationModel]:
    def build(nodes: int, ttl: int, tokens: int, **faults: int) -> LeaseConfirmationModel:
        return LeaseConfirmationModel(nodes, ttl, tokens, confirm, FaultBounds(**faults))

    return build


PROTOCOLS = (
    ProtocolEntry(
        "lease-no-confirmation",
        "lease whose holder extends its own timer without waiting for the store to confirm",
        lease_params(crashes=0, partitions=1, losses=1, pauses=0),
        _builder(confirm=False),
    ),
)

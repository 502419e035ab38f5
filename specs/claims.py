"""The claims, as predicates over any cluster state.

They read only the shared vocabulary: `state.leaders()` (each live node that believes
it leads, with its epoch or None), each node's `up`, `role` and `tenure`,
`state.storage` (with its ghost `stale` flag), `state.net` and, for replication,
`state.extra.ack_lost`.

Safety (`always`):
- single-leader: at most one leader per epoch; in a protocol without epochs
  (every leader's epoch is None), at most one leader at any instant.
- no-stale-write: once the storage has accepted a write made under epoch E, it never
  accepts one made under an epoch older than E. Epochs are compared by the leadership
  that made each write (its tenure), so a token handed out twice cannot hide a deposed
  leader's write.
- no-lost-ack-write: a write acknowledged to a client is never lost by a failover.

Witnesses (`sometimes`): states that must be reachable, so that a safety claim
cannot hold only because nothing ever happens.
- leader-elected, write-accepted, failover (a leader of epoch 2 or later exists),
  election-started (some node stands as candidate), leader-during-partition (a leader
  exists while the nodes are split).

Timing (lease-renewal, read from the ghost `state.extra.deposed`):
- healthy-leader-kept (`always`): the lease never passes from a holder that is up and has
  not crashed since it was granted; delays and short pauses are normal operation.
- false-failover (`sometimes`, a finding): the opposite, reachable in a configuration
  whose TTL is too short for its renew interval and delays.

Liveness, on fair behaviours (checker/engine/liveness.py):
- leader-eventually, leader-recovers: some node eventually leads (from the start; after
  it is lost while a majority is connected and timing has stabilized).
- leadership-settles (eventually always): elections eventually stop for good; a fair
  cycle that keeps coming back to a node standing is a livelock.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from leadercheck.checker.properties import (
    Property,
    always,
    eventually,
    eventually_always,
    leads_to,
    sometimes,
)
from leadercheck.models.cluster.nodes import node_name, node_set


def _leaders_by_epoch(state: Any) -> dict[int | None, list[int]]:
    by_epoch: dict[int | None, list[int]] = defaultdict(list)
    for node, epoch in state.leaders():
        by_epoch[epoch].append(node)
    return by_epoch


def at_most_one_leader_per_epoch(state: Any) -> bool:
    leaders = state.leaders()
    if len(leaders) < 2:  # the common case, checked on every state: no grouping needed
        return True
    epochs = [epoch for _, epoch in leaders]
    return len(set(epochs)) == len(epochs)


def _two_leaders(state: Any) -> str:
    for epoch, nodes in sorted(_leaders_by_epoch(state).items(), key=lambda kv: kv[0] or 0):
        if len(nodes) > 1:
            names = " and ".join(node_name(n) for n in nodes)
            where = f"of epoch {epoch}" if epoch is not None else "at the same time"
            return f"{names} are both leader {where}"
    return "at most one leader per epoch"


def no_write_below_accepted_epoch(state: Any) -> bool:
    """Judged by the writer's leadership (its tenure), not by the token the write carries:
    comparing tokens is what a fencing storage does, and a token handed out twice would
    make a deposed leader's late write look current (storage.py)."""
    return not state.storage.stale


def _stale(state: Any) -> str:
    storage = state.storage
    if storage.hi_tenure != storage.hi_epoch:
        return (
            "the storage accepted a write from a leadership older than the one whose write "
            f"it had already accepted (#{storage.hi_tenure}, under token {storage.hi_epoch} "
            "handed out twice)"
        )
    return (
        "the storage accepted a write whose epoch is below "
        f"epoch {storage.hi_epoch}, which it had already accepted"
    )


single_leader = always(
    "single-leader",
    at_most_one_leader_per_epoch,
    "at most one leader per epoch (at any instant, where the protocol has no epochs)",
    _two_leaders,
    reads=("voted_for", "holder", "owner"),  # a vote, the store's holder, a lock key's owner
)

no_stale_write = always(
    "no-stale-write",
    no_write_below_accepted_epoch,
    "once a write of epoch E is accepted, no write of an older epoch is",
    _stale,
    reads=("holder", "hi_epoch", "latest_leadership_written"),
)


def _ack_lost(state: Any) -> bool:
    return bool(getattr(state.extra, "ack_lost", False))


def _ack_missing(state: Any) -> str:
    """Which acknowledged write the new primary lacks, and what its WAL holds: the datum
    the claim is about (the replication vocabulary: `extra.acked`, each node's `log`)."""
    acked: frozenset[int] = getattr(state.extra, "acked", frozenset())
    for i, node in enumerate(state.nodes, start=1):
        log = getattr(node, "log", None)
        if not (node.up and node.is_leader) or log is None:
            continue
        missing = sorted(w for w in acked if w not in log)
        if missing:
            names = ", ".join(f"w{w}" for w in missing)
            held = ", ".join(f"w{w}" for w in sorted(log)) or "empty"
            return (
                f"{names}, acknowledged to the client, is missing from the new primary "
                f"{node_name(i)} (its WAL: {held})"
            )
    return "a write acknowledged to the client is missing from the new primary"


no_lost_ack_write = always(
    "no-lost-ack-write",
    lambda s: not _ack_lost(s),
    "a write acknowledged to a client survives every failover",
    _ack_missing,
    reads=("wal", "acked"),
)


def _live_leaders(state: Any) -> list[int]:
    return [i for i, n in enumerate(state.nodes, start=1) if n.up and n.is_leader]


def _names(nodes: list[int]) -> str:
    return ", ".join(node_name(n) for n in nodes)


leader_elected = sometimes(
    "leader-elected",
    lambda s: bool(_live_leaders(s)),
    "some node becomes leader",
    lambda s: f"{_names(_live_leaders(s))} is leader",
)

write_accepted = sometimes(
    "write-accepted",
    lambda s: s.storage.hi_epoch > 0,
    "the storage accepts a leader's write",
    lambda s: f"the storage accepted a write of epoch {s.storage.hi_epoch}",
)

failover = sometimes(
    "failover",
    lambda s: any(n.up and n.tenure >= 2 for n in s.nodes),
    "a second leadership begins: some leader holds epoch 2 or later",
    lambda s: (
        "a leader of epoch 2 or later exists"
        if all(n.tenure == (n.epoch or n.tenure) for n in s.nodes)
        else "a second leadership exists (its token was handed out before)"
    ),
)

election_started = sometimes(
    "election-started",
    lambda s: any(n.up and n.role == "candidate" for n in s.nodes),
    "some node stands as a candidate",
    lambda s: "a node stands as candidate",
)

leader_during_partition = sometimes(
    "leader-during-partition",
    lambda s: bool(s.net.island) and bool(_live_leaders(s)),
    "a leader can be elected while the partition lasts",
    lambda s: f"{_names(_live_leaders(s))} leads while the network is split",
)


def _deposed(state: Any) -> bool:
    return bool(getattr(state.extra, "deposed", False))


healthy_leader_kept = always(
    "healthy-leader-kept",
    lambda s: not _deposed(s),
    "the lease never passes from a holder that is up and never crashed since it was granted "
    "(slow renewals and short pauses are normal operation)",
    lambda s: "the lease passed to another node while its holder was up and healthy",
)

false_failover = sometimes(
    "false-failover",
    _deposed,
    "a finding: a healthy, connected leader loses the lease to another node",
    lambda s: "the lease passed to another node while its holder was up and healthy",
    finding=True,
)


def _no_majority(state: Any) -> str:
    """Why no node can lead in `state`, in votes: a leader needs a strict majority."""
    nodes = getattr(state, "nodes", ())
    if not nodes:
        return "no node leads"
    need = len(nodes) // 2 + 1
    up = frozenset(i for i, n in enumerate(nodes, start=1) if n.up)
    island = frozenset(getattr(getattr(state, "net", None), "island", frozenset()))
    if island:
        sides = [up & island, up - island]
        told = ", ".join(
            f"{node_set(side)} can gather {len(side)} of {len(nodes)} votes" for side in sides
        )
        if all(len(side) < need for side in sides):
            return f"no side of the partition can elect a leader: {told}; a leader needs {need}"
        return f"no node leads ({told}; a leader needs {need})"
    if len(up) < need:
        return f"only {len(up)} of {len(nodes)} nodes are up, a leader needs {need}"
    return f"no node gathers the {need} of {len(nodes)} votes a leader needs"


leader_eventually = eventually(
    "leader-eventually",
    lambda s: bool(_live_leaders(s)),
    "on every fair behaviour some node eventually leads (nodes' steps and deliveries are "
    "weakly fair, time passes, faults are never forced)",
    _no_majority,
)


def _stable(state: Any) -> bool:
    return bool(getattr(state.extra, "stable", False))


def _majority_connected(state: Any) -> bool:
    """A strict majority of the nodes is up and can all reach one another."""
    up = [i for i, n in enumerate(state.nodes, start=1) if n.up]
    sides = [[i for i in up if state.net.connected(i, j)] for j in up]
    return any(2 * len(side) > len(state.nodes) for side in sides)


leader_recovers = leads_to(
    "leader-recovers",
    lambda s: _stable(s) and not _live_leaders(s) and _majority_connected(s),
    lambda s: bool(_live_leaders(s)),
    "whenever no node leads, a majority is up and connected and timing has stabilized, "
    "some node eventually leads (on every fair behaviour)",
)


def _standing(state: Any) -> list[int]:
    """The running nodes that are holding an election (standing as candidates)."""
    return [i for i, n in enumerate(state.nodes, start=1) if n.up and n.role == "candidate"]


leadership_settles = eventually_always(
    "leadership-settles",
    lambda s: not _standing(s),
    "on every fair behaviour elections eventually stop for good: no livelock in which "
    "leadership keeps changing (faults may still happen, they are never forced)",
    lambda s: f"{_names(_standing(s))} holding an election again",
)

PROPERTIES: dict[str, Property] = {
    p.name: p
    for p in (
        single_leader,
        no_stale_write,
        no_lost_ack_write,
        leader_elected,
        write_accepted,
        failover,
        election_started,
        leader_during_partition,
        leader_eventually,
        leader_recovers,
        healthy_leader_kept,
        false_failover,
        leadership_settles,
    )
}

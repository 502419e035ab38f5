"""The safety claims, as predicates over any cluster state.

They read only the shared vocabulary: `state.leaders()` (each live node that believes
it leads, with its epoch or None) and `state.storage` (with its ghost `stale` flag).

- single-leader: at most one leader per epoch; in a protocol without epochs
  (every leader's epoch is None), at most one leader at any instant.
- no-stale-write: once the storage has accepted a write made under epoch E, it never
  accepts one made under an epoch older than E.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from checker.properties import Property, always
from models.cluster.nodes import node_name


def _leaders_by_epoch(state: Any) -> dict[int | None, list[int]]:
    by_epoch: dict[int | None, list[int]] = defaultdict(list)
    for node, epoch in state.leaders():
        by_epoch[epoch].append(node)
    return by_epoch


def at_most_one_leader_per_epoch(state: Any) -> bool:
    return all(len(nodes) <= 1 for nodes in _leaders_by_epoch(state).values())


def _two_leaders(state: Any) -> str:
    for epoch, nodes in sorted(_leaders_by_epoch(state).items(), key=lambda kv: kv[0] or 0):
        if len(nodes) > 1:
            names = " and ".join(node_name(n) for n in nodes)
            where = f"of epoch {epoch}" if epoch is not None else "at the same time"
            return f"{names} are both leader {where}"
    return "at most one leader per epoch"


def no_write_below_accepted_epoch(state: Any) -> bool:
    return not state.storage.stale


def _stale(state: Any) -> str:
    return (
        "the storage accepted a write whose epoch is below "
        f"epoch {state.storage.hi_epoch}, which it had already accepted"
    )


single_leader = always(
    "single-leader",
    at_most_one_leader_per_epoch,
    "at most one leader per epoch (at any instant, where the protocol has no epochs)",
    _two_leaders,
)

no_stale_write = always(
    "no-stale-write",
    no_write_below_accepted_epoch,
    "once a write of epoch E is accepted, no write of an older epoch is",
    _stale,
)

PROPERTIES: dict[str, Property] = {p.name: p for p in (single_leader, no_stale_write)}

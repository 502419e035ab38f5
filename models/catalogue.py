"""The protocol catalogue: every protocol by the name the CLI spells, in a stable order.

Each protocol module exports `PROTOCOLS`, a tuple of `ProtocolEntry`; this module only
collects them. The order here is the order of `verify --list` and `verify --all`.
"""

from __future__ import annotations

from leadercheck.checker.errors import LeadercheckError
from leadercheck.models import (
    advisory_lock,
    bully,
    gossip,
    heartbeat,
    k8s_lease,
    lease,
    lease_bench,
    lease_confirmation,
    lease_renewal,
    lease_row,
    lease_timing,
    patroni,
    raft,
    raft_election,
    redis_lock,
    zookeeper,
)
from leadercheck.models.params import ProtocolEntry, did_you_mean

_MODULES = (
    lease,
    lease_row,
    lease_confirmation,
    k8s_lease,
    lease_renewal,
    lease_timing,
    zookeeper,
    redis_lock,
    advisory_lock,
    patroni,
    raft,
    heartbeat,
    bully,
    gossip,
    # benchmark models, exactly as ../shared/benchmarks/ defines them
    raft_election,
    lease_bench,
)

PROTOCOLS: dict[str, ProtocolEntry] = {p.name: p for m in _MODULES for p in m.PROTOCOLS}


def lookup(name: str) -> ProtocolEntry:
    """The protocol called `name`, or a LeadercheckError with a did-you-mean."""
    try:
        return PROTOCOLS[name]
    except KeyError:
        hint = did_you_mean(name, PROTOCOLS)
        raise LeadercheckError(
            f"unknown protocol {name!r}{hint}; run `verify --list` to see them"
        ) from None

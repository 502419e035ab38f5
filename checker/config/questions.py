"""What each system's knobs mean to the catalogue's timing models: the questions a
configuration is judged on, in real seconds.

Every system here elects a leader the same way underneath: a lease the store keeps for a
TTL, renewed by its holder, and a holder that believes it leads for a while on its own
clock after it last renewed. Two models of the catalogue answer the two timing questions
that follow, whatever the system:

- **stale leader** (`lease-timing`: lease, ttl, drift, pause): can the deposed leader
  still act after the store let another take over? It believes it leads for `lease`
  seconds of its own clock after it asked, the store keeps its lease `ttl` seconds, its
  clock may run slow by the drift rate, and a pause may delay the act it decided on.
  Unsafe exactly when lease * (1 + drift) + pause > ttl.
- **false failover** (`lease-renewal`: ttl, renew, delay, gc): can a healthy leader be
  deposed? It renews every `renew` seconds, a request takes up to `delay`, a pause of
  up to `gc` holds a renewal back. Deposed exactly when ttl <= renew + delay + gc. The
  same model measures the worst failover time after the leader crashes.

Each system says how its knobs make those numbers (`Timing`): formulas over its knobs and
the environment, written once and evaluated on numbers (the models' inputs) and on
solver terms (how far each knob may move). Patroni
adds a question of its own (`patroni`: are acknowledged writes kept across a failover).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from leadercheck.checker.config.environment import NAMES as ENVIRONMENT
from leadercheck.checker.config.knobs import Configuration

Formula = Callable[[Mapping[str, Any]], Any]  # knobs and environment -> seconds
REDLOCK_SLACK = 0.002  # node-redlock adds 2 ms to the drift allowance


@dataclass(frozen=True)
class Timing:
    """How one system's knobs make the timing models' numbers, in seconds."""

    leader: str  # what the system calls its leader: "primary", "lock holder"
    believes: Formula  # how long the holder believes it leads after it asked (own clock)
    believes_why: str  # the formula in the system's words, as the report states it
    store_ttl: Formula  # how long the store keeps the lease after it granted it
    store_ttl_why: str
    renew: Formula | None = None  # the renewal interval (None: the lease is never renewed)
    renew_why: str = ""
    delay: Formula | None = None  # how long a renewal may take to reach the store
    remedy: str = ""  # what closes the stale-leader hazard for any pause


def names_in(formula: Formula, values: Mapping[str, float]) -> tuple[str, ...]:
    """The knobs and environment figures a formula reads, in the order it reads them."""
    read: list[str] = []

    class Recording(dict[str, float]):
        def __getitem__(self, key: str) -> float:
            if key not in read:
                read.append(key)
            return super().__getitem__(key)

    formula(Recording(values))
    return tuple(read)


def values_of(config: Configuration) -> dict[str, float]:
    """The knobs, the environment and the figures derived from them, by name."""
    values = dict(config.knobs)
    values |= {name: getattr(config.environment, name) for name in ENVIRONMENT}
    if config.system == "zookeeper":
        values["session_timeout"] = negotiated_session(config.knobs)
    return values


def negotiated_session(knobs: Mapping[str, float]) -> float:
    """The session timeout the server grants: the client's, clamped to the server's bounds."""
    low, high = knobs["min_session_timeout"], knobs["max_session_timeout"]
    return min(max(knobs["session_timeout"], low), high)


TIMINGS: dict[str, Timing] = {
    # Patroni renews the leader key every loop_wait; when an update fails it retries for
    # retry_timeout and demotes PostgreSQL within another (its documented rule's 2 *
    # retry_timeout), while PostgreSQL goes on accepting writes.
    "patroni": Timing(
        leader="primary",
        believes=lambda v: v["loop_wait"] + 2 * v["retry_timeout"],
        believes_why="loop_wait + 2 * retry_timeout (the wait, the retries, the demotion)",
        store_ttl=lambda v: v["ttl"] * (1 - v["consul"] / 2),
        store_ttl_why="the leader key's ttl, halved when the DCS is Consul",
        renew=lambda v: v["loop_wait"],
        renew_why="the leader key is updated every loop_wait",
        delay=lambda v: v["dcs_latency"],
        remedy="Patroni's watchdog (watchdog: mode: required) resets a primary whose "
        "Patroni stops renewing; writes fenced by a token close it for any pause "
        "(verify --protocol lease-fencing)",
    ),
    # client-go: after a renewal it waits retryPeriod, then tries for renewDeadline before
    # it stops leading; the others wait leaseDuration after they last saw the record change.
    "k8s": Timing(
        leader="leader",
        believes=lambda v: v["retry_period"] + v["renew_deadline"],
        believes_why="retryPeriod + renewDeadline (the wait after a renewal, then the tries)",
        store_ttl=lambda v: v["lease_duration"],
        store_ttl_why="leaseDuration",
        renew=lambda v: v["retry_period"],
        renew_why="the Lease is renewed every retryPeriod",
        delay=lambda v: v["dcs_latency"],
        remedy="client-go fences nothing: writes that carry leaseTransitions to a storage "
        "that refuses older ones close it for any pause (verify --protocol k8s-lease-fencing)",
    ),
    # etcd's client counts a lease's TTL from the keep-alive *response*, which arrives up to
    # a network delay after the server restarted the TTL.
    "etcd": Timing(
        leader="leader",
        believes=lambda v: v["lease_ttl"] + v["network_delay"],
        believes_why="the lease TTL, counted by the client from the keep-alive response "
        "(up to a network delay late)",
        store_ttl=lambda v: v["lease_ttl"],
        store_ttl_why="the lease TTL",
        renew=lambda v: v["keepalive"],
        renew_why="the client sends a keep-alive every keepalive interval",
        delay=lambda v: v["network_delay"],
        remedy="fence writes with the election key's revision (etcd's own advice; verify "
        "--protocol lease-fencing)",
    ),
    # ZooKeeper's client declares itself disconnected (Curator: SUSPENDED, leadership
    # given up) after 2/3 of the session timeout without an answer; the server expires
    # the session after the whole timeout. An idle client pings every third of it.
    "zookeeper": Timing(
        leader="leader",
        believes=lambda v: v["session_timeout"] * 2 / 3 + v["network_delay"],
        believes_why="2/3 of the negotiated session timeout, from the last answer "
        "(up to a network delay late)",
        store_ttl=lambda v: v["session_timeout"],
        store_ttl_why="the negotiated session timeout",
        renew=lambda v: v["session_timeout"] / 3,
        renew_why="an idle client pings every third of the session timeout",
        delay=lambda v: v["network_delay"],
        remedy="fence writes with the election znode's sequence or version (verify "
        "--protocol zookeeper-fencing)",
    ),
    # Redlock: the lock is valid for ttl - elapsed - (ttl * driftFactor + 2 ms) from the
    # moment the client started acquiring; each master expires the key ttl after its SET.
    "redlock": Timing(
        leader="lock holder",
        believes=lambda v: v["ttl"] * (1 - v["drift_factor"]) - REDLOCK_SLACK,
        believes_why="its validity: ttl - ttl * driftFactor - 2 ms, from when it began acquiring",
        store_ttl=lambda v: v["ttl"],
        store_ttl_why="the key's ttl on each master",
        remedy="Redlock hands out no fencing token: a lock service that does, and a storage "
        "that checks it, close it for any pause (verify --protocol lease-fencing)",
    ),
}

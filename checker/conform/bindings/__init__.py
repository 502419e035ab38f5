"""Which protocol can be made real on which system, and the binding that does it.

Bindings are imported only when asked for, so a system's client library (etcd3gw,
psycopg, kazoo, redis: the `conform` extra) is needed only to run against that system.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from leadercheck.checker.conform.bindings.base import Binding
from leadercheck.checker.errors import LeadercheckError

#: (protocol, system) -> "module:Class" under checker/conform/bindings/
BINDINGS: Mapping[tuple[str, str], str] = {
    ("lease-no-fencing", "etcd"): "etcd:EtcdLease",
    ("lease-fencing", "etcd"): "etcd:EtcdLease",
    ("lease-timing", "etcd"): "etcd:EtcdLeaseTiming",
    ("lease-cas", "postgres"): "postgres:PostgresLeaseRow",
    ("lease-blind-write", "postgres"): "postgres:PostgresLeaseRow",
    ("advisory-lock", "postgres"): "advisory_lock:AdvisoryLock",
    ("advisory-lock-fencing", "postgres"): "advisory_lock:AdvisoryLock",
    ("zookeeper", "zookeeper"): "zookeeper:ZooKeeperElection",
    ("zookeeper-fencing", "zookeeper"): "zookeeper:ZooKeeperElection",
    ("zookeeper-multi", "zookeeper"): "zookeeper:ZooKeeperElection",
    ("redlock", "redis"): "redis:Redlock",
    ("redlock-gc-pause", "redis"): "redis:Redlock",
    ("redlock-timing-ok", "redis"): "redis:Redlock",
    ("redis-lock", "redis"): "redis_lock:RedisLock",
    ("redis-lock-fencing", "redis"): "redis_lock:RedisLock",
}

SYSTEMS = ("etcd", "postgres", "zookeeper", "redis")


def protocols_on(system: str) -> list[str]:
    return [p for (p, s) in BINDINGS if s == system]


def user_client_protocols() -> list[str]:
    """ "protocol on system" for every binding a client under test can be driven on (those
    whose client library is installed)."""
    found = []
    for (protocol, system), where in BINDINGS.items():
        module_name, class_name = where.split(":")
        try:
            module = importlib.import_module(f"leadercheck.checker.conform.bindings.{module_name}")
        except ImportError:
            continue
        if getattr(module, class_name).user_clients:
            found.append(f"{protocol} on {system}")
    return found


def binding_for(protocol: str, system: str, params: Mapping[str, int]) -> Binding:
    """The binding of `protocol` on `system`; a one-line error naming what is possible."""
    if system not in SYSTEMS:
        raise LeadercheckError(f"unknown system {system!r}: choose one of {', '.join(SYSTEMS)}")
    where = BINDINGS.get((protocol, system))
    if where is None:
        known = ", ".join(protocols_on(system))
        raise LeadercheckError(f"{protocol} cannot be run against {system}: it runs {known}")
    module_name, class_name = where.split(":")
    try:
        module = importlib.import_module(f"leadercheck.checker.conform.bindings.{module_name}")
    except ImportError as exc:
        raise LeadercheckError(
            f"running against {system} needs its client library ({exc.name}): "
            "pip install -e '.[conform]'"
        ) from None
    binding: Binding = getattr(module, class_name)(protocol, params)
    return binding

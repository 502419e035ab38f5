"""The systems `verify config` knows, one module each: how its files spell its knobs, what
it makes of them, its rules and its timing (see base.py for the shape they share)."""

from __future__ import annotations

from leadercheck.checker.config.systems import etcd, kubernetes, patroni, redlock, zookeeper
from leadercheck.checker.config.systems.base import System

SYSTEMS: dict[str, System] = {
    s.name: s
    for s in (
        patroni.SYSTEM,
        kubernetes.SYSTEM,
        etcd.SYSTEM,
        zookeeper.SYSTEM,
        redlock.SYSTEM,
    )
}

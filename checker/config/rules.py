"""Each system's own documented rules about its timing knobs, checked and named.

These are the rules the systems state (and, for client-go and etcd, enforce at start-up):
a configuration that breaks one is wrong before any model is consulted, and the line says
which rule, with the numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from leadercheck.checker.config.knobs import Configuration

JITTER = 1.2  # client-go's JitterFactor: renewDeadline must exceed it times retryPeriod
Rules = Callable[[Mapping[str, float]], list[str]]


def broken_rules(config: Configuration) -> list[str]:
    """The system's rules that `config` breaks, each as one sentence with its numbers."""
    return RULES[config.system](config.knobs)


def _patroni(k: Mapping[str, float]) -> list[str]:
    broken = []
    for name, low in (("ttl", 20), ("loop_wait", 1), ("retry_timeout", 3)):
        if k[name] < low:
            broken.append(f"Patroni: {name} is {k[name]:g} s, below its minimum of {low} s")
    need = k["loop_wait"] + 2 * k["retry_timeout"]
    if need > k["ttl"]:
        broken.append(
            f"Patroni: loop_wait + 2 * retry_timeout <= ttl is broken: {k['loop_wait']:g} + "
            f"2 * {k['retry_timeout']:g} = {need:g} s > ttl {k['ttl']:g} s"
        )
    return broken


def _k8s(k: Mapping[str, float]) -> list[str]:
    broken = []
    lease, renew, retry = k["lease_duration"], k["renew_deadline"], k["retry_period"]
    if lease <= renew:
        broken.append(
            f"client-go: leaseDuration must be greater than renewDeadline "
            f"({lease:g} s <= {renew:g} s)"
        )
    if renew <= JITTER * retry:
        broken.append(
            f"client-go: renewDeadline must be greater than {JITTER} * retryPeriod "
            f"({renew:g} s <= {JITTER * retry:g} s)"
        )
    for name, value in (("leaseDuration", lease), ("renewDeadline", renew), ("retryPeriod", retry)):
        if value <= 0:
            broken.append(f"client-go: {name} must be positive ({value:g} s)")
    return broken


def _etcd(k: Mapping[str, float]) -> list[str]:
    broken = []
    beat, election = k["heartbeat_interval"], k["election_timeout"]
    if election < 5 * beat:
        broken.append(
            f"etcd: election-timeout must be at least 5 times heartbeat-interval "
            f"({election * 1000:g} ms < 5 * {beat * 1000:g} ms)"
        )
    if election > 50:
        broken.append(f"etcd: election-timeout is at most 50000 ms ({election * 1000:g} ms)")
    if k["keepalive"] >= k["lease_ttl"]:
        broken.append(
            f"etcd lease: the keep-alive interval ({k['keepalive']:g} s) must be shorter than "
            f"the lease TTL ({k['lease_ttl']:g} s)"
        )
    return broken


def _zookeeper(k: Mapping[str, float]) -> list[str]:
    broken = []
    low, high = k["min_session_timeout"], k["max_session_timeout"]
    if low > high:
        broken.append(
            f"ZooKeeper: minSessionTimeout ({low * 1000:g} ms) is above maxSessionTimeout "
            f"({high * 1000:g} ms)"
        )
    return broken


def _redlock(k: Mapping[str, float]) -> list[str]:
    broken = []
    if k["masters"] < 3:
        broken.append(
            f"Redlock: {k['masters']:g} master(s); a majority of independent masters needs 3 "
            "or more (the algorithm's description uses 5)"
        )
    drift = k["ttl"] * k["drift_factor"] + 0.002
    if drift >= k["ttl"]:
        broken.append(
            f"Redlock: the TTL ({k['ttl'] * 1000:g} ms) leaves no validity after the clock "
            f"drift allowance ({drift * 1000:g} ms)"
        )
    return broken


RULES: dict[str, Rules] = {
    "patroni": _patroni,
    "k8s": _k8s,
    "etcd": _etcd,
    "zookeeper": _zookeeper,
    "redlock": _redlock,
}

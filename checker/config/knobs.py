"""Each system's configuration file, read into its timing knobs (seconds) and counts.

The formats are the systems' own: Patroni's YAML (`bootstrap.dcs` or the top level), a
Kubernetes controller's configuration (`leaderElection:`) or its command-line flags
(`--leader-elect-lease-duration=15s`), etcd's YAML configuration (milliseconds), ZooKeeper's
zoo.cfg (properties, milliseconds) and a Redlock client's settings (node-redlock's names).
What leadercheck needs beyond them (the environment; a client's lease or session settings)
goes in a `leadercheck` section: a YAML mapping, or `leadercheck.KEY=VALUE` lines (which may
be comments, `# leadercheck.pause=10s`) in zoo.cfg and flags files. A knob the file leaves
out takes the system's documented default, and the result says which ones did.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from leadercheck.checker import files
from leadercheck.checker.config.durations import count, fraction, period, seconds
from leadercheck.checker.config.environment import Environment, environment_from
from leadercheck.checker.errors import LeadercheckError

CONFIG_LIMIT = 1 << 20  # a configuration file is kilobytes; more is not one
SYSTEMS = ("patroni", "k8s", "etcd", "zookeeper", "redlock")
CLAIMS = ("rules", "stale-leader", "false-failover", "lost-ack-write")  # what `judge` decides
VERDICTS = ("SAFE", "UNSAFE")
SECTION = ("environment", "client", "expect")
MS = 0.001


@dataclass(frozen=True)
class Configuration:
    """A system's knobs as its file sets them (the rest at their documented defaults)."""

    system: str
    source: str
    knobs: Mapping[str, float]  # the system's own names; seconds, counts or 0/1 flags
    defaulted: tuple[str, ...]  # the knobs the file left out
    environment: Environment
    expected: Mapping[str, str]  # claim -> the verdict `verify config --all` expects


def load_configuration(path: Path, system: str | None = None) -> Configuration:
    """Read `path` (bounded, a regular file), infer its system unless `system` names it,
    and read its knobs and environment: one line for anything wrong."""
    if system is not None and system not in SYSTEMS:
        raise LeadercheckError(f"unknown system {system!r}: give one of {', '.join(SYSTEMS)}")
    text = files.read_text(path, CONFIG_LIMIT, "config")
    return read_configuration(text, str(path), system)


def read_configuration(text: str, source: str, system: str | None = None) -> Configuration:
    """`text` (a file's content, named `source` in messages) as a Configuration."""
    doc, section = _parse(text, source)
    for key in section:
        if key not in SECTION:
            raise LeadercheckError(
                f"{source}: unknown key leadercheck.{key} (known: {', '.join(SECTION)})"
            )
    found = system or _infer(doc, source)
    reader = READERS[found]
    client = _mapping(section.get("client", {}) or {}, source, "leadercheck.client")
    knobs, defaulted = reader(doc, client, source)
    environment = environment_from(_mapping(section.get("environment", {}), source,
                                            "leadercheck.environment"), source)  # fmt: skip
    expected = _expected(_mapping(section.get("expect", {}) or {}, source, "leadercheck.expect"),
                         source)  # fmt: skip
    return Configuration(found, source, knobs, defaulted, environment, expected)


def _expected(section: Mapping[str, Any], source: str) -> dict[str, str]:
    """The verdicts a gate expects, by claim (SAFE unless the file says otherwise)."""
    expected = {}
    for claim, verdict in section.items():
        if claim not in CLAIMS:
            raise LeadercheckError(
                f"{source}: leadercheck.expect names no claim {claim!r} "
                f"(claims: {', '.join(CLAIMS)})"
            )
        if str(verdict).upper() not in VERDICTS:
            raise LeadercheckError(
                f"{source}: leadercheck.expect.{claim} must be SAFE or UNSAFE, got {verdict!r}"
            )
        expected[claim] = str(verdict).upper()
    return expected


# -- formats ---------------------------------------------------------------------------

_PROPERTY = re.compile(r"\s*(#\s*)?([A-Za-z][\w.\-]*)\s*=\s*(.*?)\s*$")
_FLAG = re.compile(r"\s*--([a-z][a-z0-9\-]*)(?:=(\S*))?\s*$")


def _parse(text: str, source: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The file as a mapping (YAML, properties or flags), and its `leadercheck` section."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if lines and all(_FLAG.match(ln) for ln in lines):
        doc: dict[str, Any] = {}
        for ln in lines:
            found = _FLAG.match(ln)
            assert found is not None
            doc[f"--{found.group(1)}"] = found.group(2) if found.group(2) is not None else "true"
        return doc, _dotted_section(text)
    if lines and all("=" in ln and ":" not in ln.split("=", 1)[0] for ln in lines):
        doc = {}
        for ln in text.splitlines():
            found = _PROPERTY.match(ln)
            if found and not found.group(1):
                doc[found.group(2)] = found.group(3)
        return {k: v for k, v in doc.items() if not k.startswith("leadercheck.")}, (
            _dotted_section(text)
        )
    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "not YAML"
        raise LeadercheckError(f"{source}: does not parse as YAML{where}: {problem}") from None
    doc = _mapping(loaded if loaded is not None else {}, source, "the file")
    section = _mapping(doc.pop("leadercheck", {}) or {}, source, "leadercheck")
    return doc, section


def _dotted_section(text: str) -> dict[str, Any]:
    """`leadercheck.environment.pause=10s` lines (comments too) as a nested section."""
    section: dict[str, Any] = {}
    for ln in text.splitlines():
        found = _PROPERTY.match(ln)
        if not found or not found.group(2).startswith("leadercheck."):
            continue
        parts = found.group(2).split(".")[1:]
        if len(parts) == 1:  # leadercheck.pause: an environment key
            parts = ["environment", *parts]
        node = section
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = found.group(3)
    return section


def _mapping(value: object, source: str, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise LeadercheckError(f"{source}: {what} must be a mapping, not {type(value).__name__}")
    return {str(k): v for k, v in value.items()}


def _infer(doc: Mapping[str, Any], source: str) -> str:
    keys = set(doc)
    if "bootstrap" in keys or {"scope", "postgresql"} <= keys or "loop_wait" in keys:
        return "patroni"
    if (
        "leaderElection" in keys
        or any(k.startswith("--leader-elect") for k in keys)
        or ({"leaseDuration", "renewDeadline"} & keys)
    ):
        return "k8s"
    if {"election-timeout", "heartbeat-interval", "initial-cluster"} & keys:
        return "etcd"
    if "tickTime" in keys:
        return "zookeeper"
    if {"driftFactor", "retryCount", "retryDelay"} & keys:
        return "redlock"
    raise LeadercheckError(
        f"{source}: cannot tell which system this configures; give --system {'|'.join(SYSTEMS)}"
    )


# -- systems ----------------------------------------------------------------------------

Knobs = tuple[dict[str, float], tuple[str, ...]]


def _take(
    doc: Mapping[str, Any], source: str, spec: Mapping[str, tuple[str, float, Callable[..., float]]]
) -> Knobs:
    """Each knob of `spec` (name -> key in the file, default, reader) from `doc`."""
    knobs: dict[str, float] = {}
    defaulted = []
    for name, (key, default, read) in spec.items():
        if key in doc and (doc[key] is None or doc[key] == ""):
            raise LeadercheckError(f"{source}: {key} is given no value")
        if key in doc:
            knobs[name] = read(doc[key], f"{source}: {key}")
        else:
            knobs[name] = default
            defaulted.append(name)
    return knobs, tuple(defaulted)


def _flag(value: object, knob: str) -> float:
    if isinstance(value, bool):
        return float(value)
    if str(value).strip().lower() in ("true", "on", "yes", "1"):
        return 1.0
    if str(value).strip().lower() in ("false", "off", "no", "0"):
        return 0.0
    raise LeadercheckError(f"{knob}: expected true or false, got {value!r}")


def _patroni(doc: Mapping[str, Any], client: Mapping[str, Any], source: str) -> Knobs:
    bootstrap = _mapping(doc.get("bootstrap") or {}, source, "bootstrap")
    dcs = {**_mapping(bootstrap.get("dcs") or {}, source, "bootstrap.dcs"), **doc}
    found = _take(dcs, source, {
        "ttl": ("ttl", 30.0, period),
        "loop_wait": ("loop_wait", 10.0, period),
        "retry_timeout": ("retry_timeout", 10.0, period),
        "synchronous_mode": ("synchronous_mode", 0.0, _flag),
        "maximum_lag_on_failover": ("maximum_lag_on_failover", 1048576.0, count),
        "primary_start_timeout": ("primary_start_timeout", 300.0, seconds),
    })  # fmt: skip
    knobs, defaulted = found
    knobs["consul"] = 1.0 if "consul" in doc else 0.0  # Consul halves the TTL it is sent
    return knobs, defaulted


def _k8s(doc: Mapping[str, Any], client: Mapping[str, Any], source: str) -> Knobs:
    if any(k.startswith("--") for k in doc):
        found = {k.removeprefix("--leader-elect-"): v for k, v in doc.items()}
        names = ("lease-duration", "renew-deadline", "retry-period")
    else:
        found = _mapping(doc.get("leaderElection") or doc, source, "leaderElection")
        names = ("leaseDuration", "renewDeadline", "retryPeriod")
    return _take(found, source, {
        "lease_duration": (names[0], 15.0, period),
        "renew_deadline": (names[1], 10.0, period),
        "retry_period": (names[2], 2.0, period),
    })  # fmt: skip


def _ms(value: object, knob: str) -> float:
    return period(value, knob, MS)


def _ms_or_zero(value: object, knob: str) -> float:
    return seconds(value, knob, MS)


def _etcd(doc: Mapping[str, Any], client: Mapping[str, Any], source: str) -> Knobs:
    server, server_defaults = _take(doc, source, {
        "heartbeat_interval": ("heartbeat-interval", 0.1, _ms),
        "election_timeout": ("election-timeout", 1.0, _ms),
    })  # fmt: skip
    lease, lease_defaults = _take(client, source, {
        "lease_ttl": ("lease_ttl", 60.0, period),  # an election's session TTL (etcd's concurrency)
        "keepalive": ("keepalive", 20.0, period),  # a third of the TTL, as etcd's client does
    })  # fmt: skip
    return {**server, **lease}, server_defaults + lease_defaults


def _zookeeper(doc: Mapping[str, Any], client: Mapping[str, Any], source: str) -> Knobs:
    knobs, defaulted = _take(doc, source, {"tick_time": ("tickTime", 3.0, _ms)})
    tick = knobs["tick_time"]
    more, more_defaulted = _take(doc, source, {
        "min_session_timeout": ("minSessionTimeout", 2 * tick, _ms),
        "max_session_timeout": ("maxSessionTimeout", 20 * tick, _ms),
    })  # fmt: skip
    asked, asked_defaulted = _take(client, source, {
        "session_timeout": ("session_timeout", 60.0, period),  # Curator's default
    })  # fmt: skip
    return {**knobs, **more, **asked}, defaulted + more_defaulted + asked_defaulted


def _redlock(doc: Mapping[str, Any], client: Mapping[str, Any], source: str) -> Knobs:
    knobs, defaulted = _take(doc, source, {
        "drift_factor": ("driftFactor", 0.01, fraction),
        "retry_count": ("retryCount", 10.0, count),
        "retry_delay": ("retryDelay", 0.2, _ms_or_zero),
        "retry_jitter": ("retryJitter", 0.2, _ms_or_zero),
        "ttl": ("ttl", 10.0, _ms),
    })  # fmt: skip
    servers = doc.get("servers")
    if servers is not None:
        if not isinstance(servers, list) or not servers:
            raise LeadercheckError(f"{source}: servers must be a list of Redis masters")
        knobs["masters"] = float(len(servers))
    else:
        more, more_defaulted = _take(doc, source, {"masters": ("masters", 5.0, count)})
        knobs |= more
        defaulted += more_defaulted
    return knobs, defaulted


READERS: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any], str], Knobs]] = {
    "patroni": _patroni,
    "k8s": _k8s,
    "etcd": _etcd,
    "zookeeper": _zookeeper,
    "redlock": _redlock,
}

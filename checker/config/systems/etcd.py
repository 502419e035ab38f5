"""etcd: a member's configuration (its YAML file, its flags, its ETCD_* environment) and the
election session a client holds on it, as etcd-io/etcd handles them.

- **The member** reads `heartbeat-interval` and `election-timeout`, whole milliseconds
  (defaults 100 and 1000, server/embed/config.go). Its YAML file is decoded as JSON into a
  struct: keys match whatever their case, a number written as text is refused, and with
  `--config-file` the flags and environment are ignored. Flags win over `ETCD_*` variables.
  At start-up it refuses a zero interval or timeout, an election timeout below 5 heartbeats
  and one above 50,000 ms (Config.Validate).
- **The lease**: a client's election session (client/v3/concurrency) holds a lease of 60 s
  unless told otherwise (`leadercheck.client.lease_ttl`); the member raises a TTL below its
  minimum, ceil(1.5 x election ticks x heartbeat) (etcdserver/server.go, lessor.Grant). The
  client sends a keep-alive TTL/3 after each answer and takes the lease as lost a TTL after
  the last answer, checked once a second (client/v3/lease.go). The member expires a lease a
  TTL after the last keep-alive it received (its revoke loop runs every 500 ms) and never
  shortens one across its own leader changes: it refreshes every lease on promotion.
- **Failover**: Campaign waits on a watch of its predecessor's key (concurrency/key.go
  waitDeletes), so a new leader follows the expiry by the delete event and one read.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from leadercheck.checker.config.document import Document, shown
from leadercheck.checker.config.durations import period, within
from leadercheck.checker.config.reading import Finder, Knob, Unreadable, flags_in, one_flag
from leadercheck.checker.config.systems.base import Elector, System, Term, Timing, Values
from leadercheck.checker.config.systems.workloads import containers, env_of
from leadercheck.checker.errors import LeadercheckError

ETCD = "etcd's"
KNOBS = (
    ("heartbeat_interval", "heartbeat-interval", 100),
    ("election_timeout", "election-timeout", 1000),
)
KUBESPRAY = ("etcd_heartbeat_interval", "etcd_election_timeout")
MEMBER_KEYS = {
    "heartbeat-interval",
    "election-timeout",
    "initial-cluster",
    "listen-peer-urls",
    "initial-advertise-peer-urls",
    "initial-cluster-state",
}


def json_uint(value: object, knob: str) -> float:
    """A number in etcd's YAML file: a JSON number into a uint (text is refused)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Unreadable(
            f"{shown(value)} is text: etcd decodes this key into a number and refuses the file"
        )
    if value < 0 or not float(value).is_integer():
        raise Unreadable(f"{shown(value)} is not a whole number of milliseconds: etcd refuses it")
    return within(float(value) / 1000, knob, value)


def text_uint(value: object, knob: str) -> float:
    """A flag's or an environment variable's value: whole milliseconds as text (an
    environment file's quotes are the shell's, not the value's)."""
    text = str(value).strip() if isinstance(value, str | int) else None
    if text is not None and len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1].strip()
    if text is None or not (text.isdigit() and text.isascii()) or len(text) > 12:
        raise Unreadable(f"{shown(value)} is not a whole number of milliseconds: etcd refuses it")
    return within(int(text) / 1000, knob, value)


def _member_doc(root: object) -> bool:
    return isinstance(root, dict) and bool({str(k).lower() for k in root} & MEMBER_KEYS)


def recognise(doc: Document) -> bool:
    root = doc.roots[0]
    if doc.format in ("yaml", "json") and len(doc.roots) == 1 and _member_doc(root):
        return True
    if isinstance(root, dict) and any(k in root for k in KUBESPRAY):
        return True
    if doc.format == "properties" and isinstance(root, dict):
        return any(k.startswith("ETCD_") for k in root)
    if doc.format == "flags":
        names = {f.name for f in flags_in(root, (0,))}
        return bool(names & MEMBER_KEYS)
    return any(_is_etcd(c) for _, c in containers(doc))


def _is_etcd(container: Mapping[str, Any]) -> bool:
    command = container.get("command") or container.get("args") or []
    first = command[0] if isinstance(command, list) and command else ""
    image = str(container.get("image", ""))
    return str(first).rsplit("/", 1)[-1] == "etcd" or image.rsplit("/", 1)[-1].startswith("etcd:")


def read(finder: Finder, client: Mapping[str, Any]) -> list[Elector]:
    doc = finder.doc
    root = doc.roots[0]
    if doc.format in ("yaml", "json") and _member_doc(root):
        knobs = _from_file(finder, root)
    elif doc.format == "properties":
        knobs = _from_text(finder, [], {k: ((0, k), v) for k, v in root.items()})
    elif isinstance(root, dict) and any(k in root for k in KUBESPRAY):
        knobs = {}
        for name, label, default in KNOBS:  # kubespray's inventory variables, text in ms
            key = "etcd_" + label.replace("-", "_")
            found, value = finder.get((0, key))
            knobs[name] = (
                finder.parsed(name, key, value, doc.where((0, key)), text_uint, "s")
                if found
                else Knob(name, label, default / 1000, f"{ETCD} default", True)
            )
    elif doc.format == "flags":
        finder.get((0,))
        knobs = _from_text(finder, flags_in(root, (0,)), {})
    else:
        members = [(path, c) for path, c in containers(doc) if _is_etcd(c)]
        if not members:
            raise LeadercheckError(f"{doc.source}: no etcd member's settings found")
        path, container = members[0]
        flags = flags_in(container.get("command"), path + ("command",))
        flags += flags_in(container.get("args"), path + ("args",))
        finder.get(path + ("command",))
        finder.get(path + ("args",))
        knobs = _from_text(finder, flags, env_of(container, path, finder))
    return [Elector("etcd", knobs | _client(finder, client))]


def _from_file(finder: Finder, root: Mapping[str, Any]) -> dict[str, Knob]:
    """The YAML file's keys, matched whatever their case, as etcd's JSON decoding does."""
    lowered: dict[str, list[str]] = {}
    for key in root:
        lowered.setdefault(str(key).lower(), []).append(str(key))
    knobs = {}
    for name, label, default in KNOBS:
        keys = lowered.get(label, [])
        if len(keys) > 1:
            raise LeadercheckError(
                f"{finder.doc.source}: {' and '.join(keys)} both set {label} (etcd matches keys "
                "whatever their case and takes them in no defined order): keep one"
            )
        if not keys:
            knobs[name] = Knob(name, label, default / 1000, f"{ETCD} default", True)
            continue
        found, value = finder.get((0, keys[0]))
        knobs[name] = finder.parsed(
            name, label, value, finder.doc.where((0, keys[0])), json_uint, "s"
        )
    return knobs


def _from_text(
    finder: Finder, flags: list[Any], env: Mapping[str, tuple[Any, Any]]
) -> dict[str, Knob]:
    """Flags first, then ETCD_* variables, as etcd's flag parsing takes them."""
    knobs = {}
    doc = finder.doc
    if one_flag(flags, ["config-file"], doc) is not None or "ETCD_CONFIG_FILE" in env:
        finder.notes.append(
            "the member reads a configuration file (--config-file), which "
            "this file does not show; its flags and ETCD_* variables are ignored"
        )
    for name, label, default in KNOBS:
        flag = one_flag(flags, [label], doc)
        variable = "ETCD_" + label.upper().replace("-", "_")
        if flag is not None:
            if variable in env:
                finder.notes.append(f"{variable} is not used: --{label} comes first")
            knobs[name] = finder.parsed(
                name, f"--{label}", flag.value, doc.where(flag.path), text_uint, "s"
            )
        elif variable in env:
            path, value = env[variable]
            finder.get(path)
            knobs[name] = finder.parsed(name, variable, value, doc.where(path), text_uint, "s")
        else:
            knobs[name] = Knob(name, label, default / 1000, f"{ETCD} default", True)
    return knobs


def _client(finder: Finder, client: Mapping[str, Any]) -> dict[str, Knob]:
    if "keepalive" in client:
        raise LeadercheckError(
            f"{finder.doc.source}: leadercheck.client.keepalive is not a setting: etcd's client "
            "sends a keep-alive a third of the TTL after each answer (client/v3/lease.go)"
        )
    if "lease_ttl" in client:
        knob = finder.parsed(
            "lease_ttl",
            "the session's lease TTL",
            client["lease_ttl"],
            "leadercheck.client.lease_ttl",
            period,
            "s",
        )
    else:
        knob = Knob(
            "lease_ttl",
            "the session's lease TTL",
            60.0,
            f"{ETCD} client default (concurrency.NewSession)",
            True,
        )
    return {"lease_ttl": knob}


def minimum_ttl(heartbeat: float, election: float) -> float:
    """The member's least lease TTL: ceil(1.5 x election ticks x heartbeat), in seconds."""
    ticks = int(round(election * 1000) // max(round(heartbeat * 1000), 1))
    return float(math.ceil((3 * ticks // 2) * heartbeat - 1e-9))


def effective(values: dict[str, float], facts: Mapping[str, str]) -> list[str]:
    least = minimum_ttl(values["heartbeat_interval"], values["election_timeout"])
    if values["lease_ttl"] < least:
        asked = values["lease_ttl"]
        values["lease_ttl"] = least
        return [
            f"the member raises the session's {asked:g} s TTL to its minimum, {least:g} s "
            "(1.5 election timeouts, lessor.Grant)"
        ]
    return []


def _ratio(k: Values, facts: Mapping[str, str]) -> str | None:
    beat, election = k["heartbeat_interval"], k["election_timeout"]
    if beat <= 0 or election <= 0:
        return "etcd: heartbeat-interval and election-timeout must be above 0 ms"
    if 5 * beat > election:
        return (
            f"etcd: election-timeout must be at least 5 times heartbeat-interval "
            f"({election * 1000:g} ms < 5 * {beat * 1000:g} ms): the member refuses to start"
        )
    return None


def _longest(k: Values, facts: Mapping[str, str]) -> str | None:
    if k["election_timeout"] > 50:
        return (
            f"etcd: election-timeout is at most 50000 ms ({k['election_timeout'] * 1000:g} "
            "ms): the member refuses to start"
        )
    return None


def timing(facts: Mapping[str, str]) -> Timing:
    return Timing(
        leader="leader",
        believes=lambda v: v["lease_ttl"] + v["dcs_latency"] + 1,
        believes_why="the lease TTL, counted by the client from the keep-alive answer (up to "
        "the store latency after the member renewed it) and checked once a second",
        store_ttl=lambda v: v["lease_ttl"],
        store_ttl_why="the member expires the lease its TTL after the last keep-alive",
        remedy="fence writes with the election key's revision (etcd's own advice; verify "
        "--protocol lease-fencing)",
        renew=lambda v: v["lease_ttl"] / 3,
        renew_why="the client sends a keep-alive a third of the TTL after each answer",
        delay=lambda v: v["dcs_latency"],
        outage=lambda v: v["lease_ttl"] + 1,
        outage_why="with the store out of reach the client takes its lease as lost a TTL after "
        "the last answer",
        failover=(
            Term("the lease expires after the last keep-alive", lambda v: v["lease_ttl"]),
            Term("the member's revoke loop runs every 0.5 s", lambda v: 0.5),
            Term("the delete event reaches the successor's watch", lambda v: v["dcs_latency"]),
            Term("the successor reads the keys again", lambda v: v["dcs_latency"]),
        ),
    )


LIKE = {
    "heartbeatinterval": "heartbeat_interval",
    "electiontimeout": "election_timeout",
    "etcdheartbeatinterval": "heartbeat_interval",
    "etcdelectiontimeout": "election_timeout",
    "leasettl": "lease_ttl",
}

SYSTEM = System(
    name="etcd",
    title="etcd",
    recognise=recognise,
    read=read,
    like=LIKE,
    effective=effective,
    rules=(_ratio, _longest),
    timing=timing,
    limits=(lambda v: v["lease_ttl"] >= 1,),
    units={"lease_ttl": 1.0},  # a lease's TTL is whole seconds (concurrency.WithTTL(int))
)

"""Redlock as node-redlock runs it: its settings object (mike-marcacci/node-redlock, as
YAML or JSON, or as the `new Redlock([...], {...})` call its README shows) and the lock's
duration, which is an argument of `acquire()`, not a setting.

- **Settings** (src/index.ts): `driftFactor` 0.01, `retryCount` 10 (-1: without end),
  `retryDelay` 200 ms, `retryJitter` 100 ms in the code (the README says 200),
  `automaticExtensionThreshold` 500 ms; every duration a number of milliseconds.
- **Validity**: a lock acquired by a majority (floor(n/2) + 1) of the masters is valid
  until start + duration - (round(driftFactor x duration) + 2 ms), where start is taken
  before the first SET is sent; each master expires its key `duration` after its own SET.
- What no settings object says goes in `leadercheck.client`: `duration` (the TTL passed to
  acquire) and `masters` (how many Redis masters the client locks across; a `servers` list
  or the README's client array says it too). Without them, what depends on them is not judged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from leadercheck.checker.config.document import Document, parse, shown
from leadercheck.checker.config.durations import count, period, within
from leadercheck.checker.config.reading import COUNT, RATE, Finder, Knob, Place, Unreadable
from leadercheck.checker.config.systems.base import Elector, System, Term, Timing, Values
from leadercheck.checker.errors import LeadercheckError

NODE_REDLOCK = "node-redlock's"
SETTINGS = ("driftFactor", "retryCount", "retryDelay", "retryJitter", "automaticExtensionThreshold")
SLACK = 0.002  # node-redlock adds 2 ms to the drift allowance
_CALL = re.compile(r"new\s+Redlock\s*\(\s*\[([^\]]*)\]\s*,\s*(\{.*?\})\s*\)", re.S)
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def from_javascript(text: str, source: str) -> tuple[Document, int | None] | None:
    """The settings object of a `new Redlock([clients], {settings})` call, and how many
    clients it lists; None when the text holds no such call."""
    if "Redlock" not in text:
        return None
    bare = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)  # lines kept
    found = _CALL.search(bare)
    if found is None:
        return None
    clients = [c for c in found.group(1).split(",") if c.strip()]
    settings = "\n" * bare[: found.start(2)].count("\n") + found.group(2).replace("\t", " ")
    return parse(settings, source), len(clients) or None


def milliseconds(value: object, knob: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Unreadable(f"{shown(value)} is not a number of milliseconds, all node-redlock takes")
    if value < 0:
        raise LeadercheckError(f"{knob}: {value:g} ms must not be negative")
    return within(float(value) / 1000, knob, value)


def drift(value: object, knob: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Unreadable(f"{shown(value)} is not a number such as 0.01")
    if not 0 <= value < 1:
        raise LeadercheckError(f"{knob}: {value:g} must be at least 0 and below 1 (0.01 is 1%)")
    return float(value)


def retries(value: object, knob: str) -> float:
    if isinstance(value, int) and not isinstance(value, bool) and value == -1:
        return -1.0  # node-redlock: retry without end
    if isinstance(value, bool) or not isinstance(value, int):
        raise Unreadable(f"{shown(value)} is not a whole number of retries")
    return float(count(value, knob))


def recognise(doc: Document) -> bool:
    root = doc.roots[0]
    return isinstance(root, dict) and bool(
        set(root) & {"driftFactor", "retryCount", "retryDelay", "retryJitter"}
    )


def read(finder: Finder, client: Mapping[str, Any]) -> list[Elector]:
    return [Elector("node-redlock", read_settings(finder, client, None))]


def read_settings(
    finder: Finder, client: Mapping[str, Any], clients: int | None
) -> dict[str, Knob]:
    def setting(name: str, label: str, parse_: Any, default: float, kind: str, of: str) -> Knob:
        return finder.knob(name, label, [Place((0, label))], parse_, default, of, kind)

    knobs = {
        "drift_factor": setting("drift_factor", "driftFactor", drift, 0.01, RATE, NODE_REDLOCK),
        "retry_count": setting("retry_count", "retryCount", retries, 10, COUNT, NODE_REDLOCK),
        "retry_delay": setting("retry_delay", "retryDelay", milliseconds, 0.2, "s", NODE_REDLOCK),
        "retry_jitter": setting(
            "retry_jitter",
            "retryJitter",
            milliseconds,
            0.1,
            "s",
            f"{NODE_REDLOCK} code (its README says 200 ms)",
        ),
        "extension_threshold": setting(
            "extension_threshold",
            "automaticExtensionThreshold",
            milliseconds,
            0.5,
            "s",
            NODE_REDLOCK,
        ),
    }
    knobs["duration"] = _client_knob(
        finder,
        client,
        "duration",
        "the lock's duration",
        period,
        "the lock's duration is acquire()'s argument, not a "
        "setting: give leadercheck.client.duration",
    )
    masters: Knob | None = None
    found, servers = finder.get((0, "servers"))
    if found:
        if not isinstance(servers, list) or not servers:
            raise LeadercheckError(f"{finder.doc.source}: servers must be a list of Redis masters")
        masters = Knob(
            "masters", "masters", float(len(servers)), finder.doc.where((0, "servers")), kind=COUNT
        )
    elif clients is not None:
        masters = Knob(
            "masters", "masters", float(clients), "the clients new Redlock() is given", kind=COUNT
        )
    knobs["masters"] = masters or _client_knob(
        finder,
        client,
        "masters",
        "masters",
        _masters,
        "how many Redis masters the lock spans is the client's: give leadercheck.client.masters",
        COUNT,
    )
    return knobs


def _masters(value: object, knob: str) -> float:
    return float(count(value, knob, 1))


def _client_knob(
    finder: Finder,
    client: Mapping[str, Any],
    key: str,
    label: str,
    parse_: Any,
    missing: str,
    kind: str = "s",
) -> Knob:
    if key in client:
        return finder.parsed(key, label, client[key], f"leadercheck.client.{key}", parse_, kind)
    return Knob(key, label, None, "not given", True, problem=missing, kind=kind)


def _majority(k: Values, facts: Mapping[str, str]) -> str | None:
    if k["masters"] < 3:
        return (
            f"Redlock: {k['masters']:g} master(s); a majority of independent masters needs "
            "3 or more (the algorithm's description uses 5)"
        )
    return None


def _validity(k: Values, facts: Mapping[str, str]) -> str | None:
    allowance = k["duration"] * k["drift_factor"] + SLACK
    if allowance >= k["duration"]:
        return (
            f"Redlock: the duration ({k['duration'] * 1000:g} ms) leaves no validity after "
            f"the clock drift allowance ({allowance * 1000:g} ms)"
        )
    return None


def timing(facts: Mapping[str, str]) -> Timing:
    return Timing(
        leader="lock holder",
        believes=lambda v: v["duration"] * (1 - v["drift_factor"]) - SLACK,
        believes_why="its validity: duration - duration * driftFactor - 2 ms, from before its "
        "first SET",
        store_ttl=lambda v: v["duration"],
        store_ttl_why="each master expires the key the duration after its SET",
        remedy="Redlock hands out no fencing token: a lock service that does, and a storage "
        "that checks it, close it for any pause (verify --protocol lease-fencing)",
        failover=(
            Term("the keys expire after the holder's last SET", lambda v: v["duration"]),
            Term("the next try comes within retryDelay", lambda v: v["retry_delay"]),
            Term("and its jitter", lambda v: v["retry_jitter"]),
        ),
    )


LIKE = {
    normal: name
    for normal, name in (
        ("driftfactor", "drift_factor"),
        ("retrycount", "retry_count"),
        ("retrydelay", "retry_delay"),
        ("retryjitter", "retry_jitter"),
        ("automaticextensionthreshold", "extension_threshold"),
        ("ttl", "duration"),
        ("duration", "duration"),
        ("masters", "masters"),
    )
}

SYSTEM = System(
    name="redlock",
    title="Redlock",
    recognise=recognise,
    read=read,
    like=LIKE,
    effective=lambda values, facts: [],
    rules=(_majority, _validity),
    limits=(lambda v: v["duration"] * v["drift_factor"] + SLACK < v["duration"],),
    units={"duration": 0.001},
    timing=timing,
    claims=("rules", "stale-leader"),
)

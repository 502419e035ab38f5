"""ZooKeeper: the server's `zoo.cfg` (or a Helm chart's values that render it) and the session
a client asks for, as apache/zookeeper and apache/curator handle them.

- **zoo.cfg** is read with Java's `Properties.load` (QuorumPeerConfig.parse): every value is
  a whole number of milliseconds (`Integer.parseInt`: `2000ms` stops the server at start-up),
  and there are no inline comments (`tickTime=2000 # ms` is the value `2000 # ms`).
  `tickTime` defaults to 3000 (ZooKeeperServer.DEFAULT_TICK_TIME); `minSessionTimeout` and
  `maxSessionTimeout` absent or -1 mean 2 and 20 ticks (QuorumPeerConfig:464-465), and a
  minimum above the maximum stops the server (467-469).
- **Negotiation**: the server grants the session the client asks, clamped into
  [minSessionTimeout, maxSessionTimeout] (ZooKeeperServer.processConnectRequest). Curator asks
  60 s unless told otherwise (CuratorFrameworkFactory.DEFAULT_SESSION_TIMEOUT_MS); what a
  client asks goes in `leadercheck.client.session_timeout`.
- **The client** (ClientCnxn) hears nothing for 2/3 of the negotiated timeout T and declares
  itself disconnected; Curator's default error policy then has LeaderLatch and LeaderSelector
  give up leadership at once (SUSPENDED). With `leadercheck.client.error_policy: session`
  (SessionConnectionStateErrorPolicy) it gives up only at LOST, which Curator raises after a
  further T. An idle client pings when it has sent nothing for T/3 (a second less once idle
  over a second), and at least every 10 s.
- **The server** expires a session T after its last touch, rounded up to the next tick
  (ExpiryQueue); the election's successor watches its predecessor's znode, so failover is
  the expiry, the deletion's watch event and the successor's getChildren.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from leadercheck.checker.config.document import Document, parse, shown
from leadercheck.checker.config.durations import period
from leadercheck.checker.config.reading import Finder, Knob, Place, Unreadable
from leadercheck.checker.config.systems.base import Elector, System, Term, Timing, Values
from leadercheck.checker.errors import LeadercheckError

CURATOR = "Curator's"
MS = 0.001
POLICIES = ("standard", "session")


def milliseconds(value: object, knob: str) -> float:
    """A zoo.cfg timing: whole milliseconds, as `Integer.parseInt` reads them."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise Unreadable(
                f"{shown(value)} is not a whole number of milliseconds, all ZooKeeper reads"
            )
    text = str(value).strip()
    if not (text.lstrip("-").isdigit() and text.isascii()):
        raise Unreadable(
            f"{shown(value)} is not a whole number of milliseconds "
            "(ZooKeeper reads the rest of the line whole, with Integer.parseInt)"
        )
    number = int(text)
    if len(text) > 11 or not -(2**31) <= number < 2**31:
        raise LeadercheckError(f"{knob}: {text} is beyond a Java int")
    if number < -1:
        raise LeadercheckError(f"{knob}: {text} must not be negative (-1 means the default)")
    return number * MS


def recognise(doc: Document) -> bool:
    root = doc.roots[0]
    if not isinstance(root, dict):
        return False
    keys = set(root)
    if doc.format == "properties":
        return "tickTime" in keys or {"clientPort", "dataDir"} <= keys
    return "tickTime" in keys or (
        "configuration" in keys
        and isinstance(root.get("configuration"), str)
        and "tickTime" in root["configuration"]
    )


def read(finder: Finder, client: Mapping[str, Any]) -> list[Elector]:
    doc = finder.doc
    found, embedded = finder.get((0, "configuration"))
    if doc.format == "yaml" and found and isinstance(embedded, str) and embedded.strip():
        # a chart's `configuration:` is rendered as zoo.cfg whole: it replaces the values
        inner = Finder(parse(embedded, f"{doc.source} (its configuration)"))
        finder.notes.append(
            "configuration (the zoo.cfg the chart renders whole) is what the "
            "server reads; the chart's other values are not used"
        )
        knobs = _server(inner)
        finder.notes.extend(inner.notes)
    else:
        knobs = _server(finder)
    knobs |= _client(finder, client)
    policy = str(client.get("error_policy", "standard")).lower()
    if policy not in POLICIES:
        raise LeadercheckError(
            f"{doc.source}: leadercheck.client.error_policy must be standard or session "
            f"(Curator's ConnectionStateErrorPolicy), not {shown(client.get('error_policy'))}"
        )
    return [Elector("ZooKeeper", knobs, {"error_policy": policy})]


def _server(finder: Finder) -> dict[str, Knob]:
    tick = finder.knob(
        "tick_time", "tickTime", [Place((0, "tickTime"))], milliseconds, 3.0, "ZooKeeper's"
    )
    knobs = {"tick_time": tick}
    for name, label, ticks in (
        ("min_session_timeout", "minSessionTimeout", 2),
        ("max_session_timeout", "maxSessionTimeout", 20),
    ):
        knob = finder.knob(name, label, [Place((0, label))], milliseconds, -MS, "ZooKeeper's")
        if knob.value == -MS:  # absent or -1: the server's default, in ticks
            value = None if tick.value is None else ticks * tick.value
            origin = f"ZooKeeper's default, {ticks} ticks" + ("" if knob.default else " (-1)")
            knob = Knob(name, label, value, origin, True, problem=tick.problem)
        knobs[name] = knob
    return knobs


def _client(finder: Finder, client: Mapping[str, Any]) -> dict[str, Knob]:
    if "session_timeout" in client:
        value = client["session_timeout"]
        knob = finder.parsed(
            "session_timeout",
            "the client's session timeout",
            value,
            "leadercheck.client.session_timeout",
            _seconds,
            "s",
        )
    else:
        knob = Knob(
            "session_timeout",
            "the client's session timeout",
            60.0,
            f"{CURATOR} default (CuratorFrameworkFactory)",
            True,
        )
    return {"session_timeout": knob}


def _seconds(value: object, knob: str) -> float:
    return period(value, knob)


def effective(values: dict[str, float], facts: Mapping[str, str]) -> list[str]:
    """The session the server grants: the client's ask clamped into [min, max]."""
    asked = values["session_timeout"]
    low, high = values["min_session_timeout"], values["max_session_timeout"]
    granted = min(max(asked, low), high)
    values["session_timeout"] = granted
    if granted < asked:
        return [
            f"the client asks a {asked:g} s session; the server grants {granted:g} s, its "
            f"maxSessionTimeout: to grant more, raise maxSessionTimeout"
        ]
    if granted > asked:
        return [
            f"the client asks a {asked:g} s session; the server grants {granted:g} s, its "
            f"minSessionTimeout"
        ]
    return []


def _tick(k: Values, facts: Mapping[str, str]) -> str | None:
    if k["tick_time"] <= 0:
        return "ZooKeeper: tickTime must be set above 0 (QuorumPeerConfig refuses it)"
    return None


def _bounds(k: Values, facts: Mapping[str, str]) -> str | None:
    low, high = k["min_session_timeout"], k["max_session_timeout"]
    if low > high:
        return (
            f"ZooKeeper: minSessionTimeout ({low * 1000:g} ms) is above maxSessionTimeout "
            f"({high * 1000:g} ms): the server refuses to start"
        )
    return None


def _ping_every(v: Values) -> float:
    """How often an idle client pings: at readTimeout/2 = T/3 sent-idle, a second sooner once
    idle over a second, and at least every 10 s (ClientCnxn, MAX_SEND_PING_INTERVAL)."""
    third = float(v["session_timeout"]) / 3
    every = third if third <= 1 else max(1.0, third - 1)
    return min(every, 10.0)


def timing(facts: Mapping[str, str]) -> Timing:
    session = facts.get("error_policy") == "session"
    lost = 1.0 if session else 0.0  # SessionConnectionStateErrorPolicy: leads on until LOST
    return Timing(
        leader="leader",
        believes=lambda v: v["session_timeout"] * (2 / 3 + lost) + v["dcs_latency"],
        believes_why=(
            "2/3 of the negotiated session and a further one until Curator's LOST (the session "
            "error policy), from the last answer"
            if session
            else "2/3 of the negotiated session (the client's read timeout; Curator's default "
            "policy "
            "gives up leadership when SUSPENDED), from the last answer"
        )
        + ", which comes up to the store latency after the server's touch",
        store_ttl=lambda v: v["session_timeout"],
        store_ttl_why="the server expires the session the negotiated timeout after its last "
        "touch (rounded up to a tick)",
        remedy="fence writes with the election znode's sequence or zxid (verify --protocol "
        "zookeeper-fencing), or a ZooKeeper multi that checks the writer's own znode "
        "(zookeeper-multi)",
        renew=_ping_every,
        renew_why="an idle client pings every third of the session (a second sooner, at "
        "least every 10 s)",
        delay=lambda v: v["dcs_latency"],
        holds_for=lambda v: v["session_timeout"] * (2 / 3 + lost),
        holds_for_why="the client gives up after 2/3 of the session without an answer, a pause "
        "included",
        outage=lambda v: v["session_timeout"] * (2 / 3 + lost),
        outage_why="with the ensemble out of reach the client is SUSPENDED after 2/3 of the "
        "session and Curator's latch gives up leadership"
        + (" at LOST, a session later" if session else ""),
        failover=(
            Term("the session expires after its last touch", lambda v: v["session_timeout"]),
            Term("the expiry waits for the next tick", lambda v: v["tick_time"]),
            Term("the deletion's watch event reaches the successor", lambda v: v["dcs_latency"]),
            Term("the successor's getChildren", lambda v: v["dcs_latency"]),
        ),
    )


LIKE = {
    "ticktime": "tick_time",
    "minsessiontimeout": "min_session_timeout",
    "maxsessiontimeout": "max_session_timeout",
    "zooticktime": "tick_time",
    "zoomaxsessiontimeout": "max_session_timeout",
    "zoominsessiontimeout": "min_session_timeout",
    "sessiontimeout": "session_timeout",
    "sessiontimeoutms": "session_timeout",
}

SYSTEM = System(
    name="zookeeper",
    title="ZooKeeper",
    recognise=recognise,
    read=read,
    like=LIKE,
    effective=effective,
    rules=(_tick, _bounds),
    timing=timing,
    moved={"session_timeout": "the session the server grants (the client's ask within [min, max])"},
    moves_too=lambda knob, value, v: (
        f" (the server grants at most maxSessionTimeout, {float(v['max_session_timeout']):g} s: "
        f"raise it to at least {math.ceil(value * 1000)} ms too)"
        if knob == "session_timeout" and value > v["max_session_timeout"]
        else ""
    ),
    units={"session_timeout": 0.001},
)

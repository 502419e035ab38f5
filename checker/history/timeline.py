"""A conformance timeline (`verify conform --timeline FILE.json`) read as a history.

The record (`leadercheck.conformance/1`, checker/conform/report.py) keeps, for every step,
what was done for real in the words `Binding.describe_call` writes: `n1 acquire:
granted=True, token=2` (an etcd lease key, or `update` for a PostgreSQL row), `n1 renew:
renewed=True`, `n1 write: accepted=False, token=2`, several calls of one step joined by
`; `. Those lease calls are the history's events; everything else a step did (a tick, a
pause, a read, a check, a fault) is an unobserved step. A timeline whose calls are not
lease calls (ZooKeeper's znodes, Redlock's masters) has no such events and is refused.

Time: each event is at its real `at_seconds`, as the safety claims must judge it; the
lease lasts the TTL the servers granted (ttl x tick x ttl_scale). A model tick, though,
took longer than `tick_seconds` in that run: the harness sleeps one tick per model tick
and spends call latency in between. So the history's tick is the run's mean real tick
(the real time at its last tick over the ticks done): with it the events stay within a
tick of the model's clock over a long run, where the nominal tick would drift.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any

from leadercheck.checker.history.events import MAX_TOKEN, Event, History, HistoryError

ACQUIRES = ("acquire", "update")  # the lease calls that take a lease, by binding
_CALL = re.compile(r"(n[1-9][0-9]{0,2}) ([a-z_]+): (.*)")
_FIELD = re.compile(r"([a-z_]+)=([^,]*)")


def from_timeline(record: Mapping[str, Any], source: str) -> History:
    """The lease calls of a conformance record, as a history of the same protocol."""

    def fail(message: str) -> HistoryError:
        return HistoryError(f"{source}: conformance timeline: {message}")

    protocol = record.get("protocol")
    params = record.get("params")
    timing = record.get("timing")
    timeline = record.get("timeline")
    if not isinstance(protocol, str) or not isinstance(params, dict):
        raise fail('"protocol" and "params" must name the model the run followed')
    if not isinstance(timing, dict) or not _number(timing.get("tick_seconds")):
        raise fail('"timing.tick_seconds" must be the seconds a tick lasted')
    if not isinstance(timeline, list):
        raise fail('"timeline" must be the list of steps')
    for name, value in params.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise fail(f'"params.{name}" must be an integer')
    tick = Fraction(timing["tick_seconds"])
    scale: Any = timing.get("ttl_scale")
    scale = Fraction(scale) if _number(scale) else Fraction(1)
    ttl = params.get("ttl")
    events, mean_tick = _events(timeline, fail)
    if not events:
        raise fail(
            "no lease call (acquire, update, renew, write) in its real events: only a lease "
            "system's timeline (etcd, postgres) reads as a history"
        )
    return History(
        source=source,
        protocol=protocol,
        params={k: str(v) for k, v in params.items()},
        tick_seconds=mean_tick or tick,
        ttl_seconds=tick * scale * ttl if isinstance(ttl, int) and ttl > 0 else None,
        nodes=None,
        events=tuple(events),
        origin="conformance timeline",
    )


def _events(timeline: list[Any], fail: Any) -> tuple[list[Event], Fraction | None]:
    """The lease calls as events, and the run's mean real tick (None: no tick was made)."""
    found: list[Event] = []
    held: dict[str, int] = {}  # each node's token, for a renewal that does not repeat it
    ticks, last_tick, before = 0, Fraction(0), Fraction(0)
    for k, entry in enumerate(timeline):
        if not isinstance(entry, dict):
            raise fail(f"entry {k} must be an object")
        t, real = entry.get("t"), entry.get("real")
        at: Any = entry.get("at_seconds")
        if isinstance(t, bool) or not isinstance(t, int) or t < ticks or not _number(at, 0):
            raise fail(f'entry {k}: "t" (ticks, not decreasing) and "at_seconds" are needed')
        if not isinstance(real, str):
            raise fail(f'entry {k}: "real" must be the real event as text')
        when = Fraction(at)
        if when < before:
            raise fail(f'entry {k}: "at_seconds" {float(when):g} is before the entry before it')
        before = when
        if t > ticks:
            ticks, last_tick = t, when
        for call in real.split("; "):
            event = _event(call, held, len(found) + 1, when, k, fail)
            if event is not None:
                found.append(event)
    return found, (last_tick / ticks if ticks else None)


def _event(
    call: str, held: dict[str, int], number: int, at: Fraction, entry: int, fail: Any
) -> Event | None:
    """One call of a step as an event, or None when it is not a lease event."""
    matched = _CALL.fullmatch(call.strip())
    if matched is None:
        return None
    node, op, rest = matched.groups()
    fields = {name: value.strip() for name, value in _FIELD.findall(rest)}
    token = _token(fields.get("token"), entry, fail)
    if op in ACQUIRES and fields.get("granted") == "True" and token is not None:
        held[node] = token
        return Event(number, at, node, "acquire", token, None, entry)
    if op == "renew" and fields.get("renewed") == "True":
        token = token if token is not None else held.get(node)
        if token is None:
            raise fail(f"entry {entry}: {node} renews before any acquire shows its token")
        return Event(number, at, node, "renew", token, None, entry)
    if op == "write" and fields.get("accepted") in ("True", "False") and token is not None:
        return Event(number, at, node, "write", token, fields["accepted"] == "True", entry)
    return None


def _token(text: str | None, entry: int, fail: Any) -> int | None:
    if text is None or text == "None":
        return None
    if not text.isascii() or not text.isdigit() or len(text) > 19 or int(text) > MAX_TOKEN:
        raise fail(f"entry {entry}: token {text[:20]!r} is not a whole number from 0 to 2^63-1")
    return int(text)


def _number(value: Any, low: int | None = None) -> bool:
    """A JSON number above 0 (at least `low` when given)."""
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        return False
    return value > 0 if low is None else value >= low

"""Reading a history: one JSON document or JSON Lines, every field checked before any work.

A history file is data from someone's logs, so it is read bounded (the file layer),
parsed strictly (no NaN, no duplicate field, no number of a hundred digits) and never
names code. Every refusal is one line naming the line of the file and the field.

The two spellings (README, "Your recorded history"):

- a document: one object `{"schema": "leadercheck.history/1", "protocol": ..., "params":
  {...}, "tick_seconds": ..., "ttl_seconds": ..., "nodes": [...], "events": [...]}`;
- JSON Lines: one event object per line, the first line optionally a header holding the
  other fields (`schema` included, `events` not).

A file whose whole text is one JSON object with a `schema` field is a document (or, with
`leadercheck.conformance/1`, a timeline `verify conform --timeline` wrote: timeline.py);
anything else is read as JSON Lines. Times are kept exact (decimal text as a Fraction),
so `0.3 / 0.1` is 3 ticks, not 2.9999.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from decimal import Decimal
from fractions import Fraction
from json.decoder import JSONObject  # type: ignore[attr-defined]
from json.scanner import py_make_scanner  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

from leadercheck.checker.history.events import MAX_TOKEN, Event, History, HistoryError, seconds
from leadercheck.checker.history.timeline import from_timeline
from leadercheck.checker.io import files

HISTORY_SCHEMA = "leadercheck.history/1"
CONFORMANCE_SCHEMA = "leadercheck.conformance/1"  # what checker/conform/report.py writes
DEFAULT_PROTOCOL = "lease-no-fencing"
KINDS = ("acquire", "renew", "lose", "write")
MAX_BYTES = files.TRACE_LIMIT  # a history of a million events fits; a runaway log does not
MAX_DIGITS = 30
MAX_EXPONENT = 18  # a decimal's magnitude and precision: exact Fractions stay small
MAX_NAME = 100  # characters of a node's name
HEADER_FIELDS = ("schema", "protocol", "params", "tick_seconds", "ttl_seconds", "nodes")
EVENT_FIELDS = ("at", "node", "event", "token", "accepted", "note")
_MODEL_NODE = re.compile(r"n[1-9][0-9]{0,2}")


# Strict JSON: exact decimals, bounded integers, no constants, no field given twice.


class _Refused(ValueError):
    """A value the strict parser refuses (raised from inside json's scanner)."""


class _Placed(_Refused):
    """A refusal that already names its line."""


class _Fields(dict[str, Any]):
    """A JSON object that remembers the line it starts on."""

    line = 0


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise _Refused(f"a number of {len(text)} digits")
    return int(text)


def _decimal(text: str) -> Decimal:
    value = Decimal(text) if len(text) <= MAX_DIGITS + 10 else None
    if value is None or not -MAX_EXPONENT <= value.adjusted() <= MAX_EXPONENT:
        raise _Refused(f"{text[:20]} is out of range")
    if value.as_tuple().exponent < -MAX_EXPONENT:  # type: ignore[operator]
        raise _Refused(f"{text[:20]} has more than {MAX_EXPONENT} decimals")
    return value


def _constant(text: str) -> Any:
    raise _Refused(f"{text} is not a number JSON allows")


def _fields(pairs: list[tuple[str, Any]]) -> _Fields:
    found = _Fields()
    for key, value in pairs:
        if key in found:
            raise _Refused(f'field "{key}" is given twice')
        found[key] = value
    return found


def _document_decoder(text: str) -> json.JSONDecoder:
    """A decoder whose objects know their line: the pure-Python scanner with its object
    parser wrapped (the C scanner does not call one that can be replaced)."""
    starts = [0, *(k + 1 for k, ch in enumerate(text) if ch == "\n")]
    decoder = json.JSONDecoder(
        parse_float=_decimal,
        parse_int=_integer,
        parse_constant=_constant,
        object_pairs_hook=_fields,
    )

    def located(s_and_end: tuple[str, int], *args: Any) -> tuple[Any, int]:
        line = bisect_right(starts, s_and_end[1] - 1)
        try:
            found, end = JSONObject(s_and_end, *args)
        except _Placed:
            raise
        except _Refused as exc:
            raise _Placed(f"line {line}: {exc}") from None
        found.line = line
        return found, end

    decoder.parse_object = located  # type: ignore[attr-defined]
    decoder.scan_once = py_make_scanner(decoder)  # type: ignore[attr-defined]
    return decoder


def _loads(text: str, decoder: json.JSONDecoder) -> Any:
    return decoder.decode(text)


_LINE_DECODER = json.JSONDecoder(
    parse_float=_decimal, parse_int=_integer, parse_constant=_constant, object_pairs_hook=_fields
)


# Reading


def load_history(path: Path) -> History:
    """The history file at `path`, read through the file layer and checked whole."""
    text = files.read_text(path, MAX_BYTES)
    return parse_history(text, str(path))


def parse_history(text: str, source: str) -> History:
    """`text` as a history (a document, JSON Lines or a conformance timeline)."""

    def fail(message: str) -> HistoryError:
        return HistoryError(f"{source}: {message}")

    text = text.removeprefix("\ufeff")  # a UTF-8 byte-order mark, as some editors save
    if not text.strip():
        raise fail("empty: a history holds at least one event")
    document, error = _as_document(text)
    if isinstance(document, _Fields) and "schema" in document:
        schema = document["schema"]
        if schema == CONFORMANCE_SCHEMA:
            return from_timeline(document, source)
        if schema != HISTORY_SCHEMA:
            raise fail(f'line 1: "schema" is {_shown(schema)}; expected "{HISTORY_SCHEMA}"')
        return _from_document(document, source, fail)
    lines = text.splitlines()
    first = next((k for k, line in enumerate(lines) if line.strip()), 0)
    if error is not None and not _one_object(lines[first]):
        raise fail(error)  # not JSON Lines either: the document's own error is the useful one
    return _from_lines(lines, source, fail)


def _as_document(text: str) -> tuple[Any, str | None]:
    """The whole text as one JSON value, or why it is not one."""
    try:
        return _loads(text, _document_decoder(text)), None
    except json.JSONDecodeError as exc:
        return None, f"line {exc.lineno}: not JSON ({exc.msg}, column {exc.colno})"
    except _Placed as exc:
        return None, str(exc)
    except _Refused as exc:  # a bare value, outside any object
        return None, f"line 1: {exc}"
    except RecursionError:
        return None, "line 1: nested too deeply to be a history"


def _one_object(line: str) -> bool:
    try:
        return isinstance(_LINE_DECODER.decode(line), dict)
    except (ValueError, RecursionError):
        return False


def _from_document(doc: _Fields, source: str, fail: Callable[[str], HistoryError]) -> History:
    _known(doc, (*HEADER_FIELDS, "events"), "the document", doc.line, fail)
    if "events" not in doc:
        raise fail(f'line {doc.line}: no "events": a history document lists its events')
    raw = doc["events"]
    if not isinstance(raw, list):
        raise fail(f'line {doc.line}: "events" must be a list, got {_kind(raw)}')
    entries = [(getattr(e, "line", doc.line), e) for e in raw]
    return _history(doc, entries, source, fail)


def _from_lines(lines: Sequence[str], source: str, fail: Callable[[str], HistoryError]) -> History:
    header: _Fields = _Fields()
    entries: list[tuple[int, Any]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = _LINE_DECODER.decode(line)
        except json.JSONDecodeError as exc:
            raise fail(f"line {number}: not JSON ({exc.msg}, column {exc.colno})") from None
        except _Refused as exc:
            raise fail(f"line {number}: {exc}") from None
        except RecursionError:
            raise fail(f"line {number}: nested too deeply to be an event") from None
        if isinstance(value, _Fields) and "schema" in value and not entries and not header:
            header = value
            header.line = number
            _known(header, HEADER_FIELDS, "the header", number, fail)
            if header["schema"] != HISTORY_SCHEMA:
                raise fail(
                    f'line {number}: "schema" is {_shown(header["schema"])}; expected '
                    f'"{HISTORY_SCHEMA}"'
                )
            continue
        entries.append((number, value))
    return _history(header, entries, source, fail)


def _history(
    header: Mapping[str, Any],
    entries: Sequence[tuple[int, Any]],
    source: str,
    fail: Callable[[str], HistoryError],
) -> History:
    """The history from its header fields and its events (line, raw value) in order."""
    where = f"line {getattr(header, 'line', 1)}"
    protocol = header.get("protocol")
    if protocol is not None and (not isinstance(protocol, str) or not protocol):
        raise fail(f'{where}: "protocol" must be a protocol\'s name, got {_shown(protocol)}')
    nodes = _nodes(header.get("nodes"), where, fail)
    history = History(
        source=source,
        protocol=protocol,
        params=_params(header.get("params", {}), where, fail),
        tick_seconds=_positive(header, "tick_seconds", where, fail),
        ttl_seconds=_positive(header, "ttl_seconds", where, fail),
        nodes=nodes,
        events=(),
    )
    if not entries:
        raise fail(f"{where}: no events: a history holds at least one")
    events: list[Event] = []
    for line, raw in entries:
        event = _event(len(events) + 1, line, raw, history, fail)
        if events and event.at < events[-1].at:
            before = events[-1]
            raise fail(
                f'line {line}: "at" {seconds(event.at)} is before {seconds(before.at)} of '
                f"event {before.number}: times must not decrease"
            )
        events.append(event)
    return replace(history, events=tuple(events))


def _event(
    number: int, line: int, raw: Any, history: History, fail: Callable[[str], HistoryError]
) -> Event:
    where = f"line {line}"
    if not isinstance(raw, dict):
        raise fail(f"{where}: event {number} must be a JSON object, got {_kind(raw)}")
    _known(raw, EVENT_FIELDS, f"event {number}", line, fail)
    for name in ("at", "node", "event"):
        if name not in raw:
            raise fail(f'{where}: event {number} has no "{name}"')
    at = raw["at"]
    if isinstance(at, bool) or not isinstance(at, int | Decimal) or at < 0:
        raise fail(f'{where}: "at" must be seconds since the start (0 or more), got {_shown(at)}')
    kind = raw["event"]
    if kind not in KINDS:
        raise fail(f'{where}: "event" is {_shown(kind)}; events are {", ".join(KINDS)}')
    node = _node(raw["node"], history, where, fail)
    token = raw.get("token")
    if token is None and kind != "lose":
        raise fail(f'{where}: a {kind} event needs "token" (the fencing token it holds)')
    if token is not None and (
        isinstance(token, bool) or not isinstance(token, int) or not 0 <= token <= MAX_TOKEN
    ):
        raise fail(f'{where}: "token" must be a whole number from 0 to 2^63-1, got {_shown(token)}')
    accepted = raw.get("accepted")
    if kind == "write" and not isinstance(accepted, bool):
        raise fail(f'{where}: a write needs "accepted": true or false, got {_shown(accepted)}')
    if kind != "write" and "accepted" in raw:
        raise fail(f'{where}: "accepted" belongs to write events, not to a {kind}')
    if not isinstance(raw.get("note", ""), str):
        raise fail(f'{where}: "note" must be text, got {_kind(raw["note"])}')
    return Event(number, Fraction(at), node, kind, token, accepted, line)


def _node(name: Any, history: History, where: str, fail: Callable[[str], HistoryError]) -> str:
    if not isinstance(name, str):
        raise fail(f'{where}: "node" must be a name, got {_shown(name)}')
    if history.nodes is not None:
        if name not in history.nodes:
            raise fail(
                f"{where}: unknown node {_shown(name)}; the header names {', '.join(history.nodes)}"
            )
    elif not _MODEL_NODE.fullmatch(name):
        raise fail(
            f"{where}: unknown node {_shown(name)}; nodes are n1, n2, ... (or list your own "
            'names in the header\'s "nodes")'
        )
    return name


def _nodes(raw: Any, where: str, fail: Callable[[str], HistoryError]) -> tuple[str, ...] | None:
    if raw is None:
        return None
    if not isinstance(raw, list) or not raw:
        raise fail(f'{where}: "nodes" must be a list of names, got {_shown(raw)}')
    for name in raw:
        if not isinstance(name, str) or not 0 < len(name) <= MAX_NAME or not name.isprintable():
            raise fail(f'{where}: "nodes" holds {_shown(name)}, not a name of 1 to {MAX_NAME} '
                       "printable characters")  # fmt: skip
    seen: set[str] = set()
    for name in raw:  # one pass: 300,000 names once took minutes, counted name by name
        if name in seen:
            raise fail(f'{where}: "nodes" names {_shown(name)} twice')
        seen.add(name)
    return tuple(raw)


def _params(raw: Any, where: str, fail: Callable[[str], HistoryError]) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise fail(f'{where}: "params" must be an object of NAME: value, got {_kind(raw)}')
    found: dict[str, str] = {}
    for name, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise fail(
                f'{where}: "params.{name}" must be an integer or a name, got {_shown(value)}'
            )
        found[name] = str(value)
    return found


def _positive(
    header: Mapping[str, Any], name: str, where: str, fail: Callable[[str], HistoryError]
) -> Fraction | None:
    value = header.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | Decimal) or value <= 0:
        raise fail(f'{where}: "{name}" must be a number of seconds above 0, got {_shown(value)}')
    return Fraction(value)


def _known(
    raw: Mapping[str, Any],
    fields: Sequence[str],
    what: str,
    line: int,
    fail: Callable[[str], HistoryError],
) -> None:
    unknown = [name for name in raw if name not in fields]
    if unknown:
        raise fail(
            f"line {line}: {what} has an unknown field {_shown(unknown[0])} (fields: "
            f"{', '.join(fields)})"
        )


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | Decimal):
        return "a number"
    if isinstance(value, str):
        return "text"
    return "a list" if isinstance(value, list) else "an object"


def _shown(value: Any) -> str:
    """A value as the file spells it, cut short."""
    if isinstance(value, Decimal):
        text = str(value)
    elif isinstance(value, str | int | bool) or value is None:
        text = json.dumps(value)
    else:
        text = _kind(value)
    return text if len(text) <= 40 else text[:37] + "..."

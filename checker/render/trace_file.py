"""Reading a trace file back: the inverse of `trace_json`, with one-line errors naming the field.

Only the structure is checked here (schema, types, step numbering); whether the
protocol and property exist is for the caller, which knows the catalogue.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from leadercheck.checker.engine.replay import RecordedStep, SavedTrace
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.io import files
from leadercheck.checker.model import BY_KIND, FAULT, RECOVERY, STEP, TICK, UNKNOWN_KIND, Action
from leadercheck.checker.properties import Kind
from leadercheck.checker.render.trace_json import TRACE_SCHEMA


class TraceFileError(LeadercheckError):
    """A trace file that is not a readable `leadercheck.trace/1` document."""


Fail = Callable[[str], TraceFileError]


# Bounds on what a trace file may be, far above any trace this tool writes (a few KB,
# nesting 5, numbers of a few digits), so a hostile or broken file fails in one line.
MAX_BYTES = files.TRACE_LIMIT
KINDS = (STEP, FAULT, RECOVERY, TICK)
MAX_DEPTH = 32
MAX_DIGITS = 30


def load_trace(path: Path) -> SavedTrace:
    """Read and validate the trace file at `path`: a regular file (never a FIFO or a device)
    of at most MAX_BYTES, read through the file layer."""
    try:
        raw = files.read_bytes(path, MAX_BYTES)
    except LeadercheckError as exc:
        raise TraceFileError(str(exc)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise TraceFileError(f"{path}: not UTF-8 text; not a trace file") from None
    return parse_trace(text, str(path))


def _number(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ValueError(f"a number of {len(text)} digits")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:20]} is out of range")
    return value


def _constant(text: str) -> Any:
    raise ValueError(f"{text} is not JSON")


def _depth(doc: Any) -> int:
    """The nesting depth of a parsed document, without recursion."""
    deepest, todo = 0, [(doc, 1)]
    while todo:
        value, depth = todo.pop()
        if isinstance(value, (dict, list)):
            deepest = max(deepest, depth)
            if depth > MAX_DEPTH:
                break
            items = value.values() if isinstance(value, dict) else value
            todo.extend((v, depth + 1) for v in items)
    return deepest


def parse_trace(text: str, source: str = "trace") -> SavedTrace:
    """Validate `text` as a trace file; `source` prefixes every error message."""

    def fail(message: str) -> TraceFileError:
        return TraceFileError(f"{source}: {message}")

    try:
        doc = json.loads(text, parse_int=_number, parse_float=_float, parse_constant=_constant)
    except json.JSONDecodeError as exc:
        raise fail(f"not JSON ({exc.msg} at line {exc.lineno})") from None
    except ValueError as exc:  # from _number or _constant
        raise fail(f"not a trace file: {exc}") from None
    except RecursionError:
        raise fail(f"nested deeper than {MAX_DEPTH} levels; not a trace file") from None
    if _depth(doc) > MAX_DEPTH:
        raise fail(f"nested deeper than {MAX_DEPTH} levels; not a trace file")
    if not isinstance(doc, dict):
        raise fail(f"not a JSON object but {_kind(doc)}; expected a {TRACE_SCHEMA} trace")
    if "schema" not in doc:
        raise fail(f"no 'schema' field; expected schema {TRACE_SCHEMA!r}")
    if doc["schema"] != TRACE_SCHEMA:
        raise fail(f"schema is {doc['schema']!r}; expected {TRACE_SCHEMA!r}")

    protocol = _string(doc, "protocol", fail)
    params = doc.get("params")
    if not isinstance(params, dict):
        raise fail(f"'params' must be an object of integers, got {_kind(params)}")
    for name, value in params.items():
        if not isinstance(value, int) or isinstance(value, bool):
            raise fail(f"'params.{name}' must be an integer, got {json.dumps(value)}")
    prop = doc.get("property")
    if not isinstance(prop, dict):
        raise fail(f"'property' must be an object, got {_kind(prop)}")
    prop_name = _string(prop, "name", fail, "property.")
    prop_kind = _string(prop, "kind", fail, "property.")
    kinds = [k.value for k in Kind]
    if prop_kind not in kinds:
        names = ", ".join(repr(k) for k in kinds[:-1]) + f" or {kinds[-1]!r}"
        raise fail(f"'property.kind' must be {names}, got {prop_kind!r}")
    description = prop.get("description", "")
    if not isinstance(description, str):
        raise fail("'property.description' must be a string")

    raw_steps = doc.get("steps")
    if not isinstance(raw_steps, list):
        raise fail(f"'steps' must be a list, got {_kind(raw_steps)}")
    if not raw_steps:
        raise fail("'steps' is empty; a trace starts with its initial state")
    steps = tuple(_step(k, raw, fail) for k, raw in enumerate(raw_steps))
    length = doc.get("length", len(steps) - 1)
    if length != len(steps) - 1:
        raise fail(f"'length' is {json.dumps(length)} but there are {len(steps) - 1} steps")
    loop_from = doc.get("loop_from")
    if loop_from is not None and (
        not isinstance(loop_from, int)
        or isinstance(loop_from, bool)
        or not 0 <= loop_from < len(steps)
    ):
        raise fail(f"'loop_from' must be a step index, got {json.dumps(loop_from)}")
    return SavedTrace(
        protocol=protocol,
        params=dict(params),
        property_name=prop_name,
        property_kind=prop_kind,
        property_description=description,
        verdict=_optional_string(doc, "verdict", fail),
        trace_kind=_optional_string(doc, "trace_kind", fail),
        reason=_optional_string(doc, "reason", fail),
        steps=steps,
        loop_from=loop_from,
        model=_optional_string(doc, "model", fail) or None,
    )


def _step(k: int, raw: object, fail: Fail) -> RecordedStep:
    where = f"steps[{k}]"
    if not isinstance(raw, dict):
        raise fail(f"'{where}' must be an object, got {_kind(raw)}")
    if raw.get("index", k) != k:
        raise fail(f"'{where}.index' is {json.dumps(raw.get('index'))}, expected {k}")
    if "action" not in raw:
        raise fail(f"'{where}.action' is missing")
    action = raw["action"]
    parsed: Action | None = None
    if k == 0:
        if action is not None:
            raise fail(f"'{where}.action' must be null: step 0 is the initial state")
    else:
        if not isinstance(action, dict):
            raise fail(f"'{where}.action' must be an object, got {_kind(action)}")
        fields: dict[str, str | None] = {}
        for name in ("name", "actor", "target", "note"):
            if name not in action:
                raise fail(f"'{where}.action.{name}' is missing")
            value = action[name]
            if not (isinstance(value, str) or (name == "target" and value is None)):
                kind = "a string or null" if name == "target" else "a string"
                raise fail(f"'{where}.action.{name}' must be {kind}, got {json.dumps(value)}")
            fields[name] = value
        unknown = sorted(set(action) - set(fields) - {"kind", "fairness", "unreached"})
        if unknown:
            raise fail(f"'{where}.action' has unknown field {unknown[0]!r}")
        kind = action.get("kind", UNKNOWN_KIND)  # a file written before kinds were kept
        if kind != UNKNOWN_KIND and kind not in KINDS:
            names = ", ".join(KINDS)
            raise fail(f"'{where}.action.kind' must be one of {names}, got {json.dumps(kind)}")
        fairness = action.get("fairness", BY_KIND)
        if fairness is not None and not isinstance(fairness, str):
            raise fail(f"'{where}.action.fairness' must be a string or null, got {_kind(fairness)}")
        unreached = action.get("unreached", [])  # a file written before they were kept
        if not isinstance(unreached, list) or not all(isinstance(m, str) for m in unreached):
            raise fail(f"'{where}.action.unreached' must be a list of strings")
        parsed = Action(
            str(fields["name"]),
            str(fields["actor"]),
            fields["target"],
            str(fields["note"]),
            kind,
            fairness,
            unreached=tuple(unreached),
        )
    summary = raw.get("summary")
    if not isinstance(summary, dict) or not all(isinstance(v, str) for v in summary.values()):
        raise fail(f"'{where}.summary' must be an object of strings")
    state = raw.get("state")
    if not isinstance(state, dict) or not all(isinstance(v, dict) for v in state.values()):
        raise fail(f"'{where}.state' must be an object of objects (one per participant)")
    return RecordedStep(k, parsed, dict(summary), _frozen(state))


def _frozen(state: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {k: dict(v) for k, v in state.items()}


def _string(doc: Mapping[str, Any], key: str, fail: Fail, prefix: str = "") -> str:
    if key not in doc:
        raise fail(f"'{prefix}{key}' is missing")
    value = doc[key]
    if not isinstance(value, str) or not value:
        raise fail(f"'{prefix}{key}' must be a non-empty string, got {json.dumps(value)}")
    return value


def _optional_string(doc: Mapping[str, Any], key: str, fail: Fail) -> str:
    value = doc.get(key, "")
    if not isinstance(value, str):
        raise fail(f"'{key}' must be a string, got {json.dumps(value)}")
    return value


def _kind(value: object) -> str:
    if value is None:
        return "null"
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
    }.get(type(value), type(value).__name__)

"""What a client's answer to each operation must hold, checked before the harness reads it.

A client is untrusted code: `{"granted": "yes"}` read loosely is a refusal, and the run then
"diverges" for a reason that is the client's broken reply, not its behaviour. Each binding
names the fields its operations' results carry (`Binding.replies`, as the client protocol
documents them); an answer that lacks a required field or gives one of the wrong kind is the
client's protocol error, said in one line with the field, never a verdict.

A field's kind is `bool`, `int` (never a bool), `str`, or several joined by `|`; a trailing
`?` makes it optional (absent or null). An operation without an entry is not checked (its
result is "anything", like `grant`'s).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Fields = Mapping[str, str]

#: `belief`, which the harness asks every running client after every step, on every system
BELIEF: Fields = {"leader": "bool", "token": "int|str?"}


def _is(value: object, kind: str) -> bool:
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "str":
        return isinstance(value, str)
    raise ValueError(f"unknown kind {kind!r}")


def fault_in(result: Mapping[str, Any], fields: Fields) -> str | None:
    """What is wrong with `result` against `fields`, in a few words; None when it fits."""
    for name, spec in fields.items():
        optional = spec.endswith("?")
        kinds = spec.rstrip("?").split("|")
        value = result.get(name)
        if value is None:
            if optional:
                continue
            return f'no "{name}" ({" or ".join(kinds)})'
        if not any(_is(value, kind) for kind in kinds):
            shown = repr(value)
            shown = shown if len(shown) <= 40 else shown[:37] + "..."
            return f'"{name}" is {shown}, not {" or ".join(kinds)}'
    return None

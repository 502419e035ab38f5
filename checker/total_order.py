"""A total order over every value a state may hold: the default `Model.order_key`.

Symmetry reduction keeps the least renaming of a state (checker/engine/reductions/symmetry.py),
which is one state per orbit only if "least" is unique: the order must be total. Python's own `<`
is not: frozensets compare as subsets (neither {1} < {2} nor {2} < {1}), None does not compare with
an int, an Enum with nothing. `value_key` maps a value to a string (strings compare totally,
and fast) that is

- the same for two values exactly when they are equal (==): atoms (None, bool, int, float,
  str, bytes), tuples (a NamedTuple keyed as the tuple it equals), frozensets (their
  members' keys, sorted), enums (an int or str enum as the int or str it equals, any other
  by class and member name) and records (a dataclass: its class and the fields it compares).
  Numbers are keyed by value: True, 1 and 1.0 are equal, and so are their keys;
- the same in every run: no hash, address or iteration order is in it (a frozenset of
  strings iterates in an order of its process; its key is sorted).

A value of any other class (one with its own __eq__ and __hash__) is keyed by its class
alone: two renamings that differ only there tie, and the symmetry reduction refuses the tie
in one line rather than pick one of them; such a model gives an order_key of its own.

A tuple or frozenset of only ints, strings, bytes and None is keyed in C (its items' reprs,
which are their keys); anything else costs a Python call per part: about 5 us for a state of
four nodes with a record and a frozenset each.
"""

from __future__ import annotations

import dataclasses
import enum
import numbers
import types
from collections.abc import Callable
from operator import attrgetter
from typing import Any

__all__ = ["OPAQUE", "value_key"]

OPAQUE = "<"  # how the key of a value keyed by its class alone begins
_FLAT = frozenset({int, str, bytes, type(None)})  # exact types whose repr is their key
MEMO_SIZE = 1 << 16  # containers whose keys are kept: parts recur across renamings
_MEMO: dict[Any, str] = {}


def value_key(value: object) -> str:
    """A string that orders `value` totally among every value a state may hold; equal
    values, and only they, get equal keys (bar classes keyed by their class alone)."""
    encode = _ENCODERS.get(type(value))
    if encode is None:
        encode = _learn(type(value))
    return encode(value)


def _part_key(value: object) -> str:
    """value_key of a part of a value: a container's is kept (parts recur across the
    renamings of a state, and across states), the key of a value equal to it too."""
    key = _MEMO.get(value)
    if key is None:
        key = value_key(value)
        if OPAQUE not in key:  # a value keyed by its class alone may equal another kind
            if len(_MEMO) >= MEMO_SIZE:
                _MEMO.clear()
            _MEMO[value] = key
    return key


def _tuple(value: tuple[Any, ...]) -> str:
    """A tuple's key, in the format of tuple.__repr__ (which is its key, in C, when it
    holds only flat atoms)."""
    if _FLAT.issuperset(map(type, value)):
        return tuple.__repr__(value)
    if len(value) == 1:
        return "(" + _part_key(value[0]) + ",)"
    return "(" + ", ".join(map(_part_key, value)) + ")"


def _set(value: frozenset[Any]) -> str:
    if _FLAT.issuperset(map(type, value)):
        return "{" + ", ".join(sorted(map(repr, value))) + "}"
    return "{" + ", ".join(sorted(map(_part_key, value))) + "}"


def _float(value: float) -> str:
    return int.__repr__(int(value)) if value.is_integer() else float.__repr__(value)


def _real(value: Any) -> str:
    """A number of another class: as the int or float it equals, else by its class."""
    if value == int(value):
        return int.__repr__(int(value))
    if value == float(value):
        return float.__repr__(float(value))
    return f"{OPAQUE}{_qualified(type(value))}>"


def _complex(value: complex) -> str:
    return _float(value.real) if value.imag == 0 else "complex" + complex.__repr__(value)


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


_ENCODERS: dict[type, Callable[[Any], str]] = {
    int: int.__repr__,
    str: str.__repr__,
    bytes: bytes.__repr__,
    type(None): repr,
    bool: int.__repr__,  # True == 1
    float: _float,  # 1.0 == 1
    complex: _complex,
    tuple: _tuple,
    frozenset: _set,
}


def _learn(cls: type) -> Callable[[Any], str]:
    """The key of the values of `cls`, met for the first time (kept per class)."""
    encode: Callable[[Any], str]
    if issubclass(cls, bool | int):  # an IntEnum member equals its int
        encode = int.__repr__
    elif issubclass(cls, str):  # a str enum's member equals its str
        encode = str.__repr__
    elif issubclass(cls, float):
        encode = _float
    elif issubclass(cls, tuple):  # a NamedTuple equals the tuple of its fields
        encode = _tuple
    elif issubclass(cls, frozenset):
        encode = _set
    elif issubclass(cls, enum.Enum):  # a member equals only itself
        prefix = _qualified(cls) + "."
        encode = lambda member: prefix + member.name  # noqa: E731
    elif issubclass(cls, bytes):
        encode = bytes.__repr__
    elif issubclass(cls, range):  # equal ranges hold the same numbers
        encode = lambda r: "range" + _tuple(tuple(r))  # noqa: E731
    elif dataclasses.is_dataclass(cls):
        encode = _record(cls)
    elif issubclass(cls, numbers.Real):  # numpy floats, Fraction: as the number they equal
        encode = _real
    elif issubclass(cls, type):
        encode = lambda c: f"{OPAQUE}class {_qualified(c)}>"  # noqa: E731
    elif issubclass(cls, types.FunctionType | types.BuiltinFunctionType | types.MethodType):
        encode = lambda f: f"{OPAQUE}function {getattr(f, '__qualname__', '?')}>"  # noqa: E731
    else:  # its own __eq__: what it means is its class's to say, not this module's
        opaque = f"{OPAQUE}{_qualified(cls)}>"
        encode = lambda _: opaque  # noqa: E731
    _ENCODERS[cls] = encode
    return encode


def _record(cls: type) -> Callable[[Any], str]:
    """A dataclass's key: its class and the fields its __eq__ compares, in order."""
    names = [f.name for f in dataclasses.fields(cls) if f.compare]
    prefix = _qualified(cls) + "("
    if not names:
        empty = prefix + ")"
        return lambda _: empty
    if len(names) == 1:
        get = attrgetter(names[0])
        return lambda record: prefix + _part_key(get(record)) + ")"
    fields = attrgetter(*names)
    return lambda record: prefix + ", ".join(map(_part_key, fields(record))) + ")"

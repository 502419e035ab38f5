"""A snapshot as data: what a saved part of an exploration holds, and the tagged encoding of
model values, so that loading one runs no code a file names.

A part of a snapshot (the store's, the frontier's, an observer's: `save()`) is a plain
record: dicts with string keys, lists, strings, ints, floats, booleans and None; arrays
(`array.array` of a typecode in ARRAY_TYPES, `bytearray`); and model values (states,
fairness classes) wrapped in `Values`. checker/engine/checkpoint.py writes the records as JSON, the
arrays as their bytes and the values in the encoding below; a part's `load` takes the same
shapes back (a `Values` as a list) and checks them with the readers at the end, raising
`Unreadable` for anything else.

A value (checker/engine/values.py says what one is) is encoded as JSON:

- None, a boolean, an int, a float or a string as itself;
- `["t", item...]` a tuple, `["s", item...]` a frozenset, `["b", hex]` bytes, `["c", re, im]`
  a complex number;
- `["n", class, item...]` a NamedTuple, `["d", class, field...]` a dataclass (every field, in
  declaration order), `["e", class, name]` an enum member, where `class` is the position of
  (module, qualified name) in the encoder's class table;
- `["@", k]` the k-th compound value (tuple, frozenset or record, numbered as each is
  finished) met again: an object that states share is written once and shared when read.

Anything else (a list, a dict, a class with an equality of its own, a function, a class
defined inside a function) is `Unencodable`, and the checkpoint is not written.

Decoding imports nothing and calls nothing a file names. A class is looked up among the
modules already loaded (`sys.modules`, then its qualified name through each namespace's own
`__dict__`: never a module's `__getattr__`) and must be a value type: an Enum, a NamedTuple,
or a dataclass that compares and hashes by value. A record is rebuilt without running its
constructor (`tuple.__new__`; `object.__new__` with each field set), an enum member is
looked up by name. Since no `__init__` or `__post_init__` runs, the first instance of each
record class met while saving is rebuilt so and compared (equal, same hash, same attributes):
a class that such a rebuild would not reproduce is Unencodable.
"""

from __future__ import annotations

import dataclasses
import enum
import sys
import types
from array import array
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = [
    "ARRAY_TYPES",
    "Decoder",
    "Encoder",
    "Unencodable",
    "Unreadable",
    "Values",
    "array_of",
    "count_of",
    "record_of",
    "resolve_class",
    "values_of",
]

ARRAY_TYPES = frozenset("BIQ")  # the typecodes a snapshot's arrays may have
_PLAIN = frozenset({int, str, float, bool, type(None)})  # values that are JSON themselves
_MISSING = object()
KINDS = "an Enum, a NamedTuple or a dataclass that compares and hashes by value"


class Values:
    """Model values a part saves (states, fairness classes): encoded as values, loaded as a
    list. `items` is kept, not copied: a part saves between two expansions."""

    __slots__ = ("items",)

    def __init__(self, items: Iterable[Any]) -> None:
        self.items = items


class Unencodable(ValueError):
    """Something a snapshot would hold that is not data (the checkpoint is not written)."""


class Unreadable(ValueError):
    """A saved part that is not what loading it expects: malformed, truncated or crafted."""


def _name(cls: type) -> str:
    return f"{getattr(cls, '__module__', '?')}.{getattr(cls, '__qualname__', '?')}"


def value_kind(cls: Any) -> str | None:
    """The tag of a class whose instances are record values ("e", "n", "d"), or None."""
    if not isinstance(cls, type):
        return None
    if issubclass(cls, enum.Enum):
        return "e"
    if cls.__eq__ is object.__eq__ or cls.__hash__ in (None, object.__hash__):
        return None  # compares by identity, or unhashable: no value
    if issubclass(cls, tuple):
        fields = _static(cls, "_fields")
        if isinstance(fields, tuple) and all(type(f) is str for f in fields):
            return "n"
        return None
    if dataclasses.is_dataclass(cls):
        return "d"
    return None


def _static(cls: type, name: str) -> Any:
    """An attribute as a class or its bases define it, without running any lookup hook."""
    for klass in cls.__mro__:
        found = vars(klass).get(name, _MISSING)
        if found is not _MISSING:
            return found
    return None


def resolve_class(module: Any, qualname: Any) -> tuple[type, str]:
    """The class `module`.`qualname` among the modules already loaded, with its tag; a class
    not loaded, or no value type, is Unreadable. Nothing is imported or called."""
    if type(module) is not str or type(qualname) is not str:
        raise Unreadable("a class named by something other than two strings")
    shown = f"{module}.{qualname}"
    found: Any = sys.modules.get(module)
    if not isinstance(found, types.ModuleType):
        raise Unreadable(f"it names {shown}, whose module this process has not loaded")
    for part in qualname.split("."):  # through the module, then classes only
        namespace = vars(found) if isinstance(found, types.ModuleType | type) else {}
        found = namespace.get(part, _MISSING)
        if found is _MISSING:
            raise Unreadable(f"it names {shown}, which this process has not loaded")
    kind = value_kind(found)
    if kind is None or vars(found).get("__module__") != module or found.__qualname__ != qualname:
        raise Unreadable(f"it names {shown}, which is not a value type: {KINDS}")
    return found, kind


def _fields(cls: type, kind: str) -> tuple[str, ...]:
    if kind == "n":
        return tuple(_static(cls, "_fields"))
    return tuple(f.name for f in dataclasses.fields(cls))


def _build(cls: type, kind: str, names: Sequence[str], items: Sequence[Any]) -> Any:
    """A record rebuilt from its fields without its constructor."""
    if kind == "n":
        return tuple.__new__(cls, items)  # type: ignore[type-var]
    value: Any = object.__new__(cls)
    for name, item in zip(names, items, strict=True):
        object.__setattr__(value, name, item)
    return value


def _attributes(value: Any) -> dict[str, Any]:
    """What an instance holds beyond what equality says: its __dict__ and its slots."""
    names: set[str] = set()
    for klass in type(value).__mro__:
        slots = vars(klass).get("__slots__", ())
        names.update((slots,) if isinstance(slots, str) else slots)
    names -= {"__dict__", "__weakref__"}
    found = {name: getattr(value, name, _MISSING) for name in names}
    found.update(getattr(value, "__dict__", {}))
    return found


class Encoder:
    """Encodes values (see the module's docstring); `classes` is the class table it builds,
    (module, qualified name) each, which decoding needs. One encoder per snapshot: its
    back-references count every compound value it has encoded."""

    def __init__(self) -> None:
        self.classes: list[tuple[str, str]] = []
        # each class met: its position in the table, its tag, its fields (an enum: members)
        self._known: dict[type, tuple[int, str, Any]] = {}
        self._memo: dict[int, int] = {}  # id of a compound value -> its number
        self._kept: list[Any] = []  # what the memo's ids belong to, alive while it counts

    def encode(self, value: Any) -> Any:
        try:
            return self._items((value,))[0]
        except RecursionError:
            raise Unencodable("a value nested too deeply to save") from None
        except AttributeError as exc:  # a record's field never set
            raise Unencodable(f"a record without one of its fields ({exc})") from None

    def _encode(self, value: Any) -> Any:
        """`value` encoded; not a plain value itself, nor one encoded already (the hot
        path: each part of a state is one of those, or a value met before)."""
        cls = type(value)
        if cls is tuple or cls is frozenset:
            tag = "t" if cls is tuple else "s"
            out = (
                [tag, *value] if _PLAIN.issuperset(map(type, value)) else [tag, *self._items(value)]
            )
        elif cls is bytes:
            return ["b", value.hex()]
        elif cls is complex:
            return ["c", value.real, value.imag]
        elif cls in _PLAIN:
            return value
        else:
            index, kind, names = self._record(cls, value)
            if kind == "e":
                if names.get(value._name_) is not value:  # a combination of flags: no name
                    raise Unencodable(f"a state holds {value!r}, a {_name(cls)} without a name")
                return ["e", index, value._name_]
            items = value if kind == "n" else [getattr(value, name) for name in names]
            out = [kind, index, *self._items(items)]
        self._memo[id(value)] = len(self._kept)
        self._kept.append(value)
        return out

    def _items(self, items: Iterable[Any]) -> list[Any]:
        plain, get, encode = _PLAIN, self._memo.get, self._encode
        if plain.issuperset(map(type, items)):  # atoms only (a record of ints, say): in C
            return list(items)
        return [
            x
            if type(x) in plain
            else ["@", seen]
            if (seen := get(id(x))) is not None
            else encode(x)
            for x in items
        ]

    def _record(self, cls: type, value: Any) -> tuple[int, str, Any]:
        known = self._known.get(cls)
        if known is not None:
            return known
        kind = value_kind(cls)
        if kind is None:
            raise Unencodable(
                f"a state holds {_article(cls)} ({_name(cls)}), which a checkpoint cannot hold "
                f"as data: it holds atoms, tuples, frozensets, and records ({KINDS})"
            )
        try:
            named = resolve_class(cls.__module__, cls.__qualname__)[0]
        except Unreadable:
            named = None
        if named is not cls:
            raise Unencodable(
                f"a state holds a {_name(cls)}, a class a checkpoint cannot name (defined inside "
                f"a function, or not where its name says)"
            )
        names = cls.__members__ if kind == "e" else _fields(cls, kind)  # type: ignore[attr-defined]
        if kind != "e":
            self._same_when_rebuilt(cls, kind, names, value)
        known = self._known[cls] = (len(self.classes), kind, names)
        self.classes.append((cls.__module__, cls.__qualname__))
        return known

    @staticmethod
    def _same_when_rebuilt(cls: type, kind: str, names: tuple[str, ...], value: Any) -> None:
        """Refuse a record class that a rebuild from its fields alone would not reproduce."""
        try:
            items = list(value) if kind == "n" else [getattr(value, n) for n in names]
            twin = _build(cls, kind, names, items)
            same = (
                type(twin) is cls
                and bool(twin == value)
                and hash(twin) == hash(value)
                and _attributes(twin) == _attributes(value)
            )
        except Exception:  # a class whose rebuild fails in any way cannot be saved
            same = False
        if not same:
            raise Unencodable(
                f"a state holds a {_name(cls)}, which its fields alone do not rebuild (a "
                f"checkpoint rebuilds records without running their constructor)"
            )


def _article(cls: type) -> str:
    name = cls.__name__
    return f"an {name}" if name[:1].lower() in "aeiou" else f"a {name}"


class Decoder:
    """Decodes what an Encoder made, its class table resolved (`resolve_class` each). One
    decoder per snapshot, fed the encoded values in the order they were encoded."""

    def __init__(self, classes: Sequence[tuple[type, str]]) -> None:
        self.classes = [
            (cls, kind, () if kind == "e" else _fields(cls, kind)) for cls, kind in classes
        ]
        self._memo: list[Any] = []

    def decode(self, node: Any) -> Any:
        try:
            return self._decode(node)
        except RecursionError:
            raise Unreadable("a value nested too deeply") from None

    def _decode(self, node: Any) -> Any:
        if type(node) in _PLAIN:
            return node
        if type(node) is not list or not node:
            raise Unreadable("an encoded value that is none")
        tag, memo = node[0], self._memo
        value: Any
        if tag == "@":
            return memo[_index(node, len(memo), "a reference to no value")]
        if tag == "t":
            value = tuple(self._items(node, 1))
        elif tag == "s":
            value = frozenset(self._items(node, 1))
        elif tag == "n" or tag == "d" or tag == "e":
            cls, kind, names = self.classes[_index(node, len(self.classes), "no such class")]
            if kind != tag:
                raise Unreadable(f"{_name(cls)} encoded as something it is not")
            if kind == "e":
                member = cls.__members__.get(node[2]) if len(node) == 3 else None  # type: ignore[attr-defined]
                if not isinstance(member, cls):
                    raise Unreadable(f"no such member of {_name(cls)}")
                return member
            items = self._items(node, 2)
            if len(items) != len(names):
                raise Unreadable(f"a {_name(cls)} with {len(items)} fields, not {len(names)}")
            value = _build(cls, kind, names, items)
        elif tag == "b" and len(node) == 2 and type(node[1]) is str:
            return bytes.fromhex(node[1])
        elif tag == "c" and len(node) == 3 and all(type(x) in (int, float) for x in node[1:]):
            return complex(node[1], node[2])
        else:
            raise Unreadable(f"an encoded value tagged {str(tag)[:20]!r}")
        memo.append(value)
        return value

    def _items(self, node: list[Any], first: int) -> list[Any]:
        plain, decode, items = _PLAIN, self._decode, node[first:]
        if plain.issuperset(map(type, items)):  # atoms only: in C
            return items
        return [x if type(x) in plain else decode(x) for x in items]


def _index(node: list[Any], length: int, what: str) -> int:
    """The position `node[1]` names, in 0..length - 1."""
    if len(node) < 2 or type(node[1]) is not int or not 0 <= node[1] < length:
        raise Unreadable(what)
    return int(node[1])


# Readers: what a part's `load` checks its saved record with (Unreadable otherwise).


def record_of(saved: Any, *keys: str) -> dict[str, Any]:
    """`saved` as a dict holding at least `keys`."""
    if type(saved) is not dict or any(key not in saved for key in keys):
        raise Unreadable(f"a record without {', '.join(keys) or 'its fields'}")
    return saved


def count_of(saved: dict[str, Any], key: str, high: int | None = None) -> int:
    """An int in 0..high (inclusive) saved under `key`."""
    value = saved.get(key)
    if type(value) is not int or value < 0 or (high is not None and value > high):
        raise Unreadable(
            f"{key} is {str(value)[:20]}, not a count"
            + (f" up to {high}" if high is not None else "")
        )
    return value


def array_of(saved: dict[str, Any], key: str, typecode: str) -> array[int]:
    value = saved.get(key)
    if type(value) is not array or value.typecode != typecode:
        raise Unreadable(f"{key} is not an array of {typecode!r}")
    return value


def values_of(saved: dict[str, Any], key: str) -> list[Any]:
    value = saved.get(key)
    if type(value) is not list:
        raise Unreadable(f"{key} is not a list of values")
    return value

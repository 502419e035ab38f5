"""A checkpoint is data, never code (checker/engine/checkpoint.py, checker/engine/snapshot.py).

Values round-trip through the tagged encoding (records, enums, frozensets, shared parts);
what is not data is refused when saving (the search goes on, the previous checkpoint stays);
and a file that is not a checkpoint this process wrote (a pickle that would run code, a class
that is not loaded or not a value type, a truncated, altered or boastful archive) is refused
in one line when loading, before anything it names runs."""

from __future__ import annotations

import enum
import io
import json
import pickle
import sys
import zipfile
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from leadercheck.checker import Action, Model, always
from leadercheck.checker.engine.checkpoint import FILE, FORMAT, HEADER, VALUES, Checkpoints
from leadercheck.checker.engine.settings import Reductions, unbounded
from leadercheck.checker.engine.snapshot import (
    Decoder,
    Encoder,
    Unencodable,
    Unreadable,
    Values,
    resolve_class,
)
from leadercheck.checker.engine.strategies.bfs import breadth_first
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.result import CheckResult, EndReason


class Color(enum.Enum):
    RED = 1
    BLUE = "blue"


class Perm(enum.Flag):
    R = 1
    W = 2


class Point(NamedTuple):
    x: int
    y: int = 0


@dataclass(frozen=True, slots=True)
class Inner:
    color: Color
    points: frozenset[Point]


@dataclass(frozen=True)
class Outer:
    inner: Inner
    pair: tuple[Inner, ...]
    label: str | None = None
    extra: Any = None
    derived: int = field(default=0, compare=False)


class OwnEquality:
    """Compares by value, but is no record: a checkpoint cannot rebuild it without code."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OwnEquality) and other.n == self.n

    def __hash__(self) -> int:
        return hash(self.n)


@dataclass(frozen=True)
class Cached:
    """Keeps a value outside its fields, which a rebuild from the fields would lack."""

    n: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "double", 2 * self.n)


def round_trip(values: Sequence[Any]) -> list[Any]:
    encoder = Encoder()
    encoded = json.loads(json.dumps([encoder.encode(v) for v in values]))
    decoder = Decoder([resolve_class(*c) for c in encoder.classes])
    return [decoder.decode(node) for node in encoded]


SHARED = Inner(Color.RED, frozenset({Point(1), Point(2, 3)}))
VALUES_ = [
    None,
    True,
    -7,
    10**30,
    2.5,
    "snow ☃",
    b"\x00\xff",
    1 + 2j,
    (),
    (1, ("a", None), frozenset()),
    frozenset({"x", (1, 2)}),
    Color.BLUE,
    Perm.W,
    Point(4),
    SHARED,
    Outer(SHARED, (SHARED, Inner(Color.BLUE, frozenset())), "l", (Color.RED, b"z"), 5),
]


def test_values_of_every_kind_round_trip_equal_and_hash_alike() -> None:
    back = round_trip(VALUES_)
    assert back == VALUES_
    assert [type(v) for v in back] == [type(v) for v in VALUES_]
    assert [hash(v) for v in back] == [hash(v) for v in VALUES_]
    assert back[11] is Color.BLUE  # enum members are the members themselves


def test_a_shared_part_is_written_once_and_shared_when_read() -> None:
    encoder = Encoder()
    first, second = encoder.encode(VALUES_[-1]), encoder.encode(SHARED)
    assert second == ["@", 3]  # numbered as finished: two Points, their set, then SHARED
    assert json.dumps(first).count('"RED"') == 2  # in SHARED once (then a reference), in extra
    outer = round_trip([VALUES_[-1]])[0]
    assert outer.inner is outer.pair[0]


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ([1, 2], "a list"),
        ({"a": 1}, "a dict"),
        (OwnEquality(1), "OwnEquality"),
        ((1, frozenset({OwnEquality(2)})), "OwnEquality"),
        (Cached(3), "its fields alone do not rebuild"),
        (Perm.R | Perm.W, "without a name"),
        (print, "builtin_function_or_method"),
        (Outer, "a type"),
    ],
    ids=["list", "dict", "own-equality", "nested", "cached", "flags", "function", "class"],
)
def test_what_is_not_data_is_unencodable(value: Any, says: str) -> None:
    with pytest.raises(Unencodable) as caught:
        Encoder().encode(value)
    assert says in str(caught.value).replace("'", "")


def test_a_class_defined_in_a_function_cannot_be_named() -> None:
    class Local(NamedTuple):
        n: int

    with pytest.raises(Unencodable, match="cannot name"):
        Encoder().encode(Local(1))


@pytest.mark.parametrize(
    ("module", "qualname", "says"),
    [
        ("this", "Anything", "has not loaded"),  # importing `this` would print; never imported
        ("os", "system", "not a value type"),
        ("builtins", "eval", "not a value type"),
        ("subprocess", "Popen", "not a value type"),
        ("leadercheck.checker.engine.checkpoint", "Checkpoints", "not a value type"),  # unhashable
        ("leadercheck.checker.engine.checkpoint", "Checkpoints.save", "not a value type"),
        (__name__, "OwnEquality", "not a value type"),
        (__name__, "Nowhere", "has not loaded"),
        (__name__, "test_a_class_defined_in_a_function_cannot_be_named.<locals>.Local", "has not"),
        ("os", "path.join", "not a value type"),
        (1, "x", "two strings"),
    ],
)
def test_a_class_is_found_only_among_loaded_value_types(
    module: Any, qualname: str, says: str
) -> None:
    with pytest.raises(Unreadable, match=says):
        resolve_class(module, qualname)
    assert "this" not in sys.modules


@pytest.mark.parametrize(
    "node",
    [
        ["@", 0],  # a reference to nothing yet
        ["n", 0, 1],  # a Point of one field
        ["n", 0],
        ["d", 0, 1, 2],  # a Point said to be a dataclass
        ["e", 1, "GREEN"],
        ["e", 1, "__class__"],
        ["q", 1],
        ["b", "zz"],
        ["t", {"a": 1}],
        [],
        {"n": 1},
        ["s", ["t", [1]]],  # a list where a value goes
    ],
)
def test_a_malformed_encoding_is_unreadable(node: Any) -> None:
    decoder = Decoder([resolve_class(__name__, "Point"), resolve_class(__name__, "Color")])
    with pytest.raises((Unreadable, ValueError, TypeError)):
        decoder.decode(node)


# Saving: what is not data leaves the previous checkpoint and the search going


class Boxes(Model[tuple[int, Any]]):
    """0..20; from 12 on, a state carries `make(n)`: a value a checkpoint may not hold."""

    def __init__(self, make: Callable[[int], Any]) -> None:
        self.make = make

    def initial_states(self) -> Sequence[tuple[int, Any]]:
        return [(0, None)]

    def successors(self, state: tuple[int, Any]) -> Iterable[tuple[Action, tuple[int, Any]]]:
        n = state[0]
        for step in (1, 2):
            if n + step <= 20:
                yield Action(f"add{step}", "c"), (n + step, self.make(n + step))


def boxes(make: Callable[[int], Any], **settings: Any) -> CheckResult:
    claims = [always("small", lambda s: s[0] <= 20)]
    return breadth_first(Boxes(make), claims, unbounded(reductions=Reductions(), **settings))


def test_an_unencodable_state_leaves_the_last_checkpoint_and_the_search_goes_on(
    tmp_path: Path,
) -> None:
    make = lambda n: OwnEquality(n) if n >= 12 else n  # noqa: E731
    whole = boxes(make)
    cp = Checkpoints(tmp_path / "cp", {}, every=0)  # at every level
    result = boxes(make, checkpoints=cp)
    assert result.stats.distinct_states == whole.stats.distinct_states == 21
    assert cp.written > 0 and cp.failure is not None
    assert "checkpoint not written" in cp.failure and "OwnEquality" in cp.failure
    assert any("OwnEquality" in note for note in result.notes)
    assert [p.name for p in (tmp_path / "cp").iterdir()] == [FILE]  # no temporary left
    back = Checkpoints(tmp_path / "r", {}, every=1e9, resume_from=tmp_path / "cp")
    resumed = boxes(make, checkpoints=back)  # from the last checkpoint that could be written
    assert resumed.stats.distinct_states == 21 and resumed.end is whole.end


def test_a_part_that_is_not_data_is_not_written(tmp_path: Path) -> None:
    cp = Checkpoints(tmp_path, {})
    cp.save({"store": object()})
    assert cp.written == 0 and cp.failure is not None and "not data" in cp.failure
    cp.save({"keys": {1: 2}})
    assert cp.written == 0 and "keyed by int" in (cp.failure or "")
    assert not (tmp_path / FILE).exists()


# Loading: one line, before anything


def good(tmp_path: Path) -> Path:
    """A checkpoint of a few records, enums and arrays, in `tmp_path`/good."""
    cp = Checkpoints(tmp_path / "good", {"protocol": "x"})
    cp.save(
        {
            "values": Values([VALUES_[-1], SHARED, Point(9)]),
            "levels": array("I", [0, 1, 5]),
            "bits": bytearray(b"\x00\x01"),
            "$odd": {"$array": "a part's own key"},
        }
    )
    assert cp.written == 1, cp.failure
    return tmp_path / "good"


def load(directory: Path, identity: dict[str, Any] | None = None) -> dict[str, Any]:
    cp = Checkpoints(directory.parent / "o", identity or {"protocol": "x"}, resume_from=directory)
    return cp.load()


def test_a_checkpoint_round_trips_with_its_arrays_values_and_own_dollar_keys(
    tmp_path: Path,
) -> None:
    doc = load(good(tmp_path))
    assert doc["values"] == [VALUES_[-1], SHARED, Point(9)]
    assert doc["values"][0].inner is doc["values"][1]
    assert list(doc["levels"]) == [0, 1, 5] and doc["levels"].typecode == "I"
    assert doc["bits"] == bytearray(b"\x00\x01")
    assert doc["$odd"] == {"$array": "a part's own key"}
    assert doc["format"] == FORMAT
    with zipfile.ZipFile(good(tmp_path / "again") / FILE) as archive:
        assert all(i.compress_type == zipfile.ZIP_STORED for i in archive.infolist())


class Runs:
    """Unpickling it creates `marker`: what a crafted pickle can do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (str(self.marker), "w"))


@pytest.mark.parametrize("protocol", [0, 2, pickle.HIGHEST_PROTOCOL])
def test_a_pickle_that_runs_code_is_never_loaded(protocol: int, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    (tmp_path / "cp").mkdir()
    doc = {"format": "leadercheck.checkpoint/2", "identity": {}, "x": Runs(marker)}
    (tmp_path / "cp" / FILE).write_bytes(pickle.dumps(doc, protocol=protocol))
    cp = Checkpoints(tmp_path / "o", {}, resume_from=tmp_path / "cp")
    with pytest.raises(LeadercheckError, match="not a readable checkpoint") as caught:
        cp.load()
    assert "\n" not in str(caught.value)
    assert not marker.exists()
    pickle.loads(pickle.dumps(Runs(tmp_path / "really")))  # the pickle did run code
    assert (tmp_path / "really").exists()


def rewrite(path: Path, edit: Callable[[dict[str, bytes]], None]) -> None:
    """The archive at `path` with its entries (name -> bytes) changed by `edit`."""
    with zipfile.ZipFile(path) as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    edit(entries)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    path.write_bytes(buffer.getvalue())


def header(change: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, bytes]], None]:
    def edit(entries: dict[str, bytes]) -> None:
        doc = json.loads(entries[HEADER])
        change(doc)
        entries[HEADER] = json.dumps(doc).encode()

    return edit


def _set(**items: Any) -> Callable[[dict[str, Any]], None]:
    return lambda doc: doc.update(items)


def _values(text: bytes) -> Callable[[dict[str, bytes]], None]:
    return lambda entries: entries.update({VALUES: text})


EDITS: dict[str, tuple[Callable[[dict[str, bytes]], None], str]] = {
    "class-not-loaded": (header(_set(classes=[["this", "X"]] * 4)), "has not loaded"),
    "class-not-a-value": (header(_set(classes=[["subprocess", "Popen"]] * 4)), "not a value"),
    "class-a-function": (header(_set(classes=[["os", "system"]] * 4)), "not a value type"),
    "format-2": (header(_set(format="leadercheck.checkpoint/2")), f"not a {FORMAT} checkpoint"),
    "no-header": (lambda e: e.pop(HEADER), f"not a {FORMAT} checkpoint"),
    "header-not-json": (lambda e: e.update({HEADER: b"{"}), "not a readable checkpoint"),
    "more-values-claimed": (header(_set(values=10**12)), "other than the 1000000000000 values"),
    "fewer-values-claimed": (header(_set(values=1)), "other than the 1 values"),
    "array-claims-more": (
        header(lambda d: d["arrays"][0].update(length=10**15)),
        "claims 1000000000000000 items",
    ),
    "array-unknown-type": (header(lambda d: d["arrays"][0].update(type="O")), "no array"),
    "array-twice": (header(lambda d: d["snapshot"].update(bits={"$array": 0})), "array"),
    "values-run-beyond": (
        header(lambda d: d["snapshot"].update(values={"$values": [2, 10**9]})),
        "run of values",
    ),
    "entry-unnamed": (lambda e: e.update({"extra": b""}), "entries other than"),
    "value-garbage": (_values(b'[["q", 1]]\n'), "tagged"),
    "value-deep": (_values(b"[" * 100_000 + b"]" * 100_000 + b"\n"), "not a readable"),
    "value-reference": (_values(b'[["@", 7]]\n'), "a reference to no value"),
    "identity": (header(_set(identity={"protocol": "y"})), "of another search (protocol"),
}


@pytest.mark.parametrize("case", list(EDITS))
def test_an_altered_checkpoint_is_refused_in_one_line(case: str, tmp_path: Path) -> None:
    edit, says = EDITS[case]
    directory = good(tmp_path)
    rewrite(directory / FILE, edit)
    with pytest.raises(LeadercheckError) as caught:
        load(directory)
    message = str(caught.value)
    assert "\n" not in message and says in message, message
    assert message.startswith(f"--resume {directory}")
    assert "this" not in sys.modules


def test_a_byte_changed_in_place_fails_its_entrys_checksum(tmp_path: Path) -> None:
    """The level starts (an array: no decoding would notice) with one number changed."""
    path = good(tmp_path) / FILE
    data = path.read_bytes()
    levels = array("I", [0, 1, 5]).tobytes()
    assert data.count(levels) == 1
    path.write_bytes(data.replace(levels, array("I", [0, 1, 6]).tobytes()))
    with pytest.raises(LeadercheckError, match="not a readable checkpoint .*CRC"):
        load(path.parent)


@pytest.mark.parametrize(
    "content",
    [b"", b"garbage", b"PK\x05\x06" + b"\0" * 18, b"PK\x03\x04" + b"\xff" * 200],
    ids=["empty", "garbage", "empty-zip-end", "bad-local-header"],
)
def test_garbage_is_refused_in_one_line(content: bytes, tmp_path: Path) -> None:
    (tmp_path / "cp").mkdir()
    (tmp_path / "cp" / FILE).write_bytes(content)
    with pytest.raises(LeadercheckError) as caught:
        load(tmp_path / "cp")
    message = str(caught.value)
    assert "\n" not in message
    assert "not a readable checkpoint" in message or f"not a {FORMAT}" in message, message


def test_a_truncated_checkpoint_is_refused_at_every_length(tmp_path: Path) -> None:
    whole = (good(tmp_path) / FILE).read_bytes()
    (tmp_path / "cut").mkdir()
    for length in range(0, len(whole), max(1, len(whole) // 97)):
        (tmp_path / "cut" / FILE).write_bytes(whole[:length])
        with pytest.raises(LeadercheckError, match="not a readable checkpoint"):
            load(tmp_path / "cut")


def test_a_compressed_entry_is_refused(tmp_path: Path) -> None:
    """Every entry is stored: a compressed one could claim any size (a zip bomb)."""
    path = good(tmp_path) / FILE
    with zipfile.ZipFile(path) as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    with pytest.raises(LeadercheckError, match="is compressed or encrypted"):
        load(path.parent)


def test_a_search_resumed_from_a_snapshot_that_no_search_saved_is_refused(
    tmp_path: Path,
) -> None:
    """Well-formed data, but parts that disagree (a parent after its child, a queue not the
    states left): refused before any state is expanded, never a hang or a traceback."""

    def counter(**settings: Any) -> CheckResult:
        claims = [always("small", lambda s: s[0] <= 20)]
        model = Boxes(lambda n: n)
        return breadth_first(model, claims, unbounded(reductions=Reductions(), **settings))

    cut = Checkpoints(tmp_path / "cut", {}, every=1e9)
    assert counter(checkpoints=cut, max_states=9).end is EndReason.MAX_STATES

    def cycle(entries: dict[str, bytes]) -> None:  # the first state's parent: the second
        store = json.loads(entries[HEADER])["snapshot"]["store"]
        name = f"arrays/{store['parents']['$array']}"
        parents = bytearray(entries[name])
        parents[0:4] = (1).to_bytes(4, sys.byteorder)
        parents[4:8] = (0).to_bytes(4, sys.byteorder)
        entries[name] = bytes(parents)

    cases: dict[str, Callable[[dict[str, bytes]], None]] = {
        "cycle": cycle,
        "queue": header(lambda d: d["snapshot"]["frontier"].update(next=0)),
        "levels": header(lambda d: d["snapshot"]["frontier"].update(depth=40)),
        "claims": header(lambda d: d["snapshot"]["observers"][0].update(small=10**6)),
        "observers": header(lambda d: d["snapshot"].update(observers=[])),
        "seconds": header(lambda d: d["snapshot"].update(seconds="soon")),
    }
    for name, edit in cases.items():
        directory = tmp_path / name
        directory.mkdir()
        (directory / FILE).write_bytes((tmp_path / "cut" / FILE).read_bytes())
        rewrite(directory / FILE, edit)
        back = Checkpoints(tmp_path / "o", {}, every=1e9, resume_from=directory)
        with pytest.raises(LeadercheckError, match="not a readable checkpoint") as caught:
            counter(checkpoints=back)
        assert "\n" not in str(caught.value), name

"""Saving a search's progress, and continuing from it (`--checkpoint DIR`, `--resume DIR`).

A checkpoint is taken at the start of a breadth-first level once `every` seconds have passed
since the last, and where a search stops early, always: at a bound (--max-states,
--max-depth, --max-memory) or Ctrl-C, between two expansions (checker/engine/explore.py:
the state whose expansion was cut short is expanded again). Either way the store is whole
(every state before the queue's first expanded, the queue holding the rest), so a resumed
search expands the same states in the same order and ends with the same counts and traces
as one never stopped. It holds the store (fingerprints or states, parent and move per state,
level starts), the counters, what was decided, the queue, and the fairness graph when
liveness is judged; never the model or the properties, which the resuming command rebuilds
and must name the same (`identity`). The file is written beside itself and renamed, so a
crash or a full disk leaves the previous checkpoint whole.

A checkpoint is data, never code (checkpoints travel: CI artifacts, a colleague's run): a
zip archive, every entry stored uncompressed, of

- `checkpoint.json`: the format, the identity, the snapshot's records (JSON, where an array
  is `{"$array": k}` and a run of values `{"$values": [first, count]}`), the class table
  the values name, and what each array is (typecode, item size, length; the byte order);
- `values.jsonl`: the model values (the queue's states, an exact store's, the fairness
  classes) in the tagged encoding of checker/engine/snapshot.py, LINE values a line (a
  JSON list), read and decoded a line at a time;
- `arrays/k`: each array's bytes (fingerprints, parents, moves, level starts, the graph).

What cannot be encoded (a state holding a list, a class with an equality of its own) is
not written: the reason is kept in `failure`, as for a full disk, and the search goes on.
Loading imports nothing and calls nothing the file names (a record's class must be a value
type this process has loaded already), and believes no size the file claims beyond what it
holds: a file that is no such archive, a truncated or altered one (every entry's CRC is
checked), an old pickled checkpoint or a crafted one is refused in one line before any
search.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import struct
import sys
import time
import zipfile
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, BinaryIO

from leadercheck.checker.engine.snapshot import (
    ARRAY_TYPES,
    Decoder,
    Encoder,
    Unencodable,
    Unreadable,
    Values,
    resolve_class,
)
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.io import files

FORMAT = "leadercheck.checkpoint/3"  # /3: data (JSON, arrays, tagged values), no longer a pickle
FILE = "search.checkpoint"
HEADER = "checkpoint.json"
VALUES = "values.jsonl"
ARRAYS = "arrays/"
HEADER_LIMIT = 64 * files.MiB  # records and names only: the bulk is in the other entries
LINE = 1024  # values encoded in one line of values.jsonl
_MARKERS = ("$array", "$values")


class NotACheckpoint(Exception):
    """A readable file that is no checkpoint of this format."""


@dataclass
class Checkpoints:
    """Where a search saves its progress, how often, and what it resumes from."""

    directory: Path
    identity: dict[str, Any]  # what the search is of: protocol, parameters, claims, options
    every: float = 60.0  # seconds between checkpoints (0: at every level)
    resume_from: Path | None = None  # the directory of the checkpoint to go on from
    written: int = 0
    failure: str | None = None  # why the last write failed (the search goes on)
    _loaded: dict[str, Any] | None = None
    _last: float = field(default_factory=time.monotonic)

    def due(self) -> bool:
        return time.monotonic() - self._last >= self.every

    def save(self, snapshot: dict[str, Any]) -> None:
        """Write `snapshot` atomically; a failure is remembered, not raised.

        `snapshot` is data (checker/engine/snapshot.py); what is not leaves the previous
        checkpoint in place and says why in `failure`."""
        self._last = time.monotonic()
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with quiet_collector(), files.atomic_writer(self.directory / FILE) as f:
                write(f, {"format": FORMAT, "identity": self.identity}, snapshot)  # renamed
            self.written += 1
            self.failure = None
        except OSError as exc:  # a full disk, a vanished directory: keep searching
            self.failure = f"checkpoint not written to {self.directory}: {exc.strerror or exc}"
        except LeadercheckError as exc:  # the same, or a FIFO or a link where the file goes
            self.failure = f"checkpoint not written: {exc}"
        except Unencodable as exc:  # something that is not data: the previous one is kept
            self.failure = f"checkpoint not written: {exc}"

    def load(self) -> dict[str, Any]:
        """The snapshot saved in `resume_from`, checked to be of the same search."""
        assert self.resume_from is not None
        if self._loaded is not None:
            return self._loaded
        path = self.resume_from / FILE
        try:  # a regular file, of any size: it is as large as the search that saved it
            with quiet_collector(), files.open_regular(path, "--resume") as f:
                reader = Reader(f)
                self._same_search(path, reader.header.get("identity"))
                doc = reader.snapshot()
        except files.FileMissing:
            raise LeadercheckError(f"--resume {self.resume_from}: no checkpoint there") from None
        except NotACheckpoint as exc:
            why = f" ({exc})" if str(exc) else ""
            raise LeadercheckError(f"--resume {path}: not a {FORMAT} checkpoint{why}") from None
        except MemoryError:
            raise LeadercheckError(f"--resume {path}: too large for the memory free") from None
        except (
            OSError,
            EOFError,
            zipfile.BadZipFile,
            ValueError,  # Unreadable, a JSON error, bad hex or UTF-8
            LookupError,
            TypeError,
            ArithmeticError,
            RecursionError,
            struct.error,  # a zip header cut short
        ) as exc:
            raise self.unreadable(exc) from None
        self._loaded = {**doc, "format": FORMAT, "identity": reader.header["identity"]}
        return self._loaded

    def unreadable(self, why: object) -> LeadercheckError:
        """The one-line refusal of the checkpoint resumed from, saying `why`."""
        assert self.resume_from is not None
        text = " ".join(str(why).split())
        text = text if len(text) <= 200 else text[:197] + "..."
        return LeadercheckError(
            f"--resume {self.resume_from / FILE}: not a readable checkpoint ({text})"
        )

    def _same_search(self, path: Path, saved: Any) -> None:
        mine = json.loads(json.dumps(self.identity))  # as saved: tuples are lists
        if saved == mine:
            return
        saved = saved if type(saved) is dict else {}
        differs = sorted(k for k in {**saved, **mine} if saved.get(k) != mine.get(k))
        raise LeadercheckError(
            f"--resume {path}: the checkpoint is of another search "
            f"({', '.join(differs) or 'identity'} differ)"
        )


@contextlib.contextmanager
def quiet_collector() -> Iterator[None]:
    """No cyclic garbage collection meanwhile: encoding and decoding make millions of
    small lists and tuples, none in a cycle, and each collection would walk every container
    the search holds (it made saving and loading about twice as slow)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


# Writing


def write(f: BinaryIO, head: dict[str, Any], snapshot: dict[str, Any]) -> None:
    """The checkpoint archive of `snapshot`, with the records of `head`, into `f`."""
    encoder = Encoder()
    arrays: list[array[int] | bytearray] = []
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        with archive.open(VALUES, "w", force_zip64=True) as out:
            lines = _Lines(out, encoder)
            records = _records(snapshot, lines, arrays)
            lines.flush()
        for k, data in enumerate(arrays):
            with archive.open(f"{ARRAYS}{k}", "w", force_zip64=True) as out:
                out.write(memoryview(data).cast("B"))
        header = {
            **head,
            "snapshot": records,
            "classes": encoder.classes,
            "values": lines.count,
            "arrays": [_describe(data) for data in arrays],
            "byteorder": sys.byteorder,
        }
        try:
            text = json.dumps(header, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise Unencodable(f"a record that is not data ({exc})") from None
        archive.writestr(zipfile.ZipInfo(HEADER), text)  # dated as the others: 1980


class _Lines:
    """Encoded values written in lines of up to LINE values each (a JSON list)."""

    def __init__(self, out: IO[bytes], encoder: Encoder) -> None:
        self.out, self.encoder = out, encoder
        self.count = 0
        self._line: list[Any] = []

    def add(self, value: Any) -> None:
        self._line.append(self.encoder.encode(value))
        self.count += 1
        if len(self._line) >= LINE:
            self.flush()

    def flush(self) -> None:
        if self._line:
            try:
                text = json.dumps(self._line, separators=(",", ":"))
            except ValueError as exc:  # an int of more digits than Python converts
                raise Unencodable(f"a value that is not data ({exc})") from None
            self.out.write(text.encode() + b"\n")
            self._line = []


def _records(node: Any, lines: _Lines, arrays: list[array[int] | bytearray]) -> Any:
    """`node` as JSON records: arrays and values moved out, replaced by markers."""
    kind = type(node)
    if kind in (str, int, float, bool) or node is None:
        return node
    if kind is dict:
        out = {}
        for key, item in node.items():
            if type(key) is not str:
                raise Unencodable(f"a record keyed by {type(key).__name__}, not by strings")
            out["$" + key if key.startswith("$") else key] = _records(item, lines, arrays)
        return out
    if kind in (list, tuple):
        return [_records(item, lines, arrays) for item in node]
    if kind is Values:
        first = lines.count
        for value in node.items:
            lines.add(value)
        return {"$values": [first, lines.count - first]}
    if (kind is array and node.typecode in ARRAY_TYPES) or kind is bytearray:
        arrays.append(node)
        return {"$array": len(arrays) - 1}
    raise Unencodable(f"a snapshot part holds {kind.__name__}, which is not data")


def _describe(data: array[int] | bytearray) -> dict[str, Any]:
    if isinstance(data, bytearray):
        return {"type": "bytes", "itemsize": 1, "length": len(data)}
    return {"type": data.typecode, "itemsize": data.itemsize, "length": len(data)}


# Reading


class Reader:
    """A checkpoint archive opened for reading: its entries checked against the file, its
    header read (`header`); `snapshot()` reads the rest."""

    def __init__(self, f: BinaryIO) -> None:
        if f.read(1) == b"\x80":  # pickle's first byte: an older leadercheck's checkpoint
            raise Unreadable("a pickle, as leadercheck wrote before; it is never loaded")
        f.seek(0)
        size = os.fstat(f.fileno()).st_size
        self.archive = zipfile.ZipFile(f)
        infos = self.archive.infolist()
        names = [info.filename for info in infos]
        if HEADER not in names:
            raise NotACheckpoint(f"no {HEADER} in it")
        if len(set(names)) != len(names):
            raise Unreadable("an entry twice")
        for info in infos:
            if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
                raise Unreadable(f"{info.filename[:40]!r} is compressed or encrypted")
            if (
                info.file_size != info.compress_size
                or info.header_offset + info.compress_size > size
            ):
                raise Unreadable(f"{info.filename[:40]!r} claims more than the file holds")
        if self.archive.getinfo(HEADER).file_size > HEADER_LIMIT:
            raise Unreadable(f"{HEADER} larger than {HEADER_LIMIT // files.MiB} MiB")
        header = json.loads(self.archive.read(HEADER))
        if type(header) is not dict or header.get("format") != FORMAT:
            found = header.get("format") if type(header) is dict else None
            raise NotACheckpoint(f"it says {str(found)[:40]}" if type(found) is str else "")
        self.header = header
        expected = {HEADER, VALUES} | {f"{ARRAYS}{k}" for k in range(len(self._list("arrays")))}
        if set(names) != expected:
            raise Unreadable("entries other than its header names")

    def _list(self, key: str) -> list[Any]:
        found = self.header.get(key)
        if type(found) is not list:
            raise Unreadable(f"no list of {key}")
        return found

    def snapshot(self) -> dict[str, Any]:
        """The snapshot's records, with its arrays and values in place of their markers."""
        header = self.header
        classes = [resolve_class(*_pair(entry)) for entry in self._list("classes")]
        values = self._values(Decoder(classes), header.get("values"))
        arrays = self._arrays(header.get("byteorder"))
        used: set[int] = set()

        def data(node: Any) -> Any:
            kind = type(node)
            if kind is list:
                return [data(item) for item in node]
            if kind is not dict:
                return node
            if len(node) == 1 and next(iter(node)) in _MARKERS:
                return _marked(node, values, arrays, used)
            out = {}
            for key, item in node.items():
                if key.startswith("$"):
                    if not key.startswith("$$"):
                        raise Unreadable(f"a record keyed {key[:20]!r}")
                    key = key[1:]
                out[key] = data(item)
            return out

        records = data(header.get("snapshot"))
        if type(records) is not dict:
            raise Unreadable("no snapshot")
        return records

    def _values(self, decoder: Decoder, count: Any) -> list[Any]:
        if type(count) is not int or count < 0:
            raise Unreadable("no count of values")
        values: list[Any] = []
        decode = decoder.decode
        with self.archive.open(VALUES) as entry:
            for line in _lines(entry):
                encoded = json.loads(line)
                if type(encoded) is not list or len(values) + len(encoded) > count:
                    raise Unreadable(f"other than the {count} values its header says")
                values.extend([decode(node) for node in encoded])
        if len(values) != count:
            raise Unreadable(f"other than the {count} values its header says")
        return values

    def _arrays(self, byteorder: Any) -> list[array[int] | bytearray]:
        if byteorder not in ("little", "big"):
            raise Unreadable("no byte order")
        found: list[array[int] | bytearray] = []
        for k, about in enumerate(self._list("arrays")):
            if type(about) is not dict:
                raise Unreadable("an array described by no record")
            typecode, itemsize, length = (about.get(key) for key in ("type", "itemsize", "length"))
            name = f"{ARRAYS}{k}"
            data: array[int] | bytearray
            if typecode == "bytes" and itemsize == 1:
                data = bytearray()
            elif type(typecode) is str and typecode in ARRAY_TYPES:
                data = array(typecode)
                if itemsize != data.itemsize:
                    raise Unreadable(f"{name}: items of {itemsize} bytes, here {data.itemsize}")
            else:
                raise Unreadable(f"{name}: no array of a known type")
            size = self.archive.getinfo(name).file_size
            if type(length) is not int or length < 0 or length * itemsize != size:
                raise Unreadable(f"{name} claims {str(length)[:20]} items; it holds {size} bytes")
            add = data.frombytes if isinstance(data, array) else data.extend
            with self.archive.open(name) as entry:  # its CRC is checked at its end
                pending = b""
                while chunk := entry.read(files.MiB):
                    chunk = pending + chunk if pending else chunk
                    cut = len(chunk) - len(chunk) % itemsize
                    add(chunk[:cut])
                    pending = chunk[cut:]
            if pending or len(data) != length:
                raise Unreadable(f"{name} holds other than {length} items")
            if isinstance(data, array) and byteorder != sys.byteorder:
                data.byteswap()
            found.append(data)
        return found


def _lines(entry: IO[bytes]) -> Iterator[bytes]:
    """The lines of an entry, read to its end (where its CRC is checked)."""
    pieces: list[bytes] = []  # of the line under way
    while chunk := entry.read(files.MiB):
        lines = chunk.split(b"\n")
        if len(lines) == 1:
            pieces.append(chunk)
            continue
        pieces.append(lines[0])
        lines[0] = b"".join(pieces)
        pieces = [lines.pop()]
        yield from lines
    last = b"".join(pieces)
    if last.strip():
        yield last


def _pair(entry: Any) -> tuple[Any, Any]:
    if type(entry) is not list or len(entry) != 2:
        raise Unreadable("a class named by something other than a module and a name")
    return entry[0], entry[1]


def _marked(
    node: dict[str, Any],
    values: list[Any],
    arrays: list[array[int] | bytearray],
    used: set[int],
) -> Any:
    """What a marker stands for: a run of values (a list of its own) or an array (each
    array once: no two parts share one)."""
    ((key, where),) = node.items()
    if key == "$values":
        if (
            type(where) is not list
            or len(where) != 2
            or any(type(n) is not int or n < 0 for n in where)
            or where[0] + where[1] > len(values)
        ):
            raise Unreadable("a run of values that it does not hold")
        return values[where[0] : where[0] + where[1]]
    if type(where) is not int or not 0 <= where < len(arrays) or where in used:
        raise Unreadable("an array that it does not hold, or one named twice")
    used.add(where)
    return arrays[where]

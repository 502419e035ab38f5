"""The compiled search's frontier: the rows of one breadth-first level, in memory or on disk.

A level is written once, in discovery order, while the level before it is expanded, and
then read once, in order: so a level too large for memory goes to a file as it is written
and is read back through a memory map, a slice at a time, as TLC keeps its queue on disk.
Rows go to disk once the level holds `spill_bytes` (a share of the memory bound), or sooner
when the process is `pressed` (near the bound); the file is a new one in a private temporary
directory, removed with the level.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np


class SpillFailed(Exception):
    """Writing a level to disk failed (a full disk): the search stops, incomplete."""


class Level:
    """The rows of one level: chunks in memory, then, past `spill_bytes`, a file."""

    def __init__(
        self,
        words: int,
        spill_bytes: int | None,
        directory: Path | None,
        pressed: Callable[[], bool] | None = None,
    ) -> None:
        self.words = words
        self.spill_bytes = spill_bytes
        self.pressed = pressed  # whether memory runs short: then to disk whatever the size
        self.directory = directory
        self.chunks: list[Any] = []
        self.count = 0
        self.bytes = 0
        self.path: Path | None = None
        self._file: Any = None
        self.on_disk = 0  # rows written to the file (they come after those in memory)

    def __len__(self) -> int:
        return self.count

    def append(self, rows: Any) -> None:
        """Rows newly discovered, in order (a copy is kept)."""
        if not len(rows):
            return
        if self._file is None and self._spill_due(rows.nbytes):
            self._open()
        if self._file is not None:
            try:
                self._file.write(np.ascontiguousarray(rows).tobytes())
            except OSError as exc:
                raise SpillFailed(f"writing the frontier to {self.directory}: {exc}") from exc
            self.on_disk += len(rows)
        else:
            self.chunks.append(np.array(rows, dtype=np.uint64, copy=True))
        self.count += len(rows)
        self.bytes += rows.nbytes

    def _spill_due(self, more: int) -> bool:
        if self.spill_bytes is None or self.directory is None:
            return False
        return self.bytes + more > self.spill_bytes or (self.pressed is not None and self.pressed())

    def _open(self) -> None:
        assert self.directory is not None
        fd, name = tempfile.mkstemp(prefix="level-", suffix=".rows", dir=self.directory)
        self.path = Path(name)
        self._file = os.fdopen(fd, "wb")

    def slices(self, size: int) -> Iterator[Any]:
        """The level's rows in order, `size` rows at most at a time (read-only)."""
        for chunk in self.chunks:
            for start in range(0, len(chunk), size):
                yield chunk[start : start + size]
        if self.path is not None and self.on_disk:
            try:
                assert self._file is not None
                self._file.flush()
            except OSError as exc:
                raise SpillFailed(f"writing the frontier to {self.directory}: {exc}") from exc
            flat = np.memmap(self.path, dtype=np.uint64, mode="r")
            mapped = flat.reshape(self.on_disk, self.words)
            for start in range(0, self.on_disk, size):
                yield np.array(mapped[start : start + size])
            del mapped, flat

    def compact_tail(self, n: int, keep: Any) -> None:
        """Keep of the last `n` rows only those `keep` (a mask) marks, in order: the
        visited set on disk found the others stored already (checker/engine/compiled/disk.py).
        A chunk or a slice of the file at a time, so it needs no more memory than that."""
        start = self.count - n
        in_memory = self.count - self.on_disk
        chunks, at = [], 0
        for chunk in self.chunks:
            size = len(chunk)
            lo = max(start - at, 0)
            if lo < size:
                mask = keep[at + lo - start : at + size - start]
                kept = chunk[lo:][mask]
                chunk = np.concatenate([chunk[:lo], kept]) if lo else kept
            at += size
            if len(chunk):
                chunks.append(chunk)
        self.chunks = chunks
        kept_in_memory = sum(len(c) for c in chunks)
        if self.on_disk:
            self._compact_file(max(start - in_memory, 0), keep[max(in_memory - start, 0) :])
        self.count = kept_in_memory + self.on_disk
        self.bytes = self.count * self.words * 8

    def _compact_file(self, first: int, keep: Any) -> None:
        """Rewrite the file keeping its rows before `first` and those of the rest `keep`
        marks, a slice at a time, into a new file that replaces it."""
        assert self.path is not None and self._file is not None and self.directory is not None
        try:
            self._file.flush()
            fd, name = tempfile.mkstemp(prefix="level-", suffix=".rows", dir=self.directory)
            written = 0
            with os.fdopen(fd, "wb") as out:
                flat = np.memmap(self.path, dtype=np.uint64, mode="r")
                mapped = flat.reshape(self.on_disk, self.words)
                for lo in range(0, self.on_disk, 1 << 16):
                    rows = np.array(mapped[lo : lo + (1 << 16)])
                    if lo + len(rows) > first:
                        cut = max(first - lo, 0)
                        mask = keep[lo + cut - first : lo + len(rows) - first]
                        rows = np.concatenate([rows[:cut], rows[cut:][mask]])
                    np.ascontiguousarray(rows).tofile(out)
                    written += len(rows)
                del mapped, flat
            self._file.close()
        except OSError as exc:
            raise SpillFailed(f"writing the frontier to {self.directory}: {exc}") from exc
        self.path.unlink(missing_ok=True)
        self.path = Path(name)
        self._file = open(self.path, "ab")  # noqa: SIM115 (kept open for appends, closed by close)
        self.on_disk = written

    def close(self) -> None:
        """Forget the rows; remove the file."""
        self.chunks.clear()
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass
            self._file = None
        if self.path is not None:
            self.path.unlink(missing_ok=True)
            self.path = None

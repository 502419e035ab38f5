"""The compiled search's frontier: the rows of one breadth-first level, in memory or on disk.

A level is written once, in discovery order, while the level before it is expanded, and
then read once, in order: so a level too large for memory goes to a file as it is written
and is read back through a memory map, a slice at a time, as TLC keeps its queue on disk.
Rows go to disk once the level holds `spill_bytes` (a share of the memory bound); the
file is a new one in a private temporary directory, removed with the level.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np


class SpillFailed(Exception):
    """Writing a level to disk failed (a full disk): the search stops, incomplete."""


class Level:
    """The rows of one level: chunks in memory, then, past `spill_bytes`, a file."""

    def __init__(self, words: int, spill_bytes: int | None, directory: Path | None) -> None:
        self.words = words
        self.spill_bytes = spill_bytes
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
        return (
            self.spill_bytes is not None
            and self.directory is not None
            and self.bytes + more > self.spill_bytes
        )

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
        visited set on disk found the others stored already (checker/engine/compiled/disk.py)."""
        start = self.count - n
        rows = self._read(start)
        self._truncate(start)
        self.append(rows[keep])

    def _read(self, start: int) -> Any:
        """A copy of the rows from `start` on."""
        parts = []
        at = 0
        for rows in self.slices(1 << 16):
            if at + len(rows) > start:
                parts.append(np.array(rows[max(0, start - at) :]))
            at += len(rows)
        if not parts:
            return np.empty((0, self.words), dtype=np.uint64)
        return np.concatenate(parts)

    def _truncate(self, start: int) -> None:
        """Forget the rows from `start` on."""
        in_memory = self.count - self.on_disk
        if start >= in_memory and self._file is not None:
            self.on_disk = start - in_memory
            size = self.on_disk * self.words * 8
            try:
                self._file.flush()
                self._file.truncate(size)
                self._file.seek(size)
            except OSError as exc:
                raise SpillFailed(f"writing the frontier to {self.directory}: {exc}") from exc
        else:
            if self._file is not None:  # the whole file goes
                self._file.close()
                self._file = None
                assert self.path is not None
                self.path.unlink(missing_ok=True)
                self.path = None
                self.on_disk = 0
            kept, total = [], 0
            for chunk in self.chunks:
                if total + len(chunk) > start:
                    chunk = chunk[: start - total]
                if len(chunk):
                    kept.append(chunk)
                total += len(chunk)
            self.chunks = kept
        self.count = start
        self.bytes = start * self.words * 8

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

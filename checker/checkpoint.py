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
crash or a full disk leaves the previous checkpoint whole. It is a pickle: resume only your
own.
"""

from __future__ import annotations

import pickle
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from leadercheck.checker import files
from leadercheck.checker.errors import LeadercheckError

FORMAT = "leadercheck.checkpoint/2"  # /2: the exploration saves its store, frontier and observers
FILE = "search.checkpoint"


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
        """Write `snapshot` atomically; a failure is remembered, not raised."""
        self._last = time.monotonic()
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with files.atomic_writer(self.directory / FILE) as f:  # fsynced, then renamed
                pickle.dump(
                    {"format": FORMAT, "identity": self.identity, **snapshot},
                    f,
                    protocol=pickle.HIGHEST_PROTOCOL,
                )
            self.written += 1
            self.failure = None
        except OSError as exc:  # a full disk, a vanished directory: keep searching
            self.failure = f"checkpoint not written to {self.directory}: {exc.strerror or exc}"
        except LeadercheckError as exc:  # the same, or a FIFO or a link where the file goes
            self.failure = f"checkpoint not written: {exc}"

    def load(self) -> dict[str, Any]:
        """The snapshot saved in `resume_from`, checked to be of the same search."""
        assert self.resume_from is not None
        if self._loaded is not None:
            return self._loaded
        path = self.resume_from / FILE
        try:  # a regular file, of any size: it is as large as the search that saved it
            with files.open_regular(path, "--resume") as f:
                doc = pickle.load(f)
        except files.FileMissing:
            raise LeadercheckError(f"--resume {self.resume_from}: no checkpoint there") from None
        except MemoryError:
            raise LeadercheckError(f"--resume {path}: too large for the memory free") from None
        except (
            OSError,
            EOFError,
            pickle.UnpicklingError,
            ValueError,
            LookupError,
            TypeError,
            AttributeError,
            ImportError,
        ) as exc:
            raise LeadercheckError(f"--resume {path}: not a readable checkpoint ({exc})") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise LeadercheckError(f"--resume {path}: not a {FORMAT} checkpoint")
        if doc.get("identity") != self.identity:
            saved = doc.get("identity") or {}
            differs = sorted(
                k for k in {**saved, **self.identity} if saved.get(k) != self.identity.get(k)
            )
            raise LeadercheckError(
                f"--resume {path}: the checkpoint is of another search "
                f"({', '.join(differs) or 'identity'} differ)"
            )
        self._loaded = doc
        return doc

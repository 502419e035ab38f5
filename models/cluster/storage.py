"""The storage a leader writes to, with or without fencing-token checks.

Only the order of the epochs of accepted writes matters, so the data is not
modelled. `hi_epoch` is the highest epoch among accepted writes: with fencing it is
the storage's own "highest token accepted"; without fencing it is ghost state kept
only so the no-stale-write claim can be checked. `stale` is ghost state too: some
accepted write had an epoch below one accepted before it.
"""

from __future__ import annotations

from typing import NamedTuple

from leadercheck.models.cluster.records import quick_replace


def leadership_note(leadership: int) -> str:
    """The note of an accepted write in a protocol without tokens: which leadership made it
    (the checker numbers leaderships with a ghost epoch; the protocol itself cannot tell)."""
    return f"accepted, from leadership #{leadership}"


@quick_replace
class Storage(NamedTuple):
    hi_epoch: int = 0
    stale: bool = False

    def write(self, epoch: int, fencing: bool) -> tuple[Storage, bool]:
        """Apply a write made under `epoch`; returns the new storage and whether it was accepted."""
        if epoch >= self.hi_epoch:
            return Storage(epoch, self.stale), True
        if fencing:
            return self, False  # 409 STALE TOKEN
        return Storage(self.hi_epoch, True), True

    def describe(self) -> dict[str, object]:
        return {"hi_epoch": self.hi_epoch, "stale_write_accepted": self.stale}

    def summary(self) -> str:
        text = f"highest epoch {self.hi_epoch}" if self.hi_epoch else "no writes"
        return text + (", STALE WRITE" if self.stale else "")

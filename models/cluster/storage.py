"""The storage a leader writes to, with or without fencing-token checks.

Only the order of the epochs of accepted writes matters, so the data is not
modelled. `hi_epoch` is the highest epoch (token) among accepted writes: with fencing it
is the storage's own "highest token accepted", what it compares a write's token with;
without fencing it is ghost state. The no-stale-write claim does not read tokens: it
asks which leadership made each write (its tenure, numbered by the checker in grant
order), because a token can be handed out twice (a store that forgets its counter when
it restarts, an UPDATE without a WHERE clause) and then two leaderships write under one
token. `hi_tenure` is the latest leadership among accepted writes and `stale` is set when
a write from an earlier leadership is accepted after it: both are ghost state.
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
    hi_tenure: int = 0  # ghost: the latest leadership an accepted write came from

    def write(self, epoch: int, fencing: bool, tenure: int | None = None) -> tuple[Storage, bool]:
        """Apply a write made under `epoch` by the leadership `tenure` (its epoch when the
        protocol's epochs are never reused); returns the new storage and whether it was
        accepted. Fencing compares the epoch (the token the write carries); the ghost
        `stale` compares the tenure."""
        tenure = epoch if tenure is None else tenure
        if fencing and epoch < self.hi_epoch:
            return self, False  # 409 STALE TOKEN
        stale = self.stale or tenure < self.hi_tenure
        return Storage(max(epoch, self.hi_epoch), stale, max(tenure, self.hi_tenure)), True

    def describe(self) -> dict[str, object]:
        view: dict[str, object] = {"hi_epoch": self.hi_epoch, "stale_write_accepted": self.stale}
        if self.hi_tenure != self.hi_epoch:  # a token handed out twice: say whose write it was
            view["latest_leadership_written"] = self.hi_tenure
        return view

    def summary(self) -> str:
        text = f"highest epoch {self.hi_epoch}" if self.hi_epoch else "no writes"
        return text + (", STALE WRITE" if self.stale else "")

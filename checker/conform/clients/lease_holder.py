"""What a lease holder keeps in memory, whatever the store: the token it believes it
holds, when it last took or renewed the lease, and the write it has decided to send.

The check before a write is local in the lease models (the node reads its own copy of the
lease, not the store), so it is the same on every store that keeps a lease."""

from __future__ import annotations

import time
from typing import Any


class LeaseHolder:
    """Mixed into a system's Client, which sets these in its constructor and its calls."""

    ttl_seconds: float  # the lease the store grants
    lease_seconds: float  # its own copy, counted on its own clock (usually the TTL)
    token: int
    acquired_at: float
    pending: int

    def op_belief(self) -> dict[str, Any]:
        """Read only, asked after every step: does it believe it leads, and under which
        token (its lease's time has not run out on its own clock)."""
        left = self.lease_seconds - (time.monotonic() - self.acquired_at)
        leads = bool(self.token) and left > 0
        return {"leader": leads, "token": self.token if leads else None}

    def op_check(self) -> dict[str, Any]:
        """Local: the node decides to write with the token it believes it holds."""
        left = self.lease_seconds - (time.monotonic() - self.acquired_at)
        self.pending = self.token
        return {"token": self.token, "believes_leader": bool(self.token) and left > 0}

"""A lock's holder, for the lock protocols whose lock gives no token (redis-py's Lock, a
PostgreSQL advisory lock): every holder leads under *the* lock, so two at once are two
leaders (single-leader); their fenced variants draw a token and lead under it.
"""

from __future__ import annotations

from typing import Any

from leadercheck.models.cluster import ClusterState
from leadercheck.models.lease import LeaseNode


class LockHolder(LeaseNode):
    """A holder of a lock without tokens: every holder leads under the one lock."""

    __slots__ = ()

    @property
    def lead_token(self) -> int:
        return 1 if self.token else 0

    def describe(self) -> dict[str, object]:
        """No token to lead under: the holding's number (the storage's count of holdings,
        which judges a late write) is said as what it is, not as an epoch."""
        view = super().describe()
        view["holding"] = view.pop("lease_token")
        view["pending_write_holding"] = view.pop("pending_write_token")
        return view


class LockHolderNodes:
    """The node records of a lock protocol: LockHolder unfenced, LeaseNode fenced (mixed
    in before LeaseModel, whose `fencing` it reads)."""

    fencing: bool

    def initial_node(self, i: int) -> Any:
        return LeaseNode() if self.fencing else LockHolder()

    def crash_node(self, node: Any) -> Any:
        return self.initial_node(0)._replace(up=False)

    def restart_node(self, node: Any, i: int) -> Any:
        return self.initial_node(i)

    def let_go(self, s: ClusterState, i: int) -> ClusterState:
        """`s` once node i has learnt its lock is gone (a check or an extend said so)."""
        return s.with_node(i, s.node(i)._replace(token=0, left=0, leadership=0))

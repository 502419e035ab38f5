"""A coordination store like etcd holding one lease key.

The key records the holder, the lease's token (the epoch: it grows by one on every
acquisition), the ticks left before the lease expires, and the key's revision,
which grows on every change of the key. Renewing refreshes the TTL without
changing the key, as etcd's lease keep-alive does, so renewals do not grow the
revision. Token and revision are bounded because acquisitions are.
"""

from __future__ import annotations

from typing import NamedTuple

from leadercheck.models.cluster.nodes import node_name
from leadercheck.models.cluster.records import quick_replace
from leadercheck.models.cluster.time import countdown


@quick_replace
class Store(NamedTuple):
    holder: int = 0  # 0: the lease has never been taken
    token: int = 0  # token of the last lease granted
    ttl_left: int = 0  # the lease is valid while this is positive
    revision: int = 0

    def lease_free(self) -> bool:
        """Free if never taken or expired: the compare part of compare-and-swap."""
        return self.holder == 0 or self.ttl_left == 0

    def acquire(self, node: int, ttl: int) -> Store | None:
        """Compare-and-swap: grant `node` a new lease (token + 1) if the lease is free."""
        if not self.lease_free():
            return None
        return Store(node, self.token + 1, ttl, self.revision + 1)

    def renew(self, node: int, token: int, ttl: int) -> Store | None:
        """Reset the TTL if `node` still holds the unexpired lease `token`."""
        if self.holder != node or self.token != token or self.ttl_left == 0:
            return None
        return self._replace(ttl_left=ttl)

    def tick(self) -> Store:
        return self._replace(ttl_left=countdown(self.ttl_left))

    def describe(self) -> dict[str, object]:
        return {
            "holder": node_name(self.holder) if self.holder else None,
            "token": self.token,
            "ttl_left": self.ttl_left,
            "revision": self.revision,
        }

    def summary(self) -> str:
        if self.holder == 0:
            return "lease free"
        if self.ttl_left == 0:
            return f"lease t{self.token} expired"
        return f"lease t{self.token}: {node_name(self.holder)}"

#!/usr/bin/env python3
"""A leader on etcd3gw's `Lock`, used as its users use it, for `verify conform --client`
on the lease protocols (`lease-no-fencing`, `lease-fencing`; its check asks the store,
so give `-p check=store` in random schedules).

`Lock(name, ttl)` keeps the lock at `/locks/<name>` with its own uuid as the value, on a
lease it grants itself in `acquire()`; `refresh()` keeps the lease alive and
`is_acquired()` reads the key. The harness is told the uuid (`holds_as`), so it reads who
holds the lock where etcd3gw keeps it. etcd3gw gives no token: the leadership's token is
the lock key's create revision, read once the lock is taken.

- `--variant fenced`: each write is one transaction the storage refuses when it already
  accepted a higher token.
- `--variant unfenced` (the bug): the write goes through because `is_acquired()` said
  yes a moment ago; a pause between the two lets the lock pass to another node first.
"""

from __future__ import annotations

from typing import Any

from etcd3gw.client import Etcd3Client
from jsonlines import run
from storages import etcd_write


class LockLeader:
    """One node: an etcd3gw Lock on the store, the storage reached directly."""

    def __init__(self, cfg: dict[str, Any], fenced: bool) -> None:
        timeout = float(cfg.get("timeout", 2.0))
        host, port = cfg["store"]
        self.store = Etcd3Client(host=host, port=int(port), timeout=timeout, api_path="/v3/")
        host, port = cfg["storage"]
        self.storage = Etcd3Client(host=host, port=int(port), timeout=timeout, api_path="/v3/")
        self.lock = self.store.lock(cfg["lock_name"], ttl=int(cfg["ttl_seconds"]))
        self.fenced = fenced
        self.log_prefix, self.hi_key = cfg["storage_log_prefix"], cfg["storage_hi_key"]
        self.token = 0  # the lock key's create revision while it believes it holds the lock
        self.pending = 0  # the token of the write it decided on

    def op_grant(self) -> dict[str, Any]:
        return {}  # etcd3gw's acquire() grants its own lease

    def op_acquire(self) -> dict[str, Any]:
        if not self.lock.acquire():
            return {"granted": False}
        found = self.store.get(self.lock.key, metadata=True)
        self.token = int(found[0][1]["create_revision"]) if found else 0
        return {"granted": bool(self.token), "token": self.token, "holds_as": self.lock.uuid}

    def op_renew(self) -> dict[str, Any]:
        renewed = self.lock.refresh() > 0
        if not renewed:
            self.token = 0
        return {"renewed": renewed}

    def op_check(self) -> dict[str, Any]:
        leads = self.lock.is_acquired()
        self.token = self.token if leads else 0
        self.pending = self.token
        return {"believes_leader": leads, "token": self.token or None}

    def op_write(self) -> dict[str, Any]:
        token, self.pending = self.pending, 0
        accepted = etcd_write(self.storage, self.log_prefix, self.hi_key, token, self.fenced)
        return {"accepted": accepted, "token": token}

    def op_belief(self) -> dict[str, Any]:
        return {"leader": bool(self.token), "token": self.token or None}


def main() -> None:
    run(
        __doc__ or "", LockLeader, lambda leader: {"background": None, "holds_as": leader.lock.uuid}
    )


if __name__ == "__main__":
    main()

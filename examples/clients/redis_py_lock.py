#!/usr/bin/env python3
"""A leader on redis-py's `Lock`, used as its users use it, for `verify conform --client`
on the single-instance lock protocols (`redis-lock`, `redis-lock-fencing`).

`r.lock(name, timeout)` is Redis's single-instance lock: `acquire(blocking=False)` is
`SET name token NX PX`, `extend()` resets the expiry while the key still holds the token
(it raises LockNotOwnedError when it does not), and `owned()` reads the key back. redis-py
keeps no timer: the holder believes it holds the lock until one of those calls says no.
It gives no fencing token either: the holder draws one from a counter on the storage
(`INCR`) and passes `<name>:<token>:<id>` as the lock's token, so whoever reads the key
can tell whose it is. The connection keeps redis-py's defaults (retries included).

- `--variant fenced`: each write is one script on the storage that refuses a token below
  the highest it accepted.
- `--variant unfenced` (the bug): it writes because `owned()` said yes a moment ago; a
  pause, or a Redis restart that lost the key, lets another holder in first.
"""

from __future__ import annotations

import uuid
from typing import Any

import redis
from jsonlines import lock_belief, run
from redis.exceptions import LockError
from storages import redis_write


class LockLeader:
    """One node: a redis-py Lock on the lock's Redis, the storage reached directly."""

    def __init__(self, cfg: dict[str, Any], fenced: bool) -> None:
        self.name, self.fenced = cfg["name"], fenced
        timeout = float(cfg["timeout"])
        host, port = cfg["store"]
        self.store = redis.Redis(host=host, port=int(port), socket_timeout=timeout)
        host, port = cfg["storage"]
        self.storage = redis.Redis(host=host, port=int(port), socket_timeout=timeout)
        self.ttl = int(cfg["ttl_ms"]) / 1000
        self.lock = self.store.lock(cfg["lock_key"], timeout=self.ttl)
        self.counter = cfg["storage_counter_key"]
        self.hi_key, self.log_key = cfg["storage_hi_key"], cfg["storage_log_key"]
        self.token = 0  # while it believes it holds the lock
        self.pending = 0

    def op_acquire(self) -> dict[str, Any]:
        token = int(self.storage.incr(self.counter))
        value = f"{self.name}:{token}:{uuid.uuid4().hex}"
        if not self.lock.acquire(blocking=False, token=value):
            return {"granted": False}
        self.token = token
        return {"granted": True, "token": token}

    def op_renew(self) -> dict[str, Any]:
        try:
            self.lock.extend(self.ttl, replace_ttl=True)
        except LockError:  # LockNotOwnedError: the key expired or is another's
            self.token = 0
            return {"renewed": False}
        return {"renewed": True}

    def op_check(self) -> dict[str, Any]:
        if not self.lock.owned():
            self.token = 0
        self.pending = self.token
        return {"believes_leader": bool(self.token), "token": self.token or None}

    def op_write(self) -> dict[str, Any]:
        token, self.pending = self.pending, 0
        accepted = redis_write(self.storage, self.hi_key, self.log_key, token, self.fenced)
        return {"accepted": accepted, "token": token}

    def op_belief(self) -> dict[str, Any]:
        return lock_belief(self.token, self.fenced)


def main() -> None:
    run(__doc__ or "", LockLeader)


if __name__ == "__main__":
    main()

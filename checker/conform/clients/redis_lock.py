"""A holder of a lock on one Redis instance (redis-py), as `redis-lock` and
`redis-lock-fencing` run it, and the storage it writes to.

The lock is the single-instance algorithm redis-py's `Lock` runs: `SET key value NX PX
ttl` to take it (the value a random id of this holding), a script that resets the expiry
only while the key still holds that value to extend it, and `GET` to check it (`owned()`).
Before it sets the key, the holder draws its token from a counter on the storage (`INCR`)
and sets the key to `<name>:<token>:<id>`: the fenced variant's storage refuses a token
below the highest it accepted, and the unfenced one only logs it, so that a late write of
an older holding shows in the log.

The storage is a second Redis instance, reached directly: a list of accepted tokens and
the highest one, both changed by one script, so the comparison and the append are atomic.
"""

from __future__ import annotations

import uuid
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

#: extend: the expiry reset only while the key still holds this holding's value
EXTEND = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
"""

#: a write under ARGV[1]: refused (0) when fenced (ARGV[2] == "1") and a higher token was
#: accepted, else logged and `hi` raised (1)
WRITE = """
local hi = tonumber(redis.call('GET', KEYS[1]) or '0')
local token = tonumber(ARGV[1])
if ARGV[2] == '1' and token < hi then return 0 end
if token > hi then redis.call('SET', KEYS[1], ARGV[1]) end
redis.call('RPUSH', KEYS[2], ARGV[1])
return 1
"""


def connect(address: list[Any], timeout: float) -> redis.Redis:
    """A connection that tries each command once: redis-py retries a failed one (three
    times, with backoff, by default), which would turn a lost reply to a SET into a second
    SET that finds the key taken, and a crashed Redis into seconds of waiting."""
    return redis.Redis(
        host=address[0],
        port=int(address[1]),
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=Retry(NoBackoff(), 0),
    )


class Client:
    """One node: its holding's value and token in memory, the lock's Redis through its
    proxy, the storage directly."""

    def __init__(self, config: dict[str, Any]) -> None:
        timeout = float(config.get("timeout", 2.0))
        self.name: str = config["name"]
        self.fencing = bool(config["fencing"])
        self.ttl_ms = int(config["ttl_ms"])
        self.lock_key: str = config["lock_key"]
        self.counter_key: str = config["storage_counter_key"]
        self.hi_key: str = config["storage_hi_key"]
        self.log_key: str = config["storage_log_key"]
        self.store = connect(config["store"], timeout)
        self.storage = connect(config["storage"], timeout)
        self.value = ""  # this holding's id in the lock key; "": none
        self.token = 0
        self.pending = 0

    def op_acquire(self) -> dict[str, Any]:
        """The token drawn first, then the key set to `<name>:<token>:<id>`: a lost reply
        to the SET leaves a key that says whose it is and under which token."""
        token = int(self.storage.incr(self.counter_key))
        value = f"{self.name}:{token}:{uuid.uuid4().hex}"
        if not self.store.set(self.lock_key, value, nx=True, px=self.ttl_ms):
            return {"granted": False}
        self.value, self.token = value, token
        return {"granted": True, "token": token}

    def op_renew(self) -> dict[str, Any]:
        renewed = bool(self.value) and bool(
            self.store.eval(EXTEND, 1, self.lock_key, self.value, self.ttl_ms)
        )
        if not renewed:
            self.value, self.token = "", 0
        return {"renewed": renewed}

    def op_check(self) -> dict[str, Any]:
        """owned(): the key read back, still this holding's value."""
        held = self.store.get(self.lock_key)
        leads = bool(self.value) and isinstance(held, bytes) and held.decode() == self.value
        if not leads:
            self.value, self.token = "", 0
        self.pending = self.token
        return {"believes_leader": leads, "token": self.token or None}

    def op_write(self) -> dict[str, Any]:
        token, self.pending = self.pending, 0
        fenced = "1" if self.fencing else "0"
        done = self.storage.eval(WRITE, 2, self.hi_key, self.log_key, token, fenced)
        return {"accepted": bool(done), "token": token}

    def op_belief(self) -> dict[str, Any]:
        """Read only: it believes it holds the lock while its last call said so (redis-py
        keeps no timer of its own); the unfenced lock has no token to lead under."""
        leads = bool(self.token)
        return {"leader": leads, "token": (self.token if self.fencing else None) if leads else None}

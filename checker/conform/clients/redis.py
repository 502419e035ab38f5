"""A Redlock client on five real Redis masters (redis-py), and the storage it writes to.

What antirez's algorithm has a client do, one master per call so that the model's
interleavings (n1 asks C, C's clock jumps, n2 asks C) can be made real: an attempt draws a
random value, then sends `SET key value NX PX ttl` to the masters in order A..E. After the
fifth it counts its OKs: with a majority and validity left (the TTL less the time the
attempt took, less the drift margin, on the client's monotonic clock) it holds the lock;
otherwise it unlocks every master. Unlocking is the usual compare-and-delete script (DEL
only if the key still holds a value this client set). The check before a write is local:
is the validity still running?

The `SET` uses the `GET` option (Redis 7: atomic with NX) only so that a refused SET can
say who holds the key, as the model's note does; on an older server it falls back to a
separate GET, which serves the wording only.

The storage is a list on the first instance, reached on a connection of its own; it
accepts every write (Redlock has no fencing token). Each write carries the lock's ghost
epoch, which the storage never looks at: a client draws it, on taking the lock, from a
counter on the storage (`INCR`), as the model draws its ghost epoch when a lock is granted.
It exists so that a late write of an older lock can be seen in the log, nothing more.

The process started with `"role": "clock"` is not a model node: it plays the masters'
clocks (`op_jump_<M>`), so a clock jump never waits on a paused client (see
bindings/redis.py for how a jump is made).
"""

from __future__ import annotations

import time
import uuid
from functools import partialmethod
from pathlib import Path
from typing import Any

import redis

from leadercheck.checker.conform.clocks import WallClock

MASTERS = "ABCDE"
MAJORITY = 3

#: compare-and-delete: the key goes only while it holds one of the values this client set
UNLOCK = """
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
for _, mine in ipairs(ARGV) do
  if v == mine then return redis.call('DEL', KEYS[1]) end
end
return 0
"""

#: on masters not started here (--endpoint), whose clock cannot be made to jump: a clock
#: jump of ARGV[1] ms on this master, as the lock key sees it: Redis keeps a key's
#: expiry as an absolute Unix time and compares it with its wall clock, so a clock jumping
#: J ms ahead is the same, for the key, as its expiry brought J ms earlier. No earlier than
#: 1 ms from now, so Redis's own expiry removes the key. Returns the value the key held
#: (nil: no key, nothing to do).
JUMP = """
local v = redis.call('GET', KEYS[1])
local left = redis.call('PTTL', KEYS[1])
if v and left > 0 then redis.call('PEXPIRE', KEYS[1], math.max(left - tonumber(ARGV[1]), 1)) end
return v
"""


def connect(address: list[Any], timeout: float) -> redis.Redis:
    host, port = address
    return redis.Redis(
        host=host, port=int(port), socket_timeout=timeout, socket_connect_timeout=timeout
    )


def text_of(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def owner_of(value: bytes | str | None) -> str | None:
    """The client named in a lock value (`n1:<random hex>`), or None for no key."""
    return None if value is None else text_of(value).split(":", 1)[0]


class Keys:
    """Where one conformance run keeps its lock key (on every master) and its storage."""

    def __init__(self, prefix: str) -> None:
        self.lock = prefix + "lock"
        self.storage_log = prefix + "storage:log"
        self.ghost = prefix + "storage:ghost"


class Client:
    """One Redlock client: its attempt and its lock in memory, five masters, one storage."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.name: str = config["name"]
        self.ttl_ms = int(config["ttl_ms"])
        self.drift_ms = int(config["drift_ms"])
        self.keys = Keys(config["prefix"])
        timeout = float(config.get("timeout", 2.0))
        self.masters = [connect(a, timeout) for a in config["masters"]]
        self.storage = connect(config["storage"], timeout)
        self.unlock_script = [m.register_script(UNLOCK) for m in self.masters]
        self.jump_script = [m.register_script(JUMP) for m in self.masters]
        self.clocks = [WallClock(Path(f)) for f in config.get("clock_files") or ()]
        self.values: list[str] = []  # every value it has SET: unlock deletes any of them
        self.value = ""
        self.asked = 0  # masters asked in the attempt under way
        self.oks = 0
        self.started = 0.0  # monotonic start of the attempt
        self.valid_until = 0.0  # monotonic end of the validity of the lock it holds; 0: none
        self.ghost = 0  # the ghost epoch of that lock, carried on its writes
        self.checked = False

    # -- acquiring ---------------------------------------------------------------

    def _set_nx(self, m: int) -> dict[str, Any]:
        """SET NX PX on master m, the next one of the attempt; after E, count the OKs."""
        if m != self.asked:
            raise RuntimeError(
                f"asked to SET on {MASTERS[m]}, but the next is {MASTERS[self.asked]}"
            )
        if m == 0:
            self.value = f"{self.name}:{uuid.uuid4().hex}"
            self.values.append(self.value)
            self.started, self.oks = time.monotonic(), 0
        master = self.masters[m]
        try:
            old: Any = master.set(self.keys.lock, self.value, nx=True, px=self.ttl_ms, get=True)
            ok = old is None
        except redis.ResponseError:  # before Redis 7.0: no GET with NX
            ok = bool(master.set(self.keys.lock, self.value, nx=True, px=self.ttl_ms))
            old = None if ok else master.get(self.keys.lock)
        self.asked, self.oks = m + 1, self.oks + ok
        result: dict[str, Any] = {"set": ok, "holder": owner_of(old)}
        if self.asked < len(MASTERS):
            return result
        validity = self.ttl_ms - (time.monotonic() - self.started) * 1000 - self.drift_ms
        held = self.oks >= MAJORITY and validity > 0
        result.update(oks=self.oks, validity_ms=round(validity, 1), held=held)
        self.asked, self.checked = 0, False
        if held:
            self.valid_until = self.started + (self.ttl_ms - self.drift_ms) / 1000
            self.ghost = int(self.storage.incr(self.keys.ghost))
            result["ghost"] = self.ghost
        else:
            self.valid_until, self.ghost = 0.0, 0
            result["unlocked"] = self._unlock()
        return result

    op_set_A = partialmethod(_set_nx, 0)
    op_set_B = partialmethod(_set_nx, 1)
    op_set_C = partialmethod(_set_nx, 2)
    op_set_D = partialmethod(_set_nx, 3)
    op_set_E = partialmethod(_set_nx, 4)

    def _unlock(self) -> str:
        """Compare-and-delete on every master; the masters where a key went."""
        deleted = [
            MASTERS[m]
            for m, script in enumerate(self.unlock_script)
            if script(keys=[self.keys.lock], args=self.values)
        ]
        return "".join(deleted)

    # -- holding -----------------------------------------------------------------

    def op_belief(self) -> dict[str, Any]:
        """Read only, asked after every step: does it believe it holds the lock (its
        validity is running), and under which ghost epoch."""
        leads = bool(self.valid_until) and self.valid_until > time.monotonic()
        return {"leader": leads, "token": None}

    def op_check(self) -> dict[str, Any]:
        """Local: is the validity still running? The write it decides on follows."""
        left = (self.valid_until - time.monotonic()) * 1000 if self.valid_until else 0.0
        self.checked = True
        return {"valid": left > 0, "left_ms": round(left, 1), "ghost": self.ghost}

    def op_write(self) -> dict[str, Any]:
        """Append to the storage, which accepts whatever arrives."""
        self.storage.rpush(self.keys.storage_log, f"{self.ghost}:{self.value}")
        self.checked = False
        if self.valid_until <= time.monotonic():
            self.valid_until = 0.0
        return {"accepted": True, "ghost": self.ghost}

    def op_release(self) -> dict[str, Any]:
        self.valid_until, self.ghost, self.checked, self.asked = 0.0, 0, False, 0
        return {"unlocked": self._unlock()}

    # -- the masters' clocks (the "clock" process only) ---------------------------

    def _jump(self, m: int) -> dict[str, Any]:
        """The model's jump ("its key expires at once"): master m's wall clock jumps the
        whole TTL ahead, for real where the harness started the masters (their clock
        files), else emulated on the lock key (servers given with --endpoint)."""
        if not self.clocks:
            value = self.jump_script[m](keys=[self.keys.lock], args=[self.ttl_ms])
            return {"expired": owner_of(value), "jump_ms": self.ttl_ms, "clock": "emulated"}
        master = self.masters[m]
        value, left = master.get(self.keys.lock), master.pttl(self.keys.lock)
        self.clocks[m].jump(self.ttl_ms)
        expired = owner_of(value) if value is not None and left > 0 else None
        return {"expired": expired, "jump_ms": self.ttl_ms, "clock": "the master's own"}

    op_jump_A = partialmethod(_jump, 0)
    op_jump_B = partialmethod(_jump, 1)
    op_jump_C = partialmethod(_jump, 2)
    op_jump_D = partialmethod(_jump, 3)
    op_jump_E = partialmethod(_jump, 4)

    def close(self) -> None:
        for conn in (*self.masters, self.storage):
            conn.close()

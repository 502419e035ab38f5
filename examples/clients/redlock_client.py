#!/usr/bin/env python3
"""A Redlock client on five Redis masters, written as services write it, to be put under
the model's schedules by `verify conform --client` (see the README's "Your own client").

An attempt draws a random value and sends `SET key value NX PX ttl` to the masters in
order A..E, one per request, so that the model's interleavings can be made real. After
the fifth it counts its OKs: with a majority and validity left (the TTL less the time the
attempt took on its own monotonic clock, less the drift margin) it holds the lock and
draws the lock's epoch from a counter on the storage; otherwise it unlocks every master
(compare-and-delete: only a key holding a value it set). Before a write it checks that
its validity still runs, then writes to the storage. It runs nothing in the background.

Two variants:

- `--variant majority` (correct): three OKs of five.
- `--variant two-of-five` (the bug, a quorum miscounted as in "we run five but two are
  enough"): two OKs make it believe it holds the lock, so two clients can hold it at once.

It speaks the harness's protocol: one ready line, then one answer line per request line.
Nothing here imports leadercheck: a client in another language does the same.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from typing import Any

import redis

MASTERS = "ABCDE"

#: compare-and-delete: the key goes only while it holds one of the values this client set
UNLOCK = """
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
for _, mine in ipairs(ARGV) do
  if v == mine then return redis.call('DEL', KEYS[1]) end
end
return 0
"""


def connect(address: list[Any], timeout: float) -> redis.Redis:
    return redis.Redis(
        host=address[0], port=int(address[1]), socket_timeout=timeout,
        socket_connect_timeout=timeout,
    )  # fmt: skip


def owner_of(value: bytes | None) -> str | None:
    return None if value is None else value.decode().split(":", 1)[0]


class RedlockClient:
    """One service instance: its attempt and its lock in memory."""

    def __init__(self, config: dict[str, Any], quorum: int) -> None:
        self.name = config["name"]
        self.quorum = quorum
        self.ttl_ms = int(config["ttl_ms"])
        self.drift_ms = int(config["drift_ms"])
        self.lock_key = config["lock_key"]
        self.log_key = config["storage_log_key"]
        self.epoch_key = config["epoch_key"]
        timeout = float(config["timeout"])
        self.masters = [connect(a, timeout) for a in config["masters"]]
        self.storage = connect(config["storage"], timeout)
        self.values: list[str] = []  # every value it has set: unlock deletes any of them
        self.value = ""
        self.asked = self.oks = 0
        self.started = 0.0
        self.valid_until = 0.0  # monotonic end of its lock's validity; 0: it holds none
        self.epoch = 0

    def set_on(self, master: str) -> dict[str, Any]:
        m = MASTERS.index(master)
        if m == 0:
            self.value = f"{self.name}:{uuid.uuid4().hex}"
            self.values.append(self.value)
            self.started, self.oks = time.monotonic(), 0
        old = self.masters[m].set(self.lock_key, self.value, nx=True, px=self.ttl_ms, get=True)
        self.asked, self.oks = m + 1, self.oks + (old is None)
        result: dict[str, Any] = {"set": old is None, "holder": owner_of(old)}
        if m < len(MASTERS) - 1:
            return result
        validity = self.ttl_ms - (time.monotonic() - self.started) * 1000 - self.drift_ms
        held = self.oks >= self.quorum and validity > 0
        result.update(oks=self.oks, held=held)
        if held:
            self.valid_until = self.started + (self.ttl_ms - self.drift_ms) / 1000
            self.epoch = int(self.storage.incr(self.epoch_key))
        else:
            self.valid_until, self.epoch = 0.0, 0
            result["unlocked"] = self._unlock()
        return result

    def _unlock(self) -> str:
        script = UNLOCK
        return "".join(
            MASTERS[m]
            for m, master in enumerate(self.masters)
            if master.eval(script, 1, self.lock_key, *self.values)
        )

    def op_check(self) -> dict[str, Any]:
        return {"valid": bool(self.valid_until) and self.valid_until > time.monotonic()}

    def op_write(self) -> dict[str, Any]:
        self.storage.rpush(self.log_key, f"{self.epoch}:{self.value}")
        return {"accepted": True}

    def op_release(self) -> dict[str, Any]:
        self.valid_until, self.epoch = 0.0, 0
        return {"unlocked": self._unlock()}

    def op_belief(self) -> dict[str, Any]:
        return {"leader": bool(self.valid_until) and self.valid_until > time.monotonic()}

    def call(self, op: str, args: dict[str, Any]) -> dict[str, Any]:
        if op.startswith("set_") and op[4:] in MASTERS:
            return self.set_on(op[4:])
        return dict(getattr(self, "op_" + op)(**args))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=("majority", "two-of-five"), default="majority")
    quorum = 3 if parser.parse_args().variant == "majority" else 2
    client = RedlockClient(json.loads(os.environ["LEADERCHECK_CONFIG"]), quorum)
    print(json.dumps({"ok": True, "result": {"ready": os.getpid(), "background": None}}))
    sys.stdout.flush()
    for line in sys.stdin:
        request = json.loads(line)
        try:
            reply: dict[str, Any] = {
                "ok": True,
                "result": client.call(request["op"], request.get("args", {})),
            }
        except Exception as exc:  # told to the harness, which compares it as no reply
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A leader elector on etcd, written as services write them, to be put under the model's
schedules by `verify conform --client` (see the README's "Your own client").

It holds a lease on a leader key: acquiring is a lease grant and a put-if-absent
transaction; a keep-alive thread refreshes the lease in the background every tenth of
its TTL, so a pause of the process (SIGSTOP) stops the renewals for real and the lease
runs out in etcd. Before a write the service checks that it still leads, then writes.

Two variants:

- `--variant fenced` (correct): every write carries the token (the leader key's create
  revision) and is one transaction that the storage refuses if it already accepted a
  higher token: a deposed leader's late write cannot land.
- `--variant unfenced` (the bug): it writes what it decided to write, trusting that it
  checked its lease just before. A pause between the check and the write, long enough
  for the lease to run out and another node to take over, lets the late write land.

It speaks the harness's protocol: it prints one ready line, then answers each request
line `{"op": ..., "args": {...}}` with one line `{"ok": true, "result": {...}}` or
`{"ok": false, "error": "..."}`. Its configuration is the JSON in LEADERCHECK_CONFIG.
Nothing here imports leadercheck: a client in another language does the same.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from typing import Any

from etcd3gw.client import Etcd3Client
from etcd3gw.lease import Lease
from storages import b64, etcd_write


def connect(address: list[Any], timeout: float) -> Etcd3Client:
    return Etcd3Client(host=address[0], port=int(address[1]), timeout=timeout, api_path="/v3/")


class Elector:
    """One service instance: its lease, its token, and the write it has decided on."""

    def __init__(self, config: dict[str, Any], fenced: bool) -> None:
        self.name = config["name"]
        self.fenced = fenced
        self.ttl = float(config["ttl_seconds"])
        self.leader_key = config["leader_key"]
        self.log_prefix = config["storage_log_prefix"]
        self.hi_key = config["storage_hi_key"]
        timeout = float(config.get("timeout", 2.0))
        self.store = connect(config["store"], timeout)
        self.keeper = connect(config["store"], timeout)  # the keep-alive thread's own
        self.storage = connect(config["storage"], timeout)
        self.guard = threading.Lock()
        self.lease: Any = None
        self.token = 0
        self.renewed_at = 0.0  # monotonic time of the last grant or refresh etcd confirmed
        self.pending = 0
        self.period = round(self.ttl / 10, 3)  # how often the keep-alive thread renews
        threading.Thread(target=self._keep_alive, daemon=True).start()

    # -- the background keep-alive ---------------------------------------------

    def _keep_alive(self) -> None:
        """Refresh the lease every tenth of its TTL while it is held; a refresh etcd
        refuses (the lease ran out while this process was stopped) ends the leadership."""
        while True:
            time.sleep(self.period)
            with self.guard:
                lease = self.lease if self.token else None
            if lease is None:
                continue
            try:
                ttl = Lease(lease.id, self.keeper).refresh()
            except Exception:  # the store unreachable: the local timer decides
                continue
            with self.guard:
                if self.lease is lease:
                    if ttl > 0:
                        self.renewed_at = time.monotonic()
                    else:
                        self.token = 0

    def _leads(self) -> bool:
        return bool(self.token) and time.monotonic() - self.renewed_at < self.ttl

    # -- the operations the harness sends ----------------------------------------

    def op_grant(self) -> dict[str, Any]:
        lease = self.store.lease(int(self.ttl))
        with self.guard:
            self.lease = lease
        return {"lease": lease.id}

    def op_acquire(self) -> dict[str, Any]:
        key = b64(self.leader_key)
        reply = self.store.transaction(
            {
                "compare": [
                    {"key": key, "result": "EQUAL", "target": "CREATE", "create_revision": "0"}
                ],
                "success": [
                    {
                        "request_put": {
                            "key": key,
                            "value": b64(self.name),
                            "lease": str(self.lease.id),
                        }
                    }
                ],
                "failure": [],
            }
        )
        if not reply.get("succeeded"):
            return {"granted": False}
        with self.guard:
            self.token = int(reply["header"]["revision"])
            self.renewed_at = time.monotonic()
        return {"granted": True, "token": self.token}

    def op_renew(self) -> dict[str, Any]:
        """The keep-alive renews on its own; asked, it refreshes at once."""
        ttl = self.lease.refresh() if self.lease is not None and self.token else -1
        with self.guard:
            if ttl > 0:
                self.renewed_at = time.monotonic()
            else:
                self.token = 0
        return {"renewed": ttl > 0, "ttl": ttl}

    def op_check(self) -> dict[str, Any]:
        """Does it still lead? Then it decides to write with its token."""
        with self.guard:
            leads = self._leads()
            self.pending = self.token if leads else 0
            return {"believes_leader": leads, "token": self.token}

    def op_write(self) -> dict[str, Any]:
        with self.guard:
            token, self.pending = self.pending, 0
        accepted = etcd_write(self.storage, self.log_prefix, self.hi_key, token, self.fenced)
        return {"accepted": accepted, "token": token}

    def op_belief(self) -> dict[str, Any]:
        """Read only: does it believe it leads now, and under which token."""
        with self.guard:
            leads = self._leads()
            return {"leader": leads, "token": self.token if leads else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=("fenced", "unfenced"), default="fenced")
    fenced = parser.parse_args().variant == "fenced"
    elector = Elector(json.loads(os.environ["LEADERCHECK_CONFIG"]), fenced)
    ready = {
        "ready": os.getpid(),
        "background": "keep-alive thread",
        "renews_every": elector.period,
    }
    print(json.dumps({"ok": True, "result": ready}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        try:
            result = getattr(elector, "op_" + request["op"])(**request.get("args", {}))
            reply: dict[str, Any] = {"ok": True, "result": result}
        except Exception as exc:  # told to the harness, which compares it as no reply
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()

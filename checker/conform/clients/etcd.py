"""A lease holder on real etcd, through its gRPC gateway (etcd3gw), and the storage it writes to.

Acquire is what etcd's own election recipes do: grant a lease with the TTL, then one
transaction that puts the leader key with that lease only if the key does not exist
(`create_revision == 0`); the key's create revision is the fencing token. Renew is one
keep-alive. The lease runs out in etcd's own time, and etcd deletes the key with it.

The storage is a key range in the same etcd, reached on a connection of its own (the
model's partitions and lost replies are between a node and the store, not the storage).
Every accepted write appends an entry to a log; the fenced storage is one transaction
that refuses a token below the highest it accepted (the seeds' "409 STALE TOKEN"), the
unfenced one appends whatever arrives.
"""

from __future__ import annotations

import base64
import time
import uuid
from typing import Any

from etcd3gw.client import Etcd3Client

from leadercheck.checker.conform.clients.lease_holder import LeaseHolder

TOKEN_DIGITS = 20  # tokens zero-padded so etcd's byte-wise compare orders them as numbers


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def padded(token: int) -> str:
    return str(token).zfill(TOKEN_DIGITS)


def etcd_client(address: list[Any], timeout: float) -> Etcd3Client:
    return Etcd3Client(host=address[0], port=int(address[1]), timeout=timeout, api_path="/v3/")


#: where etcd3gw's and python-etcd3's `Lock(name)` keep a lock: the key LOCK_PREFIX + name
LOCK_PREFIX = "/locks/"


class Keys:
    """Where one conformance run keeps its leader key and its storage, under `prefix`. The
    leader key is where the lock libraries keep the lock named `lock_name`, so a client
    built on one (etcd3gw's `Lock`) holds the very key the harness reads."""

    def __init__(self, prefix: str) -> None:
        self.lock_name = prefix.lstrip("/") + "leader"
        self.leader = LOCK_PREFIX + self.lock_name
        self.storage_hi = prefix + "storage/hi"
        self.storage_log = prefix + "storage/log/"


class Client(LeaseHolder):
    """One node: its lease and token in memory, a store connection and a storage connection."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.name: str = config["name"]
        self.ttl_seconds = int(config["ttl_seconds"])
        self.lease_seconds = float(config.get("lease_seconds", self.ttl_seconds))
        self.fencing = bool(config["fencing"])
        self.keys = Keys(config["prefix"])
        timeout = float(config.get("timeout", 2.0))
        self.store = etcd_client(config["store"], timeout)
        self.storage = etcd_client(config["storage"], timeout)
        self.lease: Any = None
        self.token = 0
        self.acquired_at = 0.0
        self.pending = 0

    def op_grant(self) -> dict[str, Any]:
        """The lease acquire will attach the key to (its TTL runs from now)."""
        self.lease = self.store.lease(int(self.ttl_seconds))  # whole seconds (binding)
        return {"lease": self.lease.id}

    def op_acquire(self) -> dict[str, Any]:
        """Put the leader key, with the lease, only if no key is there."""
        txn = {
            "compare": [
                {
                    "key": b64(self.keys.leader),
                    "result": "EQUAL",
                    "target": "CREATE",
                    "create_revision": "0",
                }
            ],
            "success": [
                {
                    "request_put": {
                        "key": b64(self.keys.leader),
                        "value": b64(self.name),
                        "lease": str(self.lease.id),
                    }
                }
            ],
            "failure": [],
        }
        reply = self.store.transaction(txn)
        if not reply.get("succeeded"):
            return {"granted": False}
        self.token = int(reply["header"]["revision"])
        self.acquired_at = time.monotonic()
        return {"granted": True, "token": self.token}

    def op_renew(self) -> dict[str, Any]:
        ttl = self.lease.refresh() if self.lease is not None else -1
        if ttl > 0:
            self.acquired_at = time.monotonic()
        return {"renewed": ttl > 0, "ttl": ttl}

    def op_write(self) -> dict[str, Any]:
        token, self.pending = self.pending, 0
        entry = {
            "request_put": {
                "key": b64(self.keys.storage_log + uuid.uuid4().hex),
                "value": b64(padded(token)),
            }
        }
        if not self.fencing:
            self.storage.transaction({"compare": [], "success": [entry], "failure": []})
            return {"accepted": True, "token": token}
        hi = {"request_put": {"key": b64(self.keys.storage_hi), "value": b64(padded(token))}}
        stale = {
            "key": b64(self.keys.storage_hi),
            "result": "GREATER",
            "target": "VALUE",
            "value": b64(padded(token)),
        }
        # a missing key fails a VALUE compare, so the first write is accepted too
        reply = self.storage.transaction(
            {"compare": [stale], "success": [], "failure": [hi, entry]}
        )
        return {"accepted": not reply.get("succeeded"), "token": token}

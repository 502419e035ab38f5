#!/usr/bin/env python3
"""A leader on kazoo's `Lock` recipe, used as its users use it, for `verify conform
--client` on the ZooKeeper election protocols (`zookeeper`; fenced: `zookeeper-multi`).

`zk.Lock(path, identifier)` creates `<path>/<uuid>__lock__<seq>` (EPHEMERAL_SEQUENTIAL,
holding the identifier) and holds the lock once its znode is the lowest, watching its
predecessor meanwhile: its watch is internal, so `await_watch` waits for the library to
have moved on (it holds the lock, or waits behind another znode). kazoo's
`lock.is_acquired` does not notice a lost session; as kazoo's documentation advises, a
state listener does, and the node then believes it leads no more. The token is the
znode's sequence number.

- `--variant fenced`: each write is one multi on the lock's session, a `check` of the
  lock's own znode and the append: ZooKeeper refuses the write of a holder whose znode
  went with its session (kazoo raises: the refusal is said as one).
- `--variant unfenced` (the bug): it writes because it held the lock when it last looked.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from jsonlines import Refused, run
from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import SessionExpiredError
from kazoo.recipe.lock import Lock
from storages import multi_accepted, zookeeper_multi

POLL = 0.02  # seconds between looks while waiting for the library to move


def seq_of(name: str) -> int:
    return int(name[-10:])


def connect(address: list[Any], session: float) -> KazooClient:
    retry = {"max_tries": -1, "delay": 0.05, "backoff": 1.5, "max_delay": 0.2}
    return KazooClient(hosts=f"{address[0]}:{int(address[1])}", timeout=session,
                       connection_retry=retry)  # fmt: skip


class LockLeader:
    """One node: a kazoo Lock taken in a thread of its own, a listener for a lost session."""

    def __init__(self, cfg: dict[str, Any], fenced: bool) -> None:
        self.name, self.path, self.log = cfg["name"], cfg["election_path"], cfg["storage_log_path"]
        self.timeout, self.event_wait = float(cfg["timeout"]), float(cfg["event_wait"])
        self.fenced = fenced
        self.lost = threading.Event()
        self.zk = connect(cfg["store"], float(cfg["session_seconds"]))
        self.zk.add_listener(self._state)
        self.zk.start_async()  # not waited for: a node restarted while cut off still starts
        self.storage = connect(cfg["storage"], 10.0)
        self.storage.start(timeout=self.timeout)
        self.lock: Lock | None = None
        self.watch = -1  # the predecessor it waits behind; -1: none

    def _state(self, state: str) -> None:
        if state == KazooState.LOST:
            self.lost.set()

    def _seq(self) -> int:
        return seq_of(self.lock.node) if self.lock is not None and self.lock.node else -1

    def _leads(self) -> bool:
        return self.lock is not None and self.lock.is_acquired and not self.lost.is_set()

    def _contend(self) -> Lock:
        """Start contending for the lock in a thread of its own; the Lock it holds."""
        lock = self.zk.Lock(self.path, identifier=self.name)
        threading.Thread(target=lock.acquire, daemon=True).start()
        return lock

    def op_create(self) -> dict[str, Any]:
        self.lost.clear()
        self.lock = lock = self._contend()
        deadline = time.monotonic() + self.timeout
        while lock.node is None and time.monotonic() < deadline:
            time.sleep(POLL)
        if lock.node is None:
            raise TimeoutError("the lock's znode was not created in time")
        return {"created": True, "seq": self._seq()}

    def _predecessor(self) -> int | None:
        """The sequence of the znode it waits behind (None: its own is lowest), as the
        recipe finds it; -1 when its own znode is gone."""
        names = self.zk.get_children(self.path)
        seqs = sorted(seq_of(n) for n in names if "__lock__" in n)
        if self._seq() not in seqs:
            return -1
        lower = [s for s in seqs if s < self._seq()]
        return lower[-1] if lower else None

    def op_check(self) -> dict[str, Any]:
        before = self._predecessor()
        if before is None:  # lowest: the library's thread takes the lock at once
            deadline = time.monotonic() + self.timeout
            while not self._leads() and time.monotonic() < deadline:
                time.sleep(POLL)
            return {"leads": self._leads(), "seq": self._seq()}
        if before < 0:
            return {"leads": False, "gone": True, "seq": self._seq()}
        self.watch = before
        return {"leads": False, "watches": before, "seq": self._seq()}

    def op_await_watch(self) -> dict[str, Any]:
        if self.watch < 0:
            return {"seen": False}
        deadline = time.monotonic() + self.event_wait
        while time.monotonic() < deadline:
            try:
                moved = self._leads() or self._predecessor() != self.watch
            except Exception:  # the session cut off: the library hears nothing either
                moved = False
            if moved:
                self.watch = -1
                return {"seen": True}
            time.sleep(POLL)
        return {"seen": False}

    def op_await_expiry(self) -> dict[str, Any]:
        seen = self.lost.wait(self.event_wait)
        if seen and self.lock is not None:
            self.lock.cancel()
            self.lock, self.watch = None, -1
        return {"seen": seen}

    def op_write(self) -> dict[str, Any]:
        epoch = self._seq()
        if not self.fenced:
            self.storage.create(f"{self.log}/w-", str(epoch).encode(), sequence=True)
            return {"accepted": True, "epoch": epoch}
        own = f"{self.path}/{self.lock.node if self.lock is not None else 'none'}"
        txn = zookeeper_multi(self.zk.transaction(), own, self.log, epoch)
        try:
            results = txn.commit()
        except SessionExpiredError as exc:
            raise Refused("its session expired: ZooKeeper refuses its writes") from exc
        return {"accepted": multi_accepted(results), "epoch": epoch}

    def op_belief(self) -> dict[str, Any]:
        leads = self._leads()
        return {"leader": leads, "token": self._seq() if leads else None}


def main() -> None:
    run(
        __doc__ or "",
        LockLeader,
        lambda leader: {"background": "session heartbeat thread (kazoo's)"},
    )


if __name__ == "__main__":
    main()

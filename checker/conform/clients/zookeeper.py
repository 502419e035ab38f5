"""A candidate of the ZooKeeper election recipe on real ZooKeeper (kazoo), and the storage.

The recipe as the model runs it: create an EPHEMERAL_SEQUENTIAL znode under the run's
/election (its sequence number is the node's epoch), list the children, lead if the
znode is the lowest, else watch the next lower one with `exists(watch=...)`. The session
goes through the node's fault proxy, so a cut or a SIGSTOP stops its heartbeats and
ZooKeeper expires it in its own time; kazoo keeps reconnecting (short, bounded backoff)
and hears SESSION_EXPIRED only when it gets through again, as the model says.

Events the ensemble sends the node (a session expired, a watch fired) are recorded by
kazoo's callbacks as they arrive; the node acts on one at the model's step for it
(`op_await_expiry`, `op_await_watch`), which waits a bounded time for the record.
kazoo drops every watch when its connection drops (it does not re-send them on
reconnect), so a watch dropped that way is set again once the session is back, and a
predecessor found gone then counts as the watch fired, which is what the model's
"delivered late over the session" amounts to with this client.

The storage is a directory in the same ZooKeeper, on a direct connection of its own
(the model cuts links to the store, never to the storage): each accepted write is a
sequential child of `log/` holding the epoch. Three ways to write (`fence`):
- "none": the entry is appended, whatever its epoch.
- "epoch" (`zookeeper-fencing`): read `hi` with its version, refuse an epoch below it,
  else set `hi` and append the entry in one transaction that holds only if `hi` is still
  at that version (retried if not). ZooKeeper cannot compare two numbers, so the
  comparison is this client's; the version makes it atomic.
- "znode" (`zookeeper-multi`): one multi on the node's own session, `check` of its own
  election znode (any version) and the append: ZooKeeper itself refuses the write of a
  leader whose znode expired with its session.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import BadVersionError, ConnectionLoss, NoNodeError, RolledBackError
from kazoo.protocol.states import EventType, WatchedEvent

PREFIX = "n_"  # /election/n_0000000007: kazoo appends ten digits
NO_EPOCH = b"-1"  # `hi` before any write (ZooKeeper's first sequence number is 0)
POLL = 0.02  # seconds between looks while waiting for an event


def seq_of(name: str) -> int:
    """The sequence number ZooKeeper appended to a child's name: its last ten digits."""
    return int(name[-10:])


class Paths:
    """Where one conformance run keeps its election and its storage, under `root`."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.election = root + "/election"
        self.storage = root + "/storage"
        self.hi = self.storage + "/hi"
        self.log = self.storage + "/log"


def kazoo_client(
    address: list[Any], session_seconds: float, logger: logging.Logger | None = None
) -> KazooClient:
    """A client that reconnects quickly and forever: a cut must not end its attempts, and
    after a heal it must get through within a fraction of a tick."""
    retry = {"max_tries": -1, "delay": 0.05, "backoff": 1.5, "max_delay": 0.2, "max_jitter": 0.2}
    return KazooClient(
        hosts=f"{address[0]}:{int(address[1])}",
        timeout=session_seconds,
        connection_retry=retry,
        command_retry={"max_tries": 3, "delay": 0.05, "max_delay": 0.2},
        logger=logger,
    )


class Client:
    """One candidate: its znode and role in memory, a session with the store, a storage link."""

    BACKGROUND = "session heartbeat thread (kazoo's)"  # a pause stops it

    def __init__(self, config: dict[str, Any]) -> None:
        self.name: str = config["name"]
        self.paths = Paths(config["root"])
        self.fence: str = config["fence"]
        self.timeout = float(config.get("timeout", 2.0))  # every blocking call, in seconds
        self.event_wait = float(config.get("event_wait", 1.5))
        self.seq = -1  # its znode's sequence number; -1: none
        self.leader = False
        self.watch = -1  # the predecessor it watches; -1: none
        self.lost = threading.Event()  # the session of its znode expired (kazoo LOST)
        self.live = threading.Event()  # connected, in a session (kazoo CONNECTED)
        self.fired = threading.Event()  # the watched znode's DELETED arrived
        self.dropped = threading.Event()  # kazoo dropped the watch with the connection
        self.store = kazoo_client(config["store"], float(config["session_seconds"]))
        self.store.add_listener(self._state_changed)
        # not waited for: a node restarted while cut off still starts, and create waits
        self.store.start_async()
        self.storage = kazoo_client(config["storage"], 10.0)
        self.storage.start(timeout=self.timeout)

    # -- what the ensemble tells it (kazoo's threads; nothing here may block) ---

    def _state_changed(self, state: str) -> None:
        if state == KazooState.CONNECTED:
            self.live.set()
            return
        self.live.clear()
        if state == KazooState.LOST:
            self.lost.set()

    def _watched(self, event: WatchedEvent) -> None:
        if event.type == EventType.DELETED and event.path == self._node(self.watch):
            self.fired.set()
        elif event.type == EventType.NONE:
            self.dropped.set()

    def _node(self, seq: int) -> str:
        return f"{self.paths.election}/{PREFIX}{seq:010d}"

    # -- the recipe's steps ----------------------------------------------------

    def op_create(self) -> dict[str, Any]:
        """The EPHEMERAL_SEQUENTIAL znode, holding the node's name, in the current session.
        Right after an expiry kazoo is still opening the new session (calls fail with
        SessionExpiredError until it has): the node waits for it, bounded."""
        if not self.live.wait(self.timeout):
            raise ConnectionLoss("no session with the store")
        self.lost.clear()
        path = self.store.create_async(
            f"{self.paths.election}/{PREFIX}", self.name.encode(), ephemeral=True, sequence=True
        ).get(timeout=self.timeout)
        self.seq, self.leader, self.watch = seq_of(path), False, -1
        # the timeout ZooKeeper granted (kazoo keeps it privately), for the timeline
        granted = getattr(self.store, "_session_timeout", None)
        return {"created": True, "seq": self.seq, "session_ms": granted}

    def op_check(self) -> dict[str, Any]:
        """List the children: lead if its znode is the lowest, else watch the next lower
        one (listed again if that one is gone before the watch is set, as the recipe says)."""
        deadline = time.monotonic() + self.timeout
        while True:
            names = self.store.get_children_async(self.paths.election).get(timeout=self.timeout)
            seqs = sorted(seq_of(n) for n in names if n.startswith(PREFIX))
            if self.seq not in seqs:
                return {"leads": False, "gone": True, "seq": self.seq}
            lower = [s for s in seqs if s < self.seq]
            if not lower:
                self.leader = True
                return {"leads": True, "seq": self.seq}
            self.watch = lower[-1]
            self.fired.clear()
            self.dropped.clear()
            found = self.store.exists_async(self._node(self.watch), watch=self._watched)
            if found.get(timeout=self.timeout) is not None:
                return {"leads": False, "watches": self.watch, "seq": self.seq}
            if time.monotonic() >= deadline:
                raise TimeoutError(f"the predecessor of {self.seq} kept vanishing")

    def op_belief(self) -> dict[str, Any]:
        """Read only, asked after every step: does it believe it leads (its last check
        found its znode lowest, and no expiry has been heard since), under which znode."""
        leads = self.leader and not self.lost.is_set()
        return {"leader": leads, "token": self.seq if leads else None}

    def op_await_expiry(self) -> dict[str, Any]:
        """SESSION_EXPIRED heard (on reconnecting): the node drops its znode and role."""
        seen = self.lost.wait(self.event_wait)
        if seen:
            self.seq, self.leader, self.watch = -1, False, -1
        return {"seen": seen}

    def op_await_watch(self) -> dict[str, Any]:
        """The watch on the predecessor fired: the node will list the children again."""
        if self.watch < 0:
            return {"seen": False}  # it watches nothing, so nothing can fire
        deadline = time.monotonic() + self.event_wait
        seen = self.fired.is_set()
        while not seen and time.monotonic() < deadline:
            if self.dropped.is_set() and self.store.connected:
                self.dropped.clear()  # set it again on the session that is back
                found = self.store.exists_async(self._node(self.watch), watch=self._watched)
                if found.get(timeout=self.timeout) is None:
                    self.fired.set()
            seen = self.fired.wait(POLL)
        if seen:
            self.watch = -1
        return {"seen": seen}

    def op_write(self) -> dict[str, Any]:
        """Write to the storage with its znode's sequence number as epoch."""
        epoch = self.seq
        entry = f"{self.paths.log}/w-"
        if self.fence == "znode":
            return self._write_in_multi(epoch, entry)
        if self.fence == "none":
            self.storage.create_async(entry, str(epoch).encode(), sequence=True).get(
                timeout=self.timeout
            )
            return {"accepted": True, "epoch": epoch}
        deadline = time.monotonic() + self.timeout
        while True:
            data, stat = self.storage.get_async(self.paths.hi).get(timeout=self.timeout)
            if epoch < int(data):
                return {"accepted": False, "epoch": epoch, "hi": int(data)}
            txn = self.storage.transaction()
            txn.set_data(self.paths.hi, str(epoch).encode(), version=stat.version)
            txn.create(entry, str(epoch).encode(), sequence=True)
            results = txn.commit_async().get(timeout=self.timeout)
            failed = [r for r in results if isinstance(r, Exception)]
            if not failed:
                return {"accepted": True, "epoch": epoch}
            if not all(isinstance(r, BadVersionError | RolledBackError) for r in failed):
                raise failed[0]
            if time.monotonic() >= deadline:  # `hi` moved under it every time
                raise TimeoutError("the storage's hi kept changing")

    def _write_in_multi(self, epoch: int, entry: str) -> dict[str, Any]:
        """The append and the check of its own znode, one multi on its session: the server
        refuses it (NoNode on the check, the append rolled back) once the znode is gone."""
        if not self.live.wait(self.timeout):
            raise ConnectionLoss("no session with the store")
        txn = self.store.transaction()
        txn.check(self._node(epoch), -1)
        txn.create(entry, str(epoch).encode(), sequence=True)
        results = txn.commit_async().get(timeout=self.timeout)
        failed = [r for r in results if isinstance(r, Exception)]
        if not failed:
            return {"accepted": True, "epoch": epoch}
        if isinstance(results[0], NoNodeError):
            return {"accepted": False, "epoch": epoch, "refused": "its znode is gone"}
        raise failed[0]

    def close(self) -> None:
        for zk in (self.store, self.storage):
            try:
                zk.stop()
                zk.close()
            except Exception:  # closing is best effort: the process is ending anyway
                pass

#!/usr/bin/env python3
"""A leader elector on ZooKeeper (the recipe Curator's LeaderLatch runs), written as
services write it, to be put under the model's schedules by `verify conform --client`
(see the README's "Your own client").

It joins the election with an EPHEMERAL_SEQUENTIAL znode, leads if its znode is the
lowest, else watches the next lower one and looks again when that one is deleted. Its
session is kept alive by kazoo's connection thread in the background, so a pause of the
process (SIGSTOP) stops the heartbeats for real and ZooKeeper expires the session, and
the znode with it, in its own time.

Two variants:

- `--variant multi` (correct): each write is one ZooKeeper multi, `check` of its own
  znode and the append to the storage: once its session expired, ZooKeeper refuses it.
- `--variant unfenced` (the bug): it writes because it last found its znode lowest. A
  pause longer than the session timeout, another node taking over and writing, and the
  late write lands after the newer leader's.

It speaks the harness's protocol: one ready line, then one answer line per request line.
Its configuration is the JSON in LEADERCHECK_CONFIG. Nothing here imports leadercheck.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import threading
import time
from typing import Any

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import ConnectionLoss
from kazoo.protocol.states import EventType, WatchedEvent
from storages import multi_accepted, zookeeper_multi

POLL = 0.02  # seconds between looks while waiting for an event


def client(address: list[Any], session: float) -> KazooClient:
    """Reconnects quickly and forever, so that after a cut heals it is back within a tick."""
    retry = {"max_tries": -1, "delay": 0.05, "backoff": 1.5, "max_delay": 0.2}
    return KazooClient(
        hosts=f"{address[0]}:{int(address[1])}",
        timeout=session,
        connection_retry=retry,
        command_retry={"max_tries": 3, "delay": 0.05, "max_delay": 0.2},
        logger=logging.getLogger("elector"),
    )


class Elector:
    """One candidate: its znode, whether it leads, what it watches; a session and a
    storage connection."""

    def __init__(self, config: dict[str, Any], multi: bool) -> None:
        self.name = config["name"]
        self.multi = multi
        self.election = config["election_path"]
        self.prefix = config["znode_prefix"]
        self.log = config["storage_log_path"]
        self.timeout = float(config.get("timeout", 2.0))
        self.event_wait = float(config.get("event_wait", 1.5))
        self.seq = -1
        self.leader = False
        self.watch = -1
        self.lost = threading.Event()  # its session expired
        self.live = threading.Event()  # connected, in a session
        self.fired = threading.Event()  # the watched znode was deleted
        self.dropped = threading.Event()  # the watch went with a dropped connection
        self.store = client(config["store"], float(config["session_seconds"]))
        self.store.add_listener(self._state)
        self.store.start_async()
        self.storage = client(config["storage"], 10.0)
        self.storage.start(timeout=self.timeout)

    def _state(self, state: str) -> None:
        if state == KazooState.CONNECTED:
            self.live.set()
            return
        self.live.clear()
        if state == KazooState.LOST:
            self.lost.set()

    def _watched(self, event: WatchedEvent) -> None:
        if event.type == EventType.DELETED and event.path == self._path(self.watch):
            self.fired.set()
        elif event.type == EventType.NONE:
            self.dropped.set()

    def _path(self, seq: int) -> str:
        return f"{self.election}/{self.prefix}{seq:010d}"

    def op_create(self) -> dict[str, Any]:
        if not self.live.wait(self.timeout):
            raise ConnectionLoss("no session with the ensemble")
        self.lost.clear()
        path = self.store.create_async(
            f"{self.election}/{self.prefix}", self.name.encode(), ephemeral=True, sequence=True
        ).get(timeout=self.timeout)
        self.seq, self.leader, self.watch = int(path.rsplit("_", 1)[1]), False, -1
        return {"created": True, "seq": self.seq}

    def op_check(self) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            names = self.store.get_children_async(self.election).get(timeout=self.timeout)
            seqs = sorted(int(n.rsplit("_", 1)[1]) for n in names if n.startswith(self.prefix))
            if self.seq not in seqs:
                return {"leads": False, "gone": True}
            lower = [s for s in seqs if s < self.seq]
            if not lower:
                self.leader = True
                return {"leads": True, "seq": self.seq}
            self.watch = lower[-1]
            self.fired.clear()
            self.dropped.clear()
            found = self.store.exists_async(self._path(self.watch), watch=self._watched)
            if found.get(timeout=self.timeout) is not None:
                return {"leads": False, "watches": self.watch}
        raise TimeoutError("the predecessor kept vanishing")

    def op_await_expiry(self) -> dict[str, Any]:
        seen = self.lost.wait(self.event_wait)
        if seen:
            self.seq, self.leader, self.watch = -1, False, -1
        return {"seen": seen}

    def op_await_watch(self) -> dict[str, Any]:
        if self.watch < 0:
            return {"seen": False}
        deadline = time.monotonic() + self.event_wait
        seen = self.fired.is_set()
        while not seen and time.monotonic() < deadline:
            if self.dropped.is_set() and self.store.connected:  # kazoo does not re-set it
                self.dropped.clear()
                found = self.store.exists_async(self._path(self.watch), watch=self._watched)
                if found.get(timeout=self.timeout) is None:
                    self.fired.set()
            seen = self.fired.wait(POLL)
        if seen:
            self.watch = -1
        return {"seen": seen}

    def op_write(self) -> dict[str, Any]:
        epoch, entry = self.seq, f"{self.log}/w-"
        if not self.multi:  # the bug: it led when it last looked
            self.storage.create_async(entry, str(epoch).encode(), sequence=True).get(
                timeout=self.timeout
            )
            return {"accepted": True, "epoch": epoch}
        if not self.live.wait(self.timeout):
            raise ConnectionLoss("no session with the ensemble")
        txn = zookeeper_multi(self.store.transaction(), self._path(epoch), self.log, epoch)
        results = txn.commit_async().get(timeout=self.timeout)
        return {"accepted": multi_accepted(results), "epoch": epoch}

    def op_belief(self) -> dict[str, Any]:
        leads = self.leader and not self.lost.is_set()
        return {"leader": leads, "token": self.seq if leads else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=("multi", "unfenced"), default="multi")
    logging.basicConfig(level=logging.ERROR, stream=sys.stderr)
    config = json.loads(os.environ["LEADERCHECK_CONFIG"])
    elector = Elector(config, parser.parse_args().variant == "multi")
    ready = {"ready": os.getpid(), "background": "session heartbeat thread (kazoo's)"}
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

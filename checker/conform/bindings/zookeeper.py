"""The ZooKeeper election recipe on a real ZooKeeper 3.8 (`zookeeper`, `zookeeper-fencing`,
`zookeeper-multi`).

Each node's client (clients/zookeeper.py) holds a kazoo session through its own fault
proxy, with the model's session timeout in real seconds (Timing: `timeout` ticks).
create, check and write are the node's calls; the two events the ensemble sends a node
(`expired`, `watch fires`) run on the node they are sent to, as a bounded wait for
kazoo to have delivered them. The facts are the run's /election children (owner and
sequence number, in order) and the storage's log of accepted epochs, read on a direct
connection; ZooKeeper's sequence numbers are numbered in order of first appearance, as
the model numbers its znodes z1, z2, ...
"""

from __future__ import annotations

import contextlib
import logging
import re
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from leadercheck.checker.conform.bindings.base import NO_REPLY, Binding, View, note_of
from leadercheck.checker.conform.bindings.lease_facts import TokenNumbers
from leadercheck.checker.conform.clients.zookeeper import (
    NO_EPOCH,
    PREFIX,
    Paths,
    kazoo_client,
    seq_of,
)
from leadercheck.checker.conform.replies import Fields
from leadercheck.checker.conform.world import Facts, Timing, World
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.model import Action

CALLS = {
    "create": ["create"],
    "check": ["check"],
    "write": ["write"],
    "expired": ["await_expiry"],
    "watch fires": ["await_watch"],
}

#: a sequential child's name, whoever named it: this project's `n_0000000007`, kazoo's
#: Lock and Election `<uuid>__lock__0000000007`, Curator's `_c_<uuid>-latch-0000000007`
SEQUENTIAL = re.compile(r"[_-]\d{10}$")
READER_SESSION = 10.0  # seconds: the facts reader's own session, never expired by a run
#: the reader's kazoo log: its reconnects (a server still coming up) are not the run's news
QUIET = logging.getLogger("leadercheck.conform.zookeeper.reader")
QUIET.setLevel(logging.ERROR)


def election_fact(znodes: list[tuple[int, str]]) -> str:
    """/election's children as (number, owner), in sequence order, as the model tells them."""
    if not znodes:
        return "/election empty"
    return "/election: " + ", ".join(f"z{seq} {owner}" for seq, owner in znodes)


def storage_fact(hi: int, stale: bool) -> str:
    text = f"highest epoch {hi}" if hi else "no writes"
    return text + (", a stale write accepted" if stale else "")


#: how each protocol's storage decides a write (clients/zookeeper.py)
FENCES = {"zookeeper": "none", "zookeeper-fencing": "epoch", "zookeeper-multi": "znode"}
SESSION_RANGE = (0.4, 20.0)  # seconds: 2 and 100 times the server's tickTime of 200 ms


class ZooKeeperElection(Binding):
    system = "zookeeper"
    replies: Mapping[str, Fields] = {
        "create": {"created": "bool", "seq": "int?"},
        "check": {"leads": "bool", "watches": "int?"},
        "await_expiry": {"seen": "bool"},
        "await_watch": {"seen": "bool"},
        "write": {"accepted": "bool", "epoch": "int?"},
    }
    refusals: Mapping[str, Mapping[str, Any]] = {
        "create": {"created": False},
        "write": {"accepted": False},
    }
    expiry_lag = 0.4  # the server expires sessions at its ticks (tickTime 200 ms), kazoo hears
    user_clients = True

    def __init__(self, protocol: str, params: Mapping[str, int]) -> None:
        super().__init__(protocol, params)
        self.fence = FENCES[protocol]
        self.paths = Paths(_fresh_root())
        self.seqs = TokenNumbers()

    def client_config(self, world: World, node: str) -> dict[str, Any]:
        timing = world.timing
        return {
            "name": node,
            "store": list(world.link_address(node)),
            "storage": list(world.storage[0]),
            "session_seconds": timing.ttl_seconds(int(self.params["timeout"])),
            "fence": self.fence,
            "root": self.paths.root,
            # where a client under test keeps what the harness reads (the README's protocol)
            "election_path": self.paths.election,
            "znode_prefix": PREFIX,
            "storage_log_path": self.paths.log,
            "timeout": timing.call_timeout / 2,
            # an event's wait must end before the harness stops waiting for its answer
            "event_wait": min(timing.settle, timing.call_timeout / 2),
        }

    def check_timing(self, timing: Timing) -> None:
        """The server grants sessions of 0.4 to 20 s (servers.py): refuse a mapping it
        would clamp, which would be a wrong mapping nobody asked for."""
        super().check_timing(timing)
        seconds = timing.ttl_seconds(int(self.params["timeout"]))
        if not SESSION_RANGE[0] <= seconds <= SESSION_RANGE[1]:
            raise LeadercheckError(
                f"zookeeper: a session timeout of {self.params['timeout']} ticks is"
                f" {seconds:g} s, outside the {SESSION_RANGE[0]:g}-{SESSION_RANGE[1]:g} s the"
                " server grants; choose another --tick"
            )

    def reset(self, world: World) -> None:
        """A fresh root per run, with /election, the storage log and `hi` at no epoch."""
        self.paths = Paths(_fresh_root())
        self.seqs = TokenNumbers()
        wait = world.timing.call_timeout
        with _reader(world) as zk:
            zk.create_async(self.paths.election, makepath=True).get(timeout=wait)
            zk.create_async(self.paths.log, makepath=True).get(timeout=wait)
            zk.create_async(self.paths.hi, NO_EPOCH).get(timeout=wait)

    def calls(self, action: Action) -> list[str] | None:
        return CALLS.get(action.name)

    def outcome(self, op_reply: Mapping[str, Any]) -> str:
        if not op_reply.get("ok"):
            return NO_REPLY
        op, result = op_reply.get("op", ""), op_reply.get("result") or {}
        if op == "create":
            return "created" if result.get("created") else "not created"
        if op == "check":
            if result.get("leads"):
                return "leads"
            if "watches" in result:
                return f"watches z{self.seqs.of(int(result['watches']))}"
            return "its znode is gone"
        if op == "write":
            return "accepted" if result.get("accepted") else "rejected"
        if op in ("await_expiry", "await_watch"):
            return "seen" if result.get("seen") else "not seen"
        return "done"

    def expected_outcome(self, action: Action, before: View, after: View) -> str:
        if action.name == "create":
            return "created"
        if action.name == "check":
            node = after[action.actor]
            return "leads" if node["role"] == "leader" else f"watches z{node['watches']}"
        if action.name == "write":
            return "accepted" if "accepted" in note_of(action) else "rejected"
        if action.name in ("expired", "watch fires"):
            return "seen"  # the model delivers the event at this step
        return "done"

    def model_facts(self, view: View) -> Facts:
        znodes = [(int(z["seq"]), str(z["owner"])) for z in view["store"]["znodes"]]
        storage = view["storage"]
        return {
            "store": election_fact(znodes),
            "storage": storage_fact(
                int(storage["hi_epoch"]), bool(storage["stale_write_accepted"])
            ),
        }

    def real_facts(self, world: World) -> Facts:
        wait = world.timing.call_timeout
        with _reader(world) as zk:
            names = zk.get_children_async(self.paths.election).get(timeout=wait)
            znodes = []
            for seq, name in sorted((seq_of(n), n) for n in names if SEQUENTIAL.search(n)):
                try:
                    owner, _ = zk.get_async(f"{self.paths.election}/{name}").get(timeout=wait)
                except NoNodeError:  # deleted between the listing and the read: it is gone
                    continue
                znodes.append((self.seqs.of(seq), owner.decode()))
            log = sorted(zk.get_children_async(self.paths.log).get(timeout=wait))
            entries = [zk.get_async(f"{self.paths.log}/{e}") for e in log]  # w-<seq>: in order
            epochs = [int(entry.get(timeout=wait)[0]) for entry in entries]
        hi, stale = 0, False
        for epoch in epochs:
            number = self.seqs.of(epoch)
            stale = stale or number < hi
            hi = max(hi, number)
        return {"store": election_fact(znodes), "storage": storage_fact(hi, stale)}


def _fresh_root() -> str:
    return f"/leadercheck/{uuid.uuid4().hex[:12]}"


@contextlib.contextmanager
def _reader(world: World) -> Iterator[KazooClient]:
    """A direct session for one read of the facts, closed at once: the binding has no end
    of run to close a long-lived one at, and a loopback connect costs ~15 ms."""
    zk = kazoo_client(list(world.store[0]), READER_SESSION, QUIET)
    zk.start(timeout=world.timing.call_timeout)
    try:
        yield zk
    finally:
        zk.stop()
        zk.close()

"""Redlock (examples/redlock.py: `redlock`, `redlock-gc-pause`, `redlock-timing-ok`) on five
real Redis masters.

Each client is a process of its own (clients/redis.py) with a direct connection to each of
the five masters: the model cuts no client from a master and loses no reply (its fault
budgets are pauses and clock jumps only), so no proxy stands between them; the harness's
one proxy per node is opened but never used. A model `SET NX` on master M is one
`SET key value NX PX ttl` on the real master M; `check`, `write` and `release` are the
client's own. The PX is the model's ttl in ticks, in real milliseconds (Timing); the drift
margin is the model's drift in ticks, unscaled.

Faults. A pause is SIGSTOP of the client's process (the harness's). A clock jump on a
master is that master's own wall clock jumping: each master the harness starts runs with
a shim preloaded (clocks.WallClock, wallclock.c) that adds the offset in its clock file
to the wall clock, and Redis keeps a key's expiry as an absolute Unix time compared with
that clock. The model's jump ("its key expires at once") moves the clock the whole TTL
ahead, on that master alone; every key there with an expiry sees it (the storage, on A,
has none). Servers given with --endpoint are not ours to preload: there the jump is
emulated on the lock key, its expiry brought the TTL earlier (no earlier than 1 ms from
now, so that Redis's own expiry removes the key), and the call's result says which. The
jump runs in an extra process, "clock", which is no model node and is never paused. The
fact compared afterwards is the real one: the master's GET finds no key.

What reproduces: every committed counterexample, for real. `redlock-gc-pause.json` (a
checked write, SIGSTOP, the keys expire in Redis, the other client takes the lock and
writes, the late write lands), `redlock.json` (C's key expires early, both clients count
three OKs and believe they hold the lock) and `redlock.no-stale-write.json` (the same, then
both write) conform, the clock jump made real as above. `redlock-timing-ok` has no
counterexample (every claim HOLDS); any of its schedules can be run.

Facts: per master, who holds the lock key (a real GET; the value names its client); the
storage's log of accepted writes, told as the model tells its storage (the highest ghost
epoch, and whether a write of an older one came after it); and how each call ended.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Mapping
from typing import Any

import redis

from leadercheck.checker.conform.bindings.base import Binding, View, note_of
from leadercheck.checker.conform.clients.redis import MASTERS, Keys, connect, owner_of, text_of
from leadercheck.checker.conform.replies import Fields
from leadercheck.checker.conform.world import Facts, World
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.model import Action

CLIENTS = ("n1", "n2")  # the model's Redlock has two clients
CLOCK = "clock"  # the process that plays the masters' clocks (not a model node)
LOCAL = {"check": "check", "write": "write", "release": "release"}


def master_fact(owner: str | None) -> str:
    return f"held by {owner}" if owner else "free"


def storage_fact(hi: int, stale: bool) -> str:
    text = f"highest lock epoch {hi}" if hi else "no writes"
    return text + (", a stale write accepted" if stale else "")


def log_fact(epochs: list[int]) -> str:
    """The accepted writes' ghost epochs, in the order accepted, as the model's storage says."""
    hi, stale = 0, False
    for epoch in epochs:
        stale = stale or epoch < hi
        hi = max(hi, epoch)
    return storage_fact(hi, stale)


def set_words(ok: bool, holder: str | None, last: bool, oks: int, held: bool) -> str:
    """How one SET NX ended; after the fifth master, also what the OKs came to."""
    text = "OK" if ok else f"taken by {holder}"
    if last:
        text += f"; {oks} of {len(MASTERS)} OK: " + ("held" if held else "failed")
    return text


def unlocked_words(masters: str) -> str:
    return "deleted on " + (", ".join(masters) if masters else "none")


class Redlock(Binding):
    system = "redis"
    replies: Mapping[str, Fields] = {
        **{
            f"set_{m}": {"set": "bool", "holder": "str?", "oks": "int?", "held": "bool?"}
            for m in MASTERS
        },
        "check": {"valid": "bool"},
        "write": {"accepted": "bool"},
        "release": {"unlocked": "str?"},
    }
    refusals: Mapping[str, Mapping[str, Any]] = {"write": {"accepted": False}}
    #: "clock jump" is made real by the binding's own op (jump_<M>), the rest by the harness
    faults = frozenset({"pause", "resume", "tick", "clock jump"})
    wall_clocks = True
    endpoints = len(MASTERS)  # the five masters, in order A..E; the storage is on A
    user_clients = True  # n1 and n2 (the clock process is always the harness's own)
    harness_nodes = (CLOCK,)

    def __init__(self, protocol: str, params: Mapping[str, int]) -> None:
        super().__init__(protocol, params)
        self.prefix = f"leadercheck:{uuid.uuid4().hex[:12]}:"

    @property
    def nodes(self) -> tuple[str, ...]:
        """The two clients, and the clock process (started like a node, never one)."""
        return (*CLIENTS, CLOCK)

    def caller(self, action: Action) -> str | None:
        if action.name == "clock jump":
            return CLOCK
        return action.actor if action.actor in CLIENTS else None

    def client_config(self, world: World, node: str) -> dict[str, Any]:
        ttl_ms = world.timing.ttl_seconds(int(self.params["ttl"])) * 1000
        keys = Keys(self.prefix)
        return {
            "name": node,
            "masters": [list(a) for a in world.store[: len(MASTERS)]],
            "storage": list(world.storage[0]),
            "ttl_ms": max(1, math.ceil(ttl_ms)),
            "drift_ms": round(int(self.params["drift"]) * world.timing.tick * 1000),
            "prefix": self.prefix,
            # where a client under test keeps what the harness reads (the README's protocol)
            "lock_key": keys.lock,
            "storage_log_key": keys.storage_log,
            "epoch_key": keys.ghost,
            "timeout": world.timing.call_timeout / 2,
            # the masters' wall-clock files, for the clock process (none: servers not ours)
            "clock_files": [str(c.path) for c in getattr(world.server, "clocks", ())],
        }

    def reset(self, world: World) -> None:
        if len(world.store) < len(MASTERS):
            raise LeadercheckError(
                f"Redlock needs {len(MASTERS)} Redis masters, not {len(world.store)}"
            )
        self.prefix = f"leadercheck:{uuid.uuid4().hex[:12]}:"  # fresh keys per run
        world.extra.pop("readers", None)

    def calls(self, action: Action) -> list[str] | None:
        if action.name == "SET NX" and action.target in tuple(MASTERS):
            return [f"set_{action.target}"]
        if action.name == "clock jump" and action.actor in tuple(MASTERS):
            return [f"jump_{action.actor}"]
        op = LOCAL.get(action.name)
        return [op] if op else None

    def outcome(self, op_reply: Mapping[str, Any]) -> str:
        op, result = op_reply.get("op", ""), op_reply.get("result") or {}
        if op.startswith("set_"):
            last = "held" in result
            return set_words(
                bool(result["set"]),
                result.get("holder"),
                last,
                int(result.get("oks", 0)),
                bool(result.get("held")),
            )
        if op.startswith("jump_"):
            return f"{result['expired']}'s key expires at once" if result["expired"] else "no key"
        if op == "check":
            return "lock valid" if result["valid"] else "lock expired"
        if op == "write":
            return "accepted" if result["accepted"] else "rejected"
        if op == "release":
            return unlocked_words(result["unlocked"])
        return "done"

    def expected_outcome(self, action: Action, before: View, after: View) -> str:
        if action.name == "SET NX":
            holder = before[str(action.target)]["owner"]
            client = before[action.actor]
            last = int(client["asked"]) == len(MASTERS) - 1
            oks = int(client["oks"]) + (holder is None)
            return set_words(
                holder is None, holder, last, oks, int(after[action.actor]["validity"]) > 0
            )
        if action.name == "clock jump":
            owner = before[action.actor]["owner"]
            return f"{owner}'s key expires at once" if owner else "no key"
        if action.name == "check":
            return "lock valid"  # the model checks only while its validity runs
        if action.name == "write":
            return "accepted" if note_of(action).startswith("accepted") else "rejected"
        if action.name == "release":
            return unlocked_words("".join(m for m in MASTERS if before[m]["owner"] == action.actor))
        return "done"

    def model_facts(self, view: View) -> Facts:
        facts = {m: master_fact(view[m]["owner"]) for m in MASTERS}
        storage = view["storage"]
        facts["storage"] = storage_fact(
            int(storage["hi_epoch"]), bool(storage["stale_write_accepted"])
        )
        return facts

    def _readers(self, world: World) -> list[redis.Redis]:
        """The harness's own connections: one per master, then one to the storage."""
        if "readers" not in world.extra:
            timeout = world.timing.call_timeout
            addresses = [*world.store[: len(MASTERS)], world.storage[0]]
            world.extra["readers"] = [connect(list(a), timeout) for a in addresses]
        readers: list[redis.Redis] = world.extra["readers"]
        return readers

    def real_facts(self, world: World) -> Facts:
        *masters, storage = self._readers(world)
        keys = Keys(self.prefix)
        facts = {
            m: master_fact(owner_of(r.get(keys.lock)))
            for m, r in zip(MASTERS, masters, strict=True)
        }
        log = storage.lrange(keys.storage_log, 0, -1)  # "<ghost epoch>:<lock value>" each
        facts["storage"] = log_fact([int(text_of(entry).split(":", 1)[0]) for entry in log])
        return facts

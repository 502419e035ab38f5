"""A lock on one real Redis (`redis-lock`, `redis-lock-fencing`), as redis-py's `Lock`
takes it, and the storage on a second Redis.

Two instances are started, without persistence: the first holds the lock (each node
reaches it through its own fault proxy), the second is the storage (reached directly).
acquire is `SET NX PX` (the PX the model's ttl in ticks, in real milliseconds), renew the
extend script, check `GET` (owned()); the token is drawn from a counter on the storage.
The model's store crash is made real: the first instance is SIGKILLed, and its restart
starts it again on its port, empty, as Redis without `appendfsync always` comes back.

Facts: who holds the lock key, under which token (its value is `<node>:<token>:<id>`: a
holder draws its token before it sets the key, so a lost reply to the SET leaves a key
that still says whose it is), or that the lock's Redis is down; and the storage's log of
accepted tokens, in the order accepted.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

import redis

from leadercheck.checker.conform.bindings.lease_facts import (
    STORE_DOWN,
    LeaseBinding,
    TokenNumbers,
    lease_fact,
    storage_fact,
)
from leadercheck.checker.conform.clients.redis_lock import connect
from leadercheck.checker.conform.world import Facts, Timing, World
from leadercheck.checker.errors import LeadercheckError


class RedisLock(LeaseBinding):
    system = "redis"
    user_clients = True
    endpoints = 2  # the lock's Redis, then the storage's
    instances = 2
    store_crashes = True
    expiry_lag = 0.0  # a GET after the PX finds no key (Redis expires on access too)
    CALLS = {
        "acquire": ["acquire"],
        "renew": ["renew"],
        "check": ["check"],
        "write": ["write"],
    }

    def __init__(self, protocol: str, params: Mapping[str, int]) -> None:
        super().__init__(protocol, params)
        self.fencing = protocol == "redis-lock-fencing"
        self.prefix = _fresh_prefix()
        self.tokens = TokenNumbers()

    @property
    def client_module(self) -> str:
        return "redis_lock"

    def split_endpoints(
        self, endpoints: list[tuple[str, int]]
    ) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
        return endpoints[:1], endpoints[1:2]

    def client_config(self, world: World, node: str) -> dict[str, Any]:
        ttl = world.timing.ttl_seconds(int(self.params["ttl"]))
        return {
            "name": node,
            "store": list(world.link_address(node)),
            "storage": list(world.storage[0]),
            "ttl_ms": round(ttl * 1000),
            "fencing": self.fencing,
            # where a client under test keeps what the harness reads (the README's protocol)
            "lock_key": self.prefix + "lock",
            "storage_counter_key": self.prefix + "storage:counter",
            "storage_hi_key": self.prefix + "storage:hi",
            "storage_log_key": self.prefix + "storage:log",
            "timeout": world.timing.call_timeout / 2,
        }

    def check_timing(self, timing: Timing) -> None:
        super().check_timing(timing)
        if timing.ttl_seconds(int(self.params["ttl"])) < 0.001:
            raise LeadercheckError("redis: a PX below 1 ms cannot be set; give a longer --tick")

    def reset(self, world: World) -> None:
        self.prefix = _fresh_prefix()  # a fresh key range per run
        self.tokens = TokenNumbers()
        self.holds_as = {}

    def real_facts(self, world: World) -> Facts:
        wait = world.timing.call_timeout
        storage = connect(list(world.storage[0]), wait)
        try:
            log = storage.lrange(self.prefix + "storage:log", 0, -1)
        finally:
            storage.close()
        accepted = storage_fact(self.tokens.of(int(t)) for t in log)
        store = connect(list(world.store[0]), wait)
        try:
            value = store.get(self.prefix + "lock")
        except redis.ConnectionError:
            return {"store": STORE_DOWN, "storage": accepted}  # crashed, not yet restarted
        finally:
            store.close()
        if value is None:
            return {"store": lease_fact(None, 0), "storage": accepted}
        text = value.decode(errors="replace") if isinstance(value, bytes) else str(value)
        holder, token = holding(text)
        held = lease_fact(self.holder_of(holder), self.tokens.of(token) if token else 0)
        return {"store": held, "storage": accepted}


def holding(value: str) -> tuple[str, int]:
    """The holder and token a lock value names: `<node>:<token>:<anything>` (redis-py's
    `acquire(token=...)` sets it); any other value names no node and no token."""
    parts = value.split(":", 2)
    if len(parts) == 3 and parts[1].isdigit():
        return parts[0], int(parts[1])
    return value, 0


def _fresh_prefix() -> str:
    return f"leadercheck:{uuid.uuid4().hex[:12]}:"

"""The lease protocols on a real 3-member etcd cluster (`lease-no-fencing`, `lease-fencing`,
`lease-timing`).

Each node's client (clients/etcd.py) reaches one member through its own fault proxy;
acquire is a lease grant and then the put-if-absent transaction (a lost reply loses the
transaction's answer, after etcd applied it); renew is a keep-alive; the check before a
write is local, as in the model. The lease's TTL is the model's ttl in ticks, in real
seconds (Timing). The fenced and the unfenced storage are the same log in etcd, written
by one transaction that does or does not compare the token with the highest accepted.

`lease-timing` is one lease term: n1 holds the lease from tick 0 (taken before step 0)
and counts its own copy for `lease` ticks of its own clock, which libfaketime sets back a
tick at each of the model's `drift` steps (clocks.py), so a slow clock is real: n1's
check says it still leads after etcd let the lease go, as the model says.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Mapping
from typing import Any

from leadercheck.checker.conform.agent import NoAnswer
from leadercheck.checker.conform.bindings.lease_facts import (
    LeaseBinding,
    TokenNumbers,
    lease_fact,
    storage_fact,
)
from leadercheck.checker.conform.clients.etcd import Keys, etcd_client
from leadercheck.checker.conform.world import Facts, Timing, World
from leadercheck.checker.errors import LeadercheckError


class EtcdLease(LeaseBinding):
    system = "etcd"
    expiry_lag = 0.5  # etcd's lessor revokes expired leases (and their keys) every 500 ms
    user_clients = True
    # the gateway's JSON API: the put-if-absent is a transaction, a renewal a keep-alive
    lost_replies: Mapping[str, bytes] = {"acquire": b"kv/txn", "renew": b"lease/keepalive"}
    CALLS = {
        "acquire": ["grant", "acquire"],
        "renew": ["renew"],
        "check": ["check"],
        "write": ["write"],
    }

    def __init__(self, protocol: str, params: Mapping[str, int]) -> None:
        super().__init__(protocol, params)
        self.fencing = protocol == "lease-fencing"
        self.prefix = f"/leadercheck/{uuid.uuid4().hex[:12]}/"
        self.tokens = TokenNumbers()

    def client_config(self, world: World, node: str) -> dict[str, Any]:
        ttl = world.timing.ttl_seconds(int(self.params["ttl"]))
        keys = Keys(self.prefix)
        return {
            "name": node,
            "store": list(world.link_address(node)),
            "storage": list(world.storage[0]),
            "ttl_seconds": round(ttl),  # whole seconds (check_timing)
            "fencing": self.fencing,
            "prefix": self.prefix,
            # where a client under test keeps what the harness reads (the README's protocol)
            "leader_key": keys.leader,
            "lock_name": keys.lock_name,  # a lock library's Lock(lock_name) holds leader_key
            "storage_log_prefix": keys.storage_log,
            "storage_hi_key": keys.storage_hi,
            "timeout": world.timing.call_timeout / 2,
        }

    def check_timing(self, timing: Timing) -> None:
        seconds = timing.ttl_seconds(int(self.params["ttl"]))
        if seconds < 1 or abs(seconds - round(seconds)) > 1e-9:
            raise LeadercheckError(
                f"etcd grants leases in whole seconds: ttl {self.params['ttl']} ticks of"
                f" {timing.tick:g} s is {seconds:g} s; give a --tick that makes it whole"
            )

    def _reader(self, world: World) -> Any:
        if "reader" not in world.extra:
            world.extra["reader"] = etcd_client(list(world.storage[0]), world.timing.call_timeout)
        return world.extra["reader"]

    def reset(self, world: World) -> None:
        self.prefix = f"/leadercheck/{uuid.uuid4().hex[:12]}/"  # a fresh key range per run
        self.tokens = TokenNumbers()
        self.holds_as = {}

    def real_facts(self, world: World) -> Facts:
        reader, keys = self._reader(world), Keys(self.prefix)
        found = reader.get(keys.leader, metadata=True)
        if found:
            value, meta = found[0]
            holder = self.holder_of(value.decode() if isinstance(value, bytes) else str(value))
            store = lease_fact(holder, self.tokens.of(int(meta["create_revision"])))
        else:
            store = lease_fact(None, 0)
        log = reader.get_prefix(keys.storage_log, sort_order="ascend", sort_target="create")
        accepted = [self.tokens.of(int(_text(value))) for value, _ in log]
        return {"store": store, "storage": storage_fact(accepted)}


class EtcdLeaseTiming(EtcdLease):
    """`lease-timing`: n1 holds the lease from tick 0, on a clock that drifts for real."""

    faults = EtcdLease.faults | {"drift"}
    drifting_clocks = True
    user_clients = False  # its n1 never renews: the example elector's keep-alive would

    @property
    def nodes(self) -> tuple[str, ...]:
        return ("n1", "n2")  # the holder and the taker (models/lease_timing.py)

    def client_config(self, world: World, node: str) -> dict[str, Any]:
        lease = world.timing.ttl_seconds(int(self.params["lease"]))
        return {**super().client_config(world, node), "lease_seconds": lease}

    def initial_state(self, world: World) -> None:
        """n1 takes the lease (token 1) now: the model's n1 holds it from tick 0."""
        agent, wait = world.agents["n1"], world.timing.call_timeout
        for op in ("grant", "acquire"):
            try:
                reply = agent.call(op, wait)
            except NoAnswer:
                reply = {"ok": False, "error": "no answer"}
            if not reply.get("ok"):
                raise LeadercheckError(
                    f"etcd: n1 could not take the lease before step 0 ({op}: {reply.get('error')})"
                )
        if not (reply.get("result") or {}).get("granted"):
            raise LeadercheckError("etcd: n1 could not take the lease before step 0 (refused)")


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode()
    try:
        return base64.b64decode(value).decode()
    except (ValueError, TypeError):
        return str(value)

"""A PostgreSQL session advisory lock on a real server (`advisory-lock`,
`advisory-lock-fencing`).

Each run gets a schema of its own (`reset`) for the storage (clients/advisory_lock.py) and
a lock key of its own. A node takes the lock on a connection through its fault proxy; a
cut resets that connection on both sides, so the server ends the session and lets the
lock go at once, which is the model's `connection_lost` (a crash does the same: the
kernel closes the dead process's socket). A pause stops the process but not its kernel:
the session, and the lock, stay.

Facts: who holds the lock, read where PostgreSQL keeps it (`pg_locks`: the holding
session's pid, which its client said in its acquire's `holds_as`, with the token it drew),
and the storage's log of accepted tokens, in the order accepted.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from psycopg import sql

from leadercheck.checker.conform.bindings.lease_facts import (
    LeaseBinding,
    TokenNumbers,
    lease_fact,
    storage_fact,
)
from leadercheck.checker.conform.bindings.postgres import postgres_config
from leadercheck.checker.conform.clients.advisory_lock import HOLDER, SCHEMA_SQL
from leadercheck.checker.conform.clients.postgres import connect
from leadercheck.checker.conform.world import Facts, World


class AdvisoryLock(LeaseBinding):
    system = "postgres"
    endpoints = 1  # one server: the lock and the storage are in it
    user_clients = True
    CALLS = {"acquire": ["acquire"], "check": ["check"], "write": ["write"]}

    def __init__(self, protocol: str, params: Mapping[str, int]) -> None:
        super().__init__(protocol, params)
        self.fencing = protocol == "advisory-lock-fencing"
        self.schema = ""
        self.key = 0
        self.tokens = TokenNumbers()
        self.token_of: dict[str, int] = {}  # a holding session's pid -> the token it drew

    @property
    def client_module(self) -> str:
        return "advisory_lock"

    def client_config(self, world: World, node: str) -> dict[str, Any]:
        return postgres_config(world, node, self.schema, lock_key=self.key, fencing=self.fencing)

    def _connect(self, world: World) -> Any:
        return connect(world.extra["dsn"], self.schema, world.timing.call_timeout / 2)

    def reset(self, world: World) -> None:
        """A fresh schema and lock key per run: runs on one server never share either."""
        self.schema = f"leadercheck_{uuid.uuid4().hex[:12]}"
        self.key = uuid.uuid4().int >> 65  # a positive bigint
        self.tokens = TokenNumbers()
        self.holds_as, self.token_of = {}, {}
        script = SCHEMA_SQL.format(schema=sql.Identifier(self.schema).as_string())
        with self._connect(world) as conn:
            conn.execute(script.encode())

    def heard(self, node: str, op: str, reply: Mapping[str, Any]) -> None:
        super().heard(node, op, reply)
        result = (reply.get("result") or {}) if reply.get("ok") else {}
        said, token = result.get("holds_as"), result.get("token")
        if isinstance(said, str) and isinstance(token, int) and not isinstance(token, bool):
            self.token_of[said] = token

    def real_facts(self, world: World) -> Facts:
        with self._connect(world) as conn:
            row = conn.execute(HOLDER, {"key": self.key}).fetchone()
            log = conn.execute("SELECT token FROM writes ORDER BY seq").fetchall()
        accepted = storage_fact(self.tokens.of(int(t)) for (t,) in log)
        if row is None:
            return {"store": lease_fact(None, 0), "storage": accepted}
        pid = str(row[0])
        drawn = self.token_of.get(pid)
        held = lease_fact(self.holder_of(pid), self.tokens.of(drawn) if drawn else 0)
        return {"store": held, "storage": accepted}

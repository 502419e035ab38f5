"""The lease-in-a-row protocols on a real PostgreSQL server (`lease-cas`, `lease-blind-write`).

Each run gets a schema of its own (`reset`): the `leader` row, free with token 0 (the
model's Store: holder, token, the time before `expires` as ttl_left, the takes as
revision), and the fenced storage (both protocols write to storage that refuses a
token below the highest it accepted; the refusal is a trigger's, in PostgreSQL).

A node's read and update are the model's two steps, each one statement through the
node's fault proxy (clients/postgres.py); a `connect` call before each makes sure the
statement goes out on a live connection. Renew is one UPDATE, the check is local, the
write is an INSERT into the storage. The row's token is the model's token (one counter
in both), so tokens are compared as they are.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

import psycopg
from psycopg import sql

from leadercheck.checker.conform.bindings.base import NO_REPLY, View, note_of, reply_lost
from leadercheck.checker.conform.bindings.lease_facts import (
    LeaseBinding,
    TokenNumbers,
    lease_fact,
    storage_fact,
)
from leadercheck.checker.conform.clients.postgres import SCHEMA_SQL, connect
from leadercheck.checker.conform.world import Facts, World
from leadercheck.checker.model import Action

#: how a read ends, on both sides (the model reads only a free row)
ROW_FREE, ROW_TAKEN = "row free", "row taken"


def postgres_config(world: World, node: str, schema: str, **own: Any) -> dict[str, Any]:
    """What a PostgreSQL client of ours is told: its name, the server (through its own link
    to it), its schema, what its protocol needs (`own`), and how long a call may take."""
    return {
        "name": node,
        "dsn": world.extra["dsn"],
        "store": list(world.link_address(node)),
        "schema": schema,
        **own,
        "timeout": world.timing.call_timeout / 2,
    }


class PostgresLeaseRow(LeaseBinding):
    system = "postgres"
    CALLS = {
        "read": ["connect", "read"],
        "update": ["connect", "update"],
        "renew": ["connect", "renew"],
        "check": ["check"],
        "write": ["write"],
    }
    endpoints = 1  # one server: the store and the storage are tables in it
    user_clients = True
    #: the UPDATE without `WHERE token = $seen` (a subclass may force it, to be caught)
    blind: bool | None = None

    def __init__(self, protocol: str, params: Mapping[str, int]) -> None:
        super().__init__(protocol, params)
        if self.blind is None:
            self.blind = protocol == "lease-blind-write"
        self.schema = ""
        self.tokens = TokenNumbers(literal=True)

    def client_config(self, world: World, node: str) -> dict[str, Any]:
        return postgres_config(
            world,
            node,
            self.schema,
            ttl_seconds=world.timing.ttl_seconds(int(self.params["ttl"])),
            blind=self.blind,
        )

    def _connect(self, world: World) -> psycopg.Connection[Any]:
        """A direct connection for the harness's own reads (one per use: none is left open)."""
        return connect(world.extra["dsn"], self.schema, world.timing.call_timeout / 2)

    def reset(self, world: World) -> None:
        """A fresh schema per run, so runs on one server never see each other's rows."""
        self.schema = f"leadercheck_{uuid.uuid4().hex[:12]}"
        self.tokens = TokenNumbers(literal=True)
        self.holds_as = {}
        script = SCHEMA_SQL.format(schema=sql.Identifier(self.schema).as_string())
        with self._connect(world) as conn:
            conn.execute(script.encode())

    def risky(self, action: Action) -> bool:
        """Also an update the model's compare-and-swap refuses: a client whose UPDATE
        does not compare the token it read takes the row there."""
        return super().risky(action) or (action.name == "update" and "0 rows" in note_of(action))

    def outcome(self, op_reply: Mapping[str, Any]) -> str:
        op = op_reply.get("op", "")
        if op == "read" and op_reply.get("ok"):
            return ROW_FREE if (op_reply.get("result") or {}).get("free") else ROW_TAKEN
        return super().outcome(op_reply)

    def expected_outcome(self, action: Action, before: View, after: View) -> str:
        if action.name == "read":
            return NO_REPLY if reply_lost(action) else ROW_FREE
        return super().expected_outcome(action, before, after)

    def real_facts(self, world: World) -> Facts:
        with self._connect(world) as conn:
            row = conn.execute("SELECT node, token, expires > now() FROM leader").fetchone()
            log = conn.execute("SELECT token FROM writes ORDER BY seq").fetchall()
        assert row is not None, "the leader row is always there"
        node, token, unexpired = row
        holder = node if node is not None and unexpired else None
        store = lease_fact(holder, self.tokens.of(int(token)))
        return {"store": store, "storage": storage_fact(self.tokens.of(t) for (t,) in log)}

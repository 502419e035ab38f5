"""A holder of a PostgreSQL session advisory lock (`advisory-lock`, `advisory-lock-fencing`),
and the storage it writes to.

The lock is taken on a connection of its own, through the node's fault proxy:
`pg_try_advisory_lock(key)`, held by that session until it ends. The check reads the
session's row back from `pg_locks`; a connection that has gone (reset by a cut, or by the
server) says the lock went with it. Before it takes the lock the holder draws its token
from a sequence on the storage: the fenced write refuses a token below the highest
accepted, the unfenced one only logs it, so that a late write shows in the log.

The storage is tables in the same server, on a direct connection: `writes(seq, token)`
in the order accepted, and `fenced_write(token)`, which compares with `storage_hi` under a
row lock and raises '409 STALE TOKEN' for a lower token.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import errors

from leadercheck.checker.conform.clients.postgres import STALE, connect

#: the tables of one run, in a schema of its own (`{schema}` is quoted)
SCHEMA_SQL = """
CREATE SCHEMA {schema};
SET search_path TO {schema};
CREATE SEQUENCE tokens;
CREATE TABLE writes (seq bigserial PRIMARY KEY, token int NOT NULL);
CREATE TABLE storage_hi (hi int NOT NULL);
INSERT INTO storage_hi VALUES (0);
CREATE FUNCTION fenced_write(t int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    highest int;
BEGIN
    SELECT hi INTO highest FROM storage_hi FOR UPDATE;
    IF t < highest THEN
        RAISE EXCEPTION '409 STALE TOKEN: % < %', t, highest USING ERRCODE = 'check_violation';
    END IF;
    UPDATE storage_hi SET hi = t WHERE hi < t;
    INSERT INTO writes (token) VALUES (t);
END $$;
"""

#: the lock's row in pg_locks: a one-bigint key is (classid, objid) = its high and low
#: 32 bits, objsubid 1
HOLDER = """SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1
    AND classid = (%(key)s >> 32)::oid AND objid = (%(key)s & 4294967295)::oid AND granted"""
MINE = f"SELECT EXISTS ({HOLDER} AND pid = pg_backend_pid())"
TRY_LOCK = "SELECT pg_try_advisory_lock(%s), pg_backend_pid()"


class Client:
    """One node: its token in memory, the lock's connection (through its proxy), the
    storage's (direct)."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.name: str = config["name"]
        self.dsn: str = config["dsn"]
        self.store_at = {"host": config["store"][0], "port": int(config["store"][1])}
        self.schema: str = config["schema"]
        self.key = int(config["lock_key"])
        self.fencing = bool(config["fencing"])
        self.timeout = float(config.get("timeout", 2.0))
        self.store: psycopg.Connection[Any] | None = None
        self.storage = connect(self.dsn, self.schema, self.timeout)
        self.token = 0
        self.pending = 0

    def _session(self) -> psycopg.Connection[Any]:
        """The lock's connection: the one there is while it lives, else a new one (a new
        session, which holds nothing)."""
        if self.store is None or self.store.closed or self.store.broken:
            self.store = connect(self.dsn, self.schema, self.timeout, **self.store_at)
        return self.store

    def op_acquire(self) -> dict[str, Any]:
        token = int(self.storage.execute("SELECT nextval('tokens')").fetchone()[0])  # type: ignore[index]
        try:
            row = self._session().execute(TRY_LOCK, (self.key,)).fetchone()
        except psycopg.OperationalError:  # the old session went: take it on a new one
            self.store = None
            row = self._session().execute(TRY_LOCK, (self.key,)).fetchone()
        assert row is not None
        locked, pid = row
        if not locked:
            return {"granted": False}
        self.token = token
        return {"granted": True, "token": token, "holds_as": str(pid)}

    def op_check(self) -> dict[str, Any]:
        """The session's lock read back; a connection that has gone took the lock with it."""
        leads = False
        if self.token and self.store is not None and not self.store.broken:
            try:
                found = self.store.execute(MINE, {"key": self.key}).fetchone()
                leads = bool(found and found[0])
            except psycopg.OperationalError:
                leads = False
        if not leads:
            self.token = 0
        self.pending = self.token
        return {"believes_leader": leads, "token": self.token or None}

    def op_write(self) -> dict[str, Any]:
        token, self.pending = self.pending, 0
        if not self.fencing:
            self.storage.execute("INSERT INTO writes (token) VALUES (%s)", (token,))
            return {"accepted": True, "token": token}
        try:
            self.storage.execute("SELECT fenced_write(%s)", (token,))
        except errors.CheckViolation as exc:
            if STALE not in str(exc):
                raise
            return {"accepted": False, "token": token}
        return {"accepted": True, "token": token}

    def op_belief(self) -> dict[str, Any]:
        """It believes it holds the lock until its connection tells it otherwise; the
        unfenced lock has no token to lead under."""
        leads = bool(self.token)
        return {"leader": leads, "token": (self.token if self.fencing else None) if leads else None}

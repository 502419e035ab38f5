"""A lease holder whose lease is one row of a real PostgreSQL table, and the storage it writes.

The row is `leader(node, token, expires, revision)`. A node takes it in two statements,
as `models/lease_row.py` has it: a read of the row (is it free? which token does it
carry?) and then an UPDATE, either the compare-and-swap

    UPDATE leader SET node = me, token = token + 1, ... WHERE token = $seen AND <free>

or the blind write without the WHERE. The lease's expiry is PostgreSQL's own clock
(`expires` against `now()`); the node's own copy of it is this process's clock.

The store is reached through the node's fault proxy, on one autocommit connection. A
connection that a cut or a lost reply broke is only noticed when it is used, so the
binding runs `connect` (a ping, and a fresh connection if the ping fails) before every
call to the store: the call itself then goes out on a live connection, and a lost reply
loses the call's own answer, not a reconnect's handshake.

The storage is two tables in the same server, on a direct connection (the model cuts and
loses only the links to the store): `writes(seq, token)`, the accepted writes in order,
and a trigger that refuses a token below the highest accepted with '409 STALE TOKEN'
(a row lock on `storage_hi` orders concurrent writes), so a rejection is PostgreSQL's.
"""

from __future__ import annotations

import time
from typing import Any

import psycopg
from psycopg import errors

from leadercheck.checker.conform.clients.lease_holder import LeaseHolder

STALE = "409 STALE TOKEN"

#: the tables of one run, created in a schema of its own (`reset`); `{schema}` is quoted
SCHEMA_SQL = """
CREATE SCHEMA {schema};
SET search_path TO {schema};
CREATE TABLE leader (
    id int PRIMARY KEY CHECK (id = 1),
    node text NULL,
    token int NOT NULL,
    expires timestamptz NULL,
    revision int NOT NULL
);
INSERT INTO leader VALUES (1, NULL, 0, NULL, 0);
CREATE TABLE writes (seq bigserial PRIMARY KEY, token int NOT NULL, node text NOT NULL);
CREATE TABLE storage_hi (hi int NOT NULL);
INSERT INTO storage_hi VALUES (0);
CREATE FUNCTION fence() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    highest int;
BEGIN
    SELECT hi INTO highest FROM storage_hi FOR UPDATE;
    IF NEW.token < highest THEN
        RAISE EXCEPTION '409 STALE TOKEN: % < %', NEW.token, highest
            USING ERRCODE = 'check_violation';
    END IF;
    UPDATE storage_hi SET hi = NEW.token WHERE hi < NEW.token;
    RETURN NEW;
END $$;
CREATE TRIGGER fence BEFORE INSERT ON writes FOR EACH ROW EXECUTE FUNCTION fence();
"""

#: the row is free: never taken, or its lease ran out (the model's Store.lease_free)
FREE = "(node IS NULL OR expires <= now())"

READ = f"SELECT token, {FREE} FROM leader"
CAS = f"""UPDATE leader
    SET node = %(me)s, token = token + 1, expires = now() + make_interval(secs => %(ttl)s),
        revision = revision + 1
    WHERE token = %(seen)s AND {FREE}
    RETURNING token"""
BLIND = """UPDATE leader
    SET node = %(me)s, token = %(seen)s + 1, expires = now() + make_interval(secs => %(ttl)s),
        revision = revision + 1
    RETURNING token"""
RENEW = """UPDATE leader SET expires = now() + make_interval(secs => %(ttl)s)
    WHERE node = %(me)s AND token = %(mine)s AND expires > now()
    RETURNING token"""
WRITE = "INSERT INTO writes (token, node) VALUES (%(token)s, %(me)s)"


def connect(conninfo: str, schema: str, timeout: float, **where: Any) -> psycopg.Connection[Any]:
    """An autocommit connection whose search path is the run's schema (`where`: host, port)."""
    return psycopg.connect(
        conninfo,
        autocommit=True,
        connect_timeout=max(2, round(timeout)),  # libpq's least
        options=f"-c search_path={schema}",
        **where,
    )


class Client(LeaseHolder):
    """One node: the token it saw and the one it holds in memory, two connections."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.name: str = config["name"]
        self.dsn: str = config["dsn"]
        self.store_at = {"host": config["store"][0], "port": int(config["store"][1])}
        self.schema: str = config["schema"]
        self.ttl_seconds = float(config["ttl_seconds"])
        self.lease_seconds = float(config.get("lease_seconds", self.ttl_seconds))
        self.blind = bool(config["blind"])
        self.timeout = float(config.get("timeout", 2.0))
        self.store: psycopg.Connection[Any] | None = None
        self.storage: psycopg.Connection[Any] | None = None
        self.seen: int | None = None
        self.token = 0
        self.acquired_at = 0.0
        self.pending = 0

    # -- connections ---------------------------------------------------------

    def op_connect(self) -> dict[str, Any]:
        """A live store connection before a call: ping the one there is, else open one."""
        if self.store is not None:
            try:
                self.store.execute("SELECT 1")
                return {}
            except psycopg.Error:
                self._drop_store()
        self.store = connect(self.dsn, self.schema, self.timeout, **self.store_at)
        return {"reconnected": True}

    def _store(self) -> psycopg.Connection[Any]:
        if self.store is None:
            self.op_connect()
        assert self.store is not None
        return self.store

    def _drop_store(self) -> None:
        store, self.store = self.store, None
        if store is not None:
            try:
                store.close()
            except psycopg.Error:
                pass

    def _on_store(self, query: str, **args: Any) -> tuple[Any, ...] | None:
        """One statement on the store; a broken connection is dropped (the next call opens
        another) and the error goes to the harness, which reads it as no reply."""
        try:
            return self._store().execute(query, args).fetchone()
        except psycopg.OperationalError:
            self._drop_store()
            raise

    # -- the lease -------------------------------------------------------------

    def op_read(self) -> dict[str, Any]:
        """SELECT the row; a free row's token is remembered for the update."""
        row = self._on_store(READ)
        assert row is not None, "the leader row is always there"
        token, free = int(row[0]), bool(row[1])
        self.seen = token if free else None
        return {"free": free, "token": token}

    def op_update(self) -> dict[str, Any]:
        """Take the row: the compare-and-swap, or the blind write."""
        if self.seen is None:
            raise RuntimeError("update without a read of the free row")
        seen, self.seen = self.seen, None  # whatever happens, the read is used up
        args = {"me": self.name, "seen": seen, "ttl": self.ttl_seconds}
        row = self._on_store(BLIND if self.blind else CAS, **args)
        if row is None:
            return {"granted": False, "seen": seen}
        self.token = int(row[0])
        self.acquired_at = time.monotonic()
        return {"granted": True, "token": self.token}

    def op_renew(self) -> dict[str, Any]:
        args = {"me": self.name, "mine": self.token, "ttl": self.ttl_seconds}
        row = self._on_store(RENEW, **args)
        if row is not None:
            self.acquired_at = time.monotonic()
        return {"renewed": row is not None, "token": self.token}

    # -- the storage -----------------------------------------------------------

    def op_write(self) -> dict[str, Any]:
        token, self.pending = self.pending, 0
        if self.storage is None:
            self.storage = connect(self.dsn, self.schema, self.timeout)
        try:
            self.storage.execute(WRITE, {"token": token, "me": self.name})
        except errors.CheckViolation as exc:
            if STALE not in str(exc):
                raise
            return {"accepted": False, "token": token, "storage": str(exc).splitlines()[0]}
        except psycopg.OperationalError:
            self.storage = None
            raise
        return {"accepted": True, "token": token}

    def close(self) -> None:
        self._drop_store()
        if self.storage is not None:
            self.storage.close()

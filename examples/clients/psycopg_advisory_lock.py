#!/usr/bin/env python3
"""A leader on a PostgreSQL session advisory lock taken with psycopg, as its users take it,
for `verify conform --client` on `advisory-lock` and `advisory-lock-fencing`.

The lock is `SELECT pg_try_advisory_lock(key)` on a connection kept for it: the session
holds the lock until it ends. A leader checks that connection is still alive (`SELECT 1`)
before it writes; a connection that has gone took the lock with it. Advisory locks have no
token: the holder draws one from the storage's sequence before it takes the lock, and
tells the harness which session holds it (`holds_as`: its backend pid, as `pg_locks`
shows it).

- `--variant fenced`: each write goes through the storage's `fenced_write`, which refuses
  a token below the highest accepted.
- `--variant unfenced` (the bug): it writes because its connection answered a moment ago;
  a reset of that connection meanwhile lets another node take the lock and write first.
"""

from __future__ import annotations

from typing import Any

import psycopg
from jsonlines import lock_belief, run
from storages import postgres_write

LOCK = "SELECT pg_try_advisory_lock(%s)"


class AdvisoryLeader:
    """One node: the lock's connection through its proxy, the storage's direct."""

    def __init__(self, cfg: dict[str, Any], fenced: bool) -> None:
        self.fenced, self.key = fenced, int(cfg["lock_key"])
        self.dsn, self.schema = cfg["dsn"], cfg["schema"]
        self.at = {"host": cfg["store"][0], "port": int(cfg["store"][1])}
        self.storage = self._connect()
        self.conn: psycopg.Connection[Any] | None = None
        self.token = 0
        self.pending = 0

    def _connect(self, **where: Any) -> psycopg.Connection[Any]:
        return psycopg.connect(
            self.dsn, autocommit=True, connect_timeout=2,
            options=f"-c search_path={self.schema}", **where,
        )  # fmt: skip

    def op_acquire(self) -> dict[str, Any]:
        token = self.storage.execute("SELECT nextval('tokens')").fetchone()[0]  # type: ignore[index]
        if self.conn is None or self.conn.broken:
            self.conn = self._connect(**self.at)
        try:
            locked = self.conn.execute(LOCK, (self.key,)).fetchone()[0]  # type: ignore[index]
        except psycopg.OperationalError:  # the connection went: a new one, a new session
            self.conn = self._connect(**self.at)
            locked = self.conn.execute(LOCK, (self.key,)).fetchone()[0]  # type: ignore[index]
        if not locked:
            return {"granted": False}
        self.token = int(token)
        return {"granted": True, "token": self.token, "holds_as": str(self.conn.info.backend_pid)}

    def op_check(self) -> dict[str, Any]:
        try:
            assert self.conn is not None
            self.conn.execute("SELECT 1")
        except (AssertionError, psycopg.OperationalError):
            self.token = 0  # the session is gone, and the lock with it
        self.pending = self.token
        return {"believes_leader": bool(self.token), "token": self.token or None}

    def op_write(self) -> dict[str, Any]:
        token, self.pending = self.pending, 0
        return {"accepted": postgres_write(self.storage, token, self.fenced), "token": token}

    def op_belief(self) -> dict[str, Any]:
        return lock_belief(self.token, self.fenced)


def main() -> None:
    run(__doc__ or "", AdvisoryLeader)


if __name__ == "__main__":
    main()

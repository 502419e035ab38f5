#!/usr/bin/env python3
"""A leader elector on a PostgreSQL lease row, written as workers write them, to be put
under the model's schedules by `verify conform --client` (see the README's "Your own
client").

The lease is one row, `leader(node, token, expires, revision)`. A worker reads it (is
it free: nobody holds it, or its `expires` is past in PostgreSQL's clock?) and then takes
it with an UPDATE. A keep-alive thread extends `expires` every tenth of the TTL in the
background, so a pause of the process (SIGSTOP) stops the renewals for real and the
lease runs out in PostgreSQL's own time. Before a write the worker checks that it still
leads; the write is an INSERT into `writes` with its token, and the server's trigger
refuses a token below the highest it accepted.

Two variants:

- `--variant cas` (correct): the UPDATE is a compare-and-swap, `WHERE token = <the token
  it read> AND <still free>`: of two workers that both read the row free, one takes it.
- `--variant blind` (the bug, "UPDATE without a token check"): it takes the row because
  its read said free a moment ago. Two workers that read it free both take it, and both
  believe they lead under the same token.

It speaks the harness's protocol: one ready line, then one answer line per request line.
Its configuration is the JSON in LEADERCHECK_CONFIG. Nothing here imports leadercheck.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from typing import Any

import psycopg
from psycopg import errors

FREE = "(node IS NULL OR expires <= now())"
READ = f"SELECT token, {FREE} FROM leader"
TAKE = {
    "cas": f"""UPDATE leader SET node = %(me)s, token = token + 1,
                  expires = now() + make_interval(secs => %(ttl)s), revision = revision + 1
               WHERE token = %(seen)s AND {FREE} RETURNING token""",
    "blind": """UPDATE leader SET node = %(me)s, token = %(seen)s + 1,
                  expires = now() + make_interval(secs => %(ttl)s), revision = revision + 1
               RETURNING token""",
}
RENEW = """UPDATE leader SET expires = now() + make_interval(secs => %(ttl)s)
           WHERE node = %(me)s AND token = %(mine)s AND expires > now() RETURNING token"""
WRITE = "INSERT INTO writes (token, node) VALUES (%(token)s, %(me)s)"


class Elector:
    """One worker: the token it holds, when PostgreSQL last confirmed it, three connections
    (the lease's and the keep-alive's through the store address, the storage's direct)."""

    def __init__(self, config: dict[str, Any], variant: str) -> None:
        self.name = config["name"]
        self.take = TAKE[variant]
        self.ttl = float(config["ttl_seconds"])
        self.dsn = config["dsn"]
        self.schema = config["schema"]
        self.store_at = {"host": config["store"][0], "port": int(config["store"][1])}
        self.timeout = float(config.get("timeout", 2.0))
        self.guard = threading.Lock()
        self.store: psycopg.Connection[Any] | None = None
        self.storage = self._connect()
        self.seen: int | None = None
        self.token = 0
        self.renewed_at = 0.0  # monotonic time PostgreSQL last confirmed the lease
        self.pending = 0
        self.period = round(self.ttl / 10, 3)
        threading.Thread(target=self._keep_alive, daemon=True).start()

    def _connect(self, **where: Any) -> psycopg.Connection[Any]:
        return psycopg.connect(
            self.dsn,
            autocommit=True,
            connect_timeout=max(2, round(self.timeout)),
            options=f"-c search_path={self.schema}",
            **where,
        )

    # -- the background keep-alive ---------------------------------------------

    def _keep_alive(self) -> None:
        """Extend the lease every tenth of its TTL while it is held; a renewal that finds
        the lease gone (it ran out while this process was stopped) ends the leadership."""
        link: psycopg.Connection[Any] | None = None
        while True:
            time.sleep(self.period)
            with self.guard:
                mine = self.token
            if not mine:
                continue
            try:
                if link is None:
                    link = self._connect(**self.store_at)
                args = {"me": self.name, "mine": mine, "ttl": self.ttl}
                row = link.execute(RENEW, args).fetchone()
            except psycopg.Error:  # the store unreachable: the local timer decides
                link = None
                continue
            with self.guard:
                if self.token == mine:
                    if row is not None:
                        self.renewed_at = time.monotonic()
                    else:
                        self.token = 0

    def _leads(self) -> bool:
        return bool(self.token) and time.monotonic() - self.renewed_at < self.ttl

    def _on_store(self, query: str, args: dict[str, Any]) -> Any:
        if self.store is None:
            self.store = self._connect(**self.store_at)
        try:
            return self.store.execute(query, args).fetchone()
        except psycopg.OperationalError:
            self.store = None
            raise

    # -- the operations the harness sends ----------------------------------------

    def op_connect(self) -> dict[str, Any]:
        """A live connection to the store before a call: ping, and reconnect if that fails."""
        if self.store is not None:
            try:
                self.store.execute("SELECT 1")
                return {}
            except psycopg.Error:
                self.store = None
        self.store = self._connect(**self.store_at)
        return {"reconnected": True}

    def op_read(self) -> dict[str, Any]:
        token, free = self._on_store(READ, {})
        self.seen = int(token) if free else None
        return {"free": bool(free), "token": int(token)}

    def op_update(self) -> dict[str, Any]:
        if self.seen is None:
            raise RuntimeError("update without a read of the free row")
        seen, self.seen = self.seen, None
        row = self._on_store(self.take, {"me": self.name, "seen": seen, "ttl": self.ttl})
        if row is None:
            return {"granted": False}
        with self.guard:
            self.token = int(row[0])
            self.renewed_at = time.monotonic()
        return {"granted": True, "token": self.token}

    def op_renew(self) -> dict[str, Any]:
        """The keep-alive renews on its own; asked, it renews at once."""
        row = self._on_store(RENEW, {"me": self.name, "mine": self.token, "ttl": self.ttl})
        with self.guard:
            if row is not None:
                self.renewed_at = time.monotonic()
            else:
                self.token = 0
        return {"renewed": row is not None}

    def op_check(self) -> dict[str, Any]:
        with self.guard:
            leads = self._leads()
            self.pending = self.token if leads else 0
            return {"believes_leader": leads, "token": self.token}

    def op_write(self) -> dict[str, Any]:
        with self.guard:
            token, self.pending = self.pending, 0
        try:
            self.storage.execute(WRITE, {"token": token, "me": self.name})
        except errors.CheckViolation as exc:  # the storage's trigger: a stale token
            return {"accepted": False, "token": token, "storage": str(exc).splitlines()[0]}
        return {"accepted": True, "token": token}

    def op_belief(self) -> dict[str, Any]:
        with self.guard:
            leads = self._leads()
            return {"leader": leads, "token": self.token if leads else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=sorted(TAKE), default="cas")
    elector = Elector(json.loads(os.environ["LEADERCHECK_CONFIG"]), parser.parse_args().variant)
    ready = {
        "ready": os.getpid(),
        "background": "keep-alive thread",
        "renews_every": elector.period,
    }
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

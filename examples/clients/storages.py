"""The storage writes the example clients share: the harness's storage is what judges a
stale write, so each example writes to it the same way whatever library holds its lock.

- etcd: each accepted write is a new key under the log prefix holding its token
  (zero-padded, so etcd's byte-wise comparison orders tokens as numbers); fenced, one
  transaction refuses a token below `hi` and else raises `hi` and appends.
- ZooKeeper: one multi on the holder's own session, a `check` of its own znode and the
  append: ZooKeeper refuses the write of a holder whose znode went with its session.
"""

from __future__ import annotations

import base64
import uuid
from typing import Any

TOKEN_DIGITS = 20


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def etcd_write(storage: Any, log_prefix: str, hi_key: str, token: int, fenced: bool) -> bool:
    """Write under `token` to the etcd storage (an etcd3gw client); whether it was accepted."""
    value = b64(str(token).zfill(TOKEN_DIGITS))
    entry = {"request_put": {"key": b64(log_prefix + uuid.uuid4().hex), "value": value}}
    if not fenced:  # the bug: the check a moment ago is taken as still true
        storage.transaction({"compare": [], "success": [entry], "failure": []})
        return True
    higher = {"key": b64(hi_key), "result": "GREATER", "target": "VALUE", "value": value}
    hi = {"request_put": {"key": b64(hi_key), "value": value}}
    reply = storage.transaction({"compare": [higher], "success": [], "failure": [hi, entry]})
    return not reply.get("succeeded")


def zookeeper_multi(txn: Any, own_znode: str, log_path: str, epoch: int) -> Any:
    """`txn` (a kazoo transaction) with the multi's two operations, for the caller to
    commit and read with `multi_accepted`."""
    txn.check(own_znode, -1)  # any version, but it must exist
    txn.create(f"{log_path}/w-", str(epoch).encode(), sequence=True)
    return txn


def multi_accepted(results: list[Any]) -> bool:
    """Whether the multi went through: refused when its znode is gone (NoNode on the
    check, the append rolled back); any other failure is raised."""
    from kazoo.exceptions import NoNodeError

    if isinstance(results[0], NoNodeError):
        return False
    failed = [r for r in results if isinstance(r, Exception)]
    if failed:
        raise failed[0]
    return True


#: the Redis storage's write under ARGV[1]: refused (0) when fenced (ARGV[2] == "1") and a
#: higher token was accepted, else logged and `hi` raised (1); one script, so atomic
REDIS_WRITE = """
local hi = tonumber(redis.call('GET', KEYS[1]) or '0')
local token = tonumber(ARGV[1])
if ARGV[2] == '1' and token < hi then return 0 end
if token > hi then redis.call('SET', KEYS[1], ARGV[1]) end
redis.call('RPUSH', KEYS[2], ARGV[1])
return 1
"""


def redis_write(storage: Any, hi_key: str, log_key: str, token: int, fenced: bool) -> bool:
    """Write under `token` to the Redis storage (a redis-py client); whether it was accepted."""
    return bool(storage.eval(REDIS_WRITE, 2, hi_key, log_key, token, "1" if fenced else "0"))


def postgres_write(storage: Any, token: int, fenced: bool) -> bool:
    """Write under `token` to the PostgreSQL storage (a psycopg connection whose search
    path is the run's schema); whether it was accepted. Fenced, the harness's
    `fenced_write` refuses a token below the highest accepted ('409 STALE TOKEN')."""
    import psycopg

    if not fenced:
        storage.execute("INSERT INTO writes (token) VALUES (%s)", (token,))
        return True
    try:
        storage.execute("SELECT fenced_write(%s)", (token,))
    except psycopg.errors.CheckViolation as exc:
        if "409 STALE TOKEN" not in str(exc):
            raise
        return False
    return True

"""`redis-lock` on real Redis: the lock's instance and the storage's, started here. Both
counterexamples happen for real: a key that expired unseen lets a second holder in while
the first still believes it holds the lock, and a restart of the lock's Redis (SIGKILL,
then started again without what it held) loses the key. Fenced with a token drawn from
the storage's counter, the same schedules conform. On the user's own servers
(`--endpoint`) a restart is not ours to make, and the run says so before it starts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leadercheck.checker.conform import servers
from leadercheck.checker.conform.bindings.redis_lock import holding
from tests.conform.helpers import ROOT, verify

pytestmark = [
    pytest.mark.conform,
    pytest.mark.skipif(
        servers.available("redis") is not None, reason=str(servers.available("redis"))
    ),
]
EXPIRED = ROOT / "counterexamples" / "redis-lock.json"
RESTARTED = ROOT / "counterexamples" / "redis-lock.no-stale-write.json"


def test_a_key_that_expired_unseen_makes_two_holders_for_real(tmp_path: Path) -> None:
    timeline = tmp_path / "run.json"
    result = verify("conform", str(EXPIRED), "--against", "redis", "--timeline", str(timeline))
    assert result.exit_code == 1, result.output
    assert "VIOLATED on redis: single-leader broke at step 4 (n1 and n2 both believe" in (
        result.stdout
    )
    rows = json.loads(timeline.read_text())["timeline"]
    assert rows[3]["observed"]["store"] == "no lease held"  # Redis expired the key
    assert rows[4]["observed"]["store"] == "n2 holds lease token 2"


def test_a_restart_of_the_locks_redis_is_made_real_and_loses_the_lock(tmp_path: Path) -> None:
    timeline = tmp_path / "run.json"
    result = verify("conform", str(RESTARTED), "--against", "redis", "--timeline", str(timeline))
    assert result.exit_code == 1, result.output
    assert "no-stale-write broke at step 8 (storage: highest token 2, a stale write" in (
        result.stdout
    )
    rows = json.loads(timeline.read_text())["timeline"]
    assert rows[3]["real"].startswith("SIGKILL the store's server")
    assert rows[3]["observed"]["store"] == "store down" and rows[3]["matches"]
    assert rows[4]["real"].startswith("the store's server started again, empty")
    assert rows[4]["observed"]["store"] == "no lease held"


@pytest.mark.parametrize("trace", [EXPIRED, RESTARTED], ids=["expired", "restarted"])
def test_the_fenced_lock_conforms_under_both_schedules(trace: Path) -> None:
    result = verify("conform", str(trace), "--against", "redis", "--protocol", "redis-lock-fencing")
    assert result.exit_code == 0, result.output
    assert "CONFORMS" in result.stdout


def test_on_the_users_own_servers_a_restart_is_refused_before_the_run() -> None:
    with servers.RedisServers(count=2) as own:
        given = ",".join(f"{host}:{port}" for host, port in own.endpoints)
        result = verify("conform", str(RESTARTED), "--against", "redis", "--endpoint", given)
    assert result.exit_code == 2, result.output
    assert "step 3: a crash of the store (made real only on servers this run starts)" in (
        result.stderr
    )


def test_a_random_schedule_after_one_that_left_redis_down_starts_whole() -> None:
    """Every schedule starts with both instances up: one that ended with the lock's Redis
    crashed is followed by a restart before the next one's first step."""
    result = verify(
        "conform", "--against", "redis", "--random", "6", "--protocol", "redis-lock-fencing",
        "-p", "nodes=2", "-p", "store-crashes=1", "--seed", "5", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    coverage = json.loads(result.stdout)["coverage"]
    assert coverage["actions"].get("crash", 0) >= 1, coverage


def test_a_lock_value_names_its_holder_and_token() -> None:
    assert holding("n2:7:4f2a") == ("n2", 7)
    assert holding("4f2a9c") == ("4f2a9c", 0)  # redis-py's own token: no node, no token

"""A store member killed outside the model (`verify conform --kill-member`), on the real
3-member etcd cluster. A follower's death is invisible to the clients (their proxies go
on to the next member) and the counterexample still conforms, its stale write landing
for real; the leader's death is not: etcd's new leader renews every lease by its TTL, so
the paused leader's lease outlives the model's and the run diverges at that tick."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leadercheck.checker.conform import servers
from tests.conform.helpers import verify

pytestmark = [
    pytest.mark.conform,
    pytest.mark.skipif(
        servers.available("etcd") is not None, reason=str(servers.available("etcd"))
    ),
]
LEASE = Path(__file__).resolve().parents[2] / "counterexamples" / "lease-no-fencing.json"


def test_a_followers_death_changes_nothing_the_clients_see(tmp_path: Path) -> None:
    timeline = tmp_path / "run.json"
    result = verify(
        "conform", str(LEASE), "--against", "etcd", "--kill-member", "follower",
        "--timeline", str(timeline),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = json.loads(timeline.read_text())["timeline"]
    assert rows[1]["real"].startswith("[etcd member m")
    assert "its Raft follower, SIGKILLed outside the model" in rows[1]["real"]
    assert rows[10]["observed"]["storage"] == "highest token 2, a stale write accepted"


def test_the_leaders_death_renews_the_paused_holders_lease() -> None:
    result = verify("conform", str(LEASE), "--against", "etcd", "--kill-member", "leader@4")
    assert result.exit_code == 1, result.output
    assert "its Raft leader, SIGKILLed outside the model" in result.stdout
    assert "DIVERGES at step 5: a model-fidelity finding" in result.stdout
    assert (
        "store: the model says 'no lease held', the real system 'n1 holds lease token 1'"
        in result.stdout
    )

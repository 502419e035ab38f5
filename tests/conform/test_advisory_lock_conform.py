"""`advisory-lock` on a real PostgreSQL: the lock is read where PostgreSQL keeps it
(`pg_locks`). A cut resets the holder's connection, the server ends its session and lets
the lock go at once, and another node takes it while the first still believes it holds it;
its late write lands. A pause keeps the session and the lock, for real. Fenced with a
token from a sequence, the same schedules conform."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leadercheck.checker.conform import servers
from tests.conform.helpers import ROOT, scheduled, verify

pytestmark = [
    pytest.mark.conform,
    pytest.mark.skipif(
        servers.available("postgres") is not None, reason=str(servers.available("postgres"))
    ),
]
HANDED_ON = ROOT / "counterexamples" / "advisory-lock.json"
LATE_WRITE = ROOT / "counterexamples" / "advisory-lock.no-stale-write.json"


def test_a_reset_connection_hands_the_lock_on_for_real(tmp_path: Path) -> None:
    timeline = tmp_path / "run.json"
    result = verify("conform", str(HANDED_ON), "--against", "postgres", "--timeline", str(timeline))
    assert result.exit_code == 1, result.output
    assert "VIOLATED on postgres: single-leader broke at step 3" in result.stdout
    rows = json.loads(timeline.read_text())["timeline"]
    assert rows[1]["observed"]["store"] == "n1 holds lease token 1"  # read from pg_locks
    assert rows[2]["observed"]["store"] == "no lease held"  # the session ended with the cut
    assert rows[3]["observed"]["store"] == "n2 holds lease token 2"


def test_the_late_write_lands_unfenced_and_is_refused_fenced() -> None:
    unfenced = verify("conform", str(LATE_WRITE), "--against", "postgres")
    assert unfenced.exit_code == 1, unfenced.output
    assert "no-stale-write broke at step 7 (storage: highest token 2, a stale write" in (
        unfenced.stdout
    )
    fenced = verify(
        "conform", str(LATE_WRITE), "--against", "postgres", "--protocol", "advisory-lock-fencing"
    )
    assert fenced.exit_code == 0, fenced.output
    assert "n1 write: accepted=False" in fenced.stdout


def test_a_pause_keeps_the_session_and_the_lock_for_real() -> None:
    """n1 paused past two ticks: its kernel keeps the connection, so the server keeps the
    session and the lock, as the model says (a lease would have run out)."""
    plan = [("acquire", "n1"), ("pause", "n1"), ("tick", "clock"), ("tick", "clock")]
    report = scheduled("advisory-lock", {"nodes": 2}, plan, "postgres")
    result = report.result
    assert result.verdict == "CONFORMS", [e.real_event for e in result.entries]
    assert result.entries[-1].observed["store"] == "n1 holds lease token 1"

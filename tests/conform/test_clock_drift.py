"""A slow clock made real (`lease-timing` on etcd): the model's `drift` step sets n1's
clock back a tick through libfaketime, so n1's own copy of the lease outlives etcd's and
it writes after its lease, as the model says (lease + drift + pause > ttl). With the
drift made a no-op n1's check says it no longer leads and the run diverges right there;
without libfaketime the run is refused in one line before any server starts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leadercheck.checker.conform import clocks, servers
from leadercheck.checker.conform.clocks import FakeClock
from tests.conform.helpers import verify

TRACE = Path(__file__).parent / "traces" / "lease-timing-slow-clock.json"
needs_etcd = pytest.mark.skipif(
    servers.available("etcd") is not None, reason=str(servers.available("etcd"))
)
needs_faketime = pytest.mark.skipif(clocks.library() is None, reason="libfaketime not installed")


@pytest.mark.conform
@needs_etcd
@needs_faketime
def test_a_slow_clock_makes_the_old_leader_write_after_its_lease(tmp_path: Path) -> None:
    timeline = tmp_path / "run.json"
    result = verify("conform", str(TRACE), "--against", "etcd", "--timeline", str(timeline))
    assert result.exit_code == 1, result.output  # it conforms, and no-stale-write broke for real
    assert result.stdout.count("VIOLATED on etcd: no-stale-write broke at step 9") == 1
    record = json.loads(timeline.read_text())
    rows = record["timeline"]
    assert rows[1]["real"].startswith("n1's clock set back 1 s (libfaketime)")
    assert rows[1]["fault_effect"] is True
    assert rows[4]["observed"]["store"] == "no lease held"  # etcd let the lease go ...
    assert rows[5]["observed"]["call"] == "believes it leads"  # ... n1's own clock did not
    assert record["anomaly"]["reproduced"] is True and record["anomaly"]["real_step"] == 9
    assert rows[9]["observed"]["storage"] == "highest token 2, a stale write accepted"


@pytest.mark.conform
@needs_etcd
@needs_faketime
def test_with_the_drift_a_no_op_the_check_says_the_lease_is_over(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(FakeClock, "lose", lambda self, seconds: None)
    result = verify("conform", str(TRACE), "--against", "etcd")
    assert result.exit_code == 4, result.output
    assert "DIVERGES at step 5" in result.stdout
    assert "n1 check: believes_leader=False" in result.stdout


def test_without_libfaketime_a_drift_is_refused_before_anything_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(clocks, "library", lambda: None)
    result = verify("conform", str(TRACE), "--against", "etcd")
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().endswith("sudo apt-get install faketime")
    assert result.stderr.count("\n") == 1
    assert "servers and clients started" not in result.stdout


def test_a_fake_clock_file_is_replaced_whole_and_never_followed_through_a_link(
    tmp_path: Path,
) -> None:
    clock = FakeClock(tmp_path / "n1.clock", "/lib/fake.so")
    assert (tmp_path / "n1.clock").read_text() == "+0\n"
    clock.lose(1.0)
    clock.lose(0.5)
    assert (tmp_path / "n1.clock").read_text() == "-1.5\n"
    assert clock.environment()["FAKETIME_TIMESTAMP_FILE"] == str(tmp_path / "n1.clock")
    target = tmp_path / "elsewhere"
    target.write_text("keep")
    (tmp_path / "n2.clock.new").symlink_to(target)
    with pytest.raises(OSError):
        FakeClock(tmp_path / "n2.clock", "/lib/fake.so")
    assert target.read_text() == "keep"

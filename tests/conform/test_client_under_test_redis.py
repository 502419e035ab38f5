"""The user's own Redlock client on five real Redis masters (`verify conform --client`):
the example's two-of-five variant (a quorum miscounted) is caught by a schedule where its
attempt gets two OKs and by random schedules, where two clients then hold the lock at
once; its majority variant conforms under the same schedules, and under the tutorial's
clock-jump counterexample, whose jump the harness's own clock process still makes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import Result

from leadercheck.checker.conform import servers
from tests.conform.helpers import ROOT, verify

pytestmark = [
    pytest.mark.conform,
    pytest.mark.skipif(
        servers.available("redis") is not None, reason=str(servers.available("redis"))
    ),
]
MODEL = str(ROOT / "examples" / "redlock.py")
TWO_OF_FIVE = ROOT / "tests" / "conform" / "traces" / "redlock-two-of-five.json"
CLOCK_JUMP = ROOT / "examples" / "counterexamples" / "redlock.json"
CLIENT = ROOT / "examples" / "clients" / "redlock_client.py"


def client(variant: str) -> str:
    return f"{sys.executable} {CLIENT} --variant {variant}"


def run(trace: Path, variant: str) -> Result:
    """The trace on Redis, each model client the example's `variant`."""
    return verify(
        "conform", str(trace), "--model", MODEL, "--against", "redis", "--client", client(variant)
    )


def test_the_miscounted_quorum_is_caught_by_the_schedule() -> None:
    result = run(TWO_OF_FIVE, "two-of-five")
    assert result.exit_code == 4, result.output  # it diverges at the count, before two hold
    assert (
        "DIVERGES at step 8: the client under test did not do what redlock-timing-ok does"
        in result.stdout
    )
    assert (
        "call: the model says 'OK; 2 of 5 OK: failed', the real system 'OK; 2 of 5 OK: held'"
        in (result.stdout)
    )


def test_the_majority_conforms_under_the_same_schedule_and_the_clock_jump() -> None:
    same = run(TWO_OF_FIVE, "majority")
    assert same.exit_code == 0, same.output
    jump = run(CLOCK_JUMP, "majority")
    assert jump.exit_code == 1, jump.output  # two hold the lock for real, as the model says
    assert "ANOMALY REPRODUCED: single-leader broken on redis" in jump.stdout
    assert "clock jump" in jump.stdout and "key expires at once" in jump.stdout


def test_random_schedules_catch_two_holders_at_once(tmp_path: Path) -> None:
    timeline = tmp_path / "random.json"
    result = verify(
        "conform", "--against", "redis", "--model", MODEL, "--random", "12",
        "--protocol", "redlock-timing-ok", "--client", client("two-of-five"),
        "--budget", "150", "--timeline", str(timeline),
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    record = json.loads(timeline.read_text())
    assert record["violating_history"] is not None  # two holders at once, on the real Redis
    # the model says one holder, so the history diverges from it; on a machine too busy to
    # keep the time mapping the run says so instead of judging (INCOMPLETE, and why)
    if record["verdict"] != "DIVERGES":
        assert record["verdict"] == "INCOMPLETE", record["verdict"]
        assert record["schedules_unjudged"] or record["budget_ran_out"], record["fell_behind"]
    assert record["coverage"]["schedules_with_anomaly"].get("single-leader", 0) >= 1, record[
        "coverage"
    ]

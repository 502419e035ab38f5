"""The user's own client on a real PostgreSQL lease row (`verify conform --client`): the
example worker's blind UPDATE is caught by the model's counterexample and by random
schedules; its compare-and-swap conforms under the same schedule; its pause stops its
keep-alive thread for real."""

from __future__ import annotations

import json
import sys

import pytest

from leadercheck.checker.conform import servers
from leadercheck.checker.conform.agent import Agent
from leadercheck.checker.conform.bindings import binding_for
from leadercheck.checker.conform.report import to_record
from leadercheck.checker.conform.run import conform_trace
from leadercheck.checker.conform.world import Timing
from tests.conform.helpers import ROOT, trace_steps, verify

pytestmark = [
    pytest.mark.conform,
    pytest.mark.skipif(
        servers.available("postgres") is not None, reason=str(servers.available("postgres"))
    ),
]
BLIND = ROOT / "counterexamples" / "lease-blind-write.json"
STALE = ROOT / "tests" / "conform" / "traces" / "lease-cas-stale-write-refused.json"
ELECTOR = ROOT / "examples" / "clients" / "postgres_elector.py"


def elector(variant: str) -> str:
    return f"{sys.executable} {ELECTOR} --variant {variant}"


def test_the_blind_update_is_caught_by_the_counterexample() -> None:
    result = verify(
        "conform", str(BLIND), "--against", "postgres", "--protocol", "lease-cas",
        "--client", elector("blind"), "--json",
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    record = json.loads(result.stdout)
    assert record["verdict"] == "DIVERGES" and record["divergence"]["step"] == 4
    assert record["anomaly"]["text"] == (
        "CAUGHT: the client under test broke single-leader on postgres at step 4 (n1 and n2"
        " both believe they lead (token 1)), which the model does not allow"
    )


def test_the_compare_and_swap_conforms_under_the_same_schedule() -> None:
    result = verify(
        "conform", str(BLIND), "--against", "postgres", "--protocol", "lease-cas",
        "--client", elector("cas"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "n2 update: granted=False" in result.stdout
    assert "CONFORMS: postgres did what the model predicted at every step" in result.stdout


def test_the_trigger_refuses_the_workers_late_write() -> None:
    """The stale write reaches PostgreSQL's fencing trigger from the user's client too."""
    result = verify(
        "conform", str(STALE), "--against", "postgres", "--client", elector("cas"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "accepted=False" in result.stdout and "409 STALE TOKEN" in result.stdout


def test_random_schedules_catch_the_blind_update() -> None:
    result = verify(
        "conform", "--against", "postgres", "--random", "12", "--protocol", "lease-cas",
        "-p", "nodes=2", "--client", elector("blind"), "--json",
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    record = json.loads(result.stdout)
    assert record["coverage"]["schedules_with_anomaly"]["single-leader"] >= 1
    last = record["divergent_history"]["timeline"][-1]
    assert last["model"].endswith("update (0 rows: token is 1, not 0)")
    assert "granted=True" in last["real"]


def test_the_workers_pause_stops_its_keep_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    """With SIGSTOP made a no-op, the keep-alive renews through the ticks and the run
    diverges where the lease should have run out in PostgreSQL's clock."""
    name, params, steps = trace_steps(STALE, "lease-cas")
    binding = binding_for(name, "postgres", params)
    binding.client_command = elector("cas").split()
    honest = conform_trace(name, params, steps, "postgres", Timing(), binding=binding)
    assert honest.result.verdict == "CONFORMS", to_record(honest)
    monkeypatch.setattr(Agent, "pause", lambda self: None)
    monkeypatch.setattr(Agent, "resume", lambda self: None)
    binding = binding_for(name, "postgres", params)
    binding.client_command = elector("cas").split()
    report = conform_trace(name, params, steps, "postgres", Timing(), binding=binding)
    divergence = report.result.divergence
    assert divergence is not None and divergence.step == 6, to_record(report)
    assert divergence.observed["store"] == "n2 holds lease token 1"

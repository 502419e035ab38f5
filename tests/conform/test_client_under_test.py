"""The user's own client under the model's schedules (`verify conform --client`), on a
real 3-member etcd: the example elector's unfenced variant is caught by the model's
counterexample, its fenced variant conforms under the same schedule, its pause matters
for real (its keep-alive thread stops), and a client that breaks the protocol ends the
run in one line, exit 2, with nothing left running."""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from leadercheck.checker.app.main import main
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
        servers.available("etcd") is not None, reason=str(servers.available("etcd"))
    ),
]
LEASE = ROOT / "counterexamples" / "lease-no-fencing.json"
ELECTOR = ROOT / "examples" / "clients" / "etcd_elector.py"
MISBEHAVING = Path(__file__).parent / "clients" / "misbehaving.py"


def elector(variant: str) -> str:
    return f"{sys.executable} {ELECTOR} --variant {variant}"


def test_the_unfenced_elector_is_caught_by_the_counterexample(tmp_path: Path) -> None:
    timeline = tmp_path / "run.json"
    result = verify(
        "conform", str(LEASE), "--against", "etcd", "--protocol", "lease-fencing",
        "--client", elector("unfenced"), "--timeline", str(timeline),
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "DIVERGES at step 10: the client under test did not do what lease-fencing does" in (
        result.stdout
    )
    assert (
        "CAUGHT: the client under test broke no-stale-write on etcd at step 10 (storage:"
        " highest token 2, a stale write accepted)" in result.stdout
    )
    record = json.loads(timeline.read_text())
    assert record["client"].startswith("the client under test: ")
    assert record["anomaly"]["real_step"] == 10 and record["anomaly"]["model_step"] is None
    rows = record["timeline"]
    assert rows[3]["real"].endswith("its keep-alive thread stops") and rows[3]["fault_effect"]
    assert rows[5]["observed"]["store"] == "no lease held"  # the lease ran out, for real
    assert rows[2]["observed"]["call"] == "believes it leads"  # the client's own check


def test_the_fenced_elector_conforms_under_the_same_schedule() -> None:
    result = verify(
        "conform", str(LEASE), "--against", "etcd", "--protocol", "lease-fencing",
        "--client", elector("fenced"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "CONFORMS: etcd did what the model predicted at every step" in result.stdout
    assert "n1 write: accepted=False" in result.stdout
    assert "no anomaly: the model breaks no-stale-write nowhere" in result.stdout


def _without_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Agent, "pause", lambda self: None)
    monkeypatch.setattr(Agent, "resume", lambda self: None)


def test_the_pause_matters_for_real_only_where_the_client_runs_something(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With SIGSTOP made a no-op, the elector's keep-alive thread renews through the two
    ticks and the run diverges where the lease should have run out; this project's own
    client, which runs nothing between calls, conforms either way, and its timeline says
    the pause had no effect of its own."""
    name, params, steps = trace_steps(LEASE, "lease-fencing")
    _without_pauses(monkeypatch)
    binding = binding_for(name, "etcd", params)
    binding.client_command = elector("fenced").split()
    report = conform_trace(name, params, steps, "etcd", Timing(), binding=binding)
    divergence = report.result.divergence
    assert divergence is not None and divergence.step == 5, to_record(report)
    assert divergence.observed["store"] == "n1 holds lease token 1"
    own = conform_trace(name, params, steps, "etcd", Timing()).result
    assert own.verdict == "CONFORMS"
    assert "no effect of its own" in own.entries[3].real_event
    assert own.entries[3].effect is False


def _leftovers(marker: str) -> list[str]:
    """Processes still running whose command line has `marker`."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline and pid.isdigit():
            found.append(pid)
    return found


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("exits", "n1: its client process exited"),
        ("garbage", "n1: its client answered 'hello, harness', not a JSON object"),
        ("hangs", "n1: no answer to 'belief' within 5 s"),
        ("mute-after-resume", "n1: no answer to 'belief' within 5 s"),  # after step 9's SIGCONT
        ("orphan", "n1: no answer to 'belief' within 5 s"),  # its child still holds the pipe
        ("nested", "n1: its client answered '[[[["),
        (
            "wrong-kind",
            "n1: its answer to 'belief' breaks the client protocol: \"leader\" is 'yes', not bool",
        ),
    ],
)
def test_a_client_that_breaks_the_protocol_is_one_line_and_nothing_is_left(
    mode: str, said: str
) -> None:
    marker = f"leadercheck-test-{uuid.uuid4().hex}"
    result = CliRunner().invoke(
        main,
        ["conform", str(LEASE), "--against", "etcd", "--protocol", "lease-fencing",
         "--client", f"{sys.executable} {MISBEHAVING} {mode} {marker}"],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: the client under test, "), lines
    assert said in lines[0]
    assert _leftovers(marker) == []


def test_a_client_command_that_does_not_exist_is_refused_before_any_server() -> None:
    result = CliRunner().invoke(
        main, ["conform", str(LEASE), "--against", "etcd", "--client", "no-such-elector --x"]
    )
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "error: --client: 'no-such-elector': no such program (or not executable)"
    )


def test_random_schedules_catch_the_unfenced_elector_and_keep_every_schedule(
    tmp_path: Path,
) -> None:
    """Drawn toward the steps where safety rests on the client, a dozen schedules of
    two nodes find the stale write within the budget; every schedule that ran is kept as
    a trace that `verify replay` takes."""
    keep = tmp_path / "kept"
    result = verify(
        "conform", "--against", "etcd", "--random", "12", "--protocol", "lease-fencing",
        "-p", "nodes=2", "--client", elector("unfenced"), "--keep", str(keep),
        "--budget", "120", "--json",
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    record = json.loads(result.stdout)
    assert record["verdict"] == "DIVERGES" and record["guided"] is True
    assert record["coverage"]["schedules_with_anomaly"].get("no-stale-write", 0) >= 1, record
    assert record["coverage"]["faults_with_effect"]["pause"] >= 1
    history = record["divergent_history"]
    assert history["timeline"][-1]["observed"]["storage"].endswith("a stale write accepted")
    kept = sorted(p.name for p in keep.iterdir())
    assert kept == record["kept"] and len(kept) >= record["schedules_run"]
    replayed = verify("replay", str(keep / kept[0]))
    assert replayed.exit_code == 0, replayed.output


def test_a_protocol_without_user_clients_is_refused_in_one_line() -> None:
    """lease-timing's n1 holds one lease and never renews: a client under test (whose
    keep-alive would renew it) is not driven on it."""
    slow_clock = ROOT / "tests" / "conform" / "traces" / "lease-timing-slow-clock.json"
    result = verify(
        "conform", str(slow_clock), "--against", "etcd", "--client", f"{sys.executable} {ELECTOR}"
    )
    assert result.exit_code == 2, result.output
    line = result.stderr.strip()
    assert line.startswith(
        "error: --client: a client under test is not driven on etcd (lease-timing); it is on"
        " lease-no-fencing on etcd, lease-fencing on etcd, lease-cas on postgres,"
    ), line
    assert "zookeeper-multi on zookeeper" in line and "redlock on redis" in line
    assert "\n" not in line

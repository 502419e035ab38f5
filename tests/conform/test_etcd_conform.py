"""The lease counterexamples on a real 3-member etcd cluster, and random schedules against it.

The seed scenario reproduces: without fencing the paused old leader's write lands in the
real storage after the new leader's; the same schedule with fencing is refused by a
real etcd transaction. A deliberately wrong time mapping (TTLs granted twice as long as
the model's) is caught where the model's lease runs out, both for the trace and for
random schedules, which shrink to a short divergent history.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leadercheck.checker.conform import servers
from leadercheck.checker.conform.run import conform_trace
from leadercheck.checker.conform.world import Timing
from tests.conform.helpers import ROOT, conform, plan_steps, verify

pytestmark = [
    pytest.mark.conform,
    pytest.mark.skipif(
        servers.available("etcd") is not None, reason=str(servers.available("etcd"))
    ),
]
LEASE = ROOT / "counterexamples" / "lease-no-fencing.json"


def test_the_stale_write_lands_in_real_etcd_without_fencing(tmp_path: Path) -> None:
    timeline = tmp_path / "timeline.json"
    result = verify(
        "conform", str(LEASE), "--against", "etcd", "--timeline", str(timeline),
        "--html", str(tmp_path / "html"),
    )  # fmt: skip
    assert result.exit_code == 1, result.output  # the model's anomaly, made real: a violation
    assert result.stdout.count("\nVIOLATED on etcd: no-stale-write broke at step 10 (storage:") == 1
    assert "CONFORMS: etcd did what the model predicted at every step" in result.stdout
    assert "now:  storage: highest token 2, a stale write accepted" in result.stdout
    record = json.loads(timeline.read_text())
    assert record["verdict"] == "CONFORMS"
    assert record["server"].startswith("etcd 3.")
    rows = record["timeline"]
    assert [r["step"] for r in rows] == list(range(11))
    assert all(r["matches"] for r in rows)
    assert rows[3]["real"].startswith("SIGSTOP n1")
    assert rows[10]["observed"] == {
        "call": "accepted",
        "storage": "highest token 2, a stale write accepted",
        "store": "n2 holds lease token 2",
    }
    assert rows[5]["at_seconds"] >= 2.0  # two ticks of one real second each
    page = (tmp_path / "html" / "lease-no-fencing.html").read_text()
    assert "Against the real system: etcd 3." in page
    assert page.count('<tr data-step="10"') == 2  # the step list and the timeline
    assert "<svg" in page or "no chart" in page.lower()


def test_the_same_schedule_with_fencing_is_refused_by_real_etcd() -> None:
    report = conform(LEASE, "etcd", protocol="lease-fencing")
    result = report.result
    assert result.verdict == "CONFORMS", [e.differences() for e in result.entries]
    last = result.entries[-1]
    assert last.model_event == "n1 -> storage: write (token 1 rejected: 1 < 2)"
    assert last.observed["call"] == "rejected"
    assert last.observed["storage"] == "highest token 2"


@pytest.mark.parametrize("scale", ["2", "1.5"])
def test_a_ttl_mapped_wrongly_diverges_where_the_lease_runs_out(scale: str) -> None:
    """A TTL of 2 ticks granted 1.5 times too long ends a tick late, outside the 0.6 s
    window (which the old fixed 1.5 s window let through)."""
    result = verify("conform", str(LEASE), "--against", "etcd", "--ttl-scale", scale, "--json")
    assert result.exit_code == 4, result.output  # a divergence, and no claim broke
    record = json.loads(result.stdout)
    assert record["verdict"] == "DIVERGES"
    assert record["divergence"]["step"] == 5
    assert record["divergence"]["differences"] == [
        "store: the model says 'no lease held', the real system 'n1 holds lease token 1'"
    ]
    assert "deliberately wrong" in record["time_mapping"]
    assert record["time_mapping"].endswith(
        "facts may take up to 0.6 s to show (etcd carries out an expiry up to 0.5 s late)"
    )
    assert record["anomaly"]["text"].startswith("ANOMALY NOT REPRODUCED: the model breaks")


def test_random_schedules_on_real_etcd_are_paths_of_the_model(tmp_path: Path) -> None:
    timeline = tmp_path / "random.json"
    result = verify(
        "conform", "--against", "etcd", "--random", "3", "-p", "nodes=2", "--steps", "6",
        "--seed", "1", "--timeline", str(timeline),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "every observed history is a path of the model" in result.stdout
    record = json.loads(timeline.read_text())
    assert record["schedules_run"] == 3 and record["divergent_history"] is None


def test_a_wrong_mapping_is_found_by_random_schedules_and_shrunk() -> None:
    from leadercheck.checker.conform.bindings import binding_for
    from leadercheck.checker.conform.random_walks import random_walks
    from leadercheck.checker.conform.run import running_servers, world_for
    from leadercheck.checker.protocols.catalogue import built_in

    entry = built_in().lookup("lease-no-fencing")
    values = entry.resolve({"nodes": "2", "crashes": "0", "partitions": "0", "losses": "0"})
    binding = binding_for(entry.name, "etcd", values)
    timing = Timing(tick=0.5, ttl_scale=3.0)  # a real lease of 3 s where the model says 1 s
    with running_servers("etcd", None) as running:
        found = random_walks(
            entry.build(values), binding,
            lambda: world_for(binding, running, timing, Path("/tmp")),
            schedules=25, seed=3, max_steps=8, budget=75,
        )  # fmt: skip
    shortest = found.shortest
    assert shortest is not None, f"{found.schedules} schedules found nothing"
    divergence = shortest.divergence
    assert divergence is not None and divergence.model_event == "clock: tick"
    told = divergence.differences()
    assert any(d.startswith("store: the model says 'no lease held'") for d in told), told
    assert len(shortest.entries) - 1 <= 8


def test_ctrl_c_mid_run_is_incomplete_and_leaves_nothing_running(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    import psutil

    timeline = tmp_path / "t.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "leadercheck.checker.app", "conform", str(LEASE), "--against",
         "etcd", "--timeline", str(timeline)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    children: set[int] = set()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and len(children) < 6:  # 3 etcd members + 3 clients
        children = {c.pid for c in psutil.Process(proc.pid).children(recursive=True)}
        time.sleep(0.1)
    time.sleep(1.0)  # into the ticks
    os.kill(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 3, out + err
    assert "INCOMPLETE: interrupted" in out  # after some steps, or before the first
    assert json.loads(timeline.read_text())["verdict"] == "INCOMPLETE"
    time.sleep(0.5)
    assert len(children) >= 6
    alive = [p for p in children if psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"]
    assert not alive


def test_a_trace_cut_short_of_its_violation_says_the_anomaly_did_not_happen(
    tmp_path: Path,
) -> None:
    """Its steps all conform, and the run says no claim broke on either side: it is not
    read as the counterexample reproduced."""
    doc = json.loads(LEASE.read_text())
    doc["steps"], doc["length"] = doc["steps"][:8], 7
    cut = tmp_path / "cut.json"
    cut.write_text(json.dumps(doc))
    result = verify("conform", str(cut), "--against", "etcd")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-2] == (
        "no anomaly: the model breaks no-stale-write nowhere in this schedule, and etcd showed none"
    )
    full = verify("conform", str(LEASE), "--against", "etcd", "--json")
    assert json.loads(full.stdout)["anomaly"] == {
        "claim": "no-stale-write",
        "model_step": 10,
        "real_step": 10,
        "evidence": "storage: highest token 2, a stale write accepted",
        "observable": True,
        "reproduced": True,
        "text": "ANOMALY REPRODUCED: no-stale-write broken on etcd at step 10 (storage:"
        " highest token 2, a stale write accepted); the model breaks it at step 10",
    }


def test_a_lost_reply_is_the_transactions_and_the_timeline_names_it() -> None:
    """n1's acquire is a lease grant, then the transaction; the reply the model loses is
    the transaction's (the grant's passes), and the timeline names that request."""
    params, steps = plan_steps("lease-no-fencing", [("acquire", "n1", "reply lost")])
    report = conform_trace("lease-no-fencing", params, steps, "etcd", Timing())
    assert report.result.verdict == "CONFORMS", [e.real_event for e in report.result.entries]
    row = report.result.entries[1]
    assert row.observed == {"store": "n1 holds lease token 1", "storage": "no writes",
                            "call": "no reply"}  # fmt: skip
    assert row.real_event.startswith("n1 grant: lease=")  # the grant's reply arrived
    assert "proxy dropped n1's reply to POST /v3/kv/txn" in row.real_event

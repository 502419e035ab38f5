"""Silent partitions (`verify conform --partition silent`): the proxy holds every byte until
the heal instead of resetting the connections, so nobody hears of the cut until its own
timeouts fire. On ZooKeeper the cut-off leader's session still expires in the server's own
time and the stale write lands as the model says; on etcd the example elector's keep-alive
thread is held too and its lease runs out. Each effect is shown to be the cut's: with the
proxy's cut made a no-op, the same run diverges where the model ends the session or lease."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from leadercheck.checker.app.main import main
from leadercheck.checker.conform import servers
from leadercheck.checker.conform.bindings import binding_for
from leadercheck.checker.conform.bindings.base import Binding
from leadercheck.checker.conform.proxy import FaultProxy
from leadercheck.checker.protocols.catalogue import built_in
from tests.conform.helpers import ROOT, scheduled

pytestmark = pytest.mark.conform
ZOOKEEPER_TRACE = ROOT / "counterexamples" / "zookeeper.json"
ELECTOR = ROOT / "examples" / "clients" / "etcd_elector.py"
#: n1 takes the lease and is cut off silently; the lease (2 ticks) runs out with the ticks
LEASE_CUT = [("acquire", "n1"), ("partition", "n1"), ("tick", "clock"), ("tick", "clock")]


def needs(system: str) -> pytest.MarkDecorator:
    why = servers.available(system)
    return pytest.mark.skipif(why is not None, reason=str(why))


@needs("zookeeper")
def test_a_silently_cut_leaders_session_expires_and_its_late_write_lands(tmp_path: Path) -> None:
    timeline = tmp_path / "run.json"
    result = CliRunner().invoke(
        main,
        ["conform", str(ZOOKEEPER_TRACE), "--against", "zookeeper", "--partition", "silent",
         "--timeline", str(timeline)],
        catch_exceptions=False,
    )  # fmt: skip
    assert result.exit_code == 1, result.output  # the late write landed: a violation, conforming
    assert "partitions: silent: the proxy holds every byte until the heal" in result.stdout
    record = json.loads(timeline.read_text())
    assert record["partitions"].startswith("silent")
    rows = record["timeline"]
    assert "holds every byte of its 1 open connection" in rows[3]["real"]
    assert rows[3]["fault_effect"] is True
    assert "z1" in rows[4]["observed"]["store"] and "z1" not in rows[5]["observed"]["store"]
    assert record["anomaly"]["real_step"] == 9  # the stale write, on the real system


@needs("zookeeper")
def test_with_the_silent_cut_a_no_op_the_session_lives_on(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = [("create", "n1"), ("check", "n1"), ("partition", "n1"), ("tick", "clock")]
    params = {"nodes": 2, "timeout": 2, "seqs": 3, "crashes": 0, "partitions": 1, "pauses": 0}
    binding = binding_for("zookeeper", "zookeeper", params)
    binding.silent_cuts = True
    monkeypatch.setattr(FaultProxy, "cut", lambda self, silent=False: 0)
    report = scheduled("zookeeper", params, [*plan, ("tick", "clock")], "zookeeper", binding)
    divergence = report.result.divergence
    assert divergence is not None and divergence.step == 5
    assert "z1" in divergence.observed["store"]


def _etcd_elector_binding() -> Binding:
    params = built_in().lookup("lease-fencing").resolve({"nodes": "2"})
    binding = binding_for("lease-fencing", "etcd", params)
    binding.client_command = [sys.executable, str(ELECTOR), "--variant", "fenced"]
    binding.silent_cuts = True
    return binding


@needs("etcd")
def test_a_silent_cut_holds_the_keep_alive_thread_and_the_lease_runs_out() -> None:
    report = scheduled("lease-fencing", {"nodes": 2}, LEASE_CUT, "etcd", _etcd_elector_binding())
    assert report.result.verdict == "CONFORMS", [e.differences() for e in report.result.entries]
    entries = report.result.entries
    assert "holds every byte" in entries[2].real_event
    assert entries[1].observed["store"] == "n1 holds lease token 1"
    assert entries[4].observed["store"] == "no lease held"


@needs("etcd")
def test_with_the_cut_a_no_op_the_keep_alive_gets_through(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(FaultProxy, "cut", lambda self, silent=False: 0)
    report = scheduled("lease-fencing", {"nodes": 2}, LEASE_CUT, "etcd", _etcd_elector_binding())
    divergence = report.result.divergence
    assert divergence is not None and divergence.step == 4
    assert divergence.observed["store"] == "n1 holds lease token 1"

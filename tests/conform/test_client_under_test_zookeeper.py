"""The user's own client on a real ZooKeeper (`verify conform --client`), and fencing the
server decides: the example elector's unfenced write is caught by the paused-leader
counterexample under `zookeeper-multi` and by random schedules; its multi (a check of its
own znode and the append, one transaction) conforms, ZooKeeper refusing the late write;
this project's own client does the same."""

from __future__ import annotations

import json
import sys

import pytest

from leadercheck.checker.conform import servers
from tests.conform.helpers import ROOT, conform, verify

pytestmark = [
    pytest.mark.conform,
    pytest.mark.skipif(
        servers.available("zookeeper") is not None, reason=str(servers.available("zookeeper"))
    ),
]
PAUSED = ROOT / "tests" / "conform" / "traces" / "zookeeper-paused-leader.json"
ELECTOR = ROOT / "examples" / "clients" / "zookeeper_elector.py"


def elector(variant: str) -> str:
    return f"{sys.executable} {ELECTOR} --variant {variant}"


def test_zookeeper_itself_refuses_the_expired_leaders_write() -> None:
    report = conform(PAUSED, "zookeeper", protocol="zookeeper-multi")
    result = report.result
    assert result.verdict == "CONFORMS", [e.real_event for e in result.entries]
    last = result.entries[-1]
    assert last.expected["call"] == "rejected" and "its znode is gone" in last.real_event


def test_the_unfenced_elector_is_caught_by_the_counterexample() -> None:
    result = verify(
        "conform", str(PAUSED), "--against", "zookeeper", "--protocol", "zookeeper-multi",
        "--client", elector("unfenced"), "--json",
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    record = json.loads(result.stdout)
    assert record["divergence"]["step"] == 10
    assert record["anomaly"]["text"].startswith(
        "CAUGHT: the client under test broke no-stale-write on zookeeper at step 10 (storage:"
        " highest epoch 2, a stale write accepted)"
    )


def test_the_multi_elector_conforms_under_the_same_schedule() -> None:
    result = verify(
        "conform", str(PAUSED), "--against", "zookeeper", "--protocol", "zookeeper-multi",
        "--client", elector("multi"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "n1 write: accepted=False" in result.stdout
    assert "its session heartbeat thread (kazoo's) stops" in result.stdout


def test_random_schedules_catch_the_unfenced_elector() -> None:
    """The first divergence is a write ZooKeeper would have refused (the writer's znode
    expired), found within a few schedules."""
    result = verify(
        "conform", "--against", "zookeeper", "--random", "4", "--protocol", "zookeeper-multi",
        "-p", "nodes=2", "--client", elector("unfenced"), "--budget", "40", "--json",
    )  # fmt: skip
    assert result.exit_code == 4, result.output  # a divergence; no claim broke (yet) for real
    record = json.loads(result.stdout)
    last = record["divergent_history"]["timeline"][-1]
    assert "write (epoch" in last["model"] and "is gone)" in last["model"]
    assert "accepted=True" in last["real"]

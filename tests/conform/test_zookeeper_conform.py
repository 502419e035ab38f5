"""The ZooKeeper election recipe's counterexample made real on ZooKeeper 3.8 through kazoo.

The saved counterexample (n1 leads, is cut off, its session expires in ZooKeeper's own
time, n2 leads and writes, n1 still writes) conforms on both protocols: the stale write
lands without fencing and is refused with it. A session timeout three times the model's
diverges where the model deletes n1's znode. Two schedules built from the model cover
the events the ensemble sends a node: a watch that fires (late, after a cut, and after a
pause) and a SESSION_EXPIRED heard on reconnecting.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from leadercheck.checker.conform import servers
from leadercheck.checker.conform.proxy import FaultProxy
from leadercheck.checker.conform.run import Report
from leadercheck.checker.conform.world import Timing
from tests.conform import helpers
from tests.conform.helpers import ROOT, conform

TRACE = ROOT / "counterexamples" / "zookeeper.json"

pytestmark = [
    pytest.mark.conform,
    pytest.mark.skipif(
        servers.available("zookeeper") is not None,
        reason=str(servers.available("zookeeper")),
    ),
]


def timeline(report: Report) -> str:
    """The run as text, for an assertion's message."""
    return "\n".join(
        f"{e.step} t={e.ticks} {e.model_event} | {e.real_event} | {e.differences()}"
        for e in report.result.entries
    )


def scheduled(protocol: str, params: dict[str, int], plan: Sequence[tuple[str, str]]) -> Report:
    return helpers.scheduled(protocol, params, plan, "zookeeper")


def test_stale_write_lands_without_fencing() -> None:
    report = conform(TRACE, "zookeeper")
    assert report.result.verdict == "CONFORMS", timeline(report)
    last = report.result.entries[-1]
    assert last.observed["storage"] == "highest epoch 2, a stale write accepted"
    assert last.observed["call"] == "accepted"


def test_the_partition_has_its_effect_for_real(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cut at step 3 is real: n1's session expires in ZooKeeper's own time, so z1 is
    gone after the second tick. With the proxy's cut made a no-op, n1's heartbeats get
    through, the session lives on and the run diverges right there."""
    report = conform(TRACE, "zookeeper")
    entries = report.result.entries
    assert entries[3].effect is True and "cuts every connection" in entries[3].real_event
    assert "z1" not in entries[5].observed["store"] and "z1" in entries[4].observed["store"]
    monkeypatch.setattr(FaultProxy, "cut", lambda self, silent=False: 0)
    uncut = conform(TRACE, "zookeeper")
    divergence = uncut.result.divergence
    assert divergence is not None and divergence.step == 5, timeline(uncut)
    assert "z1" in divergence.observed["store"]


def test_late_write_refused_with_fencing() -> None:
    report = conform(TRACE, "zookeeper", protocol="zookeeper-fencing")
    assert report.result.verdict == "CONFORMS", timeline(report)
    last = report.result.entries[-1]
    assert last.observed == {
        "store": "/election: z2 n2",
        "storage": "highest epoch 2",
        "call": "rejected",
    }


def test_session_that_outlives_the_model_diverges() -> None:
    report = conform(TRACE, "zookeeper", timing=Timing(ttl_scale=3.0))
    assert report.result.verdict == "DIVERGES", timeline(report)
    where = report.result.divergence
    assert where is not None and where.step == 5, timeline(report)  # the tick z1 expires at
    assert where.differences() == [
        "store: the model says '/election empty', the real system '/election: z1 n1'"
    ]


PARAMS = {"nodes": 3, "timeout": 2, "seqs": 3, "crashes": 0, "partitions": 2, "pauses": 1}


def test_watch_after_a_cut_and_expiry_heard_on_reconnect() -> None:
    """n2 watches z1 and is cut too, so kazoo drops its watch; after the heal the watch is
    found fired, and n1 hears SESSION_EXPIRED, joins again and watches z2."""
    plan = [
        ("create", "n1"),
        ("check", "n1"),
        ("create", "n2"),
        ("check", "n2"),
        ("partition", "n1"),
        ("tick", "clock"),
        ("partition", "n2"),
        ("tick", "clock"),  # z1 expires
        ("heal", "network"),
        ("watch fires", "store"),
        ("check", "n2"),
        ("write", "n2"),
        ("expired", "store"),
        ("create", "n1"),
        ("check", "n1"),
    ]
    report = scheduled("zookeeper", PARAMS, plan)
    assert report.result.verdict == "CONFORMS", timeline(report)
    calls = [e.observed["call"] for e in report.result.entries[1:]]
    assert calls[9:] == ["seen", "leads", "accepted", "seen", "created", "watches z2"]


def test_watch_delivered_to_a_paused_node() -> None:
    """n2 is paused while z1 expires; the notification waits for it to run again."""
    plan = [
        ("create", "n1"),
        ("check", "n1"),
        ("create", "n2"),
        ("check", "n2"),
        ("partition", "n1"),
        ("tick", "clock"),
        ("pause", "n2"),
        ("tick", "clock"),  # z1 expires; n2's session has a tick left
        ("resume", "n2"),
        ("watch fires", "store"),
        ("check", "n2"),
    ]
    report = scheduled("zookeeper", PARAMS, plan)
    assert report.result.verdict == "CONFORMS", timeline(report)
    assert report.result.entries[-1].observed == {
        "store": "/election: z2 n2",
        "storage": "no writes",
        "call": "leads",
    }

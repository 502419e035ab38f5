"""The lease-in-a-row protocols against a real PostgreSQL (bindings/postgres.py).

The blind-write counterexample happens for real (both UPDATEs take the row, both nodes
lead with token 1); on lease-cas the same schedule has the second UPDATE match no row;
the fenced storage's trigger refuses a paused leader's late write; a cut link and a lost
reply are what the model says; and two wrong mappings (the UPDATE without its WHERE, a
TTL twice too long) are caught at the step where they show, in the store's fact.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import psycopg
import pytest

from leadercheck.checker.conform import servers
from leadercheck.checker.conform.bindings.postgres import PostgresLeaseRow
from leadercheck.checker.conform.clients.postgres import connect
from leadercheck.checker.conform.harness import Conformance, ModelStep, run_trace
from leadercheck.checker.conform.run import conform_trace, running_servers, world_for
from leadercheck.checker.conform.world import Timing
from tests.conform.helpers import ROOT, conform, plan_steps, trace_steps

BLIND_WRITE = ROOT / "counterexamples/lease-blind-write.json"

pytestmark = [
    pytest.mark.conform,
    pytest.mark.skipif(
        servers.available("postgres") is not None, reason=servers.available("postgres") or ""
    ),
]

#: (action, actor, a word its note must hold); without a word, the reply is not lost
Plan = Sequence[tuple[str, str | None, str]]

#: lease-cas: n1 pauses between its check and its write, its lease passes to n2, and its
#: late write under token 1 reaches the storage after n2's under token 2
LATE_WRITE: Plan = [
    ("read", "n1", ""),
    ("update", "n1", ""),
    ("check", "n1", ""),
    ("pause", "n1", ""),
    ("tick", None, ""),
    ("tick", None, ""),
    ("read", "n2", ""),
    ("update", "n2", ""),
    ("check", "n2", ""),
    ("write", "n2", ""),
    ("resume", "n1", ""),
    ("write", "n1", ""),
]

#: lease-cas: an update sent over a cut link fails; after the heal one whose reply is lost
#: takes the row all the same, and the row is free again once its TTL has run out
CUT_AND_LOST: Plan = [
    ("read", "n1", ""),
    ("partition", "n1", ""),
    ("update", "n1", "fails"),
    ("heal", None, ""),
    ("read", "n1", ""),
    ("update", "n1", "reply lost"),
    ("tick", None, ""),
    ("tick", None, ""),
    ("read", "n2", ""),
    ("update", "n2", ""),
]


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    """One server for the module's runs: each run has a schema of its own on it."""
    with servers.start("postgres") as server:
        host, port = server.endpoints[0]
        yield f"{host}:{port}"


def run(
    binding: PostgresLeaseRow, steps: Sequence[ModelStep], endpoint: str, timing: Timing
) -> Conformance:
    """A run with a binding of the test's own (conform_trace takes the registered one)."""
    with (
        running_servers("postgres", endpoint) as running,
        tempfile.TemporaryDirectory(prefix="leadercheck-clients-") as logs,
    ):
        return run_trace(binding, world_for(binding, running, timing, Path(logs)), steps)


def timeline(result: Conformance) -> str:
    return "\n".join(
        f"{e.step} {e.model_event} | {e.real_event} | {e.differences()}" for e in result.entries
    )


def real_events(result: Conformance) -> dict[int, str]:
    return {e.step: e.real_event for e in result.entries}


def test_blind_write_makes_two_leaders_of_one_token() -> None:
    report = conform(BLIND_WRITE, "postgres")
    result = report.result
    assert result.verdict == "CONFORMS", timeline(result)
    assert len(result.entries) == 5
    events = real_events(result)
    assert "n1 update: granted=True, token=1" in events[3]
    assert "n2 update: granted=True, token=1" in events[4]  # the same token: two leaders
    assert result.entries[-1].observed["store"] == "n2 holds lease token 1"


def test_cas_refuses_the_second_update(endpoint: str) -> None:
    protocol, params, steps = trace_steps(BLIND_WRITE, protocol="lease-cas")
    result = conform_trace(protocol, params, steps, "postgres", Timing(), endpoint=endpoint).result
    assert result.verdict == "CONFORMS", timeline(result)
    last = result.entries[-1]
    assert "0 rows" in last.model_event
    assert "n2 update: granted=False" in last.real_event
    assert last.observed == {
        "store": "n1 holds lease token 1",
        "storage": "no writes",
        "call": "refused",
    }


def test_fenced_storage_rejects_the_late_write(endpoint: str) -> None:
    params, steps = plan_steps("lease-cas", LATE_WRITE)
    report = conform_trace("lease-cas", params, steps, "postgres", Timing(), endpoint=endpoint)
    result = report.result
    assert result.verdict == "CONFORMS", timeline(result)
    last = result.entries[-1]
    assert last.expected["call"] == last.observed["call"] == "rejected"
    assert "409 STALE TOKEN: 1 < 2" in last.real_event  # PostgreSQL's trigger said so
    assert last.observed["storage"] == "highest token 2"
    binding = report.binding
    assert isinstance(binding, PostgresLeaseRow)
    host, port = endpoint.split(":")
    dsn = f"host={host} port={port} user=leadercheck dbname=postgres"
    with connect(dsn, binding.schema, 2.0) as conn:
        assert conn.execute("SELECT token FROM writes ORDER BY seq").fetchall() == [(2,)]
        with pytest.raises(psycopg.errors.CheckViolation, match="409 STALE TOKEN"):
            conn.execute("INSERT INTO writes (token, node) VALUES (1, 'test')")


def test_cut_link_and_lost_reply(endpoint: str) -> None:
    params, steps = plan_steps("lease-cas", CUT_AND_LOST)
    report = conform_trace("lease-cas", params, steps, "postgres", Timing(), endpoint=endpoint)
    assert report.result.verdict == "CONFORMS", timeline(report.result)
    by_step = {e.step: e for e in report.result.entries}
    assert by_step[3].observed["call"] == "no reply"
    assert by_step[6].observed == {
        "store": "n1 holds lease token 1",  # the UPDATE took effect; n1 never heard
        "storage": "no writes",
        "call": "no reply",
    }
    assert "proxy dropped n1's reply" in by_step[6].real_event
    assert by_step[10].observed["store"] == "n2 holds lease token 2"


class UpdateWithoutWhere(PostgresLeaseRow):
    """A wrong mapping: lease-cas's steps made with the blind UPDATE."""

    blind = True


def test_update_without_where_is_caught(endpoint: str) -> None:
    protocol, params, steps = trace_steps(BLIND_WRITE, protocol="lease-cas")
    result = run(UpdateWithoutWhere(protocol, params), steps, endpoint, Timing())
    assert result.verdict == "DIVERGES", timeline(result)
    divergence = result.divergence
    assert divergence is not None and divergence.step == 4
    assert (
        "store: the model says 'n1 holds lease token 1', the real system"
        " 'n2 holds lease token 1'" in divergence.differences()
    )


def test_ttl_twice_too_long_is_caught(endpoint: str) -> None:
    params, steps = plan_steps("lease-cas", LATE_WRITE)
    timing = Timing(ttl_scale=2.0)
    result = conform_trace("lease-cas", params, steps, "postgres", timing, endpoint=endpoint)
    divergence = result.result.divergence
    assert divergence is not None, timeline(result.result)
    assert divergence.step == 6  # the second tick: the model's lease ran out, the real one not
    assert divergence.differences() == [
        "store: the model says 'no lease held', the real system 'n1 holds lease token 1'"
    ]


def test_the_fencing_trigger_refuses_the_paused_leaders_late_write() -> None:
    """A schedule a guided --random run kept (--keep): n2 takes the row and checks, is
    paused past its lease, n1 takes the row and writes token 2, n2 resumes and writes
    token 1. The model's storage refuses it, and so does PostgreSQL's trigger."""
    trace = Path(__file__).parent / "traces" / "lease-cas-stale-write-refused.json"
    report = conform(trace, "postgres")
    result = report.result
    assert result.verdict == "CONFORMS", [e.differences() for e in result.entries]
    last = result.entries[-1]
    assert last.step == 12 and last.observed["call"] == "rejected"
    assert "storage=409 STALE TOKEN: 1 < 2" in last.real_event

"""Real client libraries, used as their users use them, under the model's schedules: thin
adapters over etcd3gw's `Lock`, kazoo's `Lock` and `Election`, redis-py's `Lock` and a
psycopg session advisory lock (examples/clients/). The harness reads leadership where each
library keeps it (etcd3gw's `/locks/<name>` holding its uuid, kazoo's `<uuid>__lock__<seq>`
znodes, redis-py's one key holding the token it was given, PostgreSQL's `pg_locks`), and a
refusal kazoo raises is compared as the refusal it is. Unfenced, the counterexample and
random schedules both end VIOLATED (exit 1) with what broke as the headline; fenced, both
conform."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from leadercheck.checker.conform import servers
from tests.conform.helpers import ROOT, verify

CLIENTS = ROOT / "examples" / "clients"
LEASE = ROOT / "counterexamples" / "lease-no-fencing.json"
PAUSED = ROOT / "tests" / "conform" / "traces" / "zookeeper-paused-leader.json"
ZOOKEEPER = ROOT / "counterexamples" / "zookeeper.json"
EXPIRED = ROOT / "counterexamples" / "redis-lock.json"  # a key expired unseen: two holders
RESTARTED = ROOT / "counterexamples" / "redis-lock.no-stale-write.json"
HANDED_ON = ROOT / "counterexamples" / "advisory-lock.json"  # a reset hands the lock on
LATE_WRITE = ROOT / "counterexamples" / "advisory-lock.no-stale-write.json"


def _needs(system: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(
        servers.available(system) is not None, reason=str(servers.available(system))
    )


#: adapter (examples/clients/<adapter>.py): its system, (protocol, trace) unfenced and
#: fenced, and random's options
LIBRARIES = {
    "etcd3gw_lock": (
        "etcd",
        (("lease-no-fencing", LEASE), ("lease-fencing", LEASE)),
        ["-p", "check=store"],  # its is_acquired() asks the store
    ),
    "kazoo_lock": ("zookeeper", (("zookeeper", ZOOKEEPER), ("zookeeper-multi", PAUSED)), []),
    "kazoo_election": ("zookeeper", (("zookeeper", ZOOKEEPER), ("zookeeper-multi", PAUSED)), []),
    "redis_py_lock": ("redis", (("redis-lock", EXPIRED), ("redis-lock-fencing", RESTARTED)), []),
    "psycopg_advisory_lock": (
        "postgres",
        (("advisory-lock", HANDED_ON), ("advisory-lock-fencing", LATE_WRITE)),
        [],
    ),
}
#: a longer tick where a client's steps take long enough that 14 of them, a restart among
#: them (a new process importing its library), can add up to a tick: the run would fall
#: behind the time mapping and say so (exit 3), which is honest but judges nothing
SLOWER = {"etcd3gw_lock": ["--tick", "2"]}
#: the claim each unfenced library's counterexample breaks for real
CAUGHT = {
    "etcd3gw_lock": "no-stale-write",
    "kazoo_lock": "no-stale-write",
    "kazoo_election": "no-stale-write",
    "redis_py_lock": "single-leader",
    "psycopg_advisory_lock": "single-leader",
}
pytestmark = [pytest.mark.conform]


def client(library: str, variant: str) -> str:
    return f"{sys.executable} {CLIENTS / f'{library}.py'} --variant {variant}"


@pytest.mark.parametrize(
    "library", [pytest.param(k, marks=_needs(v[0])) for k, v in LIBRARIES.items()]
)
def test_the_unfenced_library_is_caught_by_the_counterexample(library: str, tmp_path: Path) -> None:
    system, ((unfenced, trace), _), _ = LIBRARIES[library]
    timeline = tmp_path / "run.json"
    result = verify(
        "conform", str(trace), "--against", system, "--protocol", unfenced,
        "--client", client(library, "unfenced"), "--timeline", str(timeline),
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert f"VIOLATED on {system}: {CAUGHT[library]} broke at step" in result.stdout
    rows = json.loads(timeline.read_text())["timeline"]
    held = [r["observed"]["store"] for r in rows if "n1" in r["observed"].get("store", "")]
    assert held, "the library's own lock was read as n1's"
    assert "unclaimed" not in json.dumps(rows)


@pytest.mark.parametrize(
    "library", [pytest.param(k, marks=_needs(v[0])) for k, v in LIBRARIES.items()]
)
def test_the_fenced_library_conforms_under_the_same_schedule(library: str) -> None:
    system, (_, (fenced, trace)), _ = LIBRARIES[library]
    result = verify(
        "conform", str(trace), "--against", system, "--protocol", fenced,
        "--client", client(library, "fenced"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "CONFORMS" in result.stdout and "VIOLATED" not in result.stdout


@_needs("zookeeper")
def test_kazoos_refusal_of_an_expired_sessions_write_is_compared_as_a_refusal() -> None:
    """kazoo raises SessionExpiredError for the multi of a holder whose session expired:
    the adapter says `"refused": true`, and the model's "rejected" matches it."""
    result = verify(
        "conform", str(PAUSED), "--against", "zookeeper", "--protocol", "zookeeper-multi",
        "--client", client("kazoo_lock", "fenced"), "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    last = json.loads(result.stdout)["timeline"][-1]
    assert "(refused)" in last["real"] and last["observed"]["call"] == "rejected"


@pytest.mark.parametrize(
    "library", [pytest.param(k, marks=_needs(v[0])) for k, v in LIBRARIES.items()]
)
def test_random_schedules_catch_the_unfenced_library(library: str) -> None:
    """At the defaults (three nodes, twelve schedules)."""
    system, ((unfenced, _), _), options = LIBRARIES[library]
    result = verify(
        "conform", "--against", system, "--random", "12", "--protocol", unfenced, *options,
        "--client", client(library, "unfenced"), "--json",
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    record = json.loads(result.stdout)
    assert record["violating_history"]["real_breaks"], record


@pytest.mark.parametrize(
    "library", [pytest.param(k, marks=_needs(v[0])) for k, v in LIBRARIES.items()]
)
def test_random_schedules_find_the_fenced_library_conforming(library: str) -> None:
    system, (_, (fenced, _)), options = LIBRARIES[library]
    result = verify(
        "conform", "--against", system, "--random", "4", "--protocol", fenced, *options,
        *SLOWER.get(library, []), "-p", "nodes=2", "--client", client(library, "fenced"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output


@_needs("etcd")
@pytest.mark.skipif(shutil.which("node") is None, reason="node not found: apt-get install nodejs")
@pytest.mark.parametrize(("variant", "protocol", "code"), [
    ("unfenced", "lease-no-fencing", 1), ("fenced", "lease-fencing", 0),
])  # fmt: skip
def test_a_client_in_another_language_speaks_the_same_lines(
    variant: str, protocol: str, code: int
) -> None:
    """examples/clients/etcd_elector.mjs: JavaScript on Node.js, nothing installed but node."""
    result = verify(
        "conform", str(LEASE), "--against", "etcd", "--protocol", protocol,
        "--client", f"node {CLIENTS / 'etcd_elector.mjs'} --variant {variant}",
    )  # fmt: skip
    assert result.exit_code == code, result.output
    assert ("VIOLATED on etcd: no-stale-write broke at step 10" in result.stdout) == (code == 1)

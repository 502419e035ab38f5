"""`verify conform`'s ends that need no server: a closed endpoint, the client libraries'
errors in one line, a missing hypothesis, and random schedules stopped by Ctrl-C, a
spent budget or a failing system without hypothesis turning it into something else.

Port 1 on loopback is closed on any machine these run on, so every library's "connection
refused" can be produced for real here.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from leadercheck.checker.conform import random_walks as walks_module
from leadercheck.checker.conform import servers
from leadercheck.checker.conform.failures import SystemFailure, probe, reason, talking_to
from leadercheck.checker.conform.harness import Conformance, Entry
from leadercheck.checker.errors import LeadercheckError
from tests.conform.helpers import verify

ROOT = Path(__file__).resolve().parents[2]
LEASE = ROOT / "counterexamples" / "lease-no-fencing.json"
CLOSED = "127.0.0.1:1"
REDLOCK = str(ROOT / "examples" / "redlock.py")


def one_line_error(result: Result, *texts: str) -> str:
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.output
    for text in texts:
        assert text in result.stderr, result.stderr
    return str(result.stderr)


@pytest.fixture
def no_server_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Starting a server fails the test: what is refused must be refused before."""

    def start(system: str, **kw: Any) -> Any:
        raise AssertionError(f"a {system} server was started")

    monkeypatch.setattr(servers, "start", start)


# -- a closed endpoint, in one line, for each system and both modes -------------------------


@pytest.mark.parametrize(
    "args",
    [
        # the random mode of etcd and PostgreSQL in the slow set: zookeeper's and redis's
        # random mode and every system's trace mode stay in the default one
        pytest.param(["--against", "etcd", "--random", "2", "--endpoint", CLOSED],
                     marks=pytest.mark.slow),
        [str(LEASE), "--against", "etcd", "--endpoint", CLOSED],
        pytest.param(["--against", "postgres", "--random", "2", "--endpoint", CLOSED],
                     marks=pytest.mark.slow),
        [
            str(ROOT / "counterexamples" / "lease-blind-write.json"),
            "--against", "postgres", "--endpoint", CLOSED,
        ],
        ["--against", "zookeeper", "--random", "2", "--endpoint", CLOSED],
        [
            str(ROOT / "counterexamples/zookeeper.json"),
            "--against", "zookeeper", "--endpoint", CLOSED,
        ],
        pytest.param(  # redis-py retries a refused connection with backoff: 11 s
            ["--model", REDLOCK, "--against", "redis", "--random", "2",
             "--endpoint", ",".join(f"127.0.0.1:{p}" for p in (1, 2, 3, 4, 5))],
            marks=pytest.mark.slow,
        ),
    ],
)  # fmt: skip
def test_a_closed_endpoint_is_one_line_naming_system_and_address(
    args: list[str], no_server_starts: None
) -> None:
    system = args[args.index("--against") + 1]
    one_line_error(verify("conform", *args), f"error: {system} at 127.0.0.1:1: connection refused")


def test_an_unknown_host_is_one_line(no_server_starts: None) -> None:
    result = verify(
        "conform", str(LEASE), "--against", "etcd", "--endpoint", "nowhere.invalid:2379"
    )
    one_line_error(result, "etcd at nowhere.invalid:2379: host not found")


# -- each client library's own errors, as the harness meets them after the probe --------------


def _etcd() -> None:
    from etcd3gw.client import Etcd3Client

    Etcd3Client(host="127.0.0.1", port=1, timeout=2, api_path="/v3/").get("x")


def _postgres() -> None:
    import psycopg

    psycopg.connect("host=127.0.0.1 port=1 user=leadercheck dbname=postgres", connect_timeout=2)


def _zookeeper() -> None:
    import logging

    from kazoo.client import KazooClient

    quiet = logging.getLogger("tests.conform.quiet")
    quiet.setLevel(logging.CRITICAL)
    KazooClient(hosts=CLOSED, logger=quiet).start(timeout=0.3)


def _redis() -> None:
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    no_retry = Retry(NoBackoff(), 0)  # redis-py 8 retries a refused connect for ~4 s
    redis.Redis(host="127.0.0.1", port=1, socket_timeout=2, retry=no_retry).ping()


@pytest.mark.parametrize(
    ("system", "call", "said"),
    [
        ("etcd", _etcd, "connection refused"),  # ConnectionFailedError has no text of its own
        ("postgres", _postgres, "connection refused"),
        ("zookeeper", _zookeeper, "timed out"),  # kazoo retries until its start times out
        ("redis", _redis, "connection refused"),
    ],
)
def test_each_client_library_error_becomes_one_line(
    system: str, call: Callable[[], None], said: str
) -> None:
    with pytest.raises(Exception) as raised:
        call()
    assert reason(raised.value) == said
    with pytest.raises(SystemFailure) as failure:
        with talking_to(system, [("127.0.0.1", 1)], "reading the facts after step 3"):
            call()
    assert str(failure.value) == f"{system} at 127.0.0.1:1: {said} (reading the facts after step 3)"


def test_an_exception_without_text_is_named_in_words() -> None:
    class ConnectionFailedError(Exception):
        pass

    assert reason(ConnectionFailedError()) == "connection failed"
    assert reason(ValueError("line one\n  line two")) == "line one line two"


def test_a_server_s_own_message_is_kept() -> None:
    import psycopg

    told = psycopg.OperationalError(
        'connection failed: connection to server at "127.0.0.1", port 5432 failed: '
        'FATAL:  role "leadercheck" does not exist'
    )
    assert reason(told) == 'FATAL: role "leadercheck" does not exist'


def test_a_leadercheck_error_passes_as_it_is() -> None:
    with pytest.raises(LeadercheckError, match="^as it was$"):
        with talking_to("etcd", [("h", 1)], "x"):
            raise LeadercheckError("as it was")


def test_the_probe_names_the_address_that_failed() -> None:
    import socket

    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        probe("etcd", [("127.0.0.1", port)])  # open: nothing said
        with pytest.raises(SystemFailure, match=r"^etcd at 127\.0\.0\.1:1: connection refused$"):
            probe("etcd", [("127.0.0.1", port), ("127.0.0.1", 1)])


# -- refused before any server starts ---------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["--endpoint", "localhost"], "--endpoint"),
        (["--endpoint", "host:1:2"], "--endpoint"),
        (["--endpoint", ":0"], "--endpoint"),
        (["--endpoint", "host:99999"], "--endpoint"),
        (["--endpoint", "host:0"], "--endpoint"),
        (["--endpoint", "a:1,,b:2"], "--endpoint"),
        (["--endpoint", "a:1,a:1"], "given twice"),
        (["--endpoint", "[::1]:2379"], "--endpoint"),  # IPv6: the clients' URLs would break
        (["--endpoint", "h:\u0663"], "--endpoint"),  # an Arabic-Indic digit is no port
        (["--tick", "-1"], "--tick"),
        (["--settle", "-1"], "--settle"),
        (["--budget", "-5"], "--budget"),
        (["--budget", "0"], "--budget"),
        (["--budget", "nan"], "--budget"),
        (["--steps", "0"], "--steps"),
        (["--steps", "201"], "--steps"),
        (["--random", "0"], "--random"),
        (["--random", "-1"], "--random"),
        (["--timeline", "/nonexistent/dir/t.json"], "/nonexistent/dir"),
        (["--timeline", "/dev/full"], "/dev/full"),
        (["--protocol", "lease-cas"], "lease-cas cannot be run against etcd"),
    ],
)
def test_bad_random_arguments_are_refused_before_any_server(
    args: list[str], text: str, no_server_starts: None
) -> None:
    base = ["--against", "etcd", "--random", "3"]
    one_line_error(verify("conform", *base, *args), text)


def test_too_many_endpoints_for_postgres_and_too_few_for_redlock(no_server_starts: None) -> None:
    two = "127.0.0.1:1,127.0.0.1:2"
    result = verify("conform", "--against", "postgres", "--random", "2", "--endpoint", two)
    one_line_error(result, "postgres (lease-cas) takes 1 address, not 2")
    result = verify(
        "conform", "--model", REDLOCK, "--against", "redis", "--random", "2", "--endpoint", two
    )
    one_line_error(result, "redis (redlock) takes 5 addresses, not 2")


def test_redlock_without_its_model_says_where_it_is(no_server_starts: None) -> None:
    result = verify("conform", "--against", "redis", "--random", "2", "--protocol", "redlock")
    one_line_error(result, "give --model examples/redlock.py")


def test_random_without_hypothesis_is_refused_before_any_server(
    monkeypatch: pytest.MonkeyPatch, no_server_starts: None
) -> None:
    monkeypatch.setitem(sys.modules, "hypothesis", None)  # as if it were not installed
    assert importlib.util.find_spec("hypothesis") is None
    result = verify("conform", "--against", "etcd", "--random", "2")
    one_line_error(result, "conform --random needs hypothesis", ".[conform]")


# -- random schedules ended by Ctrl-C, the budget or the system, hypothesis kept out of it ----


def _run(step: int, *, diverges: bool = False, interrupted: bool = False) -> Conformance:
    run = Conformance("lease-no-fencing", "etcd", interrupted=interrupted)
    facts = {"store": "no lease held"}
    run.entries.append(Entry(0, 0, "initial state", "started", 0.0, facts, facts))
    for k in range(1, step + 1):
        seen = {"store": "n1 holds lease token 1"} if diverges and k == step else facts
        run.entries.append(Entry(k, 0, "clock: tick", "1 s passed", float(k), facts, seen))
    return run


def _walks(
    monkeypatch: pytest.MonkeyPatch, script: Callable[[int, Callable[[int], int], int], Any]
) -> tuple[Any, int]:
    """random_walks over a fake `walk`: `script(call number, choose, length)` plays the
    real system (draws like the real walk, returns a run or raises)."""
    calls = {"n": 0}

    def fake_walk(
        model: Any,
        binding: Any,
        world: Any,
        choose: Any,
        max_steps: int,
        guide: Any,
        fault_step: int | None,
    ) -> Any:
        calls["n"] += 1
        choose([1] * 1000)  # the first move of a real walk, one of many
        return script(calls["n"], lambda n: choose([1] * n), max_steps)

    monkeypatch.setattr(walks_module, "walk", fake_walk)

    class Binding:
        protocol, system = "lease-no-fencing", "etcd"
        member_fault = None

    found = walks_module.random_walks(
        None,  # type: ignore[arg-type]
        Binding(),  # type: ignore[arg-type]
        lambda: None,  # type: ignore[arg-type,return-value]
        schedules=20, seed=1, max_steps=6, budget=60,
    )  # fmt: skip
    return found, calls["n"]


def test_ctrl_c_inside_a_schedule_stops_hypothesis_cleanly(monkeypatch: pytest.MonkeyPatch) -> None:
    def script(n: int, choose: Callable[[int], int], length: int) -> Conformance:
        for _ in range(length):
            choose(3)
        return _run(length, interrupted=n == 4)

    found, calls = _walks(monkeypatch, script)
    assert found.interrupted and calls == 4
    assert found.drawn == 3 and found.partial is not None and found.partial.interrupted


def test_ctrl_c_in_hypothesis_s_own_draw_stops_it_cleanly(monkeypatch: pytest.MonkeyPatch) -> None:
    def script(n: int, choose: Callable[[int], int], length: int) -> Conformance:
        if n == 3:
            raise KeyboardInterrupt  # where the real walk would have caught it: anywhere else
        choose(2)
        return _run(1)

    found, calls = _walks(monkeypatch, script)
    assert found.interrupted and found.drawn == 2 and calls == 3


def test_ctrl_c_while_shrinking_keeps_the_divergence_found(monkeypatch: pytest.MonkeyPatch) -> None:
    def script(n: int, choose: Callable[[int], int], length: int) -> Conformance:
        picks = [choose(4) for _ in range(length)]
        if n >= 6:
            return _run(1, interrupted=True)
        return _run(length, diverges=n >= 2 and sum(picks) > 0)

    found, _ = _walks(monkeypatch, script)
    assert found.interrupted and found.failures and found.shortest is not None


def test_a_failing_system_ends_the_search_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    def script(n: int, choose: Callable[[int], int], length: int) -> Conformance:
        if n == 2:
            raise SystemFailure("etcd at 127.0.0.1:2379: connection refused (step 3: tick)")
        return _run(1)

    with pytest.raises(SystemFailure, match="connection refused"):
        _walks(monkeypatch, script)


def test_a_spent_budget_stops_hypothesis_without_a_complaint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = iter(float(k) * 25 for k in range(1000))
    monkeypatch.setattr(walks_module.time, "monotonic", lambda: next(clock))

    def script(n: int, choose: Callable[[int], int], length: int) -> Conformance:
        choose(2)
        return _run(1)

    found, calls = _walks(monkeypatch, script)
    assert found.out_of_budget and not found.interrupted and 0 < calls < 20


def test_the_record_of_an_interrupted_run_is_json_and_says_so() -> None:
    from leadercheck.checker.app import conform_runs
    from leadercheck.checker.conform.world import Timing

    found = walks_module.Walks("lease-no-fencing", "etcd", drawn=2, steps=7, interrupted=True)
    found.partial = _run(2, interrupted=True)
    record = conform_runs._random_record(
        found, "lease-no-fencing", {"nodes": 2}, "etcd", "etcd 3.4", Timing(), 0, 50
    )
    assert record["verdict"] == "INCOMPLETE" and record["interrupted_schedule"]["steps"] == 2
    json.dumps(record)
    line = conform_runs._interrupted_line(record, Path("t.json"))
    assert line == "interrupted after 2 of 50 schedules (7 steps in 0 s); wrote t.json"


@pytest.mark.slow  # 6 s; the same contract for the search: tests/test_interrupt.py
def test_a_keyboard_interrupt_no_ctrl_c_sent_is_not_an_interrupted_run(
    monkeypatch: pytest.MonkeyPatch, no_server_starts: None
) -> None:
    """Code that raises KeyboardInterrupt by itself (a library, a model) is exit 2 in one
    line, as everywhere in `verify`: only the user's Ctrl-C makes a run INCOMPLETE."""
    import socket

    def walk(*args: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(walks_module, "walk", walk)
    with socket.socket() as listening:  # the endpoint's probe finds it open
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        result = verify(
            "conform", "--against", "etcd", "--random", "3", "--endpoint", f"127.0.0.1:{port}"
        )
    one_line_error(result, "raised KeyboardInterrupt without a Ctrl-C")

"""A client under test is untrusted code: whatever it does (leave children holding its
stdout, write gigabytes to stderr, answer with 200,000 nested brackets or fields of the wrong
kind), the harness ends it and everything it started, reads it within bounds, and calls a
broken answer the client's protocol error. No server is needed: these are the agent's own."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from leadercheck.checker.app.conform_runs import schedule_length
from leadercheck.checker.conform import lifetime
from leadercheck.checker.conform.agent import Agent, ClientError, error_text
from leadercheck.checker.conform.lifetime import OWNER_FILE
from leadercheck.checker.conform.replies import BELIEF, fault_in

READY = json.dumps({"ok": True, "result": {"ready": True, "background": None}})


def _client(tmp_path: Path, body: str) -> list[str]:
    """A client program: says it is ready, then runs `body` on its first request."""
    script = tmp_path / "client.py"
    script.write_text(
        "import json, os, subprocess, sys, time\n"
        f"print({READY!r}, flush=True)\n"
        "line = sys.stdin.readline()\n" + textwrap.dedent(body)
    )
    return [sys.executable, str(script)]


def _agent(tmp_path: Path, command: list[str]) -> Agent:
    agent = Agent("n1", "etcd", {}, tmp_path, start_timeout=30, command=command)
    agent.start()
    return agent


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[-1].split()[0]
    except OSError:
        return True
    return state == "Z"  # killed, waiting for its parent (init) to reap it


def _kill_within(agent: Agent, seconds: float) -> None:
    done = threading.Thread(target=agent.kill, daemon=True)
    done.start()
    done.join(seconds)
    assert not done.is_alive(), "the agent's kill hung"


@pytest.mark.parametrize("own_session", [False, True])
def test_what_a_client_started_is_ended_with_it_even_holding_its_stdout(
    tmp_path: Path, own_session: bool
) -> None:
    """A client starts a child that keeps its stdout open (in its process group, or in a
    session of its own), then exits without answering: the call fails as the client's, the
    kill returns at once, and the child is gone."""
    pid_file = tmp_path / "child.pid"
    agent = _agent(
        tmp_path,
        _client(
            tmp_path,
            f"""
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                                     start_new_session={own_session})
            open({str(pid_file)!r}, "w").write(str(child.pid))
            os._exit(0)
            """,
        ),
    )
    with pytest.raises(ClientError, match="n1: no answer to 'check' within 1 s"):
        agent.call("check", 1.0)
    child = int(pid_file.read_text())
    assert not _gone(child)  # it outlived the client, holding the pipe
    _kill_within(agent, 20)
    deadline = time.monotonic() + 10
    while not _gone(child) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _gone(child)


def test_gigabytes_on_stderr_are_quoted_by_their_last_line_within_bounds(tmp_path: Path) -> None:
    """A client that writes 150 MB to stderr and exits: its last line is quoted, and the
    harness reads no more of the log than its tail."""
    agent = _agent(
        tmp_path,
        _client(
            tmp_path,
            """
            chunk = "x" * 1023 + "\\n"
            for _ in range(150 * 1024):
                sys.stderr.write(chunk)
            sys.stderr.write("the client's last words\\n")
            sys.stderr.flush()
            os._exit(3)
            """,
        ),
    )
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB
    with pytest.raises(ClientError, match="exited \\(the client's last words\\)"):
        agent.call("check", 60.0)
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown < 50 * 1024, f"reading the log grew the harness by {grown} KiB"
    _kill_within(agent, 20)


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ("[" * 200_000, "not a JSON object"),
        ('{"ok": true, "result": ' + "[" * 200_000, "not a JSON object"),
        ('{"ok": "yes"}', "not a JSON object"),
    ],
)
def test_an_answer_that_is_not_the_protocol_is_the_clients_error(
    tmp_path: Path, answer: str, said: str
) -> None:
    """Nested beyond the parser's depth is the client's garbage, never an error blamed on
    the server (it was 'etcd at ...: maximum recursion depth exceeded')."""
    agent = _agent(tmp_path, _client(tmp_path, f"print({answer!r}, flush=True)\ntime.sleep(60)"))
    with pytest.raises(ClientError, match=said) as caught:
        agent.call("check", 30.0)
    assert "recursion" not in str(caught.value)
    _kill_within(agent, 20)


def test_a_ready_line_nested_beyond_the_parser_is_the_clients_error(tmp_path: Path) -> None:
    script = tmp_path / "client.py"
    script.write_text(f"import time\nprint({'[' * 200_000!r}, flush=True)\ntime.sleep(60)\n")
    agent = Agent(
        "n1", "etcd", {}, tmp_path, start_timeout=30, command=[sys.executable, str(script)]
    )
    with pytest.raises(ClientError, match="not a JSON object"):
        agent.start()
    _kill_within(agent, 20)


def test_a_result_with_fields_of_the_wrong_kind_is_the_clients_protocol_error(
    tmp_path: Path,
) -> None:
    """`{"granted": "yes"}` was read as a refusal, and the run 'diverged'."""
    answer = json.dumps({"ok": True, "result": {"granted": "yes", "token": 3}})
    agent = _agent(tmp_path, _client(tmp_path, f"print({answer!r}, flush=True)\ntime.sleep(60)"))
    reply = agent.call("acquire", 30.0)
    fields = {"granted": "bool", "token": "int|str?"}
    with pytest.raises(ClientError, match="n1: its answer to 'acquire' breaks the client "
                       "protocol: \"granted\" is 'yes', not bool"):  # fmt: skip
        agent.check_result("acquire", reply, fields)
    _kill_within(agent, 20)


def test_the_reply_fields_are_checked_by_kind_and_presence() -> None:
    fields = {"granted": "bool", "token": "int|str?"}
    assert fault_in({"granted": True, "token": 7}, fields) is None
    assert fault_in({"granted": False}, fields) is None  # an optional field may be absent
    assert fault_in({"granted": False, "token": None}, fields) is None
    assert fault_in({"granted": True, "token": "7"}, fields) is None
    assert fault_in({}, fields) == 'no "granted" (bool)'
    assert fault_in({"granted": 1}, fields) == '"granted" is 1, not bool'
    assert fault_in({"granted": True, "token": True}, fields) == '"token" is True, not int or str'
    assert fault_in({"leader": "no"}, BELIEF) == "\"leader\" is 'no', not bool"
    assert fault_in({"leader": False, "token": [1]}, BELIEF) == '"token" is [1], not int or str'


def test_every_binding_names_fields_for_what_its_outcome_reads() -> None:
    """Each operation whose answer decides an outcome has its fields named."""
    from leadercheck.checker.conform.bindings.etcd import EtcdLease
    from leadercheck.checker.conform.bindings.postgres import PostgresLeaseRow
    from leadercheck.checker.conform.bindings.redis import Redlock
    from leadercheck.checker.conform.bindings.zookeeper import ZooKeeperElection

    assert {"acquire", "renew", "check", "write"} <= set(EtcdLease.replies)
    assert {"read", "update", "renew", "check", "write"} <= set(PostgresLeaseRow.replies)
    assert {"create", "check", "write", "await_expiry", "await_watch"} <= set(
        ZooKeeperElection.replies
    )
    assert {"set_A", "set_E", "check", "write"} <= set(Redlock.replies)
    assert os.environ.get("LEADERCHECK_CLIENT_PROCESS") is None  # set in clients only


def test_the_sweep_removes_only_folders_whose_owner_is_gone(tmp_path: Path) -> None:
    """A run's folders carry their owner; a later run removes those of a gone owner and
    leaves a live owner's, an unmarked folder, another name and a link alone."""
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)  # fmt: skip
    dead, live, unmarked, other = (
        tmp_path / name
        for name in (
            "leadercheck-etcd-a1",
            "leadercheck-clients-b2",
            "leadercheck-redis-c3",
            "mine-d4",
        )  # fmt: skip
    )
    for folder in (dead, live, unmarked, other):
        folder.mkdir()
    (dead / OWNER_FILE).write_text(f"{finished.stdout.strip()} 12345\n")
    try:
        mark = lifetime._start_time(sleeper.pid)
        (live / OWNER_FILE).write_text(f"{sleeper.pid} {mark}\n")
        (other / OWNER_FILE).write_text(f"{finished.stdout.strip()} 12345\n")
        (tmp_path / "leadercheck-etcd-link").symlink_to(dead)
        assert lifetime.sweep_stale(tmp_path) == [dead]
    finally:
        sleeper.kill()
        sleeper.wait()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "leadercheck-clients-b2", "leadercheck-etcd-link", "leadercheck-redis-c3", "mine-d4",
    ]  # fmt: skip


def test_a_process_started_to_die_with_us_ends_when_its_starter_is_killed(
    tmp_path: Path,
) -> None:
    """The kernel kills a server or client when verify's thread that started it dies, even
    by SIGKILL, which runs none of verify's own clean-up (twenty times: util-linux's setpriv
    --pdeathsig, tried first, left one child in eight running)."""
    starter = subprocess.Popen(
        [sys.executable, "-c",
         "import subprocess, sys, time\n"
         "from leadercheck.checker.conform.lifetime import dies_with_us\n"
         "for _ in range(20):\n"
         "    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'],"
         " **dies_with_us())\n"
         "    print(child.pid, flush=True)\n"
         "time.sleep(600)\n"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert starter.stdout is not None
    children = [int(starter.stdout.readline()) for _ in range(20)]
    assert not any(_gone(child) for child in children)
    starter.kill()
    starter.wait()
    deadline = time.monotonic() + 10
    while not all(_gone(child) for child in children) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [child for child in children if not _gone(child)] == []


@pytest.mark.parametrize(
    ("given", "start", "expected"),
    [
        (None, None, (12, False)),  # nothing to reach: the default
        (None, 5, (12, False)),  # reached well within the default
        (None, 17, (22, False)),  # Redlock: the nearest danger 17 steps in, taken at step 18
        (None, 300, (200, False)),  # never beyond the cap
        (12, 16, (12, True)),  # given too short: said, not changed
        (30, 16, (30, False)),
    ],
)
def test_schedules_are_sized_to_reach_what_they_look_for(
    given: int | None, start: int | None, expected: tuple[int, bool]
) -> None:
    steps, short = schedule_length(given, start)
    assert (steps, short is not None) == expected
    if short is not None:
        assert short == (
            "note: --steps 12 cannot reach the nearest step where safety rests on the"
            " client, step 17 at the earliest: no schedule can break a claim there (give"
            " --steps 21 or leave --steps out)"
        )


def test_a_failed_call_without_a_message_is_told_by_its_cause() -> None:
    """etcd3gw raises ConnectionFailedError() with no text: the error said
    'ConnectionFailedError: ' and nothing else."""

    class ConnectionFailedError(Exception):
        pass

    try:
        try:
            raise ConnectionResetError(104, "Connection reset by peer")
        except OSError as exc:
            raise ConnectionFailedError() from exc
    except ConnectionFailedError as exc:
        assert error_text(exc) == (
            "ConnectionFailedError, from ConnectionResetError: [Errno 104] Connection reset by peer"
        )
    assert error_text(ConnectionFailedError()) == "ConnectionFailedError (no message)"
    assert error_text(ValueError("bad")) == "ValueError: bad"

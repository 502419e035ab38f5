"""How `verify conform` ends against real servers when it does not end by a verdict.

A real SIGINT (once, or twice 0.2 s apart) or SIGTERM to `verify conform --random` while a
schedule runs, or while the servers start: exit 3, one line on stderr, no traceback, the timeline
of what ran written as JSON, and no server or client process left behind. A server that
stops answering mid-run, or a port where another system answers: exit 2, one line naming
the system and the address, not a verdict.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil
import pytest

from leadercheck.checker.conform import servers
from leadercheck.checker.conform.failures import SystemFailure
from leadercheck.checker.conform.harness import Entry
from leadercheck.checker.conform.lifetime import sweep_stale
from leadercheck.checker.conform.world import Timing
from tests.conform.helpers import ROOT, trace_steps

pytestmark = pytest.mark.conform
AGENT = "leadercheck.checker.conform.agent"


def needs(system: str) -> Any:
    missing = servers.available(system)
    return pytest.mark.skipif(missing is not None, reason=str(missing))


class Verify:
    """`verify conform ...` as a process of its own, as a terminal runs it: its own process
    group, SIGINT at its default (Python's KeyboardInterrupt, whatever the test runner
    does with SIGINT), stdout read line by line as it comes."""

    def __init__(self, *args: str, tmp: Path) -> None:
        env = {**os.environ, "TMPDIR": str(tmp)}  # the servers' and clients' directories
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "leadercheck.checker.app", "conform", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
            start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )  # fmt: skip
        self.lines: list[str] = []
        self.seen: set[int] = set()  # every process it started, for the end
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    def children(self) -> list[psutil.Process]:
        try:
            found = psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []
        self.seen.update(p.pid for p in found)
        return found

    def wait_for(self, ready: Callable[[], bool], what: str, seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        while not ready():
            assert self.proc.poll() is None, f"exited before {what}: {self.finish()}"
            assert time.monotonic() < deadline, f"no {what} within {seconds:g} s"
            self.children()
            time.sleep(0.02)

    def agents(self) -> bool:
        """A schedule is running: the clients' processes are there."""
        return any(AGENT in " ".join(p.cmdline()) for p in _quietly(self.children))

    def interrupt(self, again_after: float | None = None, signum: int = signal.SIGINT) -> None:
        os.killpg(self.proc.pid, signum)
        if again_after is not None:
            time.sleep(again_after)
            try:
                os.killpg(self.proc.pid, signum)
            except ProcessLookupError:  # it had already finished winding down
                pass

    def finish(self, timeout: float = 60) -> tuple[int, str, str]:
        assert self.proc.stderr is not None
        self.proc.wait(timeout)
        err = self.proc.stderr.read()
        self._reader.join(5)
        return self.proc.returncode, "".join(self.lines), err

    def assert_nothing_left(self, tmp: Path) -> None:
        time.sleep(0.3)
        alive = [p for p in self.seen if psutil.pid_exists(p) and _status(p) != "zombie"]
        assert not alive, [_status(p) + " " + _command(p) for p in alive]
        assert list(tmp.iterdir()) == [], list(tmp.iterdir())  # server and client dirs gone


def _status(pid: int) -> str:
    try:
        return str(psutil.Process(pid).status())
    except psutil.NoSuchProcess:
        return "zombie"


def _command(pid: int) -> str:
    try:
        return " ".join(psutil.Process(pid).cmdline())
    except psutil.Error:
        return "?"


def _quietly(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except psutil.Error:
        return []


def one_line(err: str) -> str:
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


RANDOM = ("--against", "etcd", "--random", "50", "-p", "nodes=2", "--steps", "6", "--seed", "1")


@needs("etcd")
@pytest.mark.parametrize(
    ("signum", "again"),
    [(signal.SIGINT, None), (signal.SIGINT, 0.2), (signal.SIGTERM, None)],
    ids=["once", "twice", "sigterm"],
)
def test_ctrl_c_during_a_random_schedule_is_exit_3_with_the_timeline(
    tmp_path: Path, signum: int, again: float | None
) -> None:
    """SIGTERM (`kill`, a CI timeout) is the same request to stop: servers stopped too."""
    work = tmp_path / "tmp"
    work.mkdir()
    timeline = tmp_path / "t.json"
    run = Verify(*RANDOM, "--timeline", str(timeline), tmp=work)
    run.wait_for(lambda: any("schedule of" in line for line in run.lines), "a first schedule")
    run.wait_for(run.agents, "the second schedule's clients")
    time.sleep(0.3)
    run.interrupt(again_after=again, signum=signum)
    code, out, err = run.finish()
    assert code == 3, out + err
    line = one_line(err)
    assert line.startswith("interrupted after ") and " of 50 schedules" in line, line
    assert line.endswith(f"wrote {timeline}"), line
    record = json.loads(timeline.read_text())
    assert record["verdict"] == "INCOMPLETE" and record["interrupted"] is True
    assert record["schedules_run"] >= 1 and record["schedules_asked"] == 50
    assert record["server"].startswith("etcd 3.")
    assert "Traceback" not in out
    run.assert_nothing_left(work)


@needs("etcd")
def test_a_verify_killed_outright_leaves_no_process_and_its_folders_go_next_time(
    tmp_path: Path,
) -> None:
    """SIGKILL runs no code of verify's: the kernel ends its servers and clients (they are
    started with a parent-death signal), and the next run's sweep removes its folders."""
    work = tmp_path / "tmp"
    work.mkdir()
    run = Verify(*RANDOM, tmp=work)
    run.wait_for(lambda: any("schedule of" in line for line in run.lines), "a first schedule")
    run.wait_for(run.agents, "the second schedule's clients")
    started = set(run.seen)
    assert started and list(work.iterdir())
    run.proc.kill()
    run.proc.wait(30)
    deadline = time.monotonic() + 30
    while alive := [p for p in started if psutil.pid_exists(p) and _status(p) != "zombie"]:
        assert time.monotonic() < deadline, [_command(p) for p in alive]
        time.sleep(0.05)
    assert sorted(p.name.rsplit("-", 1)[0] for p in sweep_stale(work)) == [
        "leadercheck-clients",
        "leadercheck-etcd",
    ]
    assert list(work.iterdir()) == []


@needs("etcd")
def test_ctrl_c_while_the_servers_start_is_exit_3(tmp_path: Path) -> None:
    work = tmp_path / "tmp"
    work.mkdir()
    timeline = tmp_path / "t.json"
    run = Verify(*RANDOM, "--timeline", str(timeline), "--json", tmp=work)
    run.wait_for(lambda: any(p.name() == "etcd" for p in _quietly(run.children)), "etcd")
    run.interrupt(again_after=0.2)
    code, out, err = run.finish()
    assert code == 3, out + err
    assert one_line(err).startswith("interrupted after 0 of 50 schedules"), err
    record = json.loads(out)  # --json: the record, and nothing else, on stdout
    assert record == json.loads(timeline.read_text())
    assert record["verdict"] == "INCOMPLETE" and record["schedules_run"] == 0
    run.assert_nothing_left(work)


@contextmanager
def started(system: str, **kw: Any) -> Iterator[servers.Server]:
    with servers.start(system, **kw) as server:
        yield server


@needs("etcd")
def test_a_server_that_dies_mid_random_run_is_one_line_exit_2(tmp_path: Path) -> None:
    work = tmp_path / "tmp"
    work.mkdir()
    with started("etcd", members=1) as etcd:
        host, port = etcd.endpoints[0]
        run = Verify(*RANDOM, "--endpoint", f"{host}:{port}", tmp=work)
        run.wait_for(lambda: any("schedule of" in line for line in run.lines), "a first schedule")
        etcd.stop()
        code, out, err = run.finish()
    assert code == 2, out + err
    line = one_line(err)
    assert line.startswith(f"error: etcd at {host}:{port}: connection refused ("), line
    run.assert_nothing_left(work)


QUICK = Timing(call_timeout=2.0)  # a dead server's calls and reads give up sooner
TRACES = {
    "etcd": (ROOT / "counterexamples" / "lease-no-fencing.json", None, {"members": 1}),
    "postgres": (ROOT / "counterexamples" / "lease-blind-write.json", None, {}),
    "zookeeper": (ROOT / "counterexamples" / "zookeeper.json", None, {}),
    "redis": (
        ROOT / "examples" / "counterexamples" / "redlock.json",
        str(ROOT / "examples" / "redlock.py"),
        {},
    ),
}


@pytest.mark.parametrize("system", list(TRACES))
def test_a_server_that_dies_mid_trace_is_one_line_naming_it(system: str) -> None:
    if servers.available(system) is not None:
        pytest.skip(str(servers.available(system)))
    from leadercheck.checker.conform.run import conform_trace

    trace, model, kw = TRACES[system]
    name, params, steps = trace_steps(trace, model=model)
    with started(system, **kw) as server:
        where = ",".join(f"{h}:{p}" for h, p in server.endpoints)

        def progress(entry: Entry) -> None:
            if entry.step == 1:
                server.stop()

        with pytest.raises(SystemFailure) as failed:
            conform_trace(name, params, steps, system, QUICK, where, progress)
    told = str(failed.value)
    assert told.startswith(f"{system} at {where}: "), told
    assert "\n" not in told, told
    assert re.search(r"\((reading the facts after step \d+|step \d+: .+)\)$", told), told


@needs("redis")
@pytest.mark.parametrize("system", ["etcd", "postgres"])
def test_another_system_at_the_endpoint_is_one_line(system: str) -> None:
    """The port is open (the probe passes), but Redis answers: the first request fails.
    (kazoo takes its whole session timeout, 10 s, to give up on such a port, and says
    "timed out" as test_conform_failures.py has it say for a closed one.)"""
    from leadercheck.checker.conform.run import conform_trace

    trace, model, _ = TRACES[system]
    name, params, steps = trace_steps(trace, model=model)
    with started("redis", count=1) as redis:
        host, port = redis.endpoints[0]
        with pytest.raises(SystemFailure) as failed:
            conform_trace(name, params, steps, system, QUICK, f"{host}:{port}")
    told = str(failed.value)
    assert told.startswith(f"{system} at {host}:{port}: "), told
    assert "\n" not in told, told
    assert told.endswith(("(starting the run)", "(reading the facts of the initial state)")), told

"""Real servers on loopback (checker.conform.servers): each starts, answers a real client,
reports its version, and leaves no process and no directory behind, however the `with`
block ends (normally, a KeyboardInterrupt, a startup that fails, interpreter exit)."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import psutil
import pytest

from leadercheck.checker.conform.servers import (
    EtcdCluster,
    PostgresServer,
    RedisServers,
    Server,
    ServerError,
    ZooKeeperServer,
    available,
    start,
)


def _needs(system: str) -> pytest.MarkDecorator:
    reason = available(system)
    return pytest.mark.skipif(reason is not None, reason=reason or "")


def _tree(server: Server) -> list[psutil.Process]:
    """Every live process of `server` and its children (PostgreSQL's backends), taken while
    it runs; psutil.Process remembers the start time, so a reused pid is not mistaken."""
    procs = []
    for pid in server.pids:
        try:
            proc = psutil.Process(pid)
            procs += [proc, *proc.children(recursive=True)]
        except psutil.NoSuchProcess:
            pass
    return procs


def _alive(proc: psutil.Process) -> bool:
    try:
        return bool(proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False


def _pid_alive(pid: int) -> bool:
    try:
        return _alive(psutil.Process(pid))
    except psutil.NoSuchProcess:
        return False


def _assert_stopped(procs: list[psutil.Process], workdir: Path) -> None:
    left = [p for p in procs if _alive(p)]
    assert not left, f"processes left running: {left}"
    assert not workdir.exists(), f"{workdir} left behind"
    mentioning = []  # belt and braces: nothing anywhere still runs out of the directory
    for proc in psutil.process_iter(["cmdline"]):
        if any(str(workdir) in arg for arg in proc.info["cmdline"] or ()) and _alive(proc):
            mentioning.append(proc)
    assert not mentioning, f"processes still naming {workdir}: {mentioning}"


# --- etcd: the v3 JSON gateway --------------------------------------------------------

_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _etcd(port: int, path: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v3/{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with _DIRECT.open(request, timeout=5) as response:
        answer: dict[str, Any] = json.loads(response.read())
    return answer


def _etcd_values(port: int, key: str) -> list[str]:
    kvs = _etcd(port, "kv/range", {"key": _b64(key)}).get("kvs", [])
    return [base64.b64decode(kv["value"]).decode() for kv in kvs]


@pytest.mark.conform
@_needs("etcd")
def test_etcd_cluster_round_trip_and_a_one_second_lease() -> None:
    with EtcdCluster() as etcd:
        procs = _tree(etcd)
        assert len(procs) == 3 and len(etcd.endpoints) == 3
        assert len({port for _, port in etcd.endpoints}) == 3
        assert re.fullmatch(r"etcd 3\.\d+\.\d+", etcd.version), etcd.version
        first, second, third = (port for _, port in etcd.endpoints)

        _etcd(first, "kv/put", {"key": _b64("/leader"), "value": _b64("n1")})
        assert _etcd_values(third, "/leader") == ["n1"]  # a linearizable read on another member

        lease = _etcd(second, "lease/grant", {"TTL": 1})
        assert lease["TTL"] == "1"  # not raised to a minimum: the fast timing is in force
        _etcd(second, "kv/put", {"key": _b64("/lease"), "value": _b64("n2"), "lease": lease["ID"]})
        granted = time.monotonic()
        assert _etcd_values(first, "/lease") == ["n2"]
        while _etcd_values(first, "/lease") and time.monotonic() - granted < 5:
            time.sleep(0.05)
        expired_after = time.monotonic() - granted
        assert expired_after < 3, f"a 1 s lease took {expired_after:.2f} s to expire"
        assert _etcd_values(first, "/leader") == ["n1"]
    _assert_stopped(procs, etcd.workdir)


# --- PostgreSQL -------------------------------------------------------------------------


@pytest.mark.conform
@_needs("postgres")
def test_postgres_round_trip_and_a_fast_stop_with_a_client_still_connected() -> None:
    import psycopg

    with PostgresServer() as pg:
        procs = _tree(pg)
        assert re.fullmatch(r"PostgreSQL \d+\.\d+", pg.version), pg.version
        assert pg.endpoints == [("127.0.0.1", pg.port)]
        conn = psycopg.connect(pg.dsn, connect_timeout=5, autocommit=True)
        conn.execute("CREATE TABLE lease (name text PRIMARY KEY, holder text, term int)")
        conn.execute("INSERT INTO lease VALUES (%s, %s, %s)", ("leader", "n1", 3))
        row = conn.execute("SELECT holder, term FROM lease WHERE name = 'leader'").fetchone()
        assert row == ("n1", 3)
        server_version = conn.execute("SHOW server_version").fetchone()
        assert server_version is not None and pg.version.split()[1] in server_version[0]
        procs = _tree(pg)  # now with the connection's backend
        if os.geteuid() == 0:
            assert {p.username() for p in procs if _alive(p)} == {"postgres"}
        stopping = time.monotonic()
    took = time.monotonic() - stopping
    conn.close()
    assert took < 4, f"stop took {took:.2f} s: SIGTERM's smart shutdown waited on the client?"
    _assert_stopped(procs, pg.workdir)


# --- ZooKeeper --------------------------------------------------------------------------


@pytest.mark.conform
@_needs("zookeeper")
def test_zookeeper_round_trip_with_a_short_session() -> None:
    from kazoo.client import KazooClient

    with ZooKeeperServer() as zk:
        procs = _tree(zk)
        assert re.fullmatch(r"ZooKeeper 3\.\d+\.\d+", zk.version), zk.version
        (host, port), *rest = zk.endpoints
        assert not rest
        client = KazooClient(hosts=f"{host}:{port}", timeout=2.0)
        client.start(timeout=10)
        try:
            client.create("/leadercheck/leader", b"n1", ephemeral=True, makepath=True)
            value, stat = client.get("/leadercheck/leader")
            assert value == b"n1" and stat.ephemeralOwner == client.client_id[0]
        finally:
            client.stop()
            client.close()
    _assert_stopped(procs, zk.workdir)


# --- Redis ------------------------------------------------------------------------------


@pytest.mark.conform
@_needs("redis")
def test_redis_five_independent_instances() -> None:
    import redis

    with RedisServers(count=5) as servers:
        procs = _tree(servers)
        assert re.fullmatch(r"Redis \d+\.\d+\.\d+", servers.version), servers.version
        assert len(servers.endpoints) == 5 == len({port for _, port in servers.endpoints})
        clients = [redis.Redis(host=h, port=p, socket_timeout=2) for h, p in servers.endpoints]
        for i, client in enumerate(clients):
            assert client.set("lock", f"n{i}", nx=True, px=1000)
        assert [client.get("lock") for client in clients] == [f"n{i}".encode() for i in range(5)]
        for client in clients:
            client.close()
    _assert_stopped(procs, servers.workdir)


# --- every way out stops them ----------------------------------------------------------


@pytest.mark.conform
@_needs("redis")
def test_a_keyboard_interrupt_inside_the_block_still_stops_the_servers() -> None:
    servers = RedisServers(count=2)
    with pytest.raises(KeyboardInterrupt), servers:
        procs = _tree(servers)
        assert len(procs) == 2
        for proc in procs:  # a session of their own: a terminal's Ctrl-C does not reach them
            assert os.getsid(proc.pid) == proc.pid != os.getsid(0)
        raise KeyboardInterrupt
    _assert_stopped(procs, servers.workdir)
    servers.stop()  # idempotent


@pytest.mark.conform
@_needs("etcd")
def test_a_startup_timeout_names_the_log_and_leaves_no_process() -> None:
    cluster = EtcdCluster(startup_timeout=0.0001)
    with pytest.raises(ServerError) as failure, cluster:
        pytest.fail("the with block ran although the cluster could not have been ready")
    message = str(failure.value)
    assert "startup_timeout=0.0001" in message and str(cluster.workdir / "m1.log") in message
    assert cluster.pids  # members start one by one: the first is waited on, then stopped
    assert not any(_pid_alive(pid) for pid in cluster.pids)
    _assert_stopped([], cluster.workdir)


@pytest.mark.conform
def test_a_bad_binary_fails_with_its_log_and_leaves_no_process(tmp_path: Path) -> None:
    fake = tmp_path / "redis-server"
    fake.write_text("#!/bin/sh\necho 'boom: this is no redis' >&2\nexit 3\n")
    fake.chmod(0o755)
    servers = RedisServers(count=2, redis_server=str(fake), startup_timeout=10)
    with pytest.raises(ServerError, match="exited with code 3") as failure, servers:
        pass
    # both instances exit; the error names the first one seen to, and quotes that one's log
    said = re.search(r"(r[12]) \(redis-server\) exited with code 3", str(failure.value))
    assert said is not None and f"{said.group(1)}.log ---" in str(failure.value)
    assert "boom: this is no redis" in str(failure.value)
    assert not any(_pid_alive(pid) for pid in servers.pids)
    _assert_stopped([], servers.workdir)

    missing = RedisServers(count=1, redis_server=str(tmp_path / "absent"))
    with pytest.raises(ServerError, match="cannot run"), missing:
        pass
    assert not missing.workdir.exists()


@pytest.mark.conform
@_needs("redis")
def test_a_given_workdir_is_kept_with_its_logs(tmp_path: Path) -> None:
    workdir = tmp_path / "kept"
    with RedisServers(count=1, workdir=workdir) as servers:
        procs = _tree(servers)
        assert servers.log_path == workdir / "r1.log"
    assert not any(_alive(p) for p in procs)
    assert "Ready to accept connections" in servers.log_path.read_text()


@pytest.mark.conform
@_needs("redis")
def test_interpreter_exit_and_garbage_collection_stop_forgotten_servers() -> None:
    script = (
        "from leadercheck.checker.conform.servers import RedisServers\n"
        "servers = RedisServers(count=2).__enter__()  # never exited: atexit must stop it\n"
        "print(servers.workdir, *servers.pids)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    workdir, *pids = done.stdout.split()
    assert len(pids) == 2 and not any(_pid_alive(int(pid)) for pid in pids), done.stderr
    assert not Path(workdir).exists()

    forgotten = RedisServers(count=1).__enter__()
    procs, workdir_path = _tree(forgotten), forgotten.workdir
    del forgotten  # the last reference: the weakref finalizer stops it
    _assert_stopped(procs, workdir_path)


@pytest.mark.conform
def test_systems_by_name() -> None:
    assert isinstance(start("redis", count=1), RedisServers)
    assert isinstance(start("etcd"), EtcdCluster)
    assert isinstance(start("postgres"), PostgresServer)
    assert isinstance(start("zookeeper"), ZooKeeperServer)
    with pytest.raises(ServerError, match="unknown system 'mysql'"):
        start("mysql")
    with pytest.raises(ServerError, match="unknown system"):
        available("mysql")
    for system in ("etcd", "postgres", "zookeeper", "redis"):
        reason = available(system)
        assert reason is None or (reason and "\n" not in reason)

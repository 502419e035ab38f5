"""Real servers on loopback for conformance tests, started from the installed binaries and
always stopped.

A conformance test drives a trace's steps through a real client against a real server, so
each system here (etcd, PostgreSQL, ZooKeeper, Redis) is one small context manager that
starts its processes in a temporary directory on free loopback ports, waits (bounded) until
they answer, and stops them on every way out: the `with` statement's exit (a
KeyboardInterrupt included), `stop()`, garbage collection, and interpreter exit (a
`weakref.finalize`, which also runs at exit). The servers run in a session of their own,
so a Ctrl-C in the terminal reaches the test runner only, and the runner stops them in
order rather than them dying mid-write under it.

    with EtcdCluster() as etcd:
        host, port = etcd.endpoints[0]
        ...

A server that does not come up within `startup_timeout` seconds, or exits first, raises
`ServerError` with the last lines of its log, after everything already started is stopped.
`available(system)` says, in one line, why a system cannot run here (for pytest skips).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import pwd
import random
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, NamedTuple, Self

from leadercheck.checker.conform.clocks import WallClock, build_wall_clock_shim
from leadercheck.checker.conform.lifetime import dies_with_us, mark_owned, sweep_stale
from leadercheck.checker.conform.proxy import FaultProxy

__all__ = [
    "EtcdCluster",
    "PostgresServer",
    "Server",
    "ServerError",
    "RedisServers",
    "ZooKeeperServer",
    "available",
    "free_ports",
    "start",
]

HOST = "127.0.0.1"
POLL_SECONDS = 0.05  # readiness checks are cheap (a loopback connect), so poll often
STOP_WAIT_SECONDS = 5.0  # after the stop signal, before SIGKILL
LOG_TAIL_LINES = 20


class ServerError(RuntimeError):
    """A server could not be started, or an unknown system was named."""


def _outside_ephemeral() -> range:
    """Ports the kernel never hands out as a connection's own (ip_local_port_range), so no
    connection made meanwhile (a member dialing its peers' proxies, say) takes one that a
    server is about to listen on."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as f:
            low, high = (int(x) for x in f.read().split()[:2])
    except (OSError, ValueError):
        return range(0)
    return range(20000, low) if low > 21000 else range(high + 1, 65536)


def free_ports(count: int) -> list[int]:
    """`count` distinct free loopback ports, outside the ephemeral range where there is
    one (else any the kernel gives). The sockets are bound together, so no port repeats,
    and released for the server to bind."""
    sockets: list[socket.socket] = []
    pool = _outside_ephemeral()
    rng = random.Random()  # not the run's seed: ports only need to be free
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sockets.append(sock)
            for port in rng.sample(pool, min(len(pool), 50)):
                with contextlib.suppress(OSError):
                    sock.bind((HOST, port))
                    break
            else:
                sock.bind((HOST, 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


@dataclass
class _Resources:
    """What a server object must give back, kept apart from the object so that the
    finalizer holds these and not the object (which it would otherwise keep alive)."""

    stop_signal: int
    one_by_one: bool = False
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    owned_dir: Path | None = None
    closers: list[Callable[[], None]] = field(default_factory=list)  # after the processes

    def release(self) -> None:
        """Stop every process (stop signal, up to 5 s, then SIGKILL to its whole process
        group) and remove the directory made for it. A Ctrl-C while waiting turns the
        rest into SIGKILLs and is raised again once everything is gone."""
        interrupted = False
        running = [proc for proc in self.procs if proc.poll() is None]
        waves = [[proc] for proc in running] if self.one_by_one else [running]
        try:
            for wave in waves:
                for proc in wave:
                    with contextlib.suppress(ProcessLookupError):
                        proc.send_signal(self.stop_signal)
                deadline = time.monotonic() + STOP_WAIT_SECONDS
                for proc in wave:
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except KeyboardInterrupt:
            interrupted = True
        for proc in running:
            if proc.poll() is None:  # not reaped, so its process group id is still its own
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)  # the server and any child it left
                while True:
                    try:
                        proc.wait()
                        break
                    except KeyboardInterrupt:
                        interrupted = True
        for close in self.closers:
            close()
        if self.owned_dir is not None:
            shutil.rmtree(self.owned_dir, ignore_errors=True)
        if interrupted:
            raise KeyboardInterrupt


def _tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    """The last lines of a log file, or why there are none."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 16384))
            text = handle.read().decode("utf-8", "replace")
    except OSError as exc:
        return f"(no log: {exc})"
    return "\n".join(text.splitlines()[-lines:]) or "(log is empty)"


def _child_env(*drop_prefixes: str) -> dict[str, str]:
    """This environment without variables that would quietly reconfigure the server
    (etcd reads ETCD_*, the PostgreSQL tools PG*)."""
    if not drop_prefixes:
        return dict(os.environ)
    return {k: v for k, v in os.environ.items() if not k.startswith(drop_prefixes)}


def _version_output(argv: list[str]) -> str:
    """Stdout and stderr of a `--version` run (redis and etcd print to stdout)."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ServerError(f"cannot run {' '.join(argv)}: {exc}") from exc
    return proc.stdout + proc.stderr


def _parse_version(output: str, pattern: str, label: str, argv: list[str]) -> str:
    match = re.search(pattern, output)
    if match is None:
        first = output.strip().splitlines()[:1]
        raise ServerError(f"no version in the output of {' '.join(argv)}: {first}")
    return f"{label} {match.group(1)}"


class Server:
    """The shared life cycle: a work directory, processes in their own session logging to
    files in it, a bounded readiness wait, and a stop that always happens."""

    system: ClassVar[str] = "server"
    stop_signal: ClassVar[int] = signal.SIGTERM
    stop_one_by_one: ClassVar[bool] = False  # else every process is signalled at once

    def __init__(self, workdir: Path | None = None, startup_timeout: float = 30.0) -> None:
        self.startup_timeout = startup_timeout
        self._given_workdir = Path(workdir) if workdir is not None else None
        self.workdir: Path = self._given_workdir or Path()  # the real one is made on entry
        self.endpoints: list[tuple[str, int]] = []
        self.version = ""
        self.log_paths: list[Path] = []
        self._logs: dict[int, Path] = {}  # pid -> its log
        self._programs: dict[int, str] = {}  # pid -> what ran, for messages
        self._deadline = 0.0
        self._entered = False
        self._resources = _Resources(self.stop_signal, self.stop_one_by_one)
        self._finalizer = weakref.finalize(self, self._resources.release)

    @property
    def log_path(self) -> Path:
        """The (first) server's log; `log_paths` has one per process."""
        if not self.log_paths:
            raise ServerError(f"{self.system}: not started, so no log yet")
        return self.log_paths[0]

    @property
    def pids(self) -> list[int]:
        """Every process started, stopped ones included (tests check they are gone)."""
        return [proc.pid for proc in self._resources.procs]

    def __enter__(self) -> Self:
        if self._entered:
            raise ServerError(f"{self.system}: a server object starts once; make a new one")
        self._entered = True
        try:
            if self._given_workdir is None:
                sweep_stale()  # what a verify killed outright left behind
                self.workdir = Path(tempfile.mkdtemp(prefix=f"leadercheck-{self.system}-"))
                mark_owned(self.workdir)
                self._resources.owned_dir = self.workdir
            else:
                self.workdir.mkdir(parents=True, exist_ok=True)
            self._deadline = time.monotonic() + self.startup_timeout
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop every process and remove the directory made for them; safe to call twice."""
        self._finalizer()  # runs the release once; later calls (and exit) do nothing

    def make_whole(self) -> float | None:
        """Undo a fault a run left on the servers themselves (a member killed or cut off),
        so that the next run starts as the first did; the seconds it took, None if there
        was none. Only a cluster has such faults."""
        return None

    def _start(self) -> None:
        raise NotImplementedError

    def _spawn(self, name: str, argv: list[str | Path], **popen: Any) -> subprocess.Popen[bytes]:
        """Start one process in its own session with stdout and stderr to `<name>.log`."""
        log = self.workdir / f"{name}.log"
        args = [str(arg) for arg in argv]
        try:
            with log.open("ab") as out:
                proc = subprocess.Popen(
                    args,
                    cwd=self.workdir,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    **dies_with_us(),
                    **popen,
                )
        except OSError as exc:
            raise ServerError(f"{self.system}: cannot run {args[0]}: {exc}") from exc
        self._resources.procs.append(proc)
        if log not in self.log_paths:  # a member started again writes on in its log
            self.log_paths.append(log)
        self._logs[proc.pid] = log
        self._programs[proc.pid] = f"{name} ({Path(args[0]).name})"
        return proc

    def _failure(self, message: str, procs: list[subprocess.Popen[bytes]]) -> ServerError:
        """A ServerError with the last lines of the logs of `procs`."""
        parts = [f"{self.system}: {message}"]
        for proc in procs:
            log = self._logs[proc.pid]
            parts.append(f"--- last lines of {log} ---\n{_tail(log)}")
        if self._resources.owned_dir is not None:
            parts.append("(the temporary directory goes with the stop; pass workdir= to keep it)")
        return ServerError("\n".join(parts))

    def _wait_until(
        self, ready: Callable[[], bool], what: str, procs: list[subprocess.Popen[bytes]]
    ) -> None:
        """Poll `ready` until it holds; a process of `procs` exiting first, or the deadline
        passing, is a ServerError. `ready` is always tried at least once."""
        while True:
            for proc in procs:
                if proc.poll() is not None:
                    raise self._failure(
                        f"{self._programs[proc.pid]} exited with code {proc.returncode} "
                        f"before {what}",
                        [proc],
                    )
            if ready():
                return
            if time.monotonic() >= self._deadline:
                raise self._failure(
                    f"not ready within startup_timeout={self.startup_timeout:g} s "
                    f"(waiting for {what})",
                    procs,
                )
            time.sleep(POLL_SECONDS)

    def _wait_exit(self, proc: subprocess.Popen[bytes], what: str) -> None:
        """Wait (bounded by the same deadline) for a setup step to finish successfully."""
        while proc.poll() is None:
            if time.monotonic() >= self._deadline:
                raise self._failure(
                    f"{what} did not finish within startup_timeout={self.startup_timeout:g} s",
                    [proc],
                )
            time.sleep(POLL_SECONDS)
        if proc.returncode != 0:
            raise self._failure(f"{what} failed with exit code {proc.returncode}", [proc])


# --- etcd -------------------------------------------------------------------------------

_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback direct


def _etcd_peer_serving(port: int) -> bool:
    try:
        with _NO_PROXY.open(f"http://{HOST}:{port}/members", timeout=1.0) as response:
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError):
        return False


def _etcd_healthy(port: int) -> bool:
    try:
        with _NO_PROXY.open(f"http://{HOST}:{port}/health", timeout=1.0) as response:
            body = json.loads(response.read() or b"{}")
    except (OSError, ValueError, urllib.error.URLError):
        return False
    return isinstance(body, dict) and body.get("health") == "true"


def etcd_status(port: int) -> tuple[str, str] | None:
    """(this member's id, the leader's id as this member sees it), or None if it does not say."""
    request = urllib.request.Request(
        f"http://{HOST}:{port}/v3/maintenance/status", data=b"{}", method="POST"
    )
    try:
        with _NO_PROXY.open(request, timeout=1.0) as response:
            body = json.loads(response.read() or b"{}")
    except (OSError, ValueError, urllib.error.URLError):
        return None
    if not isinstance(body, dict) or not isinstance(body.get("header"), dict):
        return None
    return str(body["header"].get("member_id", "")), str(body.get("leader", ""))


MEMBER_ROLES = ("leader", "follower")


class MemberFault(NamedTuple):
    """A member killed or cut off (`kind`: "kill" or "cut"): which, where, and how long the
    others took to elect a new leader (None: it did not lead)."""

    kind: str
    name: str
    endpoint: tuple[str, int]
    election_seconds: float | None


def _proc_address(host: str, port: int) -> str:
    """An IPv4 address as /proc/net/tcp writes it: 0100007F:1F90 for 127.0.0.1:8080."""
    packed = socket.inet_aton(host)
    return f"{int.from_bytes(packed, 'little'):08X}:{port:04X}"


def dialer_pid(sock: socket.socket, pids: list[int]) -> int | None:
    """Which of `pids` made the loopback connection `sock` accepted: the connecting
    socket's inode, from /proc/net/tcp, found among each process's descriptors."""
    try:
        far, near = sock.getpeername()[:2], sock.getsockname()[:2]
        wanted = (_proc_address(*far), _proc_address(*near))
        with open("/proc/net/tcp", encoding="ascii") as table:
            rows = [line.split() for line in table.readlines()[1:]]
    except (OSError, ValueError):
        return None
    inode = next((row[9] for row in rows if (row[1], row[2]) == wanted), None)
    if inode is None:
        return None
    needle = f"socket:[{inode}]"
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(f"/proc/{pid}/fd/{fd}") == needle:
                        return pid
    return None


class EtcdCluster(Server):
    """An etcd cluster of `members` on loopback, with fast timing (50 ms heartbeats, 500 ms
    election timeout) so leases of 1 s are honoured: etcd's minimum lease TTL is 1.5
    election timeouts rounded up to a second. The v3 JSON gateway is at /v3/ on every
    member's client port (POST /v3/kv/put, /v3/kv/range, /v3/lease/grant, ...).

    Members stop one at a time: a leader told to stop first hands leadership to its
    longest-connected peer and waits (up to 6 s) for it, so signalling all at once leaves
    the leader waiting on a peer that is itself stopping. One at a time, each hand-over
    goes to a live peer, and the last member has no live peer, so it skips the hand-over.

    Members also start one at a time, each once the one before serves its peer port: a
    new member first asks its peers for the cluster (is it joining one already
    bootstrapped?), and a peer that is listening but not yet serving holds that question
    for etcd's fixed 1 s timeout, so members started together took 0-2 s longer at random.
    A member not started yet refuses the connection at once, which costs nothing."""

    system = "etcd"
    stop_one_by_one = True
    HEARTBEAT_MS = 50
    ELECTION_MS = 500

    def __init__(
        self,
        members: int = 3,
        workdir: Path | None = None,
        startup_timeout: float = 30.0,
        *,
        etcd: str | None = None,
        peer_proxies: bool = False,
    ) -> None:
        if members < 1:
            raise ValueError(f"an etcd cluster needs at least one member, not {members}")
        super().__init__(workdir, startup_timeout)
        self.members = members
        self._etcd = etcd
        self.client_urls: list[str] = []
        self.member_names: list[str] = []
        #: with peer_proxies, the members reach one another through one proxy per member
        #: (its advertised peer URL), which can tell which member made each connection, so
        #: one member can be cut off from its peers (`isolate_member`)
        self.peer_proxies: list[FaultProxy] | None = [] if peer_proxies else None
        self._commands: list[tuple[list[str | Path], dict[str, str]]] = []  # to restart one
        self.fault: MemberFault | None = None  # the member fault not undone yet

    def _agreed_leader(self, among: list[int], seconds: float) -> int | None:
        """The index of the member that every member of `among` names as leader, once all
        of them answer and name the same one of them (polled, bounded by `seconds`)."""
        deadline = time.monotonic() + seconds
        while True:
            seen = [etcd_status(self.endpoints[k][1]) for k in among]
            if all(s is not None for s in seen):
                ids = {s[0]: k for s, k in zip(seen, among, strict=True) if s is not None}
                leaders = {s[1] for s in seen if s is not None}
                if len(leaders) == 1 and leaders <= ids.keys():  # one of them, for all
                    return ids[leaders.pop()]
            if time.monotonic() >= deadline:
                return None
            time.sleep(POLL_SECONDS)

    def _member_with(self, role: str) -> int:
        """The index of the Raft leader, or of a follower (the last), as the cluster sees it."""
        if role not in MEMBER_ROLES:
            raise ValueError(f"a member's role is one of {MEMBER_ROLES}, not {role!r}")
        leader = self._agreed_leader(list(range(self.members)), 5.0)
        if leader is None:
            raise ServerError("etcd: no member said which one leads within 5 s")
        if role == "leader":
            return leader
        return max(k for k in range(self.members) if k != leader)

    def _fault(self, k: int, role: str, kind: str) -> MemberFault:
        """What befell member k: its name and address and, when it led, how long the
        members left took to elect a new leader (bounded: 10 s). Meanwhile etcd answers
        every linearizable request with Service Unavailable, which is the election, not
        the run's finding; the wait is real time the timeline shows."""
        took = None
        if role == "leader":
            began = time.monotonic()
            if self._agreed_leader([j for j in range(self.members) if j != k], 10.0) is None:
                raise ServerError("etcd: the members left elected no leader within 10 s")
            took = round(time.monotonic() - began, 2)
        self.fault = MemberFault(kind, self.member_names[k], self.endpoints[k], took)
        return self.fault

    def kill_member(self, role: str) -> MemberFault:
        """SIGKILL one member, the Raft leader or a follower (the last one), as the cluster
        sees it now, and wait for it to exit. The others keep a majority of three, so the
        cluster goes on; the killed one stays down until `make_whole`, or the stop."""
        self._no_fault_yet()
        k = self._member_with(role)
        proc = self._resources.procs[k]
        proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):  # reaped at the stop if not now
            proc.wait(timeout=5)
        return self._fault(k, role, "kill")

    def isolate_member(self, role: str) -> MemberFault:
        """Cut one member off from its peers (both ways, every connection reset, new ones
        refused) while it keeps serving its clients. It stays cut until `make_whole`."""
        if self.peer_proxies is None:
            raise ServerError("etcd: started without peer proxies, no member can be cut off")
        self._no_fault_yet()
        k = self._member_with(role)
        for j, proxy in enumerate(self.peer_proxies):
            if j == k:
                proxy.cut()  # every connection made to it
            else:
                proxy.shun(self.member_names[k])  # and every one it made
        return self._fault(k, role, "cut")

    def _no_fault_yet(self) -> None:
        if self.fault is not None:  # one at a time: the cluster keeps a majority
            raise ServerError(f"etcd: member {self.fault.name} is down or cut off already")

    def make_whole(self) -> float | None:
        """Undo the member fault, if one is outstanding: a killed member is started again
        with the same command (its data directory kept: it rejoins and catches up from the
        leader), a cut one's peer connections let through again. Waits until it serves and
        every member names the same leader (bounded by the start timeout)."""
        fault = self.fault
        if fault is None:
            return None
        began = time.monotonic()
        self._deadline = began + self.startup_timeout
        k = self.member_names.index(fault.name)
        if fault.kind == "kill":
            procs = self._resources.procs
            with contextlib.suppress(subprocess.TimeoutExpired):  # reaped at the stop if not
                procs[k].wait(timeout=5)
            argv, env = self._commands[k]
            self._spawn(fault.name, argv, env=env)
            procs[k], procs[-1] = procs[-1], procs[k]  # member k's place; the dead one last
            serving = functools.partial(_etcd_healthy, self.endpoints[k][1])
            self._wait_until(serving, f"{fault.name}, started again, to serve", [procs[k]])
        else:
            for proxy in self.peer_proxies or ():
                proxy.heal()
        left = self._deadline - time.monotonic()
        if self._agreed_leader(list(range(self.members)), max(left, 1.0)) is None:
            raise ServerError(
                f"etcd: {fault.name} is back, but the members named no one leader"
                f" within {self.startup_timeout:g} s"
            )
        self.fault = None
        return round(time.monotonic() - began, 2)

    def _dialer(self, sock: socket.socket) -> str | None:
        """The member that made a peer connection (None: not one of them)."""
        procs = self._resources.procs
        pid = dialer_pid(sock, [p.pid for p in procs])
        if pid is None:
            return None
        return next(
            (n for n, p in zip(self.member_names, procs, strict=False) if p.pid == pid), None
        )

    def _start(self) -> None:
        etcd = self._etcd or shutil.which("etcd")
        if etcd is None:
            raise ServerError(available("etcd") or "etcd not found")
        ports = free_ports(2 * self.members)
        names = [f"m{i + 1}" for i in range(self.members)]
        client, peer = ports[: self.members], ports[self.members :]
        advertised = peer
        if self.peer_proxies is not None:
            for name, port in zip(names, peer, strict=True):
                proxy = FaultProxy((HOST, port), name=f"{name}-peers", dialer_of=self._dialer)
                self._resources.closers.append(proxy.stop)
                self.peer_proxies.append(proxy.start())
            advertised = [proxy.port for proxy in self.peer_proxies]
        cluster = ",".join(f"{n}=http://{HOST}:{q}" for n, q in zip(names, advertised, strict=True))
        token = f"leadercheck-{uuid.uuid4().hex[:12]}"
        env = _child_env("ETCD_")
        procs = []
        for name, port, peer_port, shown in zip(names, client, peer, advertised, strict=True):
            client_url, peer_url = f"http://{HOST}:{port}", f"http://{HOST}:{peer_port}"
            argv: list[str | Path] = [
                etcd,
                "--name", name,
                "--data-dir", self.workdir / f"{name}.etcd",
                "--listen-client-urls", client_url,
                "--advertise-client-urls", client_url,
                "--listen-peer-urls", peer_url,
                "--initial-advertise-peer-urls", f"http://{HOST}:{shown}",
                "--initial-cluster", cluster,
                "--initial-cluster-state", "new",
                "--initial-cluster-token", token,
                "--heartbeat-interval", str(self.HEARTBEAT_MS),
                "--election-timeout", str(self.ELECTION_MS),
                "--logger", "zap",
                "--log-outputs", "stderr",
            ]  # fmt: skip
            procs.append(self._spawn(name, argv, env=env))
            self._commands.append((argv, env))
            self.client_urls.append(client_url)
            self.member_names.append(name)
            self.endpoints.append((HOST, port))
            if len(procs) < self.members:
                serving = functools.partial(_etcd_peer_serving, peer_port)
                self._wait_until(serving, f"{name} to serve its peer port", procs)
        healthy: set[int] = set()

        def ready() -> bool:
            healthy.update(p for p in client if p not in healthy and _etcd_healthy(p))
            return len(healthy) == len(client)

        self._wait_until(ready, 'every member\'s /health to say {"health":"true"}', procs)
        argv_version = [etcd, "--version"]
        self.version = _parse_version(
            _version_output(argv_version), r"etcd Version:\s*(\S+)", "etcd", argv_version
        )


# --- PostgreSQL -------------------------------------------------------------------------


def _postgres_bindir() -> Path | None:
    """The newest /usr/lib/postgresql/N/bin (Debian's layout), else initdb's folder on PATH."""

    def number(path: Path) -> tuple[int, ...]:
        return tuple(int(part) for part in re.findall(r"\d+", path.parent.name))

    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=number, reverse=True)
    on_path = shutil.which("initdb")
    if on_path is not None:
        candidates.append(Path(on_path).parent)
    for bindir in candidates:
        if (bindir / "initdb").is_file() and (bindir / "postgres").is_file():
            return bindir
    return None


def _tcp_open(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=1.0):
            return True
    except OSError:
        return False


class PostgresServer(Server):
    """One PostgreSQL server: a fresh `initdb` cluster (trust authentication, superuser
    `leadercheck`, no fsync), listening on loopback with its socket in the work directory.

    PostgreSQL refuses to run as root, so as root both initdb and the server run as the
    `postgres` system user, which is given the work directory. The stop signal is SIGINT,
    PostgreSQL's fast shutdown: SIGTERM is its smart shutdown, which waits for every
    client (a test's open connection included) to disconnect."""

    system = "postgres"
    stop_signal = signal.SIGINT
    USER = "leadercheck"
    DBNAME = "postgres"

    def __init__(
        self,
        workdir: Path | None = None,
        startup_timeout: float = 30.0,
        *,
        bindir: Path | None = None,
    ) -> None:
        super().__init__(workdir, startup_timeout)
        self._bindir = Path(bindir) if bindir is not None else None
        self.port = 0

    @property
    def dsn(self) -> str:
        """A libpq connection string for psycopg.connect."""
        return f"host={HOST} port={self.port} user={self.USER} dbname={self.DBNAME}"

    def _run_as(self) -> dict[str, Any]:
        """Popen arguments that drop root to the `postgres` user (nothing when not root)."""
        env = _child_env("PG")
        if os.geteuid() != 0:
            return {"env": env}
        try:
            account = pwd.getpwnam("postgres")
        except KeyError as exc:
            raise ServerError(available("postgres") or "no postgres user") from exc
        for parent in self.workdir.resolve().parents:  # a given workdir may sit in a 0700 one
            info = parent.stat()
            if not info.st_mode & 0o001 and info.st_uid != account.pw_uid:
                raise ServerError(
                    f"postgres: the postgres user cannot reach {self.workdir} through {parent} "
                    "(no search permission for others); pass a workdir under /tmp, or none"
                )
        os.chown(self.workdir, account.pw_uid, account.pw_gid)  # mkdtemp's 0700, now for it
        env.update(HOME=account.pw_dir, USER="postgres", LOGNAME="postgres")
        return {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": [], "env": env}

    def _start(self) -> None:
        bindir = self._bindir or _postgres_bindir()
        if bindir is None:
            raise ServerError(available("postgres") or "PostgreSQL not found")
        as_user = self._run_as()
        data = self.workdir / "data"
        initdb = self._spawn(
            "initdb",
            [bindir / "initdb", "-D", data, "-A", "trust", "-U", self.USER, "--no-sync",
             "-E", "UTF8", "--locale=C"],
            **as_user,
        )  # fmt: skip
        self._wait_exit(initdb, "initdb")
        self.port = free_ports(1)[0]
        server = self._spawn(
            "postgres",
            [bindir / "postgres", "-D", data, "-k", self.workdir, "-h", HOST,
             "-p", str(self.port), "-c", "fsync=off", "-c", f"listen_addresses={HOST}"],
            **as_user,
        )  # fmt: skip
        self.endpoints = [(HOST, self.port)]
        pg_isready = bindir / "pg_isready"
        isready = [str(pg_isready), "-q", "-h", HOST, "-p", str(self.port), "-t", "1"]

        def ready() -> bool:
            if not pg_isready.is_file():
                return _tcp_open(self.port)
            try:
                return subprocess.run(isready, timeout=5, check=False).returncode == 0
            except (OSError, subprocess.TimeoutExpired):
                return False

        self._wait_until(ready, "pg_isready to report the server accepting connections", [server])
        argv = [str(bindir / "postgres"), "--version"]
        self.version = _parse_version(
            _version_output(argv), r"\(PostgreSQL\)\s*(\d+(?:\.\d+)*)", "PostgreSQL", argv
        )


# --- ZooKeeper --------------------------------------------------------------------------

_ZOOKEEPER_JARS = (
    Path("/usr/share/java/zookeeper.jar"),  # Debian's zookeeperd
    Path("/usr/share/zookeeper/zookeeper.jar"),
)
# Debian's zookeeper.jar names its dependencies in its manifest, slf4j-api among them but no
# logging backend; with these two the server's log4j output reaches our log file.
_ZOOKEEPER_LOGGING_JARS = (
    Path("/usr/share/java/slf4j-log4j12.jar"),
    Path("/usr/share/java/log4j-1.2.jar"),
)
_LOG4J_PROPERTIES = """\
log4j.rootLogger=INFO, CONSOLE
log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender
log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout
log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} - %-5p [%t:%C{1}@%L] - %m%n
"""


def _zookeeper_jar() -> Path | None:
    return next((jar for jar in _ZOOKEEPER_JARS if jar.is_file()), None)


def _four_letter(port: int, command: str) -> str:
    """A ZooKeeper four-letter command's answer ("" when the server is not answering)."""
    try:
        with socket.create_connection((HOST, port), timeout=1.0) as sock:
            sock.sendall(command.encode())
            chunks = []
            while chunk := sock.recv(4096):
                chunks.append(chunk)
    except OSError:
        return ""
    return b"".join(chunks).decode("utf-8", "replace")


class ZooKeeperServer(Server):
    """A standalone ZooKeeper server, run with java directly (no init scripts). A tick of
    200 ms allows sessions from 400 ms to 20 s, so tests can use 1-4 s session timeouts."""

    system = "zookeeper"
    TICK_MS = 200
    MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain"

    def __init__(
        self,
        workdir: Path | None = None,
        startup_timeout: float = 30.0,
        *,
        java: str | None = None,
    ) -> None:
        super().__init__(workdir, startup_timeout)
        self._java = java
        self.port = 0

    def _config(self) -> Path:
        cfg = self.workdir / "zoo.cfg"
        settings = {
            "tickTime": self.TICK_MS,
            "minSessionTimeout": 2 * self.TICK_MS,
            "maxSessionTimeout": 100 * self.TICK_MS,
            "dataDir": self.workdir / "data",
            "clientPort": self.port,
            "clientPortAddress": HOST,
            "admin.enableServer": "false",
            "4lw.commands.whitelist": "srvr,ruok",
            "forceSync": "no",
        }
        cfg.write_text("".join(f"{key}={value}\n" for key, value in settings.items()))
        (self.workdir / "log4j.properties").write_text(_LOG4J_PROPERTIES)
        return cfg

    def _start(self) -> None:
        java = self._java or shutil.which("java")
        jar = _zookeeper_jar()
        if java is None or jar is None:
            raise ServerError(available("zookeeper") or "ZooKeeper not found")
        self.port = free_ports(1)[0]
        cfg = self._config()
        jars = [jar, *(j for j in _ZOOKEEPER_LOGGING_JARS if j.is_file())]
        classpath = os.pathsep.join(str(p) for p in [self.workdir, *jars])
        argv: list[str | Path] = [
            java,
            "-Xmx256m",
            "-XX:+UseSerialGC",
            f"-Dlog4j.configuration=file:{self.workdir / 'log4j.properties'}",
            "-Dzookeeper.jmx.log4j.disable=true",
            "-Dzookeeper.preAllocSize=1024",  # KiB, not 64 MiB, per transaction log file
            "-cp", classpath,
            self.MAIN,
            cfg,
        ]  # fmt: skip
        server = self._spawn("zookeeper", argv)
        self.endpoints = [(HOST, self.port)]
        self._wait_until(
            lambda: _four_letter(self.port, "ruok") == "imok", 'ruok to answer "imok"', [server]
        )
        match = re.search(r"Zookeeper version:\s*(\d+(?:\.\d+)+)", _four_letter(self.port, "srvr"))
        if match is None:  # fall back on the versioned jar name Debian links
            jars_named = sorted(jar.parent.glob("zookeeper-*.jar"))
            names = (re.fullmatch(r"zookeeper-(\d+(?:\.\d+)+)\.jar", p.name) for p in jars_named)
            match = next((m for m in names if m), None)
        if match is None:
            raise self._failure("no version from srvr nor from the jar's name", [server])
        self.version = f"ZooKeeper {match.group(1)}"


# --- Redis ------------------------------------------------------------------------------


def _redis_pong(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=1.0) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServers(Server):
    """`count` independent Redis instances (no persistence): Redlock's N masters, each with
    a wall clock of its own that can jump (`clocks[i]`, through the preloaded shim that
    `wall_clocks` asks for: Redis compares a key's absolute expiry with its wall clock)."""

    system = "redis"

    def __init__(
        self,
        count: int = 5,
        workdir: Path | None = None,
        startup_timeout: float = 30.0,
        *,
        redis_server: str | None = None,
        wall_clocks: bool = False,
    ) -> None:
        if count < 1:
            raise ValueError(f"at least one Redis instance, not {count}")
        super().__init__(workdir, startup_timeout)
        self.count = count
        self._redis_server = redis_server
        self.wall_clocks = wall_clocks
        self.clocks: list[WallClock] = []
        self._launch: list[tuple[list[str | Path], dict[str, str] | None]] = []
        self._running: list[subprocess.Popen[bytes] | None] = []

    def crash(self, index: int) -> None:
        """SIGKILL instance `index` (from 0), as a crash or an OOM kill ends it: without
        persistence, what it held is gone."""
        proc = self._running[index]
        if proc is None:
            raise ServerError(f"redis instance {index + 1} is down already")
        proc.kill()
        proc.wait(timeout=self.startup_timeout)
        self._running[index] = None

    def restart(self, index: int) -> float:
        """Start instance `index` again on its port, empty; the seconds until it answered."""
        if self._running[index] is not None:
            raise ServerError(f"redis instance {index + 1} is running")
        began = time.monotonic()
        argv, env = self._launch[index]
        proc = self._spawn(f"r{index + 1}", argv, env=env)
        self._running[index] = proc
        port = self.endpoints[index][1]
        self._deadline = time.monotonic() + self.startup_timeout
        self._wait_until(lambda: _redis_pong(port), f"PING to answer PONG on {port}", [proc])
        return round(time.monotonic() - began, 3)

    def make_whole(self) -> float | None:
        """Start again every instance a run crashed and left down (the store's crash)."""
        down = [k for k, proc in enumerate(self._running) if proc is None]
        return round(sum(self.restart(k) for k in down), 3) if down else None

    def _start(self) -> None:
        binary = self._redis_server or shutil.which("redis-server")
        if binary is None:
            raise ServerError(available("redis") or "redis-server not found")
        procs = []
        shim = build_wall_clock_shim(self.workdir) if self.wall_clocks else None
        for i, port in enumerate(free_ports(self.count), start=1):
            folder = self.workdir / f"r{i}"
            folder.mkdir(exist_ok=True)
            env = None
            if shim is not None:
                self.clocks.append(WallClock(folder / "clock"))
                env = {**_child_env(), **self.clocks[-1].environment(shim)}
            argv: list[str | Path] = [
                binary,
                "--port", str(port),
                "--bind", HOST,
                "--save", "",
                "--appendonly", "no",
                "--dir", folder,
                "--daemonize", "no",
                "--protected-mode", "no",
            ]  # fmt: skip
            procs.append(self._spawn(f"r{i}", argv, env=env))
            self._launch.append((argv, env))
            self._running.append(procs[-1])
            self.endpoints.append((HOST, port))
        ports = [port for _, port in self.endpoints]
        up: set[int] = set()

        def ready() -> bool:
            up.update(p for p in ports if p not in up and _redis_pong(p))
            return len(up) == len(ports)

        self._wait_until(ready, "PING to answer PONG on every instance", procs)
        argv_version = [binary, "--version"]
        self.version = _parse_version(
            _version_output(argv_version), r"\bv=(\d+(?:\.\d+)+)", "Redis", argv_version
        )


# --- by name ----------------------------------------------------------------------------

SYSTEMS: dict[str, type[Server]] = {
    "etcd": EtcdCluster,
    "postgres": PostgresServer,
    "zookeeper": ZooKeeperServer,
    "redis": RedisServers,
}


def start(system: str, **kw: Any) -> Server:
    """The server object for `system` (not yet started: the `with` statement starts it)."""
    try:
        cls = SYSTEMS[system]
    except KeyError:
        raise ServerError(f"unknown system {system!r}; known: {', '.join(SYSTEMS)}") from None
    return cls(**kw)


def available(system: str) -> str | None:
    """None if `system` can run on this machine, else one line saying what is missing."""
    if system == "etcd":
        return None if shutil.which("etcd") else "etcd not found: apt-get install etcd-server"
    if system == "postgres":
        if _postgres_bindir() is None:
            return "PostgreSQL's initdb and postgres not found: apt-get install postgresql"
        if os.geteuid() == 0:
            try:
                pwd.getpwnam("postgres")
            except KeyError:
                return "running as root and no 'postgres' user to run PostgreSQL as"
        return None
    if system == "zookeeper":
        if shutil.which("java") is None:
            return "java not found: apt-get install default-jre-headless"
        if _zookeeper_jar() is None:
            return "ZooKeeper's jar not found: apt-get install zookeeperd"
        return None
    if system == "redis":
        if shutil.which("redis-server") is None:
            return "redis-server not found: apt-get install redis-server"
        return None
    raise ServerError(f"unknown system {system!r}; known: {', '.join(SYSTEMS)}")

"""One conformance run from start to end: the servers (started here or the user's), the
world of clients and links, the schedule, and what the real system did.

`conform_trace` is what `verify conform TRACE.json --against SYSTEM` runs and what the
tests call: servers are started on loopback in a temporary directory and stopped
whatever happens (or `endpoint` names running ones, which are left running), and the
client processes and proxies are gone when it returns.
"""

from __future__ import annotations

import contextlib
import re
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leadercheck.checker.conform import servers
from leadercheck.checker.conform.bindings import binding_for
from leadercheck.checker.conform.bindings.base import Binding
from leadercheck.checker.conform.failures import probe
from leadercheck.checker.conform.harness import Conformance, Entry, ModelStep, run_trace
from leadercheck.checker.conform.lifetime import mark_owned
from leadercheck.checker.conform.world import Timing, World
from leadercheck.checker.engine.interrupts import real_interrupt
from leadercheck.checker.errors import LeadercheckError

Address = tuple[str, int]


@dataclass(frozen=True)
class Running:
    """The servers a run talks to: addresses, version, and a DSN for PostgreSQL."""

    endpoints: list[Address]
    version: str
    extra: dict[str, Any]
    server: Any = None  # the servers started here (None: the user's, which are left alone)


#: a host name or an IPv4 address (the clients build their URLs and host strings as
#: host:port, which an IPv6 address would need brackets in for etcd3gw and kazoo)
_HOST = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?")
ENDPOINT_FORM = "host:port[,host:port...] with a port from 1 to 65535"


def parse_endpoints(text: str) -> list[Address]:
    """`host:port[,host:port...]`, as --endpoint takes it."""
    shown = text if len(text) <= 80 else text[:77] + "..."
    found: list[Address] = []
    for part in text.split(","):
        host, sep, port = part.strip().rpartition(":")
        if not sep or not _HOST.fullmatch(host) or not (port.isascii() and port.isdigit()):
            raise LeadercheckError(f"--endpoint {shown!r}: expected {ENDPOINT_FORM}")
        if not 0 < int(port) < 65536:
            raise LeadercheckError(f"--endpoint {shown!r}: port {port} is not from 1 to 65535")
        address = (host, int(port))
        if address in found:
            raise LeadercheckError(f"--endpoint {shown!r}: {part.strip()} given twice")
        found.append(address)
    return found


@contextlib.contextmanager
def running_servers(system: str, endpoint: str | None, **options: Any) -> Iterator[Running]:
    """The user's servers as given (each connected to once first), or fresh ones on
    loopback, always stopped afterwards."""
    if endpoint is not None:
        addresses = parse_endpoints(endpoint)
        probe(system, addresses)
        extra: dict[str, Any] = {}
        if system == "postgres":
            host, port = addresses[0]
            extra["dsn"] = f"host={host} port={port} user=leadercheck dbname=postgres"
        yield Running(addresses, f"{system} at {endpoint} (version not read)", extra)
        return
    missing = servers.available(system)
    if missing is not None:
        raise LeadercheckError(f"cannot start {system} here: {missing} (or give --endpoint)")
    try:
        server = servers.start(system, **options)
        with server:
            extra = {"dsn": server.dsn} if system == "postgres" else {}  # type: ignore[attr-defined]
            yield Running(list(server.endpoints), server.version, extra, server)
    except servers.ServerError as exc:
        raise LeadercheckError(f"{system} did not start: {exc}".splitlines()[0]) from None


@dataclass(frozen=True)
class Report:
    """A finished run with what it ran against, as the timeline output needs it."""

    result: Conformance
    binding: Binding
    version: str
    timing: Timing
    trace: str  # the trace file, or "random schedule #k"
    claim: str | None = None  # the claim the trace breaks (a counterexample's)
    model_break: int | None = None  # where the model breaks it in this schedule (None: nowhere)


def server_options(binding: Binding) -> dict[str, Any]:
    """What the servers need started for this run: etcd's peer proxies, to cut a member;
    Redis masters' wall clocks, to make one jump."""
    fault = binding.member_fault
    options: dict[str, Any] = {}
    if fault is not None and fault[0] == "cut":
        options["peer_proxies"] = True
    if binding.wall_clocks:
        options["wall_clocks"] = True
    if binding.instances is not None:
        options["count"] = binding.instances
    return options


def world_for(binding: Binding, running: Running, timing: Timing, log_dir: Path) -> World:
    mark_owned(log_dir)  # the clients' logs: removed by a later run if this one is killed
    if running.server is None:  # the user's servers (--endpoint) are not ours to crash
        binding.store_crashes = False
    store, storage = binding.split_endpoints(list(running.endpoints))
    return World(
        binding.system,
        binding.nodes,
        timing,
        store,
        storage,
        log_dir,
        extra=dict(running.extra),
        server=running.server,
    )


def conform_trace(
    protocol: str,
    params: dict[str, int],
    steps: Sequence[ModelStep],
    system: str,
    timing: Timing,
    endpoint: str | None = None,
    progress: Callable[[Entry], None] = lambda e: None,
    trace_name: str = "",
    binding: Binding | None = None,
    claim: tuple[str, int | None] | None = None,
) -> Report:
    """The trace's steps made real on `system`, compared step by step with the model;
    `claim` is the claim the trace breaks and the step where the model breaks it in
    these steps (None: nowhere), for the report to say whether the real system did."""
    if binding is None:
        binding = binding_for(protocol, system, params)
        binding.check_timing(timing)
    timing = binding.settled(timing)
    result = None
    try:
        with (
            running_servers(system, endpoint, **server_options(binding)) as running,
            tempfile.TemporaryDirectory(prefix="leadercheck-clients-") as logs,
        ):
            world = world_for(binding, running, timing, Path(logs))
            result = run_trace(binding, world, steps, progress)
    except KeyboardInterrupt:  # while the servers stop: what ran stands, interrupted
        if result is None or not real_interrupt():
            raise
        result.interrupted = True
    name, model_break = claim if claim is not None else (None, None)
    return Report(result, binding, running.version, timing, trace_name, name, model_break)

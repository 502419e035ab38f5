"""The Ray transport for the partitioned search: partition workers as Ray actors.

The only module that imports `ray`, and only inside functions, so importing it starts
nothing. Each `PartitionWorker` (checker/engine/strategies/processes/partitioned.py) becomes an
actor; the model and the properties reach the actors through Ray's serialization (cloudpickle, so
lambdas travel). Batches pass between actors as ObjectRefs: a producing step returns one object
per worker (`num_returns=K`) and the consuming step of each worker receives its K refs
as top-level arguments, so Ray resolves them in the actor and the driver never
materializes a batch. Shipped states travel as bytes pickled by the worker itself:
Ray's serializer calls back into Python for every tuple, which cost about 3 s of a
17 s run on raft-election (N=4, NC=4, MaxTerm=2).

States are partitioned by fingerprint (`hash(state)`, masked) modulo K, so every actor
must hash alike. Python
salts str hashes per process, hence PYTHONHASHSEED=0 in the actors' environment; and on
Python < 3.12 `hash(None)` is None's address, which address-space randomization changes
from one interpreter to the next, hence actors are started under `setarch -R` where it
works (Linux). The owners still check every new state's fingerprint against their own
hash and the search fails loudly if they differ (never a silently wrong count).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from leadercheck.checker.engine.hashing import HASH_SEED, no_aslr_prefix
from leadercheck.checker.engine.interrupts import model_escapes, worker_process
from leadercheck.checker.engine.loaded_modules import load_again, loaded
from leadercheck.checker.engine.strategies.processes.partitioned import (
    PartitionWorker,
    Transport,
    WorkerSetup,
    quiet_gc,
)
from leadercheck.checker.errors import LeadercheckError


class _Actor(PartitionWorker):
    """A partition worker whose batch-producing steps suit Ray's `num_returns`.

    With one worker, `num_returns=1` makes Ray store the returned list of one batch as
    one object; the step then returns the batch itself.
    """

    def __init__(self, shipped: tuple[Any, Any, bytes], index: int) -> None:
        from ray import cloudpickle  # noqa: PLC0415 (Ray's own serializer)

        modules, folders, pickled = shipped
        worker_process(ignore_sigint=False)  # a KeyboardInterrupt here is model code's
        load_again(modules, folders)  # a user's model file, before its classes are unpickled
        super().__init__(cloudpickle.loads(pickled), index)
        quiet_gc()  # the actor owns its process

    def step(self, method: str, *args: Any) -> Any:
        with model_escapes(method):  # a SystemExit must not end the actor as asked
            out = getattr(self, method)(*args)
        return out[0] if self.workers == 1 else out


class RayTransport(Transport):
    """K actors of one search on a Ray instance; `close` shuts Ray down if it started it."""

    def __init__(self, workers: int, started: bool, runtime_env: dict[str, Any]) -> None:
        self.workers = workers
        self.started = started  # this transport called ray.init for a local instance
        self.runtime_env = runtime_env
        self.actors: list[Any] = []

    def start(self, setup: WorkerSetup) -> None:
        import ray  # noqa: PLC0415 (lazy: importing this module starts nothing)
        from ray import cloudpickle  # noqa: PLC0415

        self.stop()
        actor = ray.remote(_Actor).options(num_cpus=1, runtime_env=self.runtime_env)
        # serialized once for all actors; unpickled by each after it loads the user's files
        shared = ray.put((*loaded(), cloudpickle.dumps(setup)))
        self.actors = [actor.remote(shared, i) for i in range(self.workers)]

    def call(self, method: str, args: Sequence[tuple[Any, ...]]) -> list[Any]:
        import ray  # noqa: PLC0415

        refs = [getattr(a, method).remote(*x) for a, x in zip(self.actors, args, strict=True)]
        return list(ray.get(refs))

    def exchange(
        self, first: str, args: Sequence[tuple[Any, ...]], stages: Sequence[str]
    ) -> list[Any]:
        import ray  # noqa: PLC0415

        k = self.workers
        outs = [
            _refs(a.step.options(num_returns=k).remote(first, *x), k)
            for a, x in zip(self.actors, args, strict=True)
        ]
        for stage in stages[:-1]:
            outs = [
                _refs(a.step.options(num_returns=k).remote(stage, *(o[j] for o in outs)), k)
                for j, a in enumerate(self.actors)
            ]
        last = stages[-1]
        replies = [
            getattr(a, last).remote(*(o[j] for o in outs)) for j, a in enumerate(self.actors)
        ]
        return list(ray.get(replies))

    def stop(self) -> None:
        if not self.actors:
            return
        import ray  # noqa: PLC0415

        for actor in self.actors:
            ray.kill(actor)
        self.actors = []

    def close(self) -> None:
        self.stop()
        if self.started:
            import ray  # noqa: PLC0415

            ray.shutdown()
            self.started = False


def _refs(out: Any, k: int) -> list[Any]:
    return [out] if k == 1 else list(out)


def ray_transport(workers: int, address: str | None) -> RayTransport:
    """A transport on Ray: a new local instance with `workers` CPUs (address None) or the
    cluster at `address`; each actor asks for one CPU. Close it to shut down the local
    instance it started (one already running in this process is reused, never shut
    down)."""
    if address is not None:
        _ask_for_token_auth()  # before ray is imported: it reads the mode then
    import ray  # noqa: PLC0415

    started = False
    if address is None:
        if not ray.is_initialized():
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
            started = True
    else:
        _join(address)
        started = True  # this process's connection: closing the transport ends it
    env: dict[str, Any] = {"env_vars": {"PYTHONHASHSEED": HASH_SEED}}
    wrapper = no_aslr_prefix()
    if wrapper:
        env["py_executable"] = " ".join([*wrapper, sys.executable])
    return RayTransport(workers, started, env)


JOIN_SECONDS = 60  # how long joining a cluster may take before the address is called wrong
PROBE = """
import sys, ray
try:
    ray.init(address=sys.argv[1], log_to_driver=False)
except BaseException as exc:
    print(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
    sys.exit(1)
ray.shutdown()
"""


def _ask_for_token_auth() -> None:
    """RAY_AUTH_MODE=token when a token is at hand and the user set no mode (see `_join`)."""
    token = os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH")
    default_token = Path("~/.ray/auth_token").expanduser()
    if "RAY_AUTH_MODE" not in os.environ and (token or default_token.exists()):
        os.environ["RAY_AUTH_MODE"] = "token"


def _join(address: str) -> None:
    """Connect this process to the Ray cluster at `address` (HOST:PORT), or fail in one line
    within JOIN_SECONDS.

    A cluster started by `ray start --head` on Ray 2.59 or later asks for a token; Ray's
    client sends one only with RAY_AUTH_MODE=token, so that is set when a token is at hand
    (RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token; a cluster without
    authentication accepts it too). `ray.init` on a wrong address retries for minutes in
    native code that no signal interrupts, so a child process tries first, under a timeout.
    """
    import ray  # noqa: PLC0415

    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise LeadercheckError(f"--address {address!r}: expected HOST:PORT")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=5):
            pass
    except OSError as exc:
        raise LeadercheckError(f"no Ray cluster at {address}: {exc.strerror or exc}") from None
    try:
        probe = subprocess.run(
            [sys.executable, "-c", PROBE, address],
            capture_output=True,
            text=True,
            timeout=JOIN_SECONDS,
            env=os.environ.copy(),
        )
    except subprocess.TimeoutExpired:
        raise LeadercheckError(
            f"no Ray cluster answered at {address} within {JOIN_SECONDS} s"
        ) from None
    if probe.returncode != 0:
        why = probe.stdout.strip().splitlines()[-1] if probe.stdout.strip() else "it failed"
        raise LeadercheckError(f"cannot join the Ray cluster at {address}: {why}")
    ray.init(address=address, log_to_driver=False)

"""One model node as a real OS process: a client of the real system, driven over a pipe.

A node is a process of its own so that the model's faults on it are real: a pause is
SIGSTOP/SIGCONT (the process stops while real time passes, whatever it was doing), a
crash is SIGKILL (what it held in memory is gone; a restart is a new process). The
harness sends one JSON line per operation on the process's stdin and reads one JSON line
back; every wait for an answer is bounded. The operations themselves live in a client
class per system (`checker/conform/clients/<system>.py`), loaded in the child by name.

Run as `python -m leadercheck.checker.conform.agent SYSTEM CONFIG_JSON` (the harness
does that); a line `{"op": NAME, "args": {...}}` calls `client.op_NAME(**args)` and the
reply is `{"ok": true, "result": {...}}` or `{"ok": false, "error": "..."}`.
"""

from __future__ import annotations

import importlib
import json
import os
import queue
import secrets
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from leadercheck.checker.conform.lifetime import dies_with_us
from leadercheck.checker.conform.replies import Fields, fault_in
from leadercheck.checker.errors import LeadercheckError

#: this project's own clients, one module each under checker/conform/clients/
SYSTEMS = ("etcd", "postgres", "zookeeper", "redis", "redis_lock", "advisory_lock")
#: Set in every client process's environment, a value of its own per process: what it starts
#: inherits it, so whatever a client left behind (a child in another process group or
#: session, holding its stdout or not) is found in /proc and ended with it.
COOKIE = "LEADERCHECK_CLIENT_PROCESS"
QUEUED_LINES = 64  # lines read ahead of the harness: a client that floods stdout waits
LOG_TAIL = 64 << 10  # bytes of a client's stderr log read to quote its last line


class AgentError(LeadercheckError):
    """The client process died or could not start; the conformance run cannot go on."""


class ClientError(AgentError):
    """The user's own client (`--client`) failed to start, exited, or answered outside
    the protocol: its fault, not the real system's."""


class NoAnswer(Exception):
    """The process did not answer within the time given (it may be paused or hung)."""


def load_client(system: str, config: dict[str, Any]) -> Any:
    """The client object of `system`, built from its configuration (in the child process)."""
    if system not in SYSTEMS:
        raise ValueError(f"unknown system {system!r}")
    module = importlib.import_module(f"leadercheck.checker.conform.clients.{system}")
    return module.Client(config)


def serve(system: str, config: dict[str, Any], stdin: IO[str], stdout: IO[str]) -> None:
    """The child's loop: one operation per line until stdin closes."""
    client = load_client(system, config)
    ready = {"ready": os.getpid(), "background": getattr(client, "BACKGROUND", None)}
    stdout.write(json.dumps({"ok": True, "result": ready}) + "\n")
    stdout.flush()
    for line in stdin:
        request = json.loads(line)
        try:
            result = getattr(client, "op_" + request["op"])(**request.get("args", {}))
            reply: dict[str, Any] = {"ok": True, "result": result}
        except Exception as exc:  # reported to the harness, which judges it
            reply = {"ok": False, "error": error_text(exc)[:500]}
        stdout.write(json.dumps(reply, sort_keys=True) + "\n")
        stdout.flush()
    close = getattr(client, "close", None)
    if close is not None:
        close()


def error_text(exc: BaseException) -> str:
    """An exception as a failed call's error: its type and message; a library's exception
    without a message (etcd3gw's `ConnectionFailedError()`) is told by what caused it."""
    text = str(exc)
    if text:
        return f"{type(exc).__name__}: {text}"
    seen = exc.__cause__ or exc.__context__
    while seen is not None and not str(seen):
        seen = seen.__cause__ or seen.__context__
    if seen is None:
        return f"{type(exc).__name__} (no message)"
    return f"{type(exc).__name__}, from {type(seen).__name__}: {seen}"


class Agent:
    """The harness's handle on one node's client process."""

    def __init__(
        self,
        name: str,
        system: str,
        config: dict[str, Any],
        log_dir: Path,
        start_timeout: float,
        command: Sequence[str] | None = None,
        environment: Mapping[str, str] | None = None,
    ) -> None:
        self.name = name
        self.system = system
        self.config = config
        #: the user's own client (`verify conform --client`), started with the node's name
        #: and configuration in its environment; None: this project's client for `system`
        self.command = None if command is None else list(command)
        #: set in the process's environment besides the inherited one (a fake clock's)
        self.environment = dict(environment or {})
        self.log_dir = log_dir
        self.start_timeout = start_timeout
        self.process: subprocess.Popen[str] | None = None
        self.paused = False
        self._replies: queue.Queue[str | None] = queue.Queue(QUEUED_LINES)
        self._generation = 0
        self._cookie = ""
        self._stopped = threading.Event()  # the current process's reader may give up
        #: what the client does between calls, as its first line says ("a keep-alive
        #: thread"); None: nothing, so a pause stops nothing of its own
        self.background: str | None = None
        #: the ready line's result, as the client said it (a binding may read it: holds_as)
        self.told: Mapping[str, Any] = {}
        #: how often it renews its lease on its own, in seconds (None: only when asked)
        self.renews_every: float | None = None

    # -- life --------------------------------------------------------------

    def start(self) -> None:
        """A new process (a restart is one too: nothing of the old one survives)."""
        self._generation += 1
        log = (self.log_dir / f"{self.name}.{self._generation}.log").open("w")
        argv = [sys.executable, "-m", __name__, self.system, json.dumps(self.config)]
        self._cookie = f"{os.getpid()}.{self.name}.{self._generation}.{secrets.token_hex(6)}"
        env = {**os.environ, **self.environment, COOKIE: self._cookie}
        if self.command is not None:
            argv = self.command
            env["LEADERCHECK_NODE"] = self.name
            env["LEADERCHECK_CONFIG"] = json.dumps(self.config, sort_keys=True)
        try:
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                errors="replace",  # a client that prints bytes that are not UTF-8 is garbage
                env=env,
                start_new_session=True,  # a Ctrl-C at the terminal reaches the harness only
                **dies_with_us(),  # and a verify killed outright takes it along
            )
        except OSError as exc:  # the command does not exist, or cannot be run
            raise self._failure(f"{self.name}: cannot start {argv[0]!r}: {exc.strerror}") from None
        finally:
            log.close()
        self.paused = False
        self._replies = queue.Queue(QUEUED_LINES)
        self._stopped = threading.Event()
        threading.Thread(
            target=_pump, args=(self.process.stdout, self._replies, self._stopped), daemon=True
        ).start()
        try:
            ready = self._answer(self.start_timeout)
        except NoAnswer:
            self.kill()
            raise self._failure(f"{self.name}: its client process did not start in time") from None
        told = ready.get("result") or {}
        self.told = told
        background, period = told.get("background"), told.get("renews_every")
        self.background = background if isinstance(background, str) and background else None
        self.renews_every = _period(period)

    def pause(self) -> None:
        self._signal(signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        self._signal(signal.SIGCONT)
        self.paused = False

    def kill(self) -> None:
        """SIGKILL to the client's whole process group and to everything it started
        (`COOKIE`), then reap: the crash the model calls crash. Harmless when repeated (a
        kill interrupted by Ctrl-C is simply called again; SIGKILL ends a stopped process).

        Its stdout is left to the reader thread, which closes it at end of file: closing it
        here would wait on the reader's lock, for ever if something the client started
        still held the pipe open."""
        process = self.process
        if process is None:
            return
        self._stopped.set()
        if process.returncode is None:  # not reaped: its group id is still its own
            try:
                os.killpg(process.pid, signal.SIGKILL)  # start_new_session: a group of its own
            except (ProcessLookupError, PermissionError):
                pass
        try:
            process.kill()
        except ProcessLookupError:
            pass
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        end_processes_with(COOKIE, self._cookie)
        try:
            if process.stdin is not None:
                process.stdin.close()
        except OSError:
            pass
        self.process = None
        self.paused = False

    stop = kill

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    # -- operations --------------------------------------------------------

    def call(self, op: str, timeout: float, **args: Any) -> dict[str, Any]:
        """Run one operation; the reply, or NoAnswer after `timeout` seconds. The user's
        client must answer every operation in time (a late answer would be taken for the
        next one's): its silence is a ClientError."""
        if self.process is None or self.process.stdin is None or not self.alive:
            raise self._failure(f"{self.name}: its client process is not running")
        try:
            self.process.stdin.write(json.dumps({"op": op, "args": args}) + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._failure(f"{self.name}: its client process exited") from None
        try:
            return self._answer(timeout)
        except NoAnswer:
            if self.command is None:
                raise
            raise self._failure(
                f"{self.name}: no answer to {op!r} within {timeout:g} s (every operation"
                " must be answered, ok or not, within the call timeout)"
            ) from None

    def check_result(self, op: str, reply: Mapping[str, Any], fields: Fields | None) -> None:
        """Refuse, as this node's client's protocol error, an answer to `op` whose result
        lacks a field `fields` requires or gives one of the wrong kind (replies.py)."""
        if not reply.get("ok") or not fields:
            return
        fault = fault_in(reply.get("result") or {}, fields)
        if fault is not None:
            raise self._failure(
                f"{self.name}: its answer to {op!r} breaks the client protocol: {fault}"
            )

    def _answer(self, timeout: float) -> dict[str, Any]:
        """The next reply line, checked: one JSON object with `ok` true and a `result`
        object, or `ok` false and an `error` string. Anything else is the client's fault,
        said in one line (AgentError), as is its exit; silence is NoAnswer."""
        try:
            line = self._replies.get(timeout=timeout)
        except queue.Empty:
            raise NoAnswer(f"{self.name}: no answer within {timeout:g} s") from None
        if line is None:
            raise self._failure(f"{self.name}: its client process exited ({self._log_tail()})")
        shown = line.strip()[:80]
        try:
            reply = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, or nested beyond the parser's depth
            reply = None
        if not isinstance(reply, dict) or not isinstance(reply.get("ok"), bool):
            raise self._failure(
                f"{self.name}: its client answered {shown!r}, not a JSON object with"
                ' "ok" (see the README\'s client protocol)'
            )
        if reply["ok"] and not isinstance(reply.get("result", {}), dict):
            raise self._failure(f'{self.name}: its client\'s "result" is not an object: {shown!r}')
        if not reply["ok"] and not isinstance(reply.get("error", ""), str):
            raise self._failure(f'{self.name}: its client\'s "error" is not a string: {shown!r}')
        if not reply["ok"] and not isinstance(reply.get("refused", False), bool):
            raise self._failure(f'{self.name}: its client\'s "refused" is not a bool: {shown!r}')
        return reply

    def _failure(self, text: str) -> AgentError:
        """The error a failure of this node's client is: the user's client's own, or ours."""
        return (AgentError if self.command is None else ClientError)(text)

    def _signal(self, sig: int) -> None:
        if self.process is not None:
            try:
                os.kill(self.process.pid, sig)
            except ProcessLookupError:
                pass

    def _log_tail(self) -> str:
        """The last line the client wrote to stderr, from the log's last `LOG_TAIL` bytes
        (a client may have written gigabytes)."""
        path = self.log_dir / f"{self.name}.{self._generation}.log"
        try:
            with path.open("rb") as log:
                size = log.seek(0, os.SEEK_END)
                log.seek(max(0, size - LOG_TAIL))
                tail = log.read(LOG_TAIL).decode(errors="replace")
        except OSError:
            return "no log"
        lines = tail.strip().splitlines()
        return lines[-1][:300] if lines else "nothing logged"


def _period(value: object) -> float | None:
    """A ready line's `renews_every`: seconds above 0 and at most 60, or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0 < value <= 60 else None


MAX_LINE = 1 << 20  # a reply line longer than this is garbage (and is not kept whole)


def _pump(
    stream: IO[str] | None, replies: queue.Queue[str | None], stopped: threading.Event
) -> None:
    """The child's stdout, a line at a time (each bounded), into the bounded queue; None
    once it closes. Gives up once the process is killed (`stopped`) rather than wait for
    room the harness will never make; closes the stream at the end."""

    def put(item: str | None) -> bool:
        while not stopped.is_set():
            try:
                replies.put(item, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    if stream is None:
        put(None)
        return
    try:
        while line := stream.readline(MAX_LINE):
            if not line.endswith("\n") and len(line) >= MAX_LINE:
                if not put("<a line over 1 MiB>"):
                    return
                while (rest := stream.readline(MAX_LINE)) and not rest.endswith("\n"):
                    pass  # the rest of that line
                continue
            if not put(line):
                return
    except (OSError, ValueError):
        pass
    finally:
        put(None)
        try:
            stream.close()
        except OSError:
            pass


def end_processes_with(name: str, value: str, rounds: int = 5) -> None:
    """SIGKILL every process whose environment holds `name=value`, again until none is
    left (one may fork while it is being ended), at most `rounds` times. Linux's /proc; a
    process of another user, or gone meanwhile, is skipped."""
    mark = f"{name}={value}".encode()
    for _ in range(rounds):
        found = False
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                with open(f"/proc/{entry.name}/environ", "rb") as environ:
                    held = mark in environ.read(1 << 21).split(b"\0")
                if held:
                    os.kill(int(entry.name), signal.SIGKILL)
                    found = True
            except (OSError, ValueError):
                continue
        if not found:
            return


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the harness decides when a client ends
    serve(sys.argv[1], json.loads(sys.argv[2]), sys.stdin, sys.stdout)

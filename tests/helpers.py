"""Shared by the tests: running a catalogue protocol the way `verify` does, special paths
and a deadline for the tests that must not hang on them, a process sent a real Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from leadercheck.checker import Action, CheckResult, Trace, Verdict, always, check
from leadercheck.models.catalogue import lookup
from leadercheck.specs import load_expectations


def run_protocol(name: str, **params: int) -> CheckResult:
    """Check `name` on its specs properties, with parameters overriding the defaults."""
    protocol = lookup(name)
    model = protocol.build(protocol.resolve({k: str(v) for k, v in params.items()}))
    return check(model, load_expectations().properties(name))


def reachable_count(name: str, **params: int) -> int:
    """Every reachable state of `name`, searched to the end whatever the verdicts."""
    protocol = lookup(name)
    model = protocol.build(protocol.resolve({k: str(v) for k, v in params.items()}))
    return check(model, [always("anything", lambda s: True)]).stats.distinct_states


Shape = tuple[str, str, str | None]


def verdicts(result: CheckResult) -> dict[str, Verdict]:
    return {r.prop.name: r.verdict for r in result.results}


def shape(actions: Iterable[Action]) -> list[Shape]:
    """Who did what to whom, without the notes (which carry outcomes)."""
    return [(a.name, a.actor, a.target) for a in actions]


def trace_shape(trace: Trace | None) -> list[Shape]:
    assert trace is not None
    return shape(trace.actions)


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Fail instead of hanging (a FIFO opened for reading blocks until a writer comes)."""

    def expired(signum: int, frame: Any) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


PROC = Path("/proc/self/status")


def special_path(tmp: Path, kind: str, oversize: int = 1024) -> Path:
    """A path of the given kind, made in `tmp` where it must be made: an absolute path as
    it is, `proc`, `fifo`, `directory`, `file`, `symlink` (to a regular file, `target`,
    beside it), `link-to-zero`, `dangling`, `oversize` (a file of `oversize` + 1 bytes),
    `missing-parent` (a name in a folder that does not exist); any other kind is a new name."""
    if kind.startswith("/"):
        return Path(kind)
    if kind == "proc":
        return PROC
    path = tmp / kind
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "file":
        path.write_text("a regular file\n")
    elif kind == "symlink":
        (tmp / "target").write_text("the link's target")
        path.symlink_to(tmp / "target")
    elif kind == "link-to-zero":
        path.symlink_to("/dev/zero")
    elif kind == "dangling":
        path.symlink_to(tmp / "nowhere")
    elif kind == "oversize":
        path.write_bytes(b"x" * (oversize + 1))
    elif kind == "missing-parent":
        path = tmp / "none" / "x"
    return path


def snapshot(path: Path) -> tuple[int, int] | None:
    """What must not change: the entry's type and inode (None if absent)."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return (st.st_mode, st.st_ino)


ROOT = Path(__file__).resolve().parents[1]
PROCESS_TIMEOUT = 120


def _catches_sigterm(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) >> (signal.SIGTERM - 1) & 1)


def _wait_for_launcher(proc: subprocess.Popen[str]) -> None:
    """Until the process catches SIGTERM: Python never does by itself, `verify`'s launcher
    does first of all (checker/app/launch.py)."""
    deadline = time.monotonic() + PROCESS_TIMEOUT
    while not _catches_sigterm(proc.pid):
        assert proc.poll() is None, "the process ended before its launcher took the signals"
        assert time.monotonic() < deadline, "the launcher never took the stop signals"
        time.sleep(0.001)


def run_interrupted(
    args: list[str],
    cwd: Path,
    after: float | None = None,
    again: float | None = None,
    signum: int = signal.SIGINT,
    group: bool = False,
    ready: str | None = None,
    launched: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run `args` as a process with Ctrl-C's default handling and send it SIGINT (or
    `signum`; to its whole process group if `group`, as a terminal or a supervisor does):
    once it says `ready` (a phrase on its stdout or stderr: `progress:` from `--progress`,
    the line a command prints when it has begun) and then `after` seconds more, or with no
    `ready` after `after` seconds; with `again`, a second one that much later. Waiting for
    the process to say it is ready, never for a fixed time, is what holds on a busy machine.
    With `launched`, `after` counts from the moment `verify`'s launcher has taken the stop
    signals (checker/app/launch.py: SIGTERM caught, as /proc says), not from the fork: how
    long an interpreter takes to start on a loaded machine is not the product's to control.
    Fails if a worker process it started is left running."""
    import psutil  # noqa: PLC0415 (a test tool, for the tests that send signals)

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        start_new_session=group,
    )  # fmt: skip
    said: dict[str, list[str]] = {"out": [], "err": []}
    seen = threading.Event()

    def collect(pipe: Any, into: list[str]) -> None:
        for line in pipe:
            into.append(line)
            if ready is not None and ready in line:
                seen.set()

    readers = [
        threading.Thread(target=collect, args=(proc.stdout, said["out"]), daemon=True),
        threading.Thread(target=collect, args=(proc.stderr, said["err"]), daemon=True),
    ]
    for reader in readers:
        reader.start()
    children: list[psutil.Process] = []

    def send() -> None:
        if group:
            os.killpg(proc.pid, signum)
        else:
            proc.send_signal(signum)

    try:
        if ready is not None:
            deadline = time.monotonic() + PROCESS_TIMEOUT
            while not seen.wait(0.05) and proc.poll() is None and time.monotonic() < deadline:
                pass
            assert seen.is_set(), f"never said {ready!r}: {''.join(said['err'])[-500:]}"
        if launched:
            _wait_for_launcher(proc)
        if after is not None or ready is not None:
            time.sleep(after or 0.0)
            children = psutil.Process(proc.pid).children(recursive=True)
            send()
            if again is not None:
                time.sleep(again)
                send()
        proc.wait(timeout=PROCESS_TIMEOUT)
        for reader in readers:
            reader.join(timeout=PROCESS_TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    _, alive = psutil.wait_procs(children, timeout=10)
    assert not alive, f"worker processes left running: {alive}"
    out, err = "".join(said["out"]), "".join(said["err"])
    return subprocess.CompletedProcess(args, proc.returncode, out, err)

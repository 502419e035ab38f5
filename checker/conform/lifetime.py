"""Nothing a conformance run starts outlives it, even when `verify` itself is killed.

A Ctrl-C or an error stops the servers and clients in order (servers.py, world.py); a
SIGKILL of `verify` runs no code at all. So every server and client process is started with
a parent-death signal (prctl PR_SET_PDEATHSIG, SIGKILL): the kernel kills it when the thread
that started it ends. The folders a run makes in the temporary directory
carry their owner (pid and start time); the next run removes those whose owner is gone.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

OWNER_FILE = ".leadercheck-owner"
PREFIXES = ("leadercheck-etcd-", "leadercheck-postgres-", "leadercheck-zookeeper-",
            "leadercheck-redis-", "leadercheck-clients-")  # fmt: skip
PR_SET_PDEATHSIG = 1  # prctl's option (linux/prctl.h)


@cache
def _prctl() -> Callable[..., int] | None:
    """libc's prctl, bound once in this process (a child after fork calls only this)."""
    try:
        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return prctl


def _die_with_parent() -> None:
    prctl = _prctl()
    if prctl is not None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def dies_with_us() -> dict[str, Any]:
    """Popen arguments under which the kernel kills the process (SIGKILL) when the thread
    that started it ends, even by SIGKILL: prctl(PR_SET_PDEATHSIG) in the child, after any
    change of user (which would clear it) and before the exec. (util-linux's `setpriv
    --pdeathsig` left 5 to 13 children of 40 running here; this, none.) Nothing where libc
    has no prctl: then only an orderly end stops it."""
    if _prctl() is None:
        return {}
    return {"preexec_fn": _die_with_parent}


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22): with
    the pid, it names one process, whatever pid reuse does."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()[19]


def mark_owned(directory: Path) -> None:
    """Say in `directory` that this process owns it (best effort)."""
    with contextlib.suppress(OSError):
        (directory / OWNER_FILE).write_text(f"{os.getpid()} {_start_time(os.getpid())}\n")


def sweep_stale(root: Path | None = None) -> list[Path]:
    """Remove the run folders in the temporary directory (or `root`) whose owner process
    is gone; the folders removed. Only folders of this user, named as a run names them,
    with an owner file, and never through a link."""
    removed: list[Path] = []
    base = Path(root or tempfile.gettempdir())
    try:
        entries = list(os.scandir(base))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(PREFIXES):
            continue
        try:
            owner = Path(entry.path) / OWNER_FILE  # the folder may be the postgres user's
            if not entry.is_dir(follow_symlinks=False) or owner.lstat().st_uid != os.getuid():
                continue
            pid_text, started = owner.read_text().split()
            pid = int(pid_text)
        except (OSError, ValueError):
            continue
        if pid != os.getpid() and _start_time(pid) != started:
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed

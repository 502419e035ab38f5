"""Nothing a conformance run starts outlives it, even when `verify` itself is killed.

A Ctrl-C or an error stops the servers and clients in order (servers.py, world.py); a
SIGKILL of `verify` runs no code at all. So every server and client process is started
under `setpriv --pdeathsig KILL` (util-linux, Debian's essential set): the kernel kills it
when the thread that started it ends. The folders a run makes in the temporary directory
carry their owner (pid and start time); the next run removes those whose owner is gone.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Sequence
from functools import cache
from pathlib import Path

OWNER_FILE = ".leadercheck-owner"
PREFIXES = ("leadercheck-etcd-", "leadercheck-postgres-", "leadercheck-zookeeper-",
            "leadercheck-redis-", "leadercheck-clients-")  # fmt: skip


@cache
def _setpriv() -> str | None:
    return shutil.which("setpriv", path="/usr/bin:/bin")


def dies_with_us(argv: Sequence[str]) -> list[str]:
    """`argv` run so that the kernel kills it (SIGKILL) when its starting thread ends;
    as given where setpriv is missing (then only an orderly end stops it)."""
    setpriv = _setpriv()
    return [setpriv, "--pdeathsig", "KILL", "--", *argv] if setpriv else list(argv)


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

"""Clocks made wrong for real: a client's with libfaketime (Debian's `faketime` package),
a Redis master's with a shim of our own (wallclock.c), which libfaketime cannot start.

The library is preloaded into a node's client process and reads that node's clock file on
every clock call (FAKETIME_NO_CACHE), so the harness can set the node's clock back while it
runs: the model's `drift` step (the clock loses a tick) becomes the file's offset going
from "+0" to "-1" (seconds), and the process's wall clock and CLOCK_MONOTONIC, which a
lease holder counts its copy of the lease with, read a second behind real time from then
on. Sleeps and timeouts keep real time. Nothing else on the machine is touched.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from pathlib import Path

from leadercheck.checker.errors import LeadercheckError

#: the multi-threaded build (a client's keep-alive thread reads the clock too)
PATTERNS = ("/usr/lib/*/faketime/libfaketimeMT.so.1", "/usr/lib/faketime/libfaketimeMT.so.1")


def library() -> str | None:
    """Where libfaketime is installed, or None."""
    for pattern in PATTERNS:
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    return None


def require() -> str:
    """libfaketime's path; a one-line error naming the package if it is not installed."""
    found = library()
    if found is None:
        raise LeadercheckError(
            "a clock drift is made real with libfaketime, which is not installed:"
            " sudo apt-get install faketime"
        )
    return found


class FakeClock:
    """One node's clock: behind real time by `behind` seconds (0 at the start)."""

    def __init__(self, path: Path, lib: str) -> None:
        self.path = path
        self.lib = lib
        self.behind = 0.0
        self._write()

    def environment(self) -> dict[str, str]:
        """What the node's client process is started with for its clock to follow the file."""
        return {
            "LD_PRELOAD": self.lib,
            "FAKETIME_TIMESTAMP_FILE": str(self.path),
            "FAKETIME_NO_CACHE": "1",
        }

    def lose(self, seconds: float) -> None:
        """The clock falls `seconds` further behind, at once."""
        self.behind += seconds
        self._write()

    def _write(self) -> None:
        replace_whole(self.path, f"-{self.behind:g}" if self.behind else "+0")


def replace_whole(path: Path, text: str) -> None:
    """Write a clock file by a rename (its reader reads it at any moment: never half of it)."""
    fresh = path.with_name(path.name + ".new")
    fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w") as handle:
        handle.write(text + "\n")
    os.replace(fresh, path)


SHIM_SOURCE = Path(__file__).with_name("wallclock.c")


def compiler() -> str | None:
    """The C compiler that builds the wall-clock shim (cc, gcc), or None."""
    return next((found for cc in ("cc", "gcc") if (found := shutil.which(cc))), None)


def build_wall_clock_shim(folder: Path) -> Path:
    """wallclock.c built into `folder` as a shared library, to preload into a server whose
    wall clock must jump (a Redis master). A one-line error without a C compiler."""
    cc = compiler()
    if cc is None:
        raise LeadercheckError(
            "a Redis master's clock jump is made real with a small preloaded library that is"
            " built here with a C compiler, and none is installed: sudo apt-get install gcc"
        )
    out = folder / "wallclock.so"
    argv = [cc, "-shared", "-fPIC", "-O2", "-o", str(out), str(SHIM_SOURCE)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LeadercheckError(f"building the wall-clock shim with {cc}: {exc}") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise LeadercheckError(f"building the wall-clock shim with {cc} failed: {last}")
    return out


class WallClock:
    """One server's wall clock, `ahead_ms` ahead of real time: the file the shim reads on
    every clock call, replaced whole at each jump. Any process may jump it (the Redlock
    client that plays the masters' clocks does), given the file's path."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if not path.exists():
            self._write(0)

    @property
    def ahead_ms(self) -> int:
        return int(self.path.read_text(encoding="ascii", errors="replace").strip() or 0)

    def jump(self, ms: int) -> None:
        """The clock jumps `ms` ahead, at once."""
        self._write(self.ahead_ms + ms)

    def environment(self, shim: Path) -> dict[str, str]:
        """What the server is started with for its wall clock to follow the file."""
        return {"LD_PRELOAD": str(shim), "LEADERCHECK_CLOCK_FILE": str(self.path)}

    def _write(self, ms: int) -> None:
        replace_whole(self.path, str(ms))

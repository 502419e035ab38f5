"""A client's clock made wrong for real, with libfaketime (Debian's `faketime` package).

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
        """Replace the file whole (the library reads it at any moment: never half of it)."""
        offset = f"-{self.behind:g}" if self.behind else "+0"
        fresh = self.path.with_name(self.path.name + ".new")
        fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(offset + "\n")
        os.replace(fresh, self.path)

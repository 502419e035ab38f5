"""`verify`'s first instant: the process's stop signals are taken before anything heavy is
imported, so a Ctrl-C (or SIGTERM, SIGHUP) that lands while Python loads the checker, z3
or the models ends the command as the README promises: one line, exit 3, nothing written.

Nothing has run yet when this handler fires (no file written, no server or worker
started), so it ends the process at once. `main.VerifyGroup` replaces it with the
interrupt handler that winds a search down once the command starts its work. A re-run of
the process (`pin_hashing`'s exec) ignores the signals across the exec and takes them here
again.
"""

from __future__ import annotations

import os
import signal
from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
INCOMPLETE = 3


def _stopped(signum: int, frame: FrameType | None) -> None:
    os.write(2, b"interrupted\n")
    os._exit(INCOMPLETE)


def main() -> None:
    """The `verify` console script."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, _stopped)
    # a re-run (`pin_hashing`'s exec) starts with them blocked, any that came meanwhile
    # pending: it lands here, now
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    from leadercheck.checker.app.main import main as run  # noqa: PLC0415 (after the handler)

    run()

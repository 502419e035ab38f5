"""A live progress line for long searches on a terminal; silent for the first second."""

from __future__ import annotations

import time
from typing import TextIO

from leadercheck.checker.result import Progress

QUIET_SECONDS = 1.0  # short runs show nothing
EVERY_SECONDS = 0.25  # at most four redraws a second


class ProgressLine:
    """Redraws one status line in place (carriage return); `clear` erases it at the end."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.shown = False
        self.last = 0.0

    def __call__(self, p: Progress) -> None:
        now = time.monotonic()
        if p.seconds < QUIET_SECONDS or now - self.last < EVERY_SECONDS:
            return
        self.last = now
        rate = p.distinct_states / p.seconds if p.seconds else 0.0
        line = (
            f"  {p.distinct_states:,} states  {rate:,.0f}/s  {p.queue_label} {p.queue:,}  "
            f"depth {p.depth}  {p.seconds:.1f} s"
        )
        self.stream.write("\r" + line.ljust(78))
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * 78 + "\r")
            self.stream.flush()
            self.shown = False

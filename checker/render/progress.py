"""A live progress line for long searches on a terminal, silent for the first second; or,
with `verify --progress` where stderr is no terminal, a line a second that a log keeps and
a supervisor can wait for (the first as soon as the search has begun)."""

from __future__ import annotations

import time
from typing import TextIO

from leadercheck.checker.result import Progress

QUIET_SECONDS = 1.0  # short runs show nothing
EVERY_SECONDS = 0.25  # at most four redraws a second
LINE_SECONDS = 1.0  # a log's line a second


class ProgressLine:
    """Redraws one status line in place (carriage return); `clear` erases it at the end."""

    def __init__(self, stream: TextIO, lines: bool = False) -> None:
        self.stream = stream
        self.lines = lines  # whole lines a second (a log), not one redrawn in place
        self.shown = False
        self.last = 0.0

    def __call__(self, p: Progress) -> None:
        now = time.monotonic()
        if self.lines:
            if self.last and now - self.last < LINE_SECONDS:
                return
        elif p.seconds < QUIET_SECONDS or now - self.last < EVERY_SECONDS:
            return
        self.last = now
        rate = p.distinct_states / p.seconds if p.seconds else 0.0
        line = (
            f"  {p.distinct_states:,} states  {rate:,.0f}/s  {p.queue_label} {p.queue:,}  "
            f"depth {p.depth}  {p.seconds:.1f} s"
        )
        if self.lines:
            self.stream.write(f"progress:{line}\n")
            self.stream.flush()
            return
        self.stream.write("\r" + line.ljust(78))
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * 78 + "\r")
            self.stream.flush()
            self.shown = False

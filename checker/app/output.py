"""Where the command's own output goes, so that nothing else can reach stdout.

While a command runs, `sys.stdout` (and, in a real process, file descriptor 1) points at
stderr: whatever a user's model prints, at import or in a hook, lands there. The report
goes to the channel saved before the swap, through `say`. `--json` therefore prints one
JSON object and nothing else, whatever the model does.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import IO, Any, TypeVar

import click

_channels: list[IO[str]] = []
F = TypeVar("F", bound=Callable[..., Any])


def say(message: str = "", nl: bool = True) -> None:
    """Print the command's own output on stdout (the saved channel while guarded)."""
    click.echo(message, file=_channels[-1] if _channels else None, nl=nl)


def warn(message: str) -> None:
    """A line on stderr: errors, warnings, notes, progress."""
    click.echo(message, err=True)


@contextmanager
def report_channel() -> Iterator[None]:
    """Run the body with stdout taken away from everything but `say`."""
    real = sys.stdout
    saved_fd: int | None = None
    channel: IO[str] = real
    try:
        fd = real.fileno()
    except (AttributeError, OSError, ValueError):  # click's test runner: no descriptor
        fd = -1
    if fd == 1:
        real.flush()
        saved_fd = os.dup(1)
        os.dup2(2, 1)  # C code and subprocesses inherit a stdout that is stderr
        channel = os.fdopen(saved_fd, "w", encoding=real.encoding, errors="replace", closefd=False)
    _channels.append(channel)
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        sys.stdout = real
        _channels.pop()
        if saved_fd is not None:
            channel.flush()
            sys.stderr.flush()
            os.dup2(saved_fd, 1)
            os.close(saved_fd)


def reporting(command: F) -> F:
    """A command's callback run under `report_channel` (after click has parsed, so --help
    still goes to stdout)."""

    @wraps(command)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        with report_channel():
            return command(*args, **kwargs)

    return guarded  # type: ignore[return-value]

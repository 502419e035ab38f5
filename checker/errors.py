"""The one root exception for everything a user can get wrong.

The CLI catches `LeadercheckError` in one place and prints one line. A property
violation is never an exception: it is a `CheckResult`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from leadercheck.checker.trace import Trace


class LeadercheckError(Exception):
    """Bad input: unknown protocol, bad parameter, invalid model, unreadable trace."""


class ModelError(LeadercheckError):
    """A model raised while being explored; carries the trace that led to the failing state."""

    def __init__(self, message: str, trace: Trace | None = None) -> None:
        super().__init__(message)
        self.trace = trace

"""What a rendered trace is about: the model, its parameters, and the property's verdict."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from leadercheck.checker.result import Coverage, PropertyResult
from leadercheck.checker.trace import Trace


def seconds_text(value: float) -> str:
    """A duration as a reader writes it: 12 s, 2.5 s, 0.125 s (never 2.4999999 s)."""
    return f"{round(value, 6):g}"


@dataclass(frozen=True)
class TraceContext:
    protocol: str
    params: Mapping[str, object]
    outcome: PropertyResult
    title: str = ""  # replaces the headline (a counterexample to induction is no search trace)
    model: str | None = None  # the user's module (--model) that defines the protocol
    coverage: Coverage | None = None  # the sampled search that found the trace, if one did
    tick_seconds: float | None = None  # a tick's length in real seconds (a judged configuration)

    def time_text(self, ticks: int) -> str:
        """The time column's words: `t=3`, or `4.5 s` when a tick has a length."""
        if self.tick_seconds is None:
            return f"t={ticks}"
        if self.tick_seconds < 0.01:  # milliseconds read shorter than 0.005 s steps
            return f"{seconds_text(ticks * self.tick_seconds * 1000)} ms"
        return f"{seconds_text(ticks * self.tick_seconds)} s"

    @property
    def trace(self) -> Trace:
        assert self.outcome.trace is not None, "only results with a trace are rendered"
        return self.outcome.trace

    @property
    def kind(self) -> str:
        return self.outcome.trace_kind

    @property
    def headline(self) -> str:
        if self.title:
            return self.title
        p = self.outcome
        n = len(self.trace)
        verdict = "found" if p.prop.finding else p.verdict.value
        return f"{self.protocol}: {p.prop.name} {verdict} in {n} step{'s' * (n != 1)}"

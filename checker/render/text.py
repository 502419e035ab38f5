"""The trace as numbered lines for the terminal."""

from __future__ import annotations

from checker.render.context import TraceContext


def trace_lines(ctx: TraceContext) -> list[str]:
    """One line per step, the initial state first, the deciding step marked with why."""
    trace = ctx.trace
    width = len(str(len(trace)))
    first = trace.steps[0].summary
    lines = [f"  {0:>{width}}  initial: " + "; ".join(f"{k} {v}" for k, v in first.items())]
    for step in trace.steps[1:]:
        lines.append(f"  {step.index:>{width}}  {step.action}")
    mark = "broken" if ctx.kind == "counterexample" else "reached"
    lines.append(f"  {'':>{width}}  => {ctx.outcome.prop.name} {mark}: {ctx.outcome.reason}")
    return lines

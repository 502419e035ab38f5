"""The trace as numbered lines for the terminal."""

from __future__ import annotations

from leadercheck.checker.render.context import TraceContext


def trace_lines(ctx: TraceContext) -> list[str]:
    """One line per step, the initial state first, the deciding step marked with why."""
    trace = ctx.trace
    width = len(str(len(trace)))
    first = trace.steps[0].summary
    lines = [f"  {0:>{width}}  initial: " + "; ".join(f"{k} {v}" for k, v in first.items())]
    for step in trace.steps[1:]:
        lines.append(f"  {step.index:>{width}}  {step.action}")
    if trace.loop_from is not None:
        lines.append(f"  {'':>{width}}  {loop_text(trace.loop_from, len(trace))}")
    mark = "broken" if ctx.kind == "counterexample" else "reached"
    lines.append(f"  {'':>{width}}  => {ctx.outcome.prop.name} {mark}: {ctx.outcome.reason}")
    return lines


def count(n: int, word: str) -> str:
    """'1 step', '1,234 steps': a number and its noun, singular for one."""
    return f"1 {word}" if n == 1 else f"{n:,} {word}s"


def step_count(n: int) -> str:
    """'1 step', '5 steps'."""
    return count(n, "step")


def loop_text(loop_from: int, last: int) -> str:
    """How a lasso goes on forever after its last step."""
    if loop_from == last:
        return f"loop: stays at step {last} forever (no fair action is enabled)"
    repeated = (
        f"step {last} repeats"
        if last == loop_from + 1
        else f"steps {loop_from + 1} to {last} repeat"
    )
    return f"loop: step {last} returns to the state of step {loop_from}, so {repeated} forever"

"""The trace file: versioned JSON with the initial state and every step's action and state.

Keys are sorted and no time or path is written, so the same trace gives the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from leadercheck.checker.render.context import TraceContext
from leadercheck.checker.trace import Trace

TRACE_SCHEMA = "leadercheck.trace/1"


MODEL_ERROR_SCHEMA = "leadercheck.model-error/1"


def trace_to_json(ctx: TraceContext) -> str:
    doc = {
        "schema": TRACE_SCHEMA,
        "protocol": ctx.protocol,
        "params": dict(ctx.params),
        "property": {
            "name": ctx.outcome.prop.name,
            "kind": ctx.outcome.prop.kind.value,
            "description": ctx.outcome.prop.description,
        },
        "verdict": ctx.outcome.verdict.value,
        "trace_kind": ctx.kind,
        "reason": ctx.outcome.reason,
        "length": len(ctx.trace),
        "steps": steps_json(ctx.trace),
    }
    if ctx.model is not None:
        doc["model"] = ctx.model  # `verify replay` loads it again
    if ctx.coverage is not None:  # how to find it again: the same strategy, seed and workers
        doc["found_by"] = {
            "strategy": ctx.coverage.strategy,
            "seed": ctx.coverage.seed,
            "workers": ctx.coverage.workers,
            "found_length": ctx.outcome.found_length,
        }
    if ctx.tick_seconds is not None:  # the time column in seconds; replay needs only ticks
        doc["tick_seconds"] = ctx.tick_seconds
    if ctx.trace.loop_from is not None:
        doc["loop_from"] = ctx.trace.loop_from  # a lasso: steps after it repeat forever
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def model_error_to_json(
    protocol: str, params: Mapping[str, object], error: str, trace: Trace, model: str | None
) -> str:
    """The trace that led a search to a model error (a state that is no value, an
    exception in the model's code), with the error: for the model's author to read, not
    a counterexample to replay."""
    doc: dict[str, object] = {
        "schema": MODEL_ERROR_SCHEMA,
        "protocol": protocol,
        "params": dict(params),
        "error": error,
        "length": len(trace),
        "steps": steps_json(trace),
    }
    if model is not None:
        doc["model"] = model
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def steps_json(trace: Trace) -> list[dict[str, object]]:
    """Every step of `trace`: its action, the action as text, the participants' summary
    and their state."""
    steps: list[dict[str, object]] = []
    for step in trace.steps:
        action = None
        if step.action is not None:
            action = {
                "name": step.action.name,
                "actor": step.action.actor,
                "target": step.action.target,
                "note": step.action.note,
                "kind": step.action.kind,  # step, fault, recovery or tick: drawn as what it is
                "fairness": step.action.fairness,  # its class: a tick is the clock's alone
                # sends that could not leave: drawn ending in a cross
                "unreached": [str(m) for m in step.action.unreached],
            }
        steps.append(
            {
                "index": step.index,
                "action": action,
                "text": str(step.action) if step.action else "initial state",
                "summary": dict(step.summary),
                "state": {k: dict(v) for k, v in step.view.items()},
            }
        )
    return steps

"""`verify replay` and `verify explain`: a saved trace, re-executed or told as prose.

A trace file is data: it is read bounded in size and parsed without running anything, and
the model it records is imported only when the user names it with --model (a trace from
someone else could name any Python file). `explain` of such a trace tells it from the
file alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from leadercheck.checker.app.args import Described, Once
from leadercheck.checker.app.common import catalogue_of, checked_model
from leadercheck.checker.app.output import reporting, say
from leadercheck.checker.engine.replay import Replay, SavedTrace, replay
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.model import Model
from leadercheck.checker.properties import Kind, Property
from leadercheck.checker.protocols.catalogue import Catalogue
from leadercheck.checker.render.explain import explain_lines
from leadercheck.checker.render.text import step_count
from leadercheck.checker.render.trace_file import load_trace
from leadercheck.models.params import ProtocolEntry

TRACE = click.Path(path_type=Path, dir_okay=False)
MODEL_HELP = (
    "The user's module that defines the trace's protocol (a trace recorded on a user's "
    "model needs it named: a trace file never runs code by itself)."
)


def model_option() -> Once:
    return Once(["--model", "model_spec"], metavar="FILE.py|MODULE", help=MODEL_HELP)


@click.command(
    "replay",
    params=[
        Described(
            ["trace_file"], "the trace file to replay (a .json that verify wrote)",
            metavar="TRACE.json", type=TRACE,
        ),
        Once(
            ["--protocol", "protocol_name"], metavar="NAME",
            help="Replay on this protocol instead (a fix), with the file's parameters: exit 0 "
            "if the trace no longer breaks its property there, 1 if it still does.",
        ),
        model_option(),
    ],
)  # fmt: skip
@reporting
def replay_command(trace_file: Path, protocol_name: str | None, model_spec: str | None) -> int:
    """Re-execute a saved trace: exit 1 if it still breaks its property, else 0.

    The exit code answers the question each form asks. On the trace's own protocol (no
    --protocol): does the violation reproduce? 1 yes; 0 no, the protocol no longer breaks
    the property along this trace. With --protocol FIX: does the fix hold against this
    schedule? 0 yes, the trace no longer violates there (`verify --protocol FIX` checks
    every schedule); 1 no, the fix still violates. A witness of a `sometimes` claim exits
    0 while it still reaches its goal, 1 when it no longer does. Every step that differs
    from the record is listed either way. 2: a malformed trace file or a usage error.
    """
    saved, target, _, _, _, result = replayed_trace(trace_file, protocol_name, model_spec)
    say("\n".join(replay_lines(trace_file, saved, target.name, result)))
    say(verdict_line(saved, target.name, result, model_spec))
    return 1 if result.violated else 0


def replayed_trace(
    trace_file: Path, protocol_name: str | None, model_spec: str | None
) -> tuple[SavedTrace, ProtocolEntry, dict[str, int], Model[Any], Property, Replay]:
    """The trace re-executed on its protocol (or on `protocol_name`, with the file's
    parameters), as `replay` and `conform` both need it."""
    saved, catalogue, recorded_on, prop = checked_trace(trace_file, model_spec)
    target = catalogue.lookup(protocol_name) if protocol_name else recorded_on
    cross = target.name != recorded_on.name
    values = replay_params(trace_file, target, saved, cross)
    model = checked_model(catalogue, target, values, (prop,))
    return saved, target, values, model, prop, replay(model, saved, prop, compare_states=not cross)


@click.command(
    "explain",
    params=[
        Described(["trace_file"], "the trace file to explain", metavar="TRACE.json", type=TRACE),
        model_option(),
    ],
)
@reporting
def explain_command(trace_file: Path, model_spec: str | None) -> int:
    """Tell a saved trace as prose: one sentence per step, then the broken property."""
    saved = load_trace(trace_file)
    if saved.model is None or model_spec is not None:  # checked as replay checks it
        _, _, recorded_on, _ = checked_trace(trace_file, model_spec, saved)
        replay_params(trace_file, recorded_on, saved, cross=False)
    say("\n".join(explain_lines(saved)))
    return 0


def checked_trace(
    trace_file: Path, model_spec: str | None, saved: SavedTrace | None = None
) -> tuple[SavedTrace, Catalogue, ProtocolEntry, Property]:
    """The trace file read and checked against its catalogue, as replay and explain need it:
    a known protocol, a known property of the kind the file says. The catalogue is the
    --model given; a trace recorded on a user's model needs it named (see `model_for`)."""
    saved = load_trace(trace_file) if saved is None else saved
    catalogue = catalogue_of(model_for(trace_file, saved, model_spec))
    recorded_on = _trace_protocol(trace_file, saved.protocol, catalogue)
    claims = catalogue.claims
    prop = claims.get(saved.property_name)
    if prop is None:
        raise LeadercheckError(
            f"{trace_file}: 'property.name' {saved.property_name!r} is not a known property"
            f" ({', '.join(claims)})"
        )
    if prop.kind.value != saved.property_kind:
        raise LeadercheckError(
            f"{trace_file}: 'property.kind' is {saved.property_kind!r} but"
            f" {prop.name} is {prop.kind.value!r}"
        )
    return saved, catalogue, recorded_on, prop


def model_for(trace_file: Path, saved: SavedTrace, model_spec: str | None) -> str | None:
    """The model to load for a trace: the one the user names with --model, or none (the
    built-in catalogue). A trace file is data that people send each other: the model it
    records is never imported unless the user names it, since importing runs its code."""
    if model_spec is not None or saved.model is None:
        return model_spec
    raise LeadercheckError(
        f"{trace_file}: recorded on the model {saved.model}; a trace file never runs code by "
        f"itself: give --model {saved.model} if you trust that file"
    )


def _trace_protocol(trace_file: Path, name: str, catalogue: Catalogue) -> ProtocolEntry:
    try:
        return catalogue.lookup(name)
    except LeadercheckError as exc:
        raise LeadercheckError(f"{trace_file}: 'protocol': {exc}") from None


def replay_params(
    trace_file: Path, protocol: ProtocolEntry, saved: SavedTrace, cross: bool
) -> dict[str, int]:
    """The file's parameters for `protocol`: on another protocol, extra ones are ignored."""
    known = {p.name for p in protocol.params}
    unknown = [name for name in saved.params if name not in known]
    if unknown and not cross:
        raise LeadercheckError(
            f"{trace_file}: 'params.{unknown[0]}' is not a parameter of {protocol.name}"
        )
    missing = [p.name for p in protocol.params if p.name not in saved.params]
    if missing:
        raise LeadercheckError(
            f"{trace_file}: 'params' lacks {', '.join(missing)}, which {protocol.name} requires"
        )
    given = {name: str(v) for name, v in saved.params.items() if name in known}
    try:
        return protocol.resolve(given)
    except LeadercheckError as exc:
        raise LeadercheckError(f"{trace_file}: 'params': {exc}") from None


def verdict_line(
    saved: SavedTrace, target: str, result: Replay, model_spec: str | None = None
) -> str:
    """The answer the exit code gives, in words: VIOLATED (exit 1) or HOLDS along this
    trace (exit 0), and what that means for the form run."""
    prop = result.prop
    assert prop is not None
    witness, cross = prop.kind is Kind.SOMETIMES, target != saved.protocol
    again = f" --model {model_spec}" if model_spec else ""
    if result.violated:
        if witness:
            why = f"{target} no longer reaches {prop.name} along it"
        elif cross:
            why = f"the fix does not hold: {target} still breaks {prop.name}"
        elif result.reproduces:
            why = "the violation reproduces"
        else:
            why = f"{prop.name} still breaks, though not as recorded"
        return f"verdict: VIOLATED ({why})"
    if witness:
        why = f"{target} still reaches {prop.name} along it"
    elif cross:
        along = (
            f"does not break {prop.name} along it"
            if result.completed
            else f"cannot take step {result.steps[-1].index} and does not break {prop.name} "
            "before it"
        )
        why = (
            f"the fix holds against this schedule: {target} {along}; "
            f"`verify --protocol {target}{again}` checks every schedule"
        )
    elif result.expect_broken:
        why = f"the violation no longer reproduces: {target} does not break {prop.name}"
    else:  # a schedule kept as HOLDS (`conform --random --keep`)
        why = f"{prop.name} holds along it, as recorded"
    return f"verdict: HOLDS along this trace ({why})"


def replay_lines(trace_file: Path, saved: SavedTrace, target: str, result: Replay) -> list[str]:
    """The replayed trace as numbered lines, then every difference and the verdict."""
    total = len(saved.steps) - 1
    on = f", on {target}" if target != saved.protocol else ""
    lines = [
        f"replaying {trace_file}: {saved.protocol} {saved.trace_kind or 'trace'} of"
        f" {step_count(total)} for {saved.property_name}{on}"
    ]
    width = len(str(total))
    first = saved.steps[0].summary
    lines.append(f"  {0:>{width}}  initial: " + "; ".join(f"{k} {v}" for k, v in first.items()))
    for step in result.steps:
        shown = step.replayed if step.replayed is not None else f"{step.recorded}  [not enabled]"
        lines.append(f"  {step.index:>{width}}  {shown}")
    prop, state, last = result.prop, result.final_state, result.last_index
    assert prop is not None
    sometimes = prop.kind.value == "sometimes"
    if result.prop_broken:
        mark, status = ("reached", "is reached") if sometimes else ("broken", "is broken")
        at = result.broken_at
        if at is not None and at != last:  # midway, and not at the end
            state = result.visited[at]
            mark += f" at step {at}"
        lines.append(f"  {'':>{width}}  => {prop.name} {mark}: {prop.why(state)}")
    else:
        mark, status = ("not reached", "is not reached") if sometimes else ("holds", "holds")
        lines.append(f"  {'':>{width}}  => {prop.name} {mark} after step {last}")
    if result.reproduces:
        every = {0: "the initial state", 1: "the one step"}.get(total, f"all {total} steps")
        lines.append(f"reproduced: {every} as recorded; {prop.name} {status} again")
        return lines
    lines += result.findings
    if not result.completed:
        lines.append(f"diverged: the replay stops at step {result.steps[-1].index} of {total}")
    parting = result.first_parting
    if parting is not None:
        lines.append(
            f"the replay parts from the record at step {parting};"
            f" {prop.name} {status} after step {last}"
        )
    else:
        along = "along it" if prop.kind is Kind.ALWAYS and not result.prop_broken else "at the end"
        lines.append(f"every step is as recorded, but {prop.name} {status} {along}")
    return lines

"""How a trace is rebuilt from action positions, verified, and judged.

Every search stores, per state, only the position of the action that discovered it among
its parent's successors (checker/engine/expand.py says which successors a search
considers); a trace is the model re-executed along those positions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from leadercheck.checker.errors import ModelError
from leadercheck.checker.model import Model, model_name
from leadercheck.checker.properties import Kind, Property
from leadercheck.checker.result import EndReason, PropertyResult, Verdict
from leadercheck.checker.trace import Step, Trace

NOT_REPEATED = (
    "so successors() did not repeat itself (nondeterministic order?); nothing was written"
)


def rebuild_trace(
    model: Model[Any],
    initial: Sequence[Any],
    moves: Sequence[int],
    canonical: Callable[[Any], Any] | None = None,
    *,
    stored: Callable[[Any], bool] | None = None,
    purpose: str = "the trace",
) -> Trace:
    """Re-execute the model from initial[moves[0]] along the action positions moves[1:].

    With symmetry the positions index the successors of representatives; at each step
    the concrete trace takes the first successor of its concrete state that lies in the
    orbit of the next representative, so the trace replays on the unreduced model.

    A model whose successors changed since the search (a nondeterministic order) is
    caught: a position past the end of a state's successors, or, when `stored` is given
    (whether the store holds a state, its representative with symmetry), a state the
    search never explored, raises ModelError naming `purpose` ("the trace to the state
    that breaks P"), before anyone writes the trace.
    """

    def failed(what: str) -> ModelError:
        return ModelError(
            f"{model_name(model)}: {purpose} could not be rebuilt: {what}, {NOT_REPEATED}"
        )

    def missing(number: int, move: int, count: int) -> ModelError:
        return failed(
            f"step {number} takes successor {move} (from 0) of a state that now has {count}"
        )

    state = initial[moves[0]]
    steps = [_step(model, 0, None, state)]
    if canonical is None:
        if stored is not None and not stored(state):
            raise failed("its initial state was never explored")
        for number, move in enumerate(moves[1:], start=1):
            pairs = list(model.successors(state))
            if move >= len(pairs):
                raise missing(number, move, len(pairs))
            action, state = pairs[move]
            if stored is not None and not stored(state):
                raise failed(f"step {number}'s state was never explored")
            steps.append(_step(model, number, action, state))
        return Trace(tuple(steps))
    rep = canonical(state)
    if stored is not None and not stored(rep):
        raise failed("its initial state was never explored")
    for number, move in enumerate(moves[1:], start=1):
        nexts = list(model.next_states(rep))
        if move >= len(nexts):
            raise missing(number, move, len(nexts))
        rep = canonical(nexts[move])
        if stored is not None and not stored(rep):
            raise failed(f"step {number}'s state was never explored")
        found = next(((a, s) for a, s in model.successors(state) if canonical(s) == rep), None)
        if found is None:
            raise failed(f"no successor of step {number - 1}'s state is like step {number}'s")
        action, state = found
        steps.append(_step(model, number, action, state))
    return Trace(tuple(steps))


def trace_along(
    model: Model[Any], start: Any, moves: Sequence[tuple[Any, Any]], loop_from: int | None = None
) -> Trace:
    """The trace of a path already taken: its start, then each (action, state) reached,
    shown as every rebuilt trace is (a replay's, a conformance schedule's)."""
    steps = [_step(model, 0, None, start)]
    steps += [_step(model, k, action, state) for k, (action, state) in enumerate(moves, start=1)]
    return Trace(tuple(steps), loop_from)


def extend_trace(
    model: Model[Any],
    trace: Trace,
    move: int,
    canonical: Callable[[Any], Any] | None = None,
) -> Trace:
    """`trace` and one step more: its last state's successor at position `move` (of its
    representative's successors, with symmetry). For an error's trace, whose last state
    the store never kept: nothing is verified; with symmetry, when no concrete successor
    is like the one at `move`, the trace is returned as it is."""
    state = trace.last.state
    pairs = list(model.successors(state))
    if canonical is not None:
        rep = canonical(state)
        if rep != state:
            nexts = list(model.next_states(rep))
            if move >= len(nexts):
                return trace
            wanted = canonical(nexts[move])
            move = next((k for k, (_, s) in enumerate(pairs) if canonical(s) == wanted), -1)
    if not 0 <= move < len(pairs):
        return trace
    action, succ = pairs[move]
    return Trace((*trace.steps, _step(model, len(trace.steps), action, succ)), trace.loop_from)


def _step(model: Model[Any], index: int, action: Any, state: Any) -> Step:
    """One step of a rebuilt trace; the model's views of it (and a lazy note) are user code,
    so what they raise is a ModelError naming the step, not an internal error."""
    try:
        shown = None if action is None else action.shown()  # a lazy note is written out here
        return Step(index, shown, model.describe(state), model.summary(state), state)
    except ModelError:
        raise
    except Exception as exc:
        raise ModelError(
            f"{model_name(model)}: showing step {index} of a trace raised "
            f"{type(exc).__name__}: {exc} (in describe, summary or an action's note)"
        ) from exc


def judge(
    prop: Property, trace: Trace | None, end: EndReason, model: Model[Any] | None = None
) -> PropertyResult:
    """The verdict on `prop` given the trace to the state that decided it, if one did.

    The trace is verified first (`verify_trace`): its last state must decide `prop`.
    """
    if trace is not None:
        who = "the model" if model is None else model_name(model)
        verify_trace(prop, trace, who)
        verdict = Verdict.VIOLATED if prop.kind is Kind.ALWAYS else Verdict.HOLDS
        try:
            why = prop.why(trace.last.state)
        except Exception as exc:
            raise ModelError(
                f"{who}: the explanation of {prop.name} raised {type(exc).__name__}: {exc}", trace
            ) from exc
        return PropertyResult(prop, verdict, trace, why)
    if end in (EndReason.EXHAUSTED, EndReason.DECIDED):
        if prop.kind is Kind.ALWAYS:
            return PropertyResult(prop, Verdict.HOLDS, None, "holds in every reachable state")
        return PropertyResult(prop, Verdict.VIOLATED, None, "no reachable state satisfies it")
    return PropertyResult(prop, Verdict.INCOMPLETE, None, end.value)


def purpose_of(prop: Property) -> str:
    """What a rebuilt trace for `prop` is, as a message names it."""
    if prop.kind is Kind.ALWAYS:
        return f"the trace to the state that breaks {prop.name}"
    if prop.kind is Kind.SOMETIMES:
        return f"the trace to the state that meets {prop.name}"
    return f"the lasso that breaks {prop.name}"


def verify_trace(prop: Property, trace: Trace, who: str) -> None:
    """Raise ModelError unless the rebuilt `trace` really is the counterexample (or witness)
    for `prop`: its last state decides `prop`, or, for a lasso, is the state where its loop
    starts (a stuttering lasso, which stays in its last state, needs nothing more).

    The search found such a state, so a trace that misses it was rebuilt along a different
    order of successors than the search saw.
    """
    loop_from = trace.loop_from
    if loop_from is None:
        verb = "break" if prop.kind is Kind.ALWAYS else "meet"
        try:
            ok = decides(prop, trace.last.state)
        except Exception:  # the search evaluated it on the state it found without error
            ok = False
        what = f"its last state does not {verb} {prop.name}"
    else:
        ok = loop_from == len(trace.steps) - 1 or trace.steps[loop_from].state == trace.last.state
        what = f"its last state is not the state of step {loop_from}, where its loop starts"
    if not ok:
        raise ModelError(f"{who}: {purpose_of(prop)} could not be rebuilt: {what}, {NOT_REPEATED}")


def decides(prop: Property, state: Any) -> bool:
    """Whether `state` decides `prop`: breaks an invariant or meets a `sometimes` claim."""
    return bool(prop.predicate(state)) != (prop.kind is Kind.ALWAYS)

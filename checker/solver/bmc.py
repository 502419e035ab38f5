"""Bounded model checking: unroll a model's symbolic transition relation and ask z3.

The claims are checked depth by depth (0, 1, ..., bound), so the first satisfiable depth
is the length of a shortest counterexample (or witness): the same length the explicit
breadth-first search reports, which is what the cross-check compares. A z3 model is
decoded into the explicit model's states and rebuilt on the explicit model, so a
symbolic counterexample is the same `Trace` as any other and renders and replays alike;
a decoded step the explicit model cannot take means the two disagree, and is an error.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import z3

from leadercheck.checker.engine.successors import rebuild_trace
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.model import Model
from leadercheck.checker.properties import Kind, Property
from leadercheck.checker.result import Verdict
from leadercheck.checker.solver.answer import Answer, solve
from leadercheck.checker.trace import Trace

V = TypeVar("V")


class EncodingMismatch(LeadercheckError):
    """A symbolic trace that the explicit model cannot take: one of the two is wrong."""


class SymbolicModel(ABC, Generic[V]):
    """An explicit model's transition relation stated in z3, one copy of the state per step.

    `model` is the explicit model encoded; `V` is whatever holds one copy of the state
    variables (z3 constants, arrays, functions).
    """

    model: Model[Any]

    @abstractmethod
    def variables(self, step: int) -> V:
        """Fresh state variables for the state after `step` steps."""

    @abstractmethod
    def init(self, v: V) -> z3.BoolRef:
        """`v` is an initial state."""

    @abstractmethod
    def transition(self, v: V, w: V) -> z3.BoolRef:
        """One step leads from `v` to `w`: the disjunction of every action instance."""

    @abstractmethod
    def claim(self, name: str, v: V) -> z3.BoolRef | None:
        """The predicate of the claim called `name` on `v`; None if it is not encoded."""

    @abstractmethod
    def decode(self, m: z3.ModelRef, v: V) -> Any:
        """The explicit model's state that `v` takes in the z3 model `m`."""


@dataclass(frozen=True)
class BoundedResult:
    """One claim checked up to `bound` steps.

    SAT: a trace of len(trace) steps reaches a state that breaks the invariant (ALWAYS)
    or meets the claim (SOMETIMES), and none shorter does. UNSAT: no state within `bound`
    steps does. UNKNOWN: the solver gave up (timeout, resource limit): nothing is claimed.
    """

    prop: Property
    answer: Answer
    bound: int  # the depth asked for (UNKNOWN: the depth at which z3 gave up)
    trace: Trace | None
    seconds: float  # from the start of the whole check to this claim's answer
    reason: str = ""

    @property
    def verdict(self) -> Verdict:
        """What the bounded check decides: a trace decides (VIOLATED for an invariant,
        HOLDS for a `sometimes` claim); none within the bound, or UNKNOWN, decides
        nothing beyond the bound: INCOMPLETE."""
        if self.answer is not Answer.SAT:
            return Verdict.INCOMPLETE
        return Verdict.VIOLATED if self.prop.kind is Kind.ALWAYS else Verdict.HOLDS


def bounded_check(
    sym: SymbolicModel[V],
    properties: Sequence[Property],
    bound: int,
    timeout: float | None = None,
) -> list[BoundedResult]:
    """Check each ALWAYS or SOMETIMES property on every state within `bound` steps.

    `timeout` (seconds) bounds the whole check; a property still open when it runs out,
    or that z3 cannot decide, is UNKNOWN. A property the encoding does not state, or a
    liveness property, is refused (LeadercheckError) rather than passed over.
    """
    if bound < 0:
        raise LeadercheckError(f"the bound must be at least 0, got {bound}")
    for prop in properties:
        if prop.kind not in (Kind.ALWAYS, Kind.SOMETIMES):
            raise LeadercheckError(f"{prop.name}: bounded model checking judges only states")
        if sym.claim(prop.name, sym.variables(0)) is None:
            raise LeadercheckError(f"{prop.name}: the symbolic encoding does not state it")
    start = time.perf_counter()
    states = [sym.variables(0)]
    solver = z3.Solver()
    solver.add(sym.init(states[0]))
    open_props = list(properties)
    done: dict[str, BoundedResult] = {}
    cut = False  # the time ran out before every open claim was asked at every depth
    for depth in range(bound + 1):
        if cut:
            break
        if depth > 0:
            states.append(sym.variables(depth))
            solver.add(sym.transition(states[depth - 1], states[depth]))
        for prop in list(open_props):
            target = sym.claim(prop.name, states[depth])
            assert target is not None
            solver.push()
            solver.add(z3.Not(target) if prop.kind is Kind.ALWAYS else target)
            left = None if timeout is None else timeout - (time.perf_counter() - start)
            if left is not None and left <= 0:
                solver.pop()
                cut = True
                break
            solved = solve(solver, left)
            solver.pop()
            if solved.answer is Answer.UNSAT:
                continue
            open_props.remove(prop)
            seconds = time.perf_counter() - start
            if solved.answer is Answer.UNKNOWN:
                done[prop.name] = BoundedResult(
                    prop, Answer.UNKNOWN, depth, None, seconds, solved.reason
                )
                continue
            assert solved.model is not None
            trace = to_trace(sym, solved.model, states[: depth + 1])
            done[prop.name] = BoundedResult(prop, Answer.SAT, bound, trace, seconds)
        if not open_props:
            break
    seconds = time.perf_counter() - start
    for prop in open_props:
        if cut:
            done[prop.name] = BoundedResult(prop, Answer.UNKNOWN, bound, None, seconds, "timeout")
        else:
            done[prop.name] = BoundedResult(prop, Answer.UNSAT, bound, None, seconds)
    return [done[p.name] for p in properties]


def to_trace(sym: SymbolicModel[V], m: z3.ModelRef, states: Sequence[V]) -> Trace:
    """Decode a z3 model along `states` and rebuild it as a trace of the explicit model."""
    model = sym.model
    decoded = [sym.decode(m, v) for v in states]
    initial = list(model.initial_states())
    if decoded[0] not in initial:
        raise EncodingMismatch(
            f"the symbolic initial state is not one of the model's: {decoded[0]}"
        )
    moves = [initial.index(decoded[0])]
    for number, (before, after) in enumerate(zip(decoded[:-1], decoded[1:], strict=True), start=1):
        nexts = [s for _, s in model.successors(before)]
        if after not in nexts:
            raise EncodingMismatch(
                f"step {number} of the symbolic trace is no step of the explicit model: "
                f"{before} -> {after}"
            )
        moves.append(nexts.index(after))
    return rebuild_trace(model, initial, moves)

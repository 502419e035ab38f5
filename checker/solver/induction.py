"""Inductive invariants for any number of nodes: initiation and consecution, checked by z3.

A protocol is stated over an uninterpreted sort of nodes (so a proof covers every
cluster size at once) with axioms for what the sort must satisfy (e.g. any two quorums
share a node). The invariant is a list of conjuncts: the safety claim and the
strengthening conjuncts that make it inductive. The proof obligations are

- initiation: every initial state satisfies each conjunct;
- consecution: from any state satisfying all conjuncts, every action leads to a state
  satisfying each conjunct;
- and, against a vacuous proof (contradictory axioms or invariant, an action that can
  never happen), each action must be possible from some state of the invariant (SAT;
  asked of the model's finite instance, when it has one).

Each obligation is one z3 query, expected UNSAT (the last kind: SAT). A satisfiable one
is a counterexample to induction (CTI): a state that satisfies the invariant and an
action that breaks one conjunct. It is shown as a two-step trace (state, action, state),
rendered like any other, after asking z3 again for as small a one as the model's bounds
allow (fewest nodes, then no stray facts) so that a reviewer reads a few lines, not a
solver dump. Any UNKNOWN (timeout, incomplete quantifier reasoning) makes the whole
proof UNKNOWN: a proof is reported only when every obligation is answered as expected.
"""

from __future__ import annotations

import enum
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import z3

from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.model import Action
from leadercheck.checker.solver.answer import Answer, Solved, solve
from leadercheck.checker.trace import Step, Trace

V = TypeVar("V")

INITIATION = "initial states"


@dataclass(frozen=True)
class Conjunct:
    """One conjunct of the invariant; `claim` marks the safety claim being proved."""

    name: str
    formula: Callable[[Any], z3.BoolRef]
    description: str = ""
    claim: bool = False


class InductiveModel(ABC, Generic[V]):
    """A protocol stated for any number of nodes, with its invariant."""

    name: str  # the protocol it speaks for
    summary: str  # one line: what is modelled, and how it relates to the explicit model

    @abstractmethod
    def state(self, tag: str) -> V:
        """Fresh state symbols (functions over the node sort), distinguished by `tag`."""

    @abstractmethod
    def axioms(self) -> Sequence[z3.BoolRef]:
        """What every instance satisfies (e.g. quorum intersection)."""

    @abstractmethod
    def init(self, v: V) -> z3.BoolRef:
        """`v` is an initial state."""

    @abstractmethod
    def actions(self, v: V, w: V) -> Sequence[tuple[str, z3.BoolRef]]:
        """Each kind of step from `v` to `w`, by name; its parameters are free constants."""

    @abstractmethod
    def conjuncts(self) -> Sequence[Conjunct]:
        """The invariant: the claims first, then the conjuncts that strengthen them."""

    @abstractmethod
    def view(
        self, m: z3.ModelRef, v: V
    ) -> tuple[Mapping[str, Mapping[str, object]], Mapping[str, str]]:
        """A state of a z3 model as a trace step shows it: (describe view, one-line summary)."""

    @abstractmethod
    def label(self, m: z3.ModelRef, action: str) -> Action:
        """The action `action` as the z3 model instantiates its parameters."""

    def instance(self, size: int) -> InductiveModel[V] | None:
        """The same protocol over finite sorts of about `size` elements, for a small CTI.

        Every state and step of the instance must be one of this model's, with the same
        axioms and invariant, so that a CTI found in it is a CTI here and a state of its
        invariant shows this one is not empty; None (the default) when there is none.
        """
        return None

    def preferences(self, pre: V, post: V) -> Sequence[tuple[z3.ExprRef, Sequence[z3.ExprRef]]]:
        """What a CTI of the finite instance should look like, most important first: each
        term with its values in order of preference (no stray message, small terms...).
        Fixing every displayed term this way makes the CTI the same on every run."""
        return []


class Status(enum.Enum):
    PROVED = "PROVED"
    CTI = "CTI"  # a counterexample to induction: the invariant is too weak (or false)
    UNKNOWN = "UNKNOWN"
    VACUOUS = "VACUOUS"  # some action is impossible in every state of the invariant


@dataclass(frozen=True)
class Obligation:
    """One query: `conjunct` holds initially (`step` = INITIATION) or after `step`."""

    step: str
    conjunct: str
    answer: Answer
    seconds: float
    reason: str = ""


@dataclass(frozen=True)
class Proof:
    status: Status
    obligations: tuple[Obligation, ...]
    cti: Trace | None = None  # the state (and step) that break the conjunct below
    broken: str = ""  # the conjunct a CTI breaks
    step: str = ""  # INITIATION or the action of the CTI
    dropped: tuple[str, ...] = ()  # conjuncts left out (to show the rest is too weak)

    @property
    def seconds(self) -> float:
        return sum(o.seconds for o in self.obligations)


def prove(
    model: InductiveModel[V],
    *,
    without: Collection[str] = (),
    timeout: float | None = None,
) -> Proof:
    """Check every obligation of the invariant, less the conjuncts named in `without`.

    Stops at the first CTI (obligations in a fixed order: initiation, then each action
    with each conjunct in order). `timeout` (seconds) bounds the whole proof.
    """
    conjuncts = list(model.conjuncts())
    names = {c.name for c in conjuncts}
    if unknown := sorted(set(without) - names):
        raise LeadercheckError(
            f"no conjunct {', '.join(unknown)} in {model.name}'s invariant; "
            f"its conjuncts: {', '.join(c.name for c in conjuncts)}"
        )
    if any(c.claim for c in conjuncts if c.name in without):
        raise LeadercheckError("a claim cannot be left out, only strengthening conjuncts")
    kept = [c for c in conjuncts if c.name not in without]
    dropped = tuple(c.name for c in conjuncts if c.name in without)
    start = time.perf_counter()
    done: list[Obligation] = []

    def left() -> float | None:
        return None if timeout is None else max(0.0, timeout - (time.perf_counter() - start))

    pre, post = model.state("pre"), model.state("post")
    actions = dict(model.actions(pre, post))
    holds = holds_all(model, pre, without)
    queries: list[tuple[str, Conjunct, list[z3.BoolRef]]] = [
        (INITIATION, c, _obligation(model, pre, post, actions, holds, INITIATION, c)) for c in kept
    ]
    # Possibility is asked of a finite instance where there is one: satisfiable there is
    # satisfiable here (its states and steps are this model's), and z3 decides finite
    # sorts, where it may search for a model of the unbounded one without end.
    witness = model.instance(POSSIBLE_SIZE) or model
    w_pre, w_post = witness.state("pre"), witness.state("post")
    w_holds = holds_all(witness, w_pre, without)
    for name, w_step in witness.actions(w_pre, w_post):
        solver = z3.Solver()
        solver.add(*witness.axioms(), *w_holds, w_step)
        solved = solve(solver, left())
        done.append(
            Obligation(f"{name} possible", "", solved.answer, solved.seconds, solved.reason)
        )
        if solved.answer is not Answer.SAT:
            status = Status.VACUOUS if solved.answer is Answer.UNSAT else Status.UNKNOWN
            return Proof(status, tuple(done), step=name, dropped=dropped)
        queries += [(name, c, _obligation(model, pre, post, actions, holds, name, c)) for c in kept]
    for step_name, conjunct, formulas in queries:
        remaining = left()
        if remaining is not None and remaining <= 0:
            done.append(Obligation(step_name, conjunct.name, Answer.UNKNOWN, 0.0, "timeout"))
            return Proof(Status.UNKNOWN, tuple(done), dropped=dropped)
        solver = z3.Solver()
        solver.add(*formulas)
        first = FIRST_TRY_SECONDS if remaining is None else min(remaining, FIRST_TRY_SECONDS)
        solved = solve(solver, first)
        small = None
        if solved.answer is Answer.UNKNOWN:  # z3 may be looking for a model without end:
            small = _small_cti(model, step_name, conjunct.name, without, left())
            if small is None:  # no small CTI: give the query the time that is left
                again = solve(solver, left())
                solved = Solved(
                    again.answer, again.model, again.reason, solved.seconds + again.seconds
                )
        if small is not None:
            solved = Solved(Answer.SAT, None, "a CTI in a finite instance", solved.seconds)
        done.append(
            Obligation(step_name, conjunct.name, solved.answer, solved.seconds, solved.reason)
        )
        if small is None and solved.answer is Answer.UNSAT:
            continue
        # a CTI: small ones are looked for in the finite instance (a CTI there is one here)
        small = small or _small_cti(model, step_name, conjunct.name, without, left())
        if small is not None:
            cti = _cti(*small, step_name)
        elif solved.model is not None:
            cti = _cti(model, solved.model, pre, post, step_name)
        else:
            return Proof(Status.UNKNOWN, tuple(done), dropped=dropped)
        return Proof(Status.CTI, tuple(done), cti, conjunct.name, step_name, dropped)
    return Proof(Status.PROVED, tuple(done), dropped=dropped)


FIRST_TRY_SECONDS = 10.0  # per query, before a small CTI is looked for in a finite instance
MAX_CTI_SIZE = 5
POSSIBLE_SIZE = 3  # nodes of the finite instance asked whether each action is possible
SMALL_CTI_SECONDS = 10.0  # per size tried while looking for a small CTI


def holds_all(model: InductiveModel[V], v: V, without: Collection[str] = ()) -> list[z3.BoolRef]:
    """Every conjunct of the invariant on `v`, less those in `without`."""
    return [c.formula(v) for c in model.conjuncts() if c.name not in without]


def _obligation(
    model: InductiveModel[V],
    pre: V,
    post: V,
    actions: Mapping[str, z3.BoolRef],
    holds: Sequence[z3.BoolRef],
    step: str,
    conjunct: Conjunct,
) -> list[z3.BoolRef]:
    """The query whose models are the CTIs of `conjunct` at `step` (INITIATION or an action)."""
    if step == INITIATION:
        return [*model.axioms(), model.init(pre), z3.Not(conjunct.formula(pre))]
    return [*model.axioms(), *holds, actions[step], z3.Not(conjunct.formula(post))]


def _small_cti(
    model: InductiveModel[V],
    step: str,
    conjunct: str,
    without: Collection[str],
    timeout: float | None,
) -> tuple[InductiveModel[V], z3.ModelRef, V, V] | None:
    """The CTI again in the smallest finite instance that has one, each displayed term
    fixed in turn to its most preferred value that still leaves a CTI: small, without
    stray facts, and the same on every run (z3's own choice may vary with its history)."""
    for size in range(1, MAX_CTI_SIZE + 1):
        inst = model.instance(size)
        if inst is None:
            return None
        pre, post = inst.state("pre"), inst.state("post")
        chosen = next(c for c in inst.conjuncts() if c.name == conjunct)
        holds = holds_all(inst, pre, without)
        actions = dict(inst.actions(pre, post))
        formulas = _obligation(inst, pre, post, actions, holds, step, chosen)
        solver = z3.Solver()
        seconds = SMALL_CTI_SECONDS if timeout is None else min(timeout, SMALL_CTI_SECONDS)
        solver.set("timeout", max(1, int(1000 * seconds)))
        solver.add(*formulas)
        if solver.check() != z3.sat:
            continue
        _prefer(solver, list(inst.preferences(pre, post)))
        if solver.check() == z3.sat:
            return inst, solver.model(), pre, post
        return None
    return None


PREFERENCE_CHUNK = 16


def _prefer(solver: z3.Solver, prefs: list[tuple[z3.ExprRef, Sequence[z3.ExprRef]]]) -> None:
    """Fix each term to its first value that keeps `solver` satisfiable, in order.

    Most terms take their first choice (no stray message...), so a chunk of them is first
    tried at once; only a chunk that cannot is fixed term by term. The outcome is the
    same as term by term, in fewer queries.
    """
    for start in range(0, len(prefs), PREFERENCE_CHUNK):
        chunk = prefs[start : start + PREFERENCE_CHUNK]
        solver.push()
        solver.add(*(term == values[0] for term, values in chunk))
        if solver.check() == z3.sat:
            continue
        solver.pop()
        for term, values in chunk:
            for value in values:
                solver.push()
                solver.add(term == value)
                if solver.check() == z3.sat:
                    break
                solver.pop()


def _cti(model: InductiveModel[V], m: z3.ModelRef, pre: V, post: V, step: str) -> Trace:
    view, summary = model.view(m, pre)
    first = Step(0, None, view, summary, None)
    if step == INITIATION:
        return Trace((first,))
    view, summary = model.view(m, post)
    return Trace((first, Step(1, model.label(m, step), view, summary, None)))

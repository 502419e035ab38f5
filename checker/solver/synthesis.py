"""Timing parameter synthesis: the region of parameters where a timed hazard cannot happen.

A `TimingProblem` states, over real-valued parameters (durations, rates) with their
domain, when a hazard is possible: `unsafe` holds for some values of the problem's own
variables (when the store grants, when a node checks, how long it is paused, ...). The
unsafe parameters are the projection of `unsafe` onto the parameters; the safe region is
its complement, and z3 computes it by quantifier elimination.

z3's `qe` tactic handles linear real arithmetic. A rate multiplies a variable in the
problem as it is naturally stated (a local clock reading times 1 + drift), which `qe`
cannot eliminate. So a problem may also state the hazard linearly, with a product of
parameters named by a fresh symbol (`Derived`: K standing for lease * (1 + drift)); that
statement is eliminated, the derived terms are put back, and the result is then checked
against the natural statement, in nonlinear real arithmetic:

  (a) sufficient: domain ∧ region ∧ unsafe is UNSAT (no hazard inside the region);
  (b) violable:   domain ∧ ¬region ∧ unsafe is SAT (a hazard outside it: the violating
      assignment), or UNSAT (every parameter is safe);
  (c) exact:      domain ∧ ¬region ∧ ∀ variables ¬unsafe is UNSAT (no safe point outside).

A region is reported only when all three are decided as above: any check z3 leaves
undecided (timeout, resource limit, incomplete theory) makes the answer UNKNOWN, and a
check z3 decides the other way (the two statements disagree) makes it UNSAT; in both
cases `region` is None and only the unconfirmed `candidate` is kept, never presented as
a result. The time budget covers the whole synthesis; a step that finds it spent is
UNKNOWN without calling z3.

The region is simplified before it is checked: a part that z3 proves may be replaced by
true or false without changing the region over the domain is replaced (only proven
replacements are made, so the simplification never changes the region), and it is shown
as text with every linear atom normalised (integer coefficients, the terms with negative
coefficients moved to the left): `lease * (1 + drift) + pause <= ttl`.

Nothing here knows about protocols: the problems are stated in `checker.solver.encodings`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import cast

import z3

from leadercheck.checker.solver.answer import Answer, Solved, solve
from leadercheck.checker.solver.formula_text import formula_text
from leadercheck.checker.solver.problem import (
    Derived,
    ExampleHint,
    Number,
    TimingProblem,
    exact_real,
)


@dataclass(frozen=True)
class Check:
    """One question put to z3 about the region: its answer, time and, when UNKNOWN, why."""

    question: str
    answer: Answer
    seconds: float
    reason: str = ""


@dataclass(frozen=True)
class Violation:
    """Parameters outside the region and the values of the variables that make the hazard."""

    parameters: dict[str, Number]
    variables: dict[str, Number]

    def text(self) -> str:
        params = ", ".join(f"{k}={v}" for k, v in self.parameters.items())
        how = ", ".join(f"{k}={v}" for k, v in self.variables.items())
        return f"{params} (hazard: {how})" if how else params


@dataclass(frozen=True)
class Synthesis:
    """The outcome of `synthesize`.

    `answer` SAT: the region was synthesized and all three checks confirmed it (`region`,
    `text`). UNKNOWN: some step was undecided (`reason` says which). UNSAT: z3 refuted the
    candidate (the problem's two statements disagree). Only with SAT is `region` set.
    """

    problem: TimingProblem
    answer: Answer
    reason: str
    candidate: z3.BoolRef | None  # the eliminated, simplified formula, over the parameters
    candidate_text: str
    elimination_seconds: float
    sufficient: Check | None  # (a)
    violable: Check | None  # (b)
    exact: Check | None  # (c)
    violation: Violation | None
    seconds: float

    @property
    def region(self) -> z3.BoolRef | None:
        """The safe region over the parameters, when confirmed; otherwise None."""
        return self.candidate if self.answer is Answer.SAT else None

    @property
    def text(self) -> str | None:
        return self.candidate_text if self.answer is Answer.SAT else None

    @property
    def checks(self) -> tuple[Check, ...]:
        return tuple(c for c in (self.sufficient, self.violable, self.exact) if c is not None)

    def lines(self) -> list[str]:
        """The result as a few lines of text, for a terminal."""
        out = []
        if self.answer is Answer.SAT:
            out.append(f"safe exactly when: {self.candidate_text}")
        elif self.answer is Answer.UNKNOWN:
            out.append(f"UNKNOWN: {self.reason}")
            if self.candidate_text:
                out.append(f"unconfirmed candidate: {self.candidate_text}")
        else:
            out.append(f"refuted: {self.reason}")
        if self.violation is not None:
            out.append(f"violating assignment: {self.violation.text()}")
        out.append(f"z3: elimination {self.elimination_seconds:.3f} s")
        out += [f"z3: {c.question}: {c.answer.name} in {c.seconds:.3f} s" for c in self.checks]
        return out


class _Budget:
    """The time left of the whole synthesis (None: unlimited)."""

    def __init__(self, timeout: float | None) -> None:
        self.deadline = None if timeout is None else time.perf_counter() + timeout

    def left(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.perf_counter()

    def spent(self) -> bool:
        left = self.left()
        return left is not None and left <= 0

    def solve(self, solver: z3.Solver | z3.Optimize) -> Solved:
        if self.spent():
            return Solved(Answer.UNKNOWN, None, "time budget spent", 0.0)
        # An Optimize offers the four methods `solve` uses (set, check, model, reason_unknown).
        return solve(cast(z3.Solver, solver), self.left())


def synthesize(problem: TimingProblem, timeout: float | None = None) -> Synthesis:
    """Eliminate the problem's variables, simplify, and check the region (a), (b), (c).

    `timeout` is the budget in seconds for everything (None: no limit).
    """
    start = time.perf_counter()
    budget = _Budget(timeout)
    eliminated, elim_seconds, why = _eliminate(problem, budget)
    core = candidate = None
    a = b = c = None
    violation = None
    if eliminated is None:
        answer, reason = Answer.UNKNOWN, f"quantifier elimination: {why}"
    else:
        core = _prune(problem, z3.simplify(z3.Not(eliminated)), budget)
        candidate = problem.expand(core)
        inside = z3.And(problem.domain, candidate, problem.unsafe)
        a = _check("(a) no hazard inside the region", budget.solve(_solver(inside)))
        outside = z3.And(problem.domain, z3.Not(candidate))
        b_solved = budget.solve(_solver(outside, problem.unsafe))
        b = _check("(b) a hazard outside the region", b_solved)
        safe = z3.Not(problem.unsafe)
        always_safe = z3.ForAll(list(problem.variables), safe) if problem.variables else safe
        c_solved = budget.solve(_solver(outside, always_safe))
        c = _check("(c) no safe point outside the region", c_solved)
        if b_solved.model is not None:
            violation = _example(problem, core, budget) or _violation(problem, b_solved.model)
        answer, reason = _verdict(a, b, c)
    return Synthesis(
        problem=problem,
        answer=answer,
        reason=reason,
        candidate=candidate,
        candidate_text="" if core is None else formula_text(problem, core),
        elimination_seconds=elim_seconds,
        sufficient=a,
        violable=b,
        exact=c,
        violation=violation,
        seconds=time.perf_counter() - start,
    )


def _verdict(a: Check, b: Check, c: Check) -> tuple[Answer, str]:
    """SAT when (a) and (c) are UNSAT and (b) is decided; UNKNOWN if any is undecided."""
    undecided = [x for x in (a, b, c) if x.answer is Answer.UNKNOWN]
    if undecided:
        return Answer.UNKNOWN, "; ".join(
            f"{x.question}: {x.reason or 'unknown'}" for x in undecided
        )
    if a.answer is Answer.SAT:
        return Answer.UNSAT, "z3 found a hazard inside the candidate region"
    if c.answer is Answer.SAT:
        return Answer.UNSAT, "z3 found a safe point outside the candidate region"
    return Answer.SAT, ""


def _solver(*facts: z3.BoolRef) -> z3.Solver:
    s = z3.Solver()
    s.add(*facts)
    return s


def _check(question: str, solved: Solved) -> Check:
    return Check(question, solved.answer, solved.seconds, solved.reason)


# -- elimination ------------------------------------------------------------------


def _eliminate(problem: TimingProblem, budget: _Budget) -> tuple[z3.BoolRef | None, float, str]:
    """∃ variables. unsafe, without quantifiers (over parameters and derived symbols)."""
    if problem.linear_unsafe is None:
        body, bound = problem.unsafe, problem.variables
    else:
        body, bound = problem.linear_unsafe, problem.linear_variables
    formula = z3.Exists(list(bound), body) if bound else body
    if budget.spent():
        return None, 0.0, "time budget spent"
    left = budget.left()
    tactic = z3.Tactic("qe")
    if left is not None:
        tactic = z3.TryFor(tactic, max(1, int(left * 1000)))
    start = time.perf_counter()
    try:
        goals = tactic(formula)
    except z3.Z3Exception as exc:  # cancelled by the timeout, or a resource limit
        value = exc.value.decode() if isinstance(exc.value, bytes) else str(exc.value)
        return None, time.perf_counter() - start, f"z3: {value}"
    seconds = time.perf_counter() - start
    result = goals.as_expr()
    if _has_quantifier(result):  # z3's qe gives up this way, also when its time runs out
        within = "" if left is None else f" within {left:.3f} s"
        return None, seconds, f"z3 did not eliminate every quantifier{within}"
    return cast(z3.BoolRef, result), seconds, ""


def _has_quantifier(e: z3.ExprRef) -> bool:
    if z3.is_quantifier(e):
        return True
    return any(_has_quantifier(ch) for ch in e.children()) if z3.is_app(e) else False


# -- simplification -----------------------------------------------------------------


def _prune(problem: TimingProblem, formula: z3.BoolRef, budget: _Budget) -> z3.BoolRef:
    """Replace parts by true or false where z3 proves the region unchanged over the domain.

    Larger parts are tried first; only a replacement proven (UNSAT) is made, so an
    undecided or spent budget leaves the formula as it is.
    """
    changed = True
    while changed:
        changed = False
        for part in _boolean_parts(formula):
            for value in (True, False):
                smaller = z3.simplify(z3.substitute(formula, (part, z3.BoolVal(value))))
                if smaller.eq(formula):
                    continue
                differ = z3.Xor(problem.expand(formula), problem.expand(smaller))
                if budget.solve(_solver(problem.domain, differ)).answer is Answer.UNSAT:
                    formula, changed = smaller, True
                    break
            if changed:
                break
    return formula


def _boolean_parts(formula: z3.ExprRef) -> list[z3.BoolRef]:
    """Every Boolean subformula (connectives and atoms), outermost first, each once."""
    seen: set[int] = set()
    out: list[z3.BoolRef] = []

    def walk(e: z3.ExprRef) -> None:
        if e.get_id() in seen or not z3.is_bool(e) or z3.is_true(e) or z3.is_false(e):
            return
        seen.add(e.get_id())
        out.append(cast(z3.BoolRef, e))
        if z3.is_and(e) or z3.is_or(e) or z3.is_not(e):
            for ch in e.children():
                walk(ch)

    walk(formula)
    return out


# -- the violating assignment ----------------------------------------------------------


def _example(problem: TimingProblem, core: z3.BoolRef, budget: _Budget) -> Violation | None:
    """The violation `problem.example` asks for, or None if there is none (or z3 cannot say)."""
    hint = problem.example
    region = problem.expand(core)
    ints = {name: z3.Int(f"{name}__int") for name in hint.integers}
    as_int = [(problem.parameter(n), z3.ToReal(v)) for n, v in ints.items()]

    def fix(f: z3.BoolRef) -> z3.BoolRef:
        f = problem.at(f, hint.pinned)
        return cast(z3.BoolRef, z3.substitute(f, *as_int)) if as_int else f

    facts = [fix(problem.domain), fix(z3.Not(region)), fix(problem.unsafe)]
    facts += [fix(problem.at(region, contrast)) for contrast in hint.contrasts]
    for k, term in enumerate(hint.integral_terms):
        whole = z3.Int(f"integral__{k}")
        facts.append(fix(cast(z3.BoolRef, term == z3.ToReal(whole))))
    opt = z3.Optimize()
    opt.add(*facts)
    if ints:
        opt.minimize(z3.Sum(list(ints.values())))
    solved = budget.solve(opt)
    if solved.model is None:
        return None
    params: dict[str, Number] = {}
    for p in problem.parameters:
        name = str(p)
        if name in hint.pinned:
            params[name] = _number(Fraction(hint.pinned[name]))
        elif name in ints:
            params[name] = _value(solved.model.eval(ints[name], model_completion=True))
        else:
            params[name] = _value(solved.model.eval(p, model_completion=True))
    return _smallest(problem, params, budget) or _violation_at(problem, params, solved.model)


def _smallest(
    problem: TimingProblem, params: dict[str, Number], budget: _Budget
) -> Violation | None:
    """The hazard at `params` with the smallest sum of variables (when z3 finds it)."""
    if not problem.variables:
        return Violation(params, {})
    opt = z3.Optimize()
    opt.add(problem.at(problem.unsafe, params))
    opt.minimize(z3.Sum(list(problem.variables)))
    solved = budget.solve(opt)
    if solved.model is None:
        return None
    found = _violation_at(problem, params, solved.model)
    return found if _holds(problem, found) else None


def _violation(problem: TimingProblem, m: z3.ModelRef) -> Violation | None:
    """The assignment of z3's model `m`; None if a value is irrational (nonlinear models)."""
    try:
        params = {str(p): _value(m.eval(p, model_completion=True)) for p in problem.parameters}
        return _violation_at(problem, params, m)
    except ValueError:
        return None


def _violation_at(problem: TimingProblem, params: dict[str, Number], m: z3.ModelRef) -> Violation:
    values = {str(v): _value(m.eval(v, model_completion=True)) for v in problem.variables}
    return Violation(params, values)


def _holds(problem: TimingProblem, v: Violation) -> bool:
    """Whether the hazard really happens with these values (evaluated exactly)."""
    pairs = [(x, exact_real(v.variables[str(x)])) for x in problem.variables]
    f = problem.at(problem.unsafe, v.parameters)
    return z3.is_true(z3.simplify(z3.substitute(f, *pairs) if pairs else f))


def _value(e: z3.ExprRef) -> Number:
    if z3.is_int_value(e):
        return int(e.as_long())
    if z3.is_rational_value(e):
        return _number(Fraction(e.numerator_as_long(), e.denominator_as_long()))
    raise ValueError(f"not an exact number: {e}")  # an algebraic number (nonlinear model)


def _number(x: Fraction) -> Number:
    return int(x) if x.denominator == 1 else x


def evaluate(problem: TimingProblem, formula: z3.BoolRef, values: Mapping[str, Number]) -> bool:
    """The truth of a formula over the parameters at exact values of all of them."""
    missing = [str(p) for p in problem.parameters if str(p) not in values]
    if missing:
        raise ValueError(f"no value for {', '.join(missing)}")
    result = z3.simplify(problem.at(formula, values))
    if z3.is_true(result) or z3.is_false(result):
        return z3.is_true(result)
    raise ValueError(f"{formula} does not evaluate to true or false: {result}")


__all__ = [
    "Check",
    "Derived",
    "ExampleHint",
    "Synthesis",
    "TimingProblem",
    "Violation",
    "evaluate",
    "synthesize",
]

"""A timed hazard stated for synthesis: the parameters, their domain, and when it happens.

The statement is what the encodings write (checker/solver/encodings) and what synthesis
(synthesis.py), its text (formula_text.py) and the knob bounds read; it sits apart from
all of them so that none imports another for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import cast

import z3

Number = int | Fraction


@dataclass(frozen=True)
class Derived:
    """A product of parameters named by a fresh symbol, so the elimination sees it as one."""

    symbol: z3.ArithRef  # a fresh Real, used only in `TimingProblem.linear_unsafe`
    term: z3.ArithRef  # its value over the parameters, e.g. lease * (1 + drift)


@dataclass(frozen=True)
class ExampleHint:
    """Which violating assignment to show, among the many outside the region.

    The values in `pinned` are fixed; the parameters in `integers` take integer values
    and their sum is made as small as possible; each term of `integral_terms` must be an
    integer too; and for each mapping in `contrasts` the example must be safe (inside the
    region) once those parameters take those values: e.g. {drift: 0} asks for a point that
    only the drift makes unsafe. If no such point exists (or z3 cannot say), the example is
    check (b)'s assignment. The variables are then made as small as possible (in sum).
    """

    pinned: Mapping[str, Number] = field(default_factory=dict)
    integers: tuple[str, ...] = ()
    integral_terms: tuple[z3.ArithRef, ...] = ()
    contrasts: tuple[Mapping[str, Number], ...] = ()


@dataclass(frozen=True)
class TimingProblem:
    """When a hazard is possible, as a formula over parameters and the problem's variables.

    `parameters` are z3 Reals in display order, `domain` constrains them. `unsafe` holds
    for parameters and `variables` (times, readings, durations) exactly when the hazard
    happens; it may be nonlinear. `linear_unsafe`, over `linear_variables`, the parameters
    and the `derived` symbols, says the same linearly (None: `unsafe` is linear already
    and is eliminated itself). The checks compare the result with `unsafe`, so a wrong
    linear restatement is caught rather than trusted.
    """

    name: str
    parameters: tuple[z3.ArithRef, ...]
    domain: z3.BoolRef
    variables: tuple[z3.ArithRef, ...]
    unsafe: z3.BoolRef
    linear_variables: tuple[z3.ArithRef, ...] = ()
    linear_unsafe: z3.BoolRef | None = None
    derived: tuple[Derived, ...] = ()
    example: ExampleHint = field(default_factory=ExampleHint)

    def parameter(self, name: str) -> z3.ArithRef:
        for p in self.parameters:
            if str(p) == name:
                return p
        raise KeyError(name)

    def at(self, formula: z3.BoolRef, values: Mapping[str, Number]) -> z3.BoolRef:
        """`formula` with the named parameters replaced by exact values."""
        pairs = [(self.parameter(k), exact_real(v)) for k, v in values.items()]
        return cast(z3.BoolRef, z3.substitute(formula, *pairs)) if pairs else formula

    def expand(self, formula: z3.BoolRef) -> z3.BoolRef:
        """`formula` with each derived symbol replaced by its term over the parameters."""
        pairs = [(d.symbol, d.term) for d in self.derived]
        return cast(z3.BoolRef, z3.substitute(formula, *pairs)) if pairs else formula


def exact_real(x: Number) -> z3.ArithRef:
    if isinstance(x, bool) or not isinstance(x, int | Fraction):
        raise TypeError(f"an exact int or Fraction is needed, got {x!r}")
    q = Fraction(x)
    return z3.RealVal(f"{q.numerator}/{q.denominator}")

"""How far each knob may move: a synthesized region, seen from one point.

A synthesized region is a formula over a problem's parameters (lease, ttl, drift,
pause). A configuration does not set those directly: its knobs do, through formulas
(lease = retryPeriod + renewDeadline). Holding every knob but one at its value, the
region becomes a condition on that one knob, and z3's optimizer gives the interval of
values that keeps the point inside: "leaseDuration at least 22.12 s", "a pause of at
most 2.88 s". Nothing here knows about protocols or systems: the caller brings the
formulas.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, cast

import z3

from leadercheck.checker.solver.problem import TimingProblem

Formula = Callable[[Mapping[str, Any]], Any]


@dataclass(frozen=True)
class KnobRange:
    """The values of one knob that keep the point in the region, the others held."""

    knob: str
    value: Fraction  # its value now
    low: Fraction | None  # the least value inside (None: no value at all is inside)
    high: Fraction | None  # the greatest (None: unbounded above, or nothing inside)
    inside: bool  # some value is inside

    @property
    def holds_now(self) -> bool:
        low_ok = self.low is None or self.value >= self.low
        high_ok = self.high is None or self.value <= self.high
        return self.inside and low_ok and high_ok


def knob_ranges(
    problem: TimingProblem,
    region: z3.BoolRef,
    parameters: Mapping[str, Formula],
    values: Mapping[str, float],
    knobs: Sequence[str],
    limits: Sequence[Formula] = (),
) -> list[KnobRange]:
    """For each of `knobs`: its interval inside `region` (over the problem's domain, the
    knob non-negative, and every one of `limits` true: a system's own rules, each a formula
    over the values that is a condition), every other value held at `values`.
    `parameters` gives each of the problem's parameters as a formula over the values by
    name."""
    ranges = []
    for knob in knobs:
        x = z3.Real(knob)
        terms: dict[str, Any] = {k: z3.RealVal(str(_exact(v))) for k, v in values.items()}
        terms[knob] = x
        pairs = [(problem.parameter(name), _term(f(terms))) for name, f in parameters.items()]
        inside = [
            cast(z3.BoolRef, z3.substitute(region, *pairs)),
            cast(z3.BoolRef, z3.substitute(problem.domain, *pairs)),
            x >= 0,
        ]
        for limit in limits:
            condition = limit(terms)
            if isinstance(condition, z3.BoolRef):
                inside.append(condition)
        low = _optimum(inside, x, minimize=True)
        high = _optimum(inside, x, minimize=False)
        found = low is not None and low is not _UNBOUNDED
        ranges.append(
            KnobRange(
                knob,
                _exact(values[knob]),
                low if isinstance(low, Fraction) else None,
                high if isinstance(high, Fraction) else None,
                found,
            )
        )
    return ranges


_UNBOUNDED = object()


def _optimum(facts: list[z3.BoolRef], x: z3.ArithRef, minimize: bool) -> object:
    """The least (or greatest) value of `x` under `facts`: a Fraction, _UNBOUNDED, or
    None when nothing satisfies them (or z3 cannot say: then no range is claimed)."""
    opt = z3.Optimize()
    opt.add(*facts)
    handle = opt.minimize(x) if minimize else opt.maximize(x)
    if opt.check() != z3.sat:
        return None
    bound = opt.lower(handle) if minimize else opt.upper(handle)
    if z3.is_rational_value(bound) or z3.is_int_value(bound):
        return _fraction(bound)
    text = str(bound)
    if "oo" in text:
        return _UNBOUNDED
    model = opt.model()  # a bound not attained (a strict inequality): the witness's value
    return _fraction(model.eval(x, model_completion=True))


def _fraction(value: z3.ExprRef) -> Fraction:
    if z3.is_int_value(value):
        return Fraction(cast(z3.IntNumRef, value).as_long())
    return Fraction(str(cast(z3.RatNumRef, value).as_fraction()))


def _exact(value: float) -> Fraction:
    return Fraction(str(round(value, 9)))


def _term(value: Any) -> z3.ArithRef:
    return value if isinstance(value, z3.ArithRef) else z3.RealVal(str(_exact(value)))

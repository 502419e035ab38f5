"""A synthesized region as text a reader checks at a glance: `lease * (1 + drift) + pause <= ttl`.

Every linear atom is normalised (coprime integer coefficients, the terms with negative
coefficients moved to the left, parameters in their declared order, a derived product
shown as its term) and negations are pushed into the atoms.
"""

from __future__ import annotations

from fractions import Fraction
from functools import reduce
from math import gcd, lcm

import z3

from leadercheck.checker.solver.problem import TimingProblem


class _NotLinear(Exception):
    pass


Linear = tuple[dict[str, Fraction], Fraction]  # coefficient by symbol name, constant

_OPS = {  # atom kind -> (sign of lhs - rhs in `e rel 0`, rel)
    z3.Z3_OP_LE: (-1, ">="),
    z3.Z3_OP_GE: (1, ">="),
    z3.Z3_OP_LT: (-1, ">"),
    z3.Z3_OP_GT: (1, ">"),
    z3.Z3_OP_EQ: (1, "=="),
    z3.Z3_OP_DISTINCT: (1, "!="),
}
_NEGATED = {">=": ">", ">": ">=", "==": "!=", "!=": "=="}  # not (e rel 0), for -e (order) or e
_SHOWN = {">=": "<=", ">": "<", "==": "==", "!=": "!="}  # e rel 0 shown as left op right


def formula_text(problem: TimingProblem, formula: z3.BoolRef) -> str:
    """The formula as readable text: normalised linear atoms joined by and/or."""
    return _Printer(problem).formula(formula, positive=True, top=True)


class _Printer:
    """Text for a quantifier-free formula over the parameters and derived symbols.

    A linear atom becomes `left op right` with coprime positive integer coefficients on
    both sides, the terms with negative coefficients in `e op 0` on the left, in display
    order: parameters as declared, a derived symbol where its first parameter stands,
    shown as its term (`lease * (1 + drift)`). Negations are pushed into the atoms.
    """

    def __init__(self, problem: TimingProblem) -> None:
        self.derived = {str(d.symbol): d.term for d in problem.derived}
        self.order = {str(p): 2 * k + 1 for k, p in enumerate(problem.parameters)}
        for d in problem.derived:
            names = _symbols(d.term)
            self.order[str(d.symbol)] = min(
                (self.order[n] - 1 for n in names if n in self.order), default=-1
            )

    def formula(self, e: z3.ExprRef, positive: bool, top: bool = False) -> str:
        if z3.is_true(e) or z3.is_false(e):
            return "true" if z3.is_true(e) == positive else "false"
        if z3.is_not(e):
            return self.formula(e.arg(0), not positive, top)
        if z3.is_and(e) or z3.is_or(e):
            conj = z3.is_and(e) == positive
            text = (" and " if conj else " or ").join(
                self.formula(ch, positive) for ch in e.children()
            )
            return text if top else f"({text})"
        try:
            return self.atom(e, positive)
        except _NotLinear:
            return str(e) if positive else f"not ({e})"

    def atom(self, e: z3.ExprRef, positive: bool) -> str:
        kind = e.decl().kind() if z3.is_app(e) else None
        if kind not in _OPS or e.num_args() != 2 or not z3.is_arith(e.arg(0)):
            raise _NotLinear
        sign, rel = _OPS[kind]
        lhs, rhs = _linear(e.arg(0)), _linear(e.arg(1))
        zero = Fraction(0)
        coeffs = {
            k: sign * (lhs[0].get(k, zero) - rhs[0].get(k, zero)) for k in lhs[0].keys() | rhs[0]
        }
        const = sign * (lhs[1] - rhs[1])
        if not positive:
            if rel in (">=", ">"):
                coeffs, const = {k: -v for k, v in coeffs.items()}, -const
            rel = _NEGATED[rel]
        coeffs, const = _integral(coeffs, const)
        names = sorted((k for k in coeffs if coeffs[k]), key=self._place)
        left = [self._term(-coeffs[k], k) for k in names if coeffs[k] < 0]
        right = [self._term(coeffs[k], k) for k in names if coeffs[k] > 0]
        if const > 0:
            right.append(str(const))
        elif const < 0:
            left.append(str(-const))
        return f"{' + '.join(left) or '0'} {_SHOWN[rel]} {' + '.join(right) or '0'}"

    def _place(self, name: str) -> tuple[int, str]:
        return self.order.get(name, len(self.order) * 2), name

    def _term(self, coeff: Fraction, name: str) -> str:
        shown = _arith_text(self.derived[name]) if name in self.derived else name
        if coeff == 1:
            return shown
        if name in self.derived and " " in shown:
            shown = f"({shown})"
        return f"{coeff} * {shown}"


def _symbols(e: z3.ExprRef) -> set[str]:
    if _is_symbol(e):
        return {str(e)}
    return set().union(*(_symbols(ch) for ch in e.children())) if z3.is_app(e) else set()


def _is_symbol(e: z3.ExprRef) -> bool:
    return bool(z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED)


def _integral(coeffs: dict[str, Fraction], const: Fraction) -> tuple[dict[str, Fraction], Fraction]:
    """Scaled by a positive factor to coprime integers (the relation to 0 is unchanged)."""
    values = [v for v in (*coeffs.values(), const) if v]
    if not values:
        return coeffs, const
    scale = Fraction(reduce(lcm, (v.denominator for v in values), 1))
    scale /= reduce(gcd, (int(v * scale) for v in values), 0)
    return {k: v * scale for k, v in coeffs.items()}, const * scale


def _linear(e: z3.ExprRef) -> Linear:
    """`e` as coefficients of symbols plus a constant; _NotLinear if it is not linear."""
    if z3.is_rational_value(e) or z3.is_int_value(e):
        return {}, _fraction(e)
    if _is_symbol(e):
        return {str(e): Fraction(1)}, Fraction(0)
    if z3.is_add(e) or z3.is_sub(e):
        first, *rest = (_linear(ch) for ch in e.children())
        sign = -1 if z3.is_sub(e) else 1
        return reduce(lambda acc, x: _plus(acc, x, sign), rest, first)
    if z3.is_app_of(e, z3.Z3_OP_UMINUS):
        return _scaled(_linear(e.arg(0)), Fraction(-1))
    if z3.is_mul(e):
        return reduce(_times, (_linear(ch) for ch in e.children()))
    if z3.is_to_real(e):
        return _linear(e.arg(0))
    raise _NotLinear


def _plus(a: Linear, b: Linear, sign: int) -> Linear:
    coeffs = dict(a[0])
    for k, v in b[0].items():
        coeffs[k] = coeffs.get(k, Fraction(0)) + sign * v
    return coeffs, a[1] + sign * b[1]


def _scaled(a: Linear, factor: Fraction) -> Linear:
    return {k: v * factor for k, v in a[0].items()}, a[1] * factor


def _times(a: Linear, b: Linear) -> Linear:
    if a[0] and b[0]:
        raise _NotLinear
    return _scaled(b, a[1]) if not a[0] else _scaled(a, b[1])


def _fraction(e: z3.ExprRef) -> Fraction:
    if z3.is_int_value(e):
        return Fraction(e.as_long())
    return Fraction(e.numerator_as_long(), e.denominator_as_long())


def _arith_text(e: z3.ExprRef) -> str:
    """An arithmetic term as written: `lease * (1 + drift)`."""
    if z3.is_rational_value(e) or z3.is_int_value(e):
        return str(_fraction(e))
    if _is_symbol(e):
        return str(e)
    if z3.is_add(e):
        return " + ".join(_arith_text(ch) for ch in e.children())
    if z3.is_sub(e) or z3.is_mul(e):
        op = " - " if z3.is_sub(e) else " * "
        return op.join(
            f"({_arith_text(ch)})" if z3.is_add(ch) or z3.is_sub(ch) else _arith_text(ch)
            for ch in e.children()
        )
    return str(e)

"""Solver answers are values (SAT, UNSAT, UNKNOWN), never exceptions, and carry their time."""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass

import z3


class Answer(enum.Enum):
    SAT = "sat"
    UNSAT = "unsat"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Solved:
    """One solver call: the answer, its z3 model when SAT, why when UNKNOWN, and its time."""

    answer: Answer
    model: z3.ModelRef | None
    reason: str
    seconds: float


def solve(solver: z3.Solver, timeout: float | None) -> Solved:
    """Check `solver`'s assertions within `timeout` seconds (None: no limit).

    A timeout, a resource limit or an incomplete theory all come back as UNKNOWN with
    z3's reason; nothing here raises for an undecided query.
    """
    if timeout is not None:
        solver.set("timeout", max(1, int(timeout * 1000)))
    start = time.perf_counter()
    try:
        result = solver.check()
    except z3.Z3Exception as exc:  # e.g. cancelled from outside
        return Solved(Answer.UNKNOWN, None, str(exc), time.perf_counter() - start)
    seconds = time.perf_counter() - start
    if result == z3.sat:
        return Solved(Answer.SAT, solver.model(), "", seconds)
    if result == z3.unsat:
        return Solved(Answer.UNSAT, None, "", seconds)
    return Solved(Answer.UNKNOWN, None, solver.reason_unknown(), seconds)

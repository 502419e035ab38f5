"""Cross-checking a symbolic encoding against its explicit model, claim by claim.

Bounded model checking to `bound` steps and breadth-first search to depth `bound`
(`checker.search.check(..., max_depth=bound)`) look at the same states: every state
reachable in at most `bound` steps. The search visits each state when it discovers it,
level by level, and stops at the level `bound` (or earlier, once the claim is decided or
nothing new is reachable); BMC asks z3 depth by depth. So for each claim both answer the
same question, "is there a state within `bound` steps that breaks the invariant (ALWAYS)
or meets the claim (SOMETIMES)?", and when there is, both give a shortest trace to one:
the lengths must be equal. Their verdicts are not compared as such: a search cut by the
depth bound says INCOMPLETE where BMC says "none within the bound", and a search that
exhausted the state space before the bound says HOLDS (or VIOLATED, for a SOMETIMES claim
never met) for the same finding. An UNKNOWN from z3 decides nothing and never agrees.

Generic: the model and its encoding are given; nothing here knows a protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from leadercheck.checker.engine.strategies.bfs import check
from leadercheck.checker.engine.successors import decides
from leadercheck.checker.model import Model
from leadercheck.checker.properties import Kind, Property
from leadercheck.checker.result import Verdict
from leadercheck.checker.solver.answer import Answer
from leadercheck.checker.solver.bmc import BoundedResult, SymbolicModel, bounded_check


@dataclass(frozen=True)
class Agreement:
    """One claim judged both ways within `bound` steps.

    `explicit` is the search's verdict with the depth bound (INCOMPLETE when the bound cut
    it short and nothing was found), `explicit_length` the length of its counterexample
    or witness (None when it found none), `explicit_seconds` its time.
    """

    prop: Property
    bound: int
    bmc: BoundedResult
    explicit: Verdict
    explicit_length: int | None
    explicit_seconds: float
    agree: bool
    text: str

    @property
    def bmc_length(self) -> int | None:
        return len(self.bmc.trace) if self.bmc.trace is not None else None


def cross_check(
    model: Model[Any],
    sym: SymbolicModel[Any],
    properties: Sequence[Property],
    bound: int,
    timeout: float | None = None,
) -> list[Agreement]:
    """BMC (`timeout` seconds for all of `properties`) and explicit search, to `bound` steps."""
    bounded = bounded_check(sym, properties, bound, timeout)
    out = []
    for prop, bmc in zip(properties, bounded, strict=True):
        result = check(model, [prop], max_depth=bound)
        judged = result.results[0]
        length = len(judged.trace) if judged.trace is not None else None
        out.append(_compare(prop, bound, bmc, judged.verdict, length, result.stats.seconds))
    return out


def _compare(
    prop: Property,
    bound: int,
    bmc: BoundedResult,
    explicit: Verdict,
    length: int | None,
    seconds: float,
) -> Agreement:
    found = "counterexample" if prop.kind is Kind.ALWAYS else "witness"
    if length is None:
        said = f"explicit {explicit.value} (no {found} within {bound} steps)"
    else:
        said = f"explicit {explicit.value} ({found} of {length} steps)"
    why = ""
    if bmc.answer is Answer.UNKNOWN:
        agree = False
        got = f"z3 UNKNOWN ({bmc.reason or 'no reason given'})"
        why = "z3 decided nothing"
    elif bmc.answer is Answer.UNSAT:
        got = f"z3 UNSAT (no {found} within {bound} steps)"
        agree = length is None
        if not agree:
            why = f"the search found a {found} that z3 did not"
    else:
        assert bmc.trace is not None
        got = f"z3 SAT ({found} of {len(bmc.trace)} steps)"
        last = bmc.trace.last.state
        if not decides(prop, last):
            agree = False
            why = f"the last state of z3's {found} does not decide the claim explicitly"
        elif length is None:
            agree = False
            why = f"z3 found a {found} the search did not"
        else:
            agree = length == len(bmc.trace)
            if not agree:
                why = "shortest lengths differ"
    if agree:
        verdict = "agree"
    elif bmc.answer is Answer.UNKNOWN:
        verdict = f"UNDECIDED: {why}"
    else:
        verdict = f"DISAGREE: {why}"
    text = (
        f"{prop.name} ({prop.kind.value}) within {bound} steps: {got} after {bmc.seconds:.2f} s, "
        f"{said} in {seconds:.2f} s: {verdict}"
    )
    return Agreement(prop, bound, bmc, explicit, length, seconds, agree, text)

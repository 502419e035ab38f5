"""The safe region around a configuration: which knob to move, and how far (z3).

The stale-leader question is the lease timing problem the solver synthesizes for
`lease-timing` (`lease * (1 + drift) + pause <= ttl`). A system's knobs make its
parameters (`questions.Timing`), so, holding the rest, each knob and the assumed pause
has an interval that keeps the configuration in the region. Importing this module loads
z3; the command imports it only when it reports.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from leadercheck.checker.config.knobs import Configuration
from leadercheck.checker.config.questions import names_in
from leadercheck.checker.config.systems import SYSTEMS
from leadercheck.checker.config.systems.base import Timing
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.solver.encodings.lease_timing import synthesized
from leadercheck.checker.solver.knob_bounds import KnobRange, knob_ranges

FIXED = ("network_delay", "dcs_latency")  # read by the formulas, but not knobs one tunes


@dataclass(frozen=True)
class Region:
    formula: str  # the synthesized region, in the problem's parameters
    here: str  # the formula at this configuration, with its numbers
    ranges: tuple[KnobRange, ...]  # per knob (then the pause), the values inside
    moves: tuple[str, ...]  # what each range says to do, in the knob's own spelling and unit
    inside: bool  # the configuration is inside the region

    def lines(self) -> list[str]:
        lines = [f"safe region (z3): {self.formula}; here {self.here}"]
        return lines + [m for m in self.moves if m]


def stale_leader_region(
    config: Configuration, timing: Timing, values: Mapping[str, float]
) -> Region:
    """The region and each knob's interval for a system's `timing` at `values`."""
    result = synthesized()
    if result.region is None or result.text is None:
        raise LeadercheckError(f"z3 did not confirm the lease timing region ({result.reason})")
    parameters = {
        "lease": timing.believes,
        "ttl": timing.store_ttl,
        "drift": lambda v: v["clock_drift"],
        "pause": lambda v: v["pause"],
    }
    knobs = [*names_in(timing.believes, values), *names_in(timing.store_ttl, values)]
    knobs = [k for k in dict.fromkeys(knobs) if k not in FIXED] + ["pause"]
    system = SYSTEMS[config.system]
    ranges = knob_ranges(result.problem, result.region, parameters, values, knobs, system.limits)
    labels = {n: system.moved.get(n, k.label) for n, k in config.knobs.items()}
    lease = timing.believes(values) * (1 + values["clock_drift"])
    total = lease + values["pause"]
    ttl = timing.store_ttl(values)
    sign = "<=" if total <= ttl else ">"
    here = f"{_n(lease)} + {_n(values['pause'])} = {_n(total)} {sign} {_n(ttl)}"
    moves = tuple(
        _move(r, labels.get(r.knob, r.knob), system.units.get(r.knob))
        + (
            system.moves_too(r.knob, float(r.low), values)
            if system.moves_too and r.low is not None and r.value < r.low and _move(r, "", None)
            else ""
        )
        for r in ranges
    )
    return Region(result.text, here, tuple(ranges), moves, sign == "<=")


def _n(value: float | Fraction) -> str:
    return f"{round(float(value), 3):g}"


RATES = ("drift_factor", "clock_drift")  # knobs that are rates, not seconds


def _move(r: KnobRange, label: str, step: float | None) -> str:
    """What the interval says about moving the knob (nothing if it is inside already), its
    bound rounded the safe way to the knob's own step (up for "at least", down for "at
    most"), within the system's own rules."""
    name = "the pause" if r.knob == "pause" else label
    unit = "" if r.knob in RATES else " s"
    if not r.inside:
        return f"  {name}: no value keeps it safe with the others as they are, within the rules"
    if r.holds_now:
        return ""
    if r.low is not None and r.value < r.low:
        low = _rounded(r.low, step, up=True)
        if r.high is not None and low > r.high:
            return f"  {name}: no whole value keeps it safe with the others as they are"
        return f"  raise {name} from {_n(r.value)}{unit} to at least {_n(low)}{unit}"
    if r.high is not None and r.value > r.high:
        high = _rounded(r.high, step, up=False)
        if r.low is not None and high < r.low:
            return f"  {name}: no whole value keeps it safe with the others as they are"
        what = "keep the pause" if r.knob == "pause" else f"lower {name} from {_n(r.value)}{unit}"
        return f"  {what} to at most {_n(high)}{unit}"
    return ""


def _rounded(value: Fraction, step: float | None, up: bool) -> Fraction:
    if step is None:
        return value
    unit = Fraction(str(step))
    ticks = value / unit
    whole = math.ceil(ticks) if up else math.floor(ticks)
    return whole * unit

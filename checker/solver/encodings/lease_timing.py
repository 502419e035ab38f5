"""The timing of a lease without fencing, as a synthesis problem: which parameters are safe.

Parameters (real-valued): `lease`, how long the leader counts its own copy of the lease
on its local clock; `ttl`, how long the store keeps the lease; `drift`, the most its
local clock runs slow, as a rate rho (after real time c its clock shows at least
c / (1 + rho), and never more than c); `pause`, the longest process pause between the
leader's check that it still leads and its write taking effect.

The hazard (two nodes act as leader at once, so the storage, which checks no tokens,
takes a stale write): node A sends its acquire at real time 0 and counts its lease from
then, which is the safe practice; the store grants it at `grant_at` >= 0, and the
store's lease is valid on [grant_at, grant_at + ttl). A checks its lease at real time
`check_at` (after the grant), when its clock shows `clock_at_check` < lease, so it
believes it leads; it is then paused for `paused_for` <= pause, and its write lands at
check_at + paused_for. B acquires once the store's lease has expired, at `takeover_at`
>= grant_at + ttl, and writes at once. The hazard is A's write landing at or after B's
acquisition: at the same instant B's write may come first.

As stated, the drift multiplies a variable (clock_at_check * (1 + drift) >= check_at),
which z3's quantifier elimination cannot handle. The linear restatement names the
lease in real time K = lease * (1 + drift): A believes it leads at check_at exactly
when check_at < K (some reading below `lease` is possible then, the clock running
between real time and 1 / (1 + drift) of it). The synthesis eliminates that one and
checks the result against the statement with the clock reading.

The region z3 finds, `lease * (1 + drift) + pause <= ttl`: the worst case is a grant at
0, a check just before K and the longest pause, which lands just before K + pause; B
takes over at ttl. At integer points with drift = d / lease it reads
lease + d + pause <= ttl, which is where models/lease_timing.py, the explicit model with
ticks, is safe (tests/solver/test_synthesis.py checks the two agree).

The domain allows any drift >= 0 (a clock at half speed is drift 1): nothing in the
hazard needs drift < 1, and the explicit model's integer lag may exceed the lease.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache

import z3

from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.solver.synthesis import (
    Derived,
    ExampleHint,
    Number,
    Synthesis,
    TimingProblem,
    evaluate,
    synthesize,
)

PROTOCOL = "lease-no-fencing"


def lease_timing_problem() -> TimingProblem:
    """The problem for the lease without fencing: parameters lease, ttl, drift, pause."""
    lease, ttl, drift, pause = z3.Reals("lease ttl drift pause")
    grant, check, clock, stall, takeover = z3.Reals(
        "grant_at check_at clock_at_check paused_for takeover_at"
    )
    real_lease = z3.Real("lease_in_real_time")
    domain = z3.And(lease > 0, ttl > 0, drift >= 0, pause >= 0)
    granted = z3.And(grant >= 0, check >= grant)  # A checks after the store granted
    late_write = z3.And(
        stall >= 0,
        stall <= pause,
        takeover >= grant + ttl,  # B acquires once the store's lease expired
        check + stall >= takeover,  # A's write lands at or after B's acquisition
    )
    believes = z3.And(  # A's clock shows less than `lease` at real time check_at
        clock <= check,
        clock * (1 + drift) >= check,
        clock < lease,
    )
    return TimingProblem(
        name=PROTOCOL,
        parameters=(lease, ttl, drift, pause),
        domain=domain,
        variables=(grant, check, clock, stall, takeover),
        unsafe=z3.And(granted, believes, late_write),
        linear_variables=(grant, check, stall, takeover),
        linear_unsafe=z3.And(granted, check < real_lease, late_write),
        derived=(Derived(real_lease, lease * (1 + drift)),),
        example=ExampleHint(
            pinned={"drift": Fraction(1, 2)},
            integers=("lease", "ttl", "pause"),
            integral_terms=(lease * drift,),  # an integer lag, as the explicit model has
            contrasts=({"drift": 0}, {"pause": 0}),  # safe without either: both are needed
        ),
    )


@cache
def synthesized() -> Synthesis:
    """The lease's region, synthesized once per process (no time limit)."""
    return synthesize(lease_timing_problem())


def safe_at(lease: Number, ttl: Number, drift: Number, pause: Number) -> bool:
    """Whether the synthesized region contains this point (exact ints or Fractions).

    Evaluated by z3 on the synthesized formula. Raises LeadercheckError when the region
    was not confirmed, and ValueError for a point outside the domain, where nothing was
    checked.
    """
    result = synthesized()
    region = result.region
    if region is None:
        why = f"{result.answer.name}: {result.reason}"
        raise LeadercheckError(f"{PROTOCOL}: no confirmed region ({why})")
    point = {"lease": lease, "ttl": ttl, "drift": drift, "pause": pause}
    problem = result.problem
    if not evaluate(problem, problem.domain, point):
        raise ValueError(f"{point} is outside the domain {problem.domain}")
    return evaluate(problem, region, point)

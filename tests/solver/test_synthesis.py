"""Timing synthesis for the lease without fencing: the region z3 finds, the checks behind it,
its agreement with explicit search on models/lease_timing.py, and that an undecided or
refuted synthesis never yields a region."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from functools import cache
from itertools import product

import pytest
import z3
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from leadercheck.checker import CheckResult, Verdict, check
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.solver.answer import Answer
from leadercheck.checker.solver.encodings.lease_timing import (
    lease_timing_problem,
    safe_at,
    synthesized,
)
from leadercheck.checker.solver.synthesis import evaluate, synthesize
from leadercheck.models.lease_timing import PROTOCOLS, LeaseTimingModel, build
from leadercheck.specs.claims import no_stale_write, single_leader, write_accepted
from tests.helpers import trace_shape, verdicts

# -- the synthesized region --------------------------------------------------------------


def test_the_region_is_synthesized_confirmed_and_printed() -> None:
    result = synthesized()
    assert result.answer is Answer.SAT, result.reason
    assert result.text == "lease * (1 + drift) + pause <= ttl"
    assert result.sufficient is not None and result.sufficient.answer is Answer.UNSAT
    assert result.violable is not None and result.violable.answer is Answer.SAT
    assert result.exact is not None and result.exact.answer is Answer.UNSAT
    assert result.lines()[0] == "safe exactly when: lease * (1 + drift) + pause <= ttl"


def test_the_region_is_the_closed_form_over_the_whole_domain() -> None:
    problem = lease_timing_problem()
    region = synthesized().region
    assert region is not None
    lease, ttl, drift, pause = problem.parameters
    closed = lease * (1 + drift) + pause <= ttl
    s = z3.Solver()
    s.add(problem.domain, z3.Xor(region, closed))
    assert s.check() == z3.unsat


DRIFTS = (Fraction(0), Fraction(1, 4), Fraction(1, 3), Fraction(1, 2), Fraction(1), Fraction(3, 2))
PAUSES = (Fraction(0), Fraction(1, 2), Fraction(1), Fraction(2))


def test_safe_at_evaluates_like_the_closed_form_on_a_grid() -> None:  # (i)
    for lease, ttl, drift, pause in product(range(1, 5), range(1, 9), DRIFTS, PAUSES):
        expected = lease * (1 + drift) + pause <= ttl
        assert safe_at(lease, ttl, drift, pause) == expected, (lease, ttl, drift, pause)


def test_safe_at_refuses_points_outside_the_domain_and_floats() -> None:
    with pytest.raises(ValueError, match="outside the domain"):
        safe_at(0, 5, 0, 0)
    with pytest.raises(ValueError, match="outside the domain"):
        safe_at(1, 5, Fraction(-1, 2), 0)
    with pytest.raises(TypeError):
        safe_at(1, 5, 0.5, 0)  # type: ignore[arg-type]


# -- the violating assignment ---------------------------------------------------------------


VIOLATION = {"lease": 2, "ttl": 3, "drift": Fraction(1, 2), "pause": 1}
HAZARD = {
    "grant_at": 0,
    "check_at": 2,
    "clock_at_check": Fraction(4, 3),
    "paused_for": 1,
    "takeover_at": 3,
}


def test_the_violating_assignment_is_small_readable_and_deterministic() -> None:
    result = synthesized()
    assert result.violation is not None
    assert result.violation.parameters == VIOLATION
    assert result.violation.variables == HAZARD
    assert result.lines()[1] == (
        "violating assignment: lease=2, ttl=3, drift=1/2, pause=1 (hazard: grant_at=0, "
        "check_at=2, clock_at_check=4/3, paused_for=1, takeover_at=3)"
    )
    again = synthesize(lease_timing_problem())  # a fresh run: the same text and assignment
    assert again.text == result.text and again.violation == result.violation


def test_the_violating_assignment_is_unsafe_by_z3_and_by_explicit_search() -> None:  # (ii)
    problem = lease_timing_problem()
    lease, ttl, drift, pause = (VIOLATION[k] for k in ("lease", "ttl", "drift", "pause"))
    assert not safe_at(lease, ttl, drift, pause)
    # ... but safe without the drift and safe without the pause: both are needed
    assert safe_at(lease, ttl, 0, pause) and safe_at(lease, ttl, drift, 0)
    # z3: the hazard formula (with the clock reading) is true at these exact values
    variables = [(v, z3.RealVal(str(HAZARD[str(v)]))) for v in problem.variables]
    at_point = z3.substitute(problem.at(problem.unsafe, VIOLATION), *variables)
    assert z3.is_true(z3.simplify(at_point))
    # explicit search: drift * lease = 1 tick of lag, an integer point of the tick model
    lag = drift * lease
    assert isinstance(lag, Fraction) and lag.denominator == 1
    result = _search(int(lease), int(ttl), int(lag), int(pause))
    assert result.result("no-stale-write").verdict is Verdict.VIOLATED


# -- explicit search agrees with the region at integer points ----------------------------------


@cache
def _search(lease: int, ttl: int, drift: int, pause: int) -> CheckResult:
    return check(build(lease, ttl, drift, pause), [no_stale_write, write_accepted, single_leader])


def _explicitly_safe(lease: int, ttl: int, drift: int, pause: int) -> bool:
    result = _search(lease, ttl, drift, pause)
    assert result.result("write-accepted").verdict is Verdict.HOLDS  # not vacuous
    return result.result("no-stale-write").verdict is Verdict.HOLDS


@st.composite
def _points(draw: st.DrawFn) -> tuple[int, int, int, int]:
    """lease 1..4, drift 0..2, pause 0..2, and ttl 1..8, often on or next to the boundary."""
    lease = draw(st.integers(1, 4))
    drift = draw(st.integers(0, 2))
    pause = draw(st.integers(0, 2))
    s = lease + drift + pause
    near = sorted({max(1, s - 1), s, min(8, s + 1)})
    ttl = draw(st.one_of(st.sampled_from(near), st.integers(1, 8)))
    return lease, ttl, drift, pause


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_points())
def test_explicit_search_agrees_with_the_synthesized_region(  # (iii)
    point: tuple[int, int, int, int],
) -> None:
    lease, ttl, drift, pause = point
    s = lease + drift + pause
    side = "on the boundary" if s == ttl else "safe side" if s < ttl else "unsafe side"
    event(side)
    note(f"lease={lease} ttl={ttl} drift={drift} pause={pause} ({side})")
    symbolic = safe_at(lease, ttl, Fraction(drift, lease), pause)
    assert _explicitly_safe(lease, ttl, drift, pause) == symbolic


# -- undecided and refuted syntheses give no region ---------------------------------------------


@pytest.mark.parametrize("timeout", [0.0, 0.001])
def test_a_tiny_timeout_is_unknown_never_a_region(timeout: float) -> None:  # (iv)
    result = synthesize(lease_timing_problem(), timeout=timeout)
    assert result.answer is Answer.UNKNOWN
    assert result.region is None and result.text is None
    assert result.reason
    assert result.lines()[0].startswith("UNKNOWN: ")
    assert not any(line.startswith("safe exactly") for line in result.lines())


def test_a_wrong_linear_restatement_is_refuted_not_trusted() -> None:
    """Forgetting the drift in the linear statement (check_at < lease) gives a candidate
    that check (a) refutes against the statement with the clock reading."""
    problem = lease_timing_problem()
    real_lease = problem.derived[0].symbol
    forgetful = z3.substitute(problem.linear_unsafe, (real_lease, problem.parameter("lease")))
    result = synthesize(replace(problem, linear_unsafe=forgetful, derived=()))
    assert result.candidate_text == "lease + pause <= ttl"
    assert result.sufficient is not None and result.sufficient.answer is Answer.SAT
    assert result.answer is Answer.UNSAT and result.region is None and result.text is None


def test_evaluate_needs_every_parameter() -> None:
    problem = lease_timing_problem()
    with pytest.raises(ValueError, match="no value for pause"):
        evaluate(problem, problem.domain, {"lease": 1, "ttl": 1, "drift": 0})


def test_safe_at_needs_a_confirmed_region(monkeypatch: pytest.MonkeyPatch) -> None:
    import leadercheck.checker.solver.encodings.lease_timing as encoding

    undecided = synthesize(lease_timing_problem(), timeout=0.0)
    monkeypatch.setattr(encoding, "synthesized", lambda: undecided)
    with pytest.raises(LeadercheckError, match="no confirmed region"):
        encoding.safe_at(1, 2, 0, 0)


# -- the explicit model ---------------------------------------------------------------------


def test_protocol_entry_and_defaults() -> None:
    (entry,) = PROTOCOLS
    assert entry.name == "lease-timing"
    values = entry.resolve({})
    assert values == {"lease": 3, "ttl": 5, "drift": 1, "pause": 1}
    assert isinstance(entry.build(values), LeaseTimingModel)


def test_the_defaults_sit_on_the_boundary_and_are_safe() -> None:  # (v)
    result = _search(3, 5, 1, 1)
    assert verdicts(result) == {
        "no-stale-write": Verdict.HOLDS,
        "write-accepted": Verdict.HOLDS,
        "single-leader": Verdict.HOLDS,
    }
    assert result.stats.distinct_states == 223


def test_one_tick_more_pause_gives_a_pinned_shortest_counterexample() -> None:  # (v)
    trace = _search(3, 5, 1, 2).result("no-stale-write").trace
    assert trace_shape(trace) == [
        ("drift", "n1", None),
        ("tick", "clock", None),
        ("tick", "clock", None),
        ("tick", "clock", None),
        ("check", "n1", None),
        ("pause", "n1", None),
        ("tick", "clock", None),
        ("tick", "clock", None),
        ("acquire", "n2", "store"),
        ("check", "n2", None),
        ("write", "n2", "storage"),
        ("resume", "n1", None),
        ("write", "n1", "storage"),
    ]
    assert trace is not None
    assert trace.actions[-1].note == "token 1 accepted"


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_explicit_model_is_unsafe_exactly_past_the_boundary_on_a_grid() -> None:
    for lease, ttl, drift, pause in product(range(1, 5), range(1, 9), range(3), range(3)):
        safe = _explicitly_safe(lease, ttl, drift, pause)
        assert safe == (lease + drift + pause <= ttl), (lease, ttl, drift, pause)


def test_only_n1_pauses_and_only_with_a_write_pending() -> None:
    model = build(3, 5, 1, 2)
    seen = set()
    frontier = list(model.initial_states())
    while frontier:
        state = frontier.pop()
        if state in seen:
            continue
        seen.add(state)
        for action, after in model.successors(state):
            if action.name == "pause":
                assert action.actor == "n1" and state.node(1).pending
            frontier.append(after)
    assert len(seen) == _search(3, 5, 1, 2).stats.distinct_states  # the search ran to the end

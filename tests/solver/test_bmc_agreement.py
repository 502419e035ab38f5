"""Bounded model checking agrees with breadth-first search on the benchmark encodings.

For every protocol with a symbolic encoding, at small parameter points: every claim the
encoding states (at least every ALWAYS or SOMETIMES claim specs/expected.toml lists for
the protocol) has, within each bound, a counterexample or witness for z3 exactly when it
has one for the explicit search, of the same (shortest) length; z3's traces are real
traces of the explicit model; the one-step relation has exactly the explicit successors;
a deliberately wrong encoding is caught, and a solver that runs out of time claims nothing.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import pytest
import z3

from leadercheck.checker import Kind, Model, Property, Verdict, check
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.solver.answer import Answer
from leadercheck.checker.solver.bmc import EncodingMismatch, SymbolicModel, bounded_check
from leadercheck.checker.solver.crosscheck import Agreement, cross_check
from leadercheck.checker.solver.encodings import SYMBOLIC, symbolic_for
from leadercheck.checker.solver.encodings.lease_bench import LeaseBenchSymbolic
from leadercheck.checker.solver.encodings.raft_election import (
    Effect,
    ElectionVars,
    RaftElectionSymbolic,
)
from leadercheck.models.catalogue import lookup
from leadercheck.models.raft_election import RaftElectionModel
from leadercheck.specs import load_expectations
from leadercheck.specs.claims import PROPERTIES

Params = dict[str, int | str]


def build(name: str, params: Params) -> Model[Any]:
    entry = lookup(name)
    return entry.build(entry.resolve({k: str(v) for k, v in params.items()}))


def stated(sym: SymbolicModel[Any]) -> list[Property]:
    """Every state claim of specs/claims.py that the encoding states, in that order."""
    v = sym.variables(0)
    return [
        p
        for p in PROPERTIES.values()
        if p.kind in (Kind.ALWAYS, Kind.SOMETIMES) and sym.claim(p.name, v) is not None
    ]


def assert_agree(agreements: Sequence[Agreement]) -> None:
    wrong = [a.text for a in agreements if not a.agree]
    assert not wrong, "\n".join(wrong)


@cache
def reachable(name: str, params: tuple[tuple[str, int | str], ...]) -> tuple[Any, ...]:
    """Every reachable state of the explicit model, in breadth-first order."""
    model = build(name, dict(params))
    init = list(model.initial_states())
    seen, queue, out = set(init), deque(init), list(init)
    while queue:
        for succ in model.next_states(queue.popleft()):
            if succ not in seen:
                seen.add(succ)
                queue.append(succ)
                out.append(succ)
    return tuple(out)


# -- the registry ------------------------------------------------------------------------


def test_registry_covers_the_benchmarks() -> None:
    assert set(SYMBOLIC) >= {"raft-election", "lease-bench"}
    raft = symbolic_for("raft-election", build("raft-election", {}))
    assert isinstance(raft, RaftElectionSymbolic)
    lease = symbolic_for("lease-bench", build("lease-bench", {}))
    assert isinstance(lease, LeaseBenchSymbolic)


def test_no_encoding_is_one_clear_error() -> None:
    with pytest.raises(LeadercheckError, match="raft-election.*lease-bench") as caught:
        symbolic_for("raft", build("raft", {}))
    assert "\n" not in str(caught.value)
    with pytest.raises(LeadercheckError):
        symbolic_for("raft-election", build("lease-bench", {}))


@pytest.mark.parametrize("name", sorted(SYMBOLIC))
def test_every_expected_claim_is_stated(name: str) -> None:
    """Each ALWAYS or SOMETIMES claim expected.toml lists for the protocol is encoded."""
    sym = symbolic_for(name, build(name, {}))
    listed = {
        p.name
        for p in load_expectations().properties(name)
        if p.kind in (Kind.ALWAYS, Kind.SOMETIMES)
    }
    assert listed
    assert listed <= {p.name for p in stated(sym)}
    assert sym.claim("no-such-claim", sym.variables(0)) is None


# -- BMC against breadth-first search, bound by bound ------------------------------------

RAFT = "raft-election"
LEASE = "lease-bench"

Case = tuple[str, Params, tuple[int, ...]]

AGREEMENT: list[Case] = [
    (RAFT, dict(N=3, NC=2, MaxTerm=2, variant="correct"), (0, 3, 4, 10)),
    (RAFT, dict(N=3, NC=2, MaxTerm=3, variant="correct"), (8,)),
    (RAFT, dict(N=4, NC=2, MaxTerm=2, variant="noquorum"), (7, 8)),
    (RAFT, dict(N=3, NC=2, MaxTerm=2, variant="forgetvote"), (7, 8)),
    (RAFT, dict(N=3, NC=3, MaxTerm=2, variant="forgetvote"), (8,)),
    (LEASE, dict(N=2, TTL=2, MaxTime=4, fencing="true"), (0, 1, 3, 12)),
    (LEASE, dict(N=2, TTL=2, MaxTime=4, fencing="false"), (7, 8)),
    (LEASE, dict(N=2, TTL=1, MaxTime=3, fencing="false"), (10,)),
    (LEASE, dict(N=3, TTL=1, MaxTime=2, fencing="true"), (8,)),
]

SLOW_AGREEMENT: list[Case] = [
    (RAFT, dict(N=3, NC=3, MaxTerm=2, variant="correct"), (10,)),
    (RAFT, dict(N=3, NC=3, MaxTerm=2, variant="noquorum"), (9,)),
    (RAFT, dict(N=3, NC=2, MaxTerm=3, variant="correct"), (12,)),
    (RAFT, dict(N=4, NC=2, MaxTerm=2, variant="correct"), (5, 6, 9)),  # 1.2 s
    (RAFT, dict(N=3, NC=3, MaxTerm=2, variant="correct"), (14,)),
    (RAFT, dict(N=5, NC=2, MaxTerm=2, variant="correct"), (10,)),
    (RAFT, dict(N=4, NC=3, MaxTerm=2, variant="noquorum"), (9,)),
    (LEASE, dict(N=2, TTL=2, MaxTime=8, fencing="true"), (14,)),
    (LEASE, dict(N=3, TTL=2, MaxTime=4, fencing="false"), (12,)),
    (LEASE, dict(N=2, TTL=3, MaxTime=3, fencing="false"), (10,)),
]


def _id(case: Case) -> str:
    name, params, bounds = case
    return f"{name}-{'-'.join(f'{k}={v}' for k, v in params.items())}-bounds={bounds}"


def _agree(name: str, params: Params, bounds: tuple[int, ...]) -> None:
    model = build(name, params)
    sym = symbolic_for(name, model)
    props = stated(sym)
    for bound in bounds:
        assert_agree(cross_check(model, sym, props, bound))


@pytest.mark.parametrize(("name", "params", "bounds"), AGREEMENT, ids=map(_id, AGREEMENT))
def test_bmc_agrees_with_search(name: str, params: Params, bounds: tuple[int, ...]) -> None:
    _agree(name, params, bounds)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "params", "bounds"), SLOW_AGREEMENT, ids=map(_id, SLOW_AGREEMENT))
def test_bmc_agrees_with_search_deeper(name: str, params: Params, bounds: tuple[int, ...]) -> None:
    _agree(name, params, bounds)


def test_agreement_reports_both_sides() -> None:
    """Below the shortest counterexample neither finds one; at it both do, equally long."""
    model = build(RAFT, dict(N=4, NC=2, MaxTerm=2, variant="noquorum"))
    sym = symbolic_for(RAFT, model)
    (below,) = cross_check(model, sym, [PROPERTIES["single-leader"]], 7)
    assert below.agree and below.bmc.answer is Answer.UNSAT
    assert below.explicit is Verdict.INCOMPLETE and below.explicit_length is None
    (at,) = cross_check(model, sym, [PROPERTIES["single-leader"]], 8)
    assert at.agree and at.bmc.answer is Answer.SAT and at.bmc.verdict is Verdict.VIOLATED
    assert at.explicit is Verdict.VIOLATED and at.explicit_length == at.bmc_length == 8
    assert "agree" in at.text and "single-leader" in at.text


# -- counterexamples: real traces of the explicit model --------------------------------

VIOLATIONS: list[tuple[str, Params, str, int]] = [
    (RAFT, dict(N=4, NC=2, MaxTerm=2, variant="noquorum"), "single-leader", 8),
    (RAFT, dict(N=3, NC=2, MaxTerm=2, variant="forgetvote"), "single-leader", 8),
    (RAFT, dict(N=3, NC=3, MaxTerm=2, variant="forgetvote"), "single-leader", 8),
    (LEASE, dict(N=2, TTL=2, MaxTime=4, fencing="false"), "no-stale-write", 8),  # TTL + 6
    (LEASE, dict(N=2, TTL=1, MaxTime=3, fencing="false"), "no-stale-write", 7),
]


@pytest.mark.parametrize(("name", "params", "claim", "steps"), VIOLATIONS)
def test_counterexample_is_a_real_trace(name: str, params: Params, claim: str, steps: int) -> None:
    model = build(name, params)
    prop = PROPERTIES[claim]
    (result,) = bounded_check(symbolic_for(name, model), [prop], steps + 2)
    assert result.answer is Answer.SAT and result.verdict is Verdict.VIOLATED
    trace = result.trace
    assert trace is not None and len(trace) == steps
    assert trace.steps[0].state in model.initial_states()
    for before, after in zip(trace.steps, trace.steps[1:], strict=False):
        assert (after.action, after.state) in list(model.successors(before.state))
    assert not prop.predicate(trace.last.state)
    assert all(prop.predicate(step.state) for step in trace.steps[:-1])
    explicit = check(model, [prop]).results[0]
    assert explicit.verdict is Verdict.VIOLATED
    assert explicit.trace is not None and len(explicit.trace) == steps


# -- the one-step relation: exactly the explicit successors -------------------------------


def successors_agree(
    name: str, params: Params, every: int, encode: Callable[[Any], Any] | None = None
) -> int:
    """Enumerate with z3 the successors of every `every`-th reachable state; compare them
    with the explicit model's. Returns how many states were compared. `encode` builds the
    encoding under test from the model (the registry's by default)."""
    model = build(name, params)
    # is_state, the inverse of decode, is the encodings' own (not in the ABC)
    sym: Any = symbolic_for(name, model) if encode is None else encode(model)
    v, w = sym.variables(0), sym.variables(1)
    solver = z3.Solver()
    solver.add(sym.transition(v, w))
    states = reachable(name, tuple(params.items()))[::every]
    for state in states:
        solver.push()
        solver.add(sym.is_state(v, state))
        found = set()
        while solver.check() == z3.sat:
            succ = sym.decode(solver.model(), w)
            assert succ not in found
            found.add(succ)
            solver.add(z3.Not(sym.is_state(w, succ)))
        solver.pop()
        assert found == set(model.next_states(state)), state
    return len(states)


ONE_STEP: list[Any] = [
    (RAFT, dict(N=3, NC=2, MaxTerm=2, variant="correct"), 7),
    (RAFT, dict(N=3, NC=2, MaxTerm=2, variant="forgetvote"), 11),
    (RAFT, dict(N=4, NC=2, MaxTerm=2, variant="noquorum"), 97),
    # 3 s: with the slow tests, which also check it more closely (SLOW_ONE_STEP)
    pytest.param(RAFT, dict(N=3, NC=2, MaxTerm=3, variant="correct"), 1009, marks=pytest.mark.slow),
    (LEASE, dict(N=2, TTL=2, MaxTime=4, fencing="false"), 13),
    (LEASE, dict(N=2, TTL=1, MaxTime=3, fencing="true"), 5),
]


@pytest.mark.parametrize(("name", "params", "every"), ONE_STEP)
def test_one_step_is_exact_on_sampled_states(name: str, params: Params, every: int) -> None:
    assert successors_agree(name, params, every) > 30


SLOW_ONE_STEP: list[tuple[str, Params, int]] = [
    (RAFT, dict(N=3, NC=2, MaxTerm=2, variant="correct"), 1),
    (RAFT, dict(N=3, NC=2, MaxTerm=2, variant="forgetvote"), 1),
    (RAFT, dict(N=3, NC=3, MaxTerm=2, variant="noquorum"), 1),
    (RAFT, dict(N=4, NC=2, MaxTerm=2, variant="noquorum"), 5),
    (RAFT, dict(N=3, NC=2, MaxTerm=3, variant="correct"), 61),
    (LEASE, dict(N=2, TTL=2, MaxTime=4, fencing="false"), 1),
    (LEASE, dict(N=2, TTL=1, MaxTime=3, fencing="true"), 1),
]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "params", "every"), SLOW_ONE_STEP)
def test_one_step_is_exact_on_many_more_states(name: str, params: Params, every: int) -> None:
    successors_agree(name, params, every)


def test_initial_state_decodes_to_the_explicit_one() -> None:
    for name in SYMBOLIC:
        model = build(name, {})
        sym: Any = symbolic_for(name, model)
        v = sym.variables(0)
        solver = z3.Solver()
        solver.add(sym.init(v))
        assert solver.check() == z3.sat
        assert [sym.decode(solver.model(), v)] == list(model.initial_states())
        solver.add(z3.Not(sym.is_state(v, model.initial_states()[0])))
        assert solver.check() == z3.unsat  # exactly one initial state


# -- a wrong encoding is caught ----------------------------------------------------------


class QuorumOfOne(RaftElectionSymbolic):
    """Bug: a candidate leads on its own vote (allows steps the explicit model does not)."""

    def quorum(self, votes: Sequence[Any]) -> Any:
        return z3.AtLeast(*votes, 1)


class LeaderTimesOut(RaftElectionSymbolic):
    """Bug: a leader may time out too."""

    def timeout(self, v: ElectionVars, i: int) -> Effect:
        _, changes = super().timeout(v, i)
        return z3.ULT(v.term[i - 1], self.max_term), changes


class Unanimity(RaftElectionSymbolic):
    """Bug: a candidate needs every vote (allows fewer steps than the explicit model)."""

    def quorum(self, votes: Sequence[Any]) -> Any:
        return z3.And(*votes)


def test_cross_check_catches_extra_steps() -> None:
    """z3's trace takes a step the explicit model cannot: rebuilding it fails."""
    model = build(RAFT, dict(N=3, NC=2, MaxTerm=3, variant="correct"))
    assert isinstance(model, RaftElectionModel)
    props = [PROPERTIES[p] for p in ("single-leader", "leader-elected", "failover")]
    with pytest.raises(EncodingMismatch, match="no step of the explicit model"):
        cross_check(model, QuorumOfOne(model), props, 8)


def test_cross_check_catches_missing_steps() -> None:
    """No explicit step is missing from a trace z3 finds, but witnesses get longer."""
    model = build(RAFT, dict(N=3, NC=2, MaxTerm=2, variant="correct"))
    assert isinstance(model, RaftElectionModel)
    agreements = cross_check(model, Unanimity(model), [PROPERTIES["leader-elected"]], 5)
    (agreement,) = agreements
    assert not agreement.agree
    assert agreement.explicit_length == 4 and agreement.bmc.answer is Answer.UNSAT
    assert "DISAGREE" in agreement.text


@pytest.mark.parametrize("wrong", [QuorumOfOne, LeaderTimesOut, Unanimity])
def test_one_step_check_catches_every_wrong_encoding(wrong: type[RaftElectionSymbolic]) -> None:
    """Including LeaderTimesOut, which shortens no path to a claim state, so that BMC of
    the claims cannot tell it from the right encoding: only the relation itself can."""
    params: Params = dict(N=3, NC=2, MaxTerm=3, variant="correct")
    with pytest.raises(AssertionError):
        successors_agree(RAFT, params, 1009, wrong)


# -- running out of time claims nothing ----------------------------------------------------


def test_timeout_is_unknown_never_holds() -> None:
    model = build(RAFT, dict(N=3, NC=3, MaxTerm=2, variant="correct"))
    sym = symbolic_for(RAFT, model)
    props = stated(sym)
    results = bounded_check(sym, props, 25, timeout=0.001)
    for result in results:
        assert result.answer is Answer.UNKNOWN, result
        assert result.verdict is Verdict.INCOMPLETE
        assert result.trace is None
    agreements = cross_check(model, sym, props, 25, timeout=0.001)
    assert not any(a.agree for a in agreements)
    assert all(a.bmc.verdict is not Verdict.HOLDS for a in agreements)

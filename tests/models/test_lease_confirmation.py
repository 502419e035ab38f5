"""lease-no-confirmation: verdicts, state count and counterexample at the defaults; the fix."""

from __future__ import annotations

from functools import cache

from leadercheck.checker import CheckResult, EndReason, Model, Verdict, always, check
from leadercheck.models.cluster import ClusterState, FaultBounds
from leadercheck.models.lease import PROTOCOLS as LEASE_PROTOCOLS
from leadercheck.models.lease_confirmation import PROTOCOLS, LeaseConfirmationModel
from leadercheck.specs.claims import PROPERTIES

ENTRY = PROTOCOLS[0]
CLAIMS = ("no-stale-write", "single-leader", "write-accepted", "failover")

# Not a shared claim: at most one node believes it leads at any instant, whatever its token.
ONE_LEADER_AT_A_TIME = always("one-leader-at-a-time", lambda s: len(s.leaders()) <= 1)


def build(confirm: bool = False, **params: int) -> LeaseConfirmationModel:
    values = ENTRY.resolve({k: str(v) for k, v in params.items()})
    nodes, ttl, tokens = values.pop("nodes"), values.pop("ttl"), values.pop("tokens")
    return LeaseConfirmationModel(nodes, ttl, tokens, confirm, FaultBounds(**values))


@cache
def at_defaults() -> CheckResult:
    model = ENTRY.build(ENTRY.resolve({}))
    return check(model, [*(PROPERTIES[n] for n in CLAIMS), ONE_LEADER_AT_A_TIME])


def test_verdicts_and_reachable_states_at_defaults() -> None:
    result = at_defaults()
    assert [r.verdict for r in result.results] == [
        Verdict.VIOLATED,  # no-stale-write
        Verdict.HOLDS,  # single-leader: the two leaders hold different tokens
        Verdict.HOLDS,  # write-accepted
        Verdict.HOLDS,  # failover
        Verdict.VIOLATED,  # one-leader-at-a-time
    ]
    assert result.end is EndReason.EXHAUSTED  # single-leader holds: every state was searched
    assert result.stats.distinct_states == 32_087
    assert len(result.result("write-accepted").trace or ()) == 3
    assert len(result.result("failover").trace or ()) == 4


def test_counterexample_is_a_lost_renewal_then_a_stale_write() -> None:
    r = at_defaults().result("no-stale-write")
    assert r.trace is not None
    assert [(a.name, a.actor, a.target) for a in r.trace.actions] == [
        ("acquire", "n1", "store"),
        ("tick", "clock", None),
        ("renew", "n1", "store"),
        ("tick", "clock", None),
        ("check", "n1", None),
        ("acquire", "n2", "store"),
        ("check", "n2", None),
        ("write", "n2", "storage"),
        ("write", "n1", "storage"),
    ]
    notes = [a.note for a in r.trace.actions]
    assert notes[2] == "token 1, own lease extended, request lost"
    assert notes[-2:] == ["token 2 accepted", "token 1 accepted"]


def test_at_the_violating_step_two_nodes_both_believe_they_lead() -> None:
    trace = at_defaults().result("no-stale-write").trace
    assert trace is not None
    assert trace.last.state.leaders() == ((1, 1), (2, 2))
    first = at_defaults().result("one-leader-at-a-time").trace
    assert first is not None and len(first) == 5  # two leaders as soon as n2 acquires
    assert first.actions[-1].note == "CAS ok: token 2, ttl 2"


def test_renewal_into_a_partition_does_it_too() -> None:
    result = check(build(losses=0), [PROPERTIES["no-stale-write"]])
    r = result.result("no-stale-write")
    assert r.verdict is Verdict.VIOLATED and r.trace is not None and len(r.trace) == 10
    assert "token 1, own lease extended, store unreachable" in [a.note for a in r.trace.actions]


def test_renewals_that_always_land_are_safe_even_unconfirmed() -> None:
    """The bug needs a renewal that does not reach the store: the model is not broken as such."""
    result = check(build(losses=0, partitions=0), [PROPERTIES["no-stale-write"]])
    assert result.result("no-stale-write").verdict is Verdict.HOLDS


def test_confirmed_renewals_are_safe_under_the_same_faults_and_a_crash() -> None:
    claims = [*(PROPERTIES[n] for n in CLAIMS), ONE_LEADER_AT_A_TIME]
    for crashes in (0, 1):
        result = check(build(confirm=True, crashes=crashes), claims)
        assert {r.verdict for r in result.results} == {Verdict.HOLDS}


def reachable(model: Model[ClusterState]) -> set[ClusterState]:
    seen, frontier = set(model.initial_states()), list(model.initial_states())
    while frontier:
        new = {t for s in frontier for _, t in model.successors(s)} - seen
        seen |= new
        frontier = list(new)
    return seen


def test_confirmed_renewals_are_exactly_lease_no_fencing() -> None:
    """With confirm=True the model is lease.py's protocol, state for state."""
    lease = {p.name: p for p in LEASE_PROTOCOLS}["lease-no-fencing"]
    reference = lease.build(lease.resolve({"crashes": "0", "pauses": "0"}))
    states = reachable(build(confirm=True))
    assert len(states) == 1_850 and states == reachable(reference)

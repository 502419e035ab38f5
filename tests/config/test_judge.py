"""Configurations judged: the shipped defaults with their margins, the configurations
that break a rule or outlast their lease, and agreement with the abstract models and z3."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leadercheck.checker.config.judge import (
    FALSE_FAILOVER,
    LOST_ACK,
    RULES,
    SAFE,
    STALE,
    UNDECIDED,
    UNSAFE,
    Judgement,
    false_failover,
    judge,
    stale_leader,
)
from leadercheck.checker.config.knobs import load_configuration, read_configuration
from leadercheck.checker.config.questions import TIMINGS, values_of
from leadercheck.checker.config.resolution import Duration, in_ticks, tick_lengths
from leadercheck.checker.protocols import built_in
from leadercheck.checker.render.trace_file import load_trace
from leadercheck.checker.replay import replay
from leadercheck.checker.result import Verdict
from leadercheck.checker.solver.encodings.lease_timing import safe_at

FILES = Path(__file__).parent / "files"
CATALOGUE = built_in()


def judged(name: str) -> Judgement:
    return judge(load_configuration(FILES / name))


def verdicts(j: Judgement) -> dict[str, str]:
    return {f.claim: f.verdict for f in j.findings}


def test_patroni_sample_defaults() -> None:
    """postgres0.yml: its rule holds with no room (10 + 2 * 10 = 30 = ttl), so a 10 s pause
    of Patroni lets the deposed primary act; asynchronous replication loses acked writes."""
    j = judged("postgres0.yml")
    assert verdicts(j) == {RULES: SAFE, STALE: UNSAFE, FALSE_FAILOVER: SAFE, LOST_ACK: UNSAFE}
    stale = j.finding(STALE)
    assert stale is not None and stale.run is not None
    assert "30.3 s + 10 s = 40.3 s > 30 s" in stale.lines[0]
    assert stale.run.outcome.verdict is Verdict.VIOLATED
    ff = j.finding(FALSE_FAILOVER)
    assert ff is not None and "a pause of 19.5 s or more" in ff.lines[1]
    assert any("worst failover: between 45 s and 55 s" in line for line in j.failover)


def test_controller_manager_defaults_hold_a_pause_of_under_three_seconds() -> None:
    """15/10/2 s: the leader believes 12 s (12.12 s slow), so a pause over 2.88 s is stale."""
    for name in ("kube-controller-manager.yaml", "controller-flags.txt"):
        j = judged(name)
        assert verdicts(j) == {RULES: SAFE, STALE: UNSAFE, FALSE_FAILOVER: SAFE}
        j2 = judge(_with_pause(load_configuration(FILES / name), 2.5))
        stale = j2.finding(STALE)
        assert stale is not None and stale.verdict == SAFE
        assert stale.lines[0].startswith("a pause up to 2.88 s keeps a single leader")


def test_zookeeper_defaults_are_safe_with_their_margin() -> None:
    """tickTime 2 s clamps Curator's 60 s session to 40 s; the leader gives up after 2/3
    of it (plus a network delay), so a pause up to 12.56 s keeps a single leader."""
    j = judged("zoo.cfg")
    assert verdicts(j) == {RULES: SAFE, STALE: SAFE, FALSE_FAILOVER: SAFE}
    assert j.verdict == SAFE
    stale = j.finding(STALE)
    assert stale is not None and stale.lines[0].startswith("a pause up to 12.562 s")
    rules = j.finding(RULES)
    assert rules is not None and "the server grants 40 s" in rules.lines[1]


@pytest.mark.parametrize("name", ["etcd.conf.yml", "redlock.yml"])
def test_etcd_and_redlock_defaults_are_unsafe_for_any_real_pause(name: str) -> None:
    """etcd's client counts the TTL from the keep-alive response, and Redlock's validity
    leaves milliseconds: neither survives a 10 s pause without fencing."""
    j = judged(name)
    assert verdicts(j)[STALE] == UNSAFE and verdicts(j)[RULES] == SAFE
    stale = j.finding(STALE)
    assert stale is not None and any(line.startswith("remedy: ") for line in stale.lines)


def test_a_configuration_breaking_patronis_rule() -> None:
    config = read_configuration("ttl: 20\nloop_wait: 10\nretry_timeout: 10\n", "p.yml", "patroni")
    j = judge(config)
    rules = j.finding(RULES)
    assert rules is not None and rules.verdict == UNSAFE
    assert (
        "loop_wait + 2 * retry_timeout <= ttl is broken: 10 + 2 * 10 = 30 s > ttl 20 s"
        in (rules.lines[0])
    )
    stale = j.finding(STALE)
    assert stale is not None and stale.verdict == UNSAFE and stale.run is not None


def test_a_configuration_client_go_refuses() -> None:
    text = "leaderElection:\n  leaseDuration: 10s\n  renewDeadline: 10s\n  retryPeriod: 2s\n"
    j = judge(read_configuration(text, "k.yaml"))
    rules = j.finding(RULES)
    assert rules is not None and rules.verdict == UNSAFE
    assert "leaseDuration must be greater than renewDeadline" in rules.lines[0]
    assert verdicts(j)[STALE] == UNSAFE


def test_a_pause_longer_than_the_lease_deposes_a_healthy_leader_too() -> None:
    text = (
        "leaderElection:\n  leaseDuration: 60s\n  renewDeadline: 40s\n  retryPeriod: 5s\n"
        "leadercheck:\n  environment:\n    pause: 90s\n"
    )
    j = judge(read_configuration(text, "k.yaml"))
    assert verdicts(j) == {RULES: SAFE, STALE: UNSAFE, FALSE_FAILOVER: UNSAFE}
    ff = j.finding(FALSE_FAILOVER)
    assert ff is not None and ff.run is not None and ff.run.outcome.trace is not None


def test_an_unsafe_trace_is_a_real_schedule_that_replays() -> None:
    """The deciding run's parameters are the model's own, within its ranges, so the trace
    re-executes on the catalogue's lease-timing."""
    stale = judged("kube-controller-manager.yaml").finding(STALE)
    assert stale is not None and stale.run is not None
    run = stale.run
    entry = CATALOGUE.lookup(run.protocol)
    for p in entry.params:
        assert p.low <= run.params[p.name] <= p.high
    model = CATALOGUE.build(entry, run.params)
    assert run.outcome.trace is not None
    from leadercheck.checker.render.context import TraceContext
    from leadercheck.checker.render.trace_json import trace_to_json

    ctx = TraceContext(run.protocol, run.params, run.outcome, tick_seconds=run.tick)
    path = FILES.parent / "_replay.json"
    try:
        path.write_text(trace_to_json(ctx))
        saved = load_trace(path)
    finally:
        path.unlink(missing_ok=True)
    assert replay(model, saved, CATALOGUE.claims["no-stale-write"]).reproduces


def _with_pause(config, pause: float):  # type: ignore[no-untyped-def]
    from dataclasses import replace

    return replace(config, environment=replace(config.environment, pause=pause))


def _k8s(lease: float, renew: float, retry: float, pause: float, drift: float) -> dict[str, float]:
    text = (
        f"leaderElection:\n  leaseDuration: {lease}s\n  renewDeadline: {renew}s\n"
        f"  retryPeriod: {retry}s\nleadercheck:\n  environment:\n    pause: {pause}s\n"
        f"    clock_drift: {drift}\n"
    )
    return values_of(read_configuration(text, "k.yaml"))


HALVES = st.integers(1, 40).map(lambda n: n / 2)


def _agrees(lease: float, renew: float, retry: float, drift: float, pause: float) -> None:
    v = _k8s(lease, renew, retry, pause, drift)
    finding = stale_leader(CATALOGUE, TIMINGS["k8s"], v, lambda _: None)
    exact = safe_at(
        Fraction(str(renew)) + Fraction(str(retry)),
        Fraction(str(lease)),
        Fraction(str(drift)),
        Fraction(str(pause)),
    )
    point = (lease, renew, retry, drift, pause)
    assert finding.verdict == (SAFE if exact else UNSAFE), point
    if finding.run is not None:  # decided by the explicit model: its run says the same
        expected = Verdict.HOLDS if exact else Verdict.VIOLATED
        assert finding.run.outcome.verdict is expected, point


def _grid(drifts: tuple[float, ...], offsets: tuple[float, ...]) -> None:
    for lease in (15.0, 22.0, 30.0):
        for renew, retry in ((2.0, 1.0), (10.0, 2.0), (10.0, 2.5), (7.5, 3.0)):
            for drift in drifts:
                edge = lease - (renew + retry) * (1 + drift)
                for offset in offsets:
                    _agrees(lease, renew, retry, drift, max(0.0, round(edge + offset, 2)))


def test_stale_leader_agrees_with_the_z3_region_on_a_grid() -> None:
    """Every point of a grid on and beside the region's edge: the model's verdict is z3's
    (the drift-free edge is exact in half seconds; beside it, a drift too)."""
    _grid((0.0,), (-1.0, -0.5, 0.0, 0.5, 1.0))
    _grid((0.01,), (-1.0, 1.0))


@pytest.mark.slow
def test_stale_leader_agrees_with_the_z3_region_at_the_drifted_edge() -> None:
    """On the edge with a 1% drift, where the margin needs hundredths of a second."""
    _grid((0.01,), (-0.5, 0.0, 0.5))


@pytest.mark.slow  # the grid above decides the same edge in the default suite
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lease=HALVES, renew=HALVES, retry=HALVES, drift=st.sampled_from([0.0, 0.01, 0.05, 0.25]),
    offset=st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0, 7.0]),
)  # fmt: skip
def test_stale_leader_agrees_with_the_z3_region(
    lease: float, renew: float, retry: float, drift: float, offset: float
) -> None:
    """On a grid of client-go timings, the pause put at the edge of the region or a step
    beside it: the explicit model's verdict (lease-timing at the resolution chosen) is
    z3's region evaluated exactly, whenever the model decides."""
    edge = lease - (renew + retry) * (1 + drift)
    _agrees(lease, renew, retry, drift, max(0.0, round(edge + offset, 2)))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lease=st.integers(2, 30), retry=st.integers(1, 12), pause=st.integers(0, 20),
    delay=st.sampled_from([0.0, 0.5, 1.0, 2.0]),
)  # fmt: skip
def test_false_failover_agrees_with_the_renewal_models_closed_form(
    lease: int, retry: int, pause: int, delay: float
) -> None:
    """models/lease_renewal.py's exact result: a healthy leader can be deposed exactly when
    ttl <= renew + delay + pause (one pause budget). The judge must say the same."""
    v = {**_k8s(lease, 1, retry, pause, 0.0), "dcs_latency": delay}
    finding = false_failover(CATALOGUE, TIMINGS["k8s"], v, lambda _: None)
    gap = retry + delay + pause
    if finding.verdict == UNDECIDED:  # only within the finest tick's rounding of the edge
        assert abs(lease - gap) <= 4 * 2.5 * max(lease, gap) / 48
    else:
        assert finding.verdict == (UNSAFE if lease <= gap else SAFE)


@given(
    seconds=st.lists(st.floats(0.0005, 5000, allow_nan=False), min_size=1, max_size=4),
    harmful=st.lists(st.booleans(), min_size=4, max_size=4),
)
def test_rounding_never_flatters(seconds: list[float], harmful: list[bool]) -> None:
    """Against the claim, every harmful duration is covered and every protective one is
    not exceeded; for it, the reverse: the two verdicts that decide are sound."""
    durations = {f"d{k}": Duration(s, harmful[k]) for k, s in enumerate(seconds)}
    for tick in tick_lengths(durations, 16, 160):
        against = in_ticks(durations, tick, True)
        kind = in_ticks(durations, tick, False)
        assert against is not None and kind is not None
        for name, d in durations.items():
            if d.harmful:
                assert against[name] * tick >= d.seconds - 1e-6 >= kind[name] * tick - 2e-6
            else:
                assert against[name] * tick <= d.seconds + 1e-6 <= kind[name] * tick + 2e-6
        assert math.isfinite(tick) and tick > 0

"""Configurations judged by each system's own semantics: step-down, precedence, negotiation,
the watchdog, a store out of reach; verdicts agree with the exact laws and z3's region."""

from __future__ import annotations

import math
import re
from dataclasses import replace
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
from leadercheck.checker.config.knobs import Configuration, load_configurations, read_configurations
from leadercheck.checker.config.questions import values_of
from leadercheck.checker.config.resolution import Duration, in_ticks, tick_lengths
from leadercheck.checker.config.systems import SYSTEMS
from leadercheck.checker.engine.replay import replay
from leadercheck.checker.protocols.catalogue import built_in
from leadercheck.checker.render.trace_file import load_trace
from leadercheck.checker.result import Verdict
from leadercheck.checker.solver.encodings.lease_timing import safe_at

FILES = Path(__file__).parent / "files"
CATALOGUE = built_in()
K8S = SYSTEMS["k8s"].timing({})


def config_of(text: str, system: str | None = None, **environment: float) -> Configuration:
    (config,) = read_configurations(text, "c.yaml", system)
    return replace(config, environment=replace(config.environment, **environment))


def judged(text: str, system: str | None = None, **environment: float) -> Judgement:
    return judge(config_of(text, system, **environment))


def verdicts(j: Judgement) -> dict[str, str]:
    return {f.claim: f.verdict for f in j.findings}


def patroni(ttl: int = 30, loop: int = 10, retry: int = 10, extra: str = "") -> str:
    return (
        f"scope: s\netcd3: {{host: 'h:2379'}}\nbootstrap:\n  dcs:\n    ttl: {ttl}\n"
        f"    loop_wait: {loop}\n    retry_timeout: {retry}\n{extra}"
    )


# -- Patroni -------------------------------------------------------------------------------


def test_patroni_sample_defaults() -> None:
    """postgres0.yml: the rule holds with no room (10 + 2 * 10 = 30 = ttl), so a 10 s pause
    lets a deposed primary act; a DCS out of reach past retry_timeout demotes the primary
    (no failsafe_mode); asynchronous replication loses acknowledged writes."""
    (config,) = load_configurations(FILES / "postgres0.yml")
    j = judge(config)
    assert verdicts(j) == {RULES: SAFE, STALE: UNSAFE, FALSE_FAILOVER: UNSAFE, LOST_ACK: UNSAFE}
    stale = j.finding(STALE)
    assert stale is not None and stale.run is not None
    assert "30.805 s + 10 s = 40.805 s > 30 s" in stale.lines[0]
    ff = j.finding(FALSE_FAILOVER)
    assert ff is not None and ff.lines[0].startswith("the store out of reach for 60 s deposes")
    assert "a pause of 19.5 s or more deposes it" in ff.lines[1]
    assert "a store out of reach for 9.5 s or more deposes it" in ff.lines[2]
    assert "(by default: failsafe_mode off (Patroni's default))" in ff.rests_on
    assert any("worst failover: 33.5 s" in line for line in j.failover)


def test_failsafe_mode_rides_out_a_dcs_out_of_reach() -> None:
    j = judged(patroni(extra="    failsafe_mode: true\n"))
    ff = j.finding(FALSE_FAILOVER)
    assert ff is not None and ff.verdict == SAFE
    assert "a store out of reach does not depose it" in ff.lines[2]


def test_patroni_runs_with_its_own_adjustment_of_a_broken_rule() -> None:
    """ttl 10 is raised to 20; loop_wait + 2 * retry_timeout > ttl lowers loop_wait to 1 and
    retry_timeout to (ttl - 1) // 2: the timing questions take what Patroni runs with."""
    j = judged(patroni(ttl=10, loop=10, retry=10))
    rules = j.finding(RULES)
    assert rules is not None and rules.verdict == UNSAFE
    assert "ttl is 10 s, below its minimum of 20 s (Patroni raises it)" in rules.lines[0]
    assert any("Patroni raises ttl 10 to its minimum 20" in n for n in j.notes)
    assert any("loop_wait 1 and retry_timeout 9" in n for n in j.notes)
    assert j.values["ttl"] == 20 and j.values["loop_wait"] == 1


def test_the_issue_s_slow_file_is_judged_by_small_searches() -> None:
    """`ttl: 10, loop_wait: 10` once searched for 70-90 s: every search is now bounded by the
    model's size (the worst failover is derived, not measured)."""
    j = judged("bootstrap:\n  dcs:\n    ttl: 10\n    loop_wait: 10\n")
    for f in j.findings:
        assert f.run is None or f.run.states < 100_000, (f.claim, f.run.states)
    assert j.failover and j.failover[0].startswith("worst failover: ")


def test_the_required_watchdog_stops_a_paused_primary_within_its_margin() -> None:
    """The watchdog fires ttl - safety_margin after the keep-alive Patroni sends right after
    an update; a pause between the two delays it. With a margin over the pause it is safe."""
    covered = judged(patroni(extra="watchdog:\n  mode: required\n  safety_margin: 12\n"))
    stale = covered.finding(STALE)
    assert stale is not None and stale.verdict == SAFE
    assert stale.lines[0].startswith("the watchdog stops a deposed primary before another")
    short = judged(patroni(extra="watchdog:\n  mode: required\n"))
    stale = short.finding(STALE)
    assert stale is not None and stale.verdict == UNSAFE
    remedy = [ln for ln in stale.lines if ln.startswith("remedy:")][0]
    assert (
        "watchdog.safety_margin 5 is too small for the stated pause: raise it to at least 11"
        in (remedy)
    )
    assert "set watchdog" not in remedy  # it is set already


def test_an_automatic_watchdog_is_not_counted_on_and_the_remedy_says_why() -> None:
    j = judged(patroni())
    stale = j.finding(STALE)
    assert stale is not None and stale.verdict == UNSAFE
    remedy = [ln for ln in stale.lines if ln.startswith("remedy:")][0]
    assert "set watchdog: {mode: required, safety_margin: 11}" in remedy
    assert "automatic uses /dev/watchdog only if the host has it" in remedy


def test_patroni_on_kubernetes_polls_for_the_expiry() -> None:
    etcd = judged(patroni()).failover[0]
    k8s = judged("apiVersion: acid.zalan.do/v1\nkind: postgresql\nspec:\n  patroni: {}\n")
    assert "the watch wakes the replicas" in etcd and "no event marks the expiry" not in etcd
    assert (
        "10 s (no event marks the expiry on Kubernetes: the replicas' next cycle)"
        in (k8s.failover[0])
    )


# -- client-go -------------------------------------------------------------------------------


def k8s(lease: float, renew: float, retry: float) -> str:
    return (
        f"--leader-elect-lease-duration={lease}s\n--leader-elect-renew-deadline={renew}s\n"
        f"--leader-elect-retry-period={retry}s\n"
    )


def test_a_client_go_leader_gives_up_after_its_renew_deadline_whatever_the_lease() -> None:
    """A pause past renewDeadline (less the store latency) at the wrong moment deposes a
    healthy leader, even with a long leaseDuration: the window's deadline is a clock."""
    long_lease = judged(k8s(60, 10, 2), pause=10.0, partition=0.0)
    ff = long_lease.finding(FALSE_FAILOVER)
    assert ff is not None and ff.verdict == UNSAFE
    assert "a pause of 9.5 s or more deposes it" in ff.lines[1] and "renewDeadline" in ff.lines[1]
    short = judged(k8s(60, 10, 2), pause=9.0, partition=0.0)
    assert verdicts(short)[FALSE_FAILOVER] == SAFE


def test_the_store_s_latency_counts_for_kubernetes() -> None:
    near = judged(k8s(15, 10, 2), pause=2.0, clock_drift=0.0, dcs_latency=0.0)
    far = judged(k8s(15, 10, 2), pause=2.0, clock_drift=0.0, dcs_latency=1.5)
    assert verdicts(near)[STALE] == SAFE and verdicts(far)[STALE] == UNSAFE


def test_a_verdict_never_contradicts_the_environment_it_states() -> None:
    """SAFE next to "deposed by a cut of X" with partitions of X or more assumed is gone:
    a cut within the stated environment that deposes the leader makes it UNSAFE."""
    for cut in (0.0, 5.0, 9.0, 9.5, 10.0, 30.0):
        ff = judged(k8s(15, 10, 2), pause=0.0, partition=cut).finding(FALSE_FAILOVER)
        assert ff is not None
        deposing = float(re.search(r"out of reach for ([\d.]+) s or more", ff.lines[2])[1])
        assert ff.verdict == (UNSAFE if cut >= deposing else SAFE), (cut, ff.lines)


# -- ZooKeeper, etcd, Redlock --------------------------------------------------------------------


def test_zookeeper_negotiation_names_the_knob_to_change() -> None:
    j = judged("tickTime=2000\n# leadercheck.client.session_timeout=60s\n")
    assert any(
        "the server grants 40 s, its maxSessionTimeout: to grant more, raise maxSessionTimeout" in n
        for n in j.notes
    )
    low = judged(
        "tickTime=2000\nminSessionTimeout=10000\n# leadercheck.client.session_timeout=4s\n"
    )
    assert any("grants 10 s, its minSessionTimeout" in n for n in low.notes)


def test_zookeeper_sample_is_safe_with_its_margin() -> None:
    """tickTime 2 s clamps Curator's 60 s session to 40 s; the leader gives up after 2/3 of
    it, counted from the last answer, so a pause up to 12.42 s keeps a single leader."""
    (config,) = load_configurations(FILES / "zoo.cfg")
    stale = judge(config).finding(STALE)
    assert stale is not None and stale.verdict == SAFE
    assert stale.lines[0].startswith("a pause up to 12.562 s keeps a single leader")


def test_etcd_raises_a_ttl_below_its_minimum() -> None:
    j = judged(
        "heartbeat-interval: 100\nelection-timeout: 5000\nleadercheck:\n  client:\n"
        "    lease_ttl: 3s\n"
    )
    assert any("raises the session's 3 s TTL to its minimum, 8 s" in n for n in j.notes)
    assert j.values["lease_ttl"] == 8


@pytest.mark.parametrize("name", ["etcd.conf.yml", "redlock.yml"])
def test_etcd_and_redlock_are_unsafe_for_any_real_pause(name: str) -> None:
    (config,) = load_configurations(FILES / name)
    j = judge(config)
    assert verdicts(j)[STALE] == UNSAFE and verdicts(j)[RULES] == SAFE
    stale = j.finding(STALE)
    assert stale is not None and any(line.startswith("remedy: ") for line in stale.lines)


# -- what cannot be read, and the defaults a verdict rests on --------------------------------------


def test_a_claim_that_reads_an_unreadable_knob_is_undecided_and_says_why() -> None:
    j = judged("bootstrap:\n  dcs:\n    ttl: 30\n    loop_wait: '{{ loop }}'\n")
    assert verdicts(j)[STALE] == UNDECIDED
    stale = j.finding(STALE)
    assert stale is not None and "loop_wait: a template placeholder '{{ loop }}'" in stale.lines[0]
    assert verdicts(j)[LOST_ACK] == UNSAFE  # replication, not timing: loop_wait does not matter
    assert verdicts(j)[RULES] == UNDECIDED


def test_every_verdict_names_the_defaults_it_rests_on() -> None:
    j = judged("--leader-elect-lease-duration=20s\n# leadercheck.program=kube-scheduler\n")
    for f in j.findings:
        assert "--leader-elect-renew-deadline 10 s (kube-scheduler's default)" in f.rests_on
    assert "--leader-elect-lease-duration" not in j.findings[1].rests_on


# -- remedies meet the system's own rules -------------------------------------------------------


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lease=st.integers(3, 40),
    renew=st.integers(2, 30),
    retry=st.integers(1, 10),
    pause=st.integers(0, 20),
)
@pytest.mark.slow  # 2.5 s; Patroni's suggestion test stays in the default suite
def test_a_suggested_k8s_value_is_one_client_go_accepts(
    lease: int, renew: int, retry: int, pause: int
) -> None:
    from leadercheck.checker.app.config import _regions

    j = judged(k8s(lease, renew, retry), pause=float(pause))
    lines = _regions(j).get(STALE, [])
    values = {"lease_duration": lease, "renew_deadline": renew, "retry_period": retry}
    names = {
        "--leader-elect-lease-duration": "lease_duration",
        "--leader-elect-renew-deadline": "renew_deadline",
        "--leader-elect-retry-period": "retry_period",
    }
    for line in lines:
        found = re.search(
            r"(raise|lower) (\S+) from [\d.]+ s to at (?:least|most) ([\d.]+) s", line
        )
        if not found or found[2] not in names:
            continue
        moved = {**values, names[found[2]]: float(found[3])}
        assert moved["lease_duration"] > moved["renew_deadline"] > 1.2 * moved["retry_period"], line
        if names[found[2]] == "lease_duration":
            assert moved["lease_duration"] == int(moved["lease_duration"]), line


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ttl=st.integers(20, 60),
    loop=st.integers(1, 15),
    retry=st.integers(3, 15),
    pause=st.integers(0, 30),
)
def test_a_suggested_patroni_value_is_a_whole_number_patroni_keeps(
    ttl: int, loop: int, retry: int, pause: int
) -> None:
    from leadercheck.checker.app.config import _regions

    j = judged(patroni(ttl, loop, retry), pause=float(pause))
    for line in _regions(j).get(STALE, []):
        found = re.search(
            r"(raise|lower) (ttl|loop_wait|retry_timeout) from [\d.]+ s to at "
            r"(?:least|most) ([\d.]+) s",
            line,
        )
        if not found:
            continue
        v = {**j.values, found[2]: float(found[3])}
        assert v[found[2]] == int(v[found[2]]), line
        assert v["ttl"] >= 20 and v["loop_wait"] >= 1 and v["retry_timeout"] >= 3, line
        assert v["loop_wait"] + 2 * v["retry_timeout"] <= v["ttl"], line
        believes = v["loop_wait"] + 2 * v["retry_timeout"] + v["dcs_latency"]
        assert believes * (1 + v["clock_drift"]) + v["pause"] <= v["ttl"] + 1e-9, line


# -- agreement with the exact laws -----------------------------------------------------------


def test_an_unsafe_trace_is_a_real_schedule_that_replays(tmp_path: Path) -> None:
    """The deciding run's parameters are the model's own, within its ranges, so the trace
    re-executes on the catalogue's lease-timing."""
    (config,) = load_configurations(FILES / "kube-controller-manager.yaml")
    stale = judge(config).finding(STALE)
    assert stale is not None and stale.run is not None
    run = stale.run
    entry = CATALOGUE.lookup(run.protocol)
    for p in entry.params:
        assert p.low <= run.params[p.name] <= p.high
    model = CATALOGUE.build(entry, run.params)
    from leadercheck.checker.render.context import TraceContext
    from leadercheck.checker.render.trace_json import trace_to_json

    ctx = TraceContext(run.protocol, run.params, run.outcome, tick_seconds=run.tick)
    path = tmp_path / "replay.json"
    path.write_text(trace_to_json(ctx))
    assert replay(model, load_trace(path), CATALOGUE.claims["no-stale-write"]).reproduces


def _k8s_values(lease: float, renew: float, retry: float, pause: float, drift: float) -> dict:
    config = config_of(k8s(lease, renew, retry), pause=pause, clock_drift=drift, dcs_latency=0.0)
    return values_of(config)[0]


def _agrees(lease: float, renew: float, retry: float, drift: float, pause: float) -> None:
    v = _k8s_values(lease, renew, retry, pause, drift)
    finding = stale_leader(CATALOGUE, K8S, v, lambda _: None)
    exact = safe_at(
        Fraction(str(renew)) + Fraction(str(retry)),
        Fraction(str(int(lease))),
        Fraction(str(drift)),
        Fraction(str(pause)),
    )
    point = (lease, renew, retry, drift, pause)
    assert finding.verdict == (SAFE if exact else UNSAFE), point
    if finding.run is not None:  # decided by the explicit model: its run says the same
        expected = Verdict.HOLDS if exact else Verdict.VIOLATED
        assert finding.run.outcome.verdict is expected, point


def _grid(drifts: tuple[float, ...], offsets: tuple[float, ...], leases: tuple[float, ...]) -> None:
    for lease in leases:
        for renew, retry in ((2.0, 1.0), (10.0, 2.0), (10.0, 2.5), (7.5, 3.0)):
            for drift in drifts:
                edge = lease - (renew + retry) * (1 + drift)
                for offset in offsets:
                    _agrees(lease, renew, retry, drift, max(0.0, round(edge + offset, 2)))


@pytest.mark.slow  # 3.8 s: a grid of searches; the region's own tests stay
def test_stale_leader_agrees_with_the_z3_region_on_a_grid() -> None:
    """Every point of a grid on and beside the region's edge: the model's verdict is z3's
    (the drift-free edge is exact in half seconds; beside it, a drift too)."""
    _grid((0.0,), (-1.0, -0.5, 0.0, 0.5, 1.0), (22.0,))
    _grid((0.01,), (-1.0, 1.0), (15.0,))


@pytest.mark.slow
def test_stale_leader_agrees_with_the_z3_region_on_a_wider_grid() -> None:
    _grid((0.0,), (-1.0, -0.5, 0.0, 0.5, 1.0), (15.0, 22.0, 30.0))
    _grid((0.01,), (-1.0, 1.0), (15.0, 22.0, 30.0))


@pytest.mark.slow
def test_stale_leader_agrees_with_the_z3_region_at_the_drifted_edge() -> None:
    """On the edge with a 1% drift, where the margin needs hundredths of a second."""
    _grid((0.01,), (-0.5, 0.0, 0.5), (15.0, 22.0, 30.0))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lease=st.integers(2, 30),
    retry=st.integers(1, 12),
    pause=st.integers(0, 20),
    delay=st.sampled_from([0.0, 0.5, 1.0, 2.0]),
)
def test_false_failover_agrees_with_the_renewal_law(
    lease: int, retry: int, pause: int, delay: float
) -> None:
    """models/lease_renewal.py's exact result: a healthy leader can be deposed exactly when
    ttl <= renew + delay + pause. Here the horizon is the sooner of the lease and client-go's
    retryPeriod + renewDeadline window; the store is never out of reach."""
    v = {**_k8s_values(lease, 1000, retry, pause, 0.0), "dcs_latency": delay, "partition": 0.0}
    finding = false_failover(CATALOGUE, K8S, v, lambda _: None)
    held = min(lease, retry + 1000)
    assert finding.verdict == (UNSAFE if held <= retry + delay + pause else SAFE)


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


def test_a_longer_zookeeper_session_names_the_cap_to_raise_too() -> None:
    """The session a client gets is its ask clamped to maxSessionTimeout: a suggestion to
    lengthen it says that the cap must move too."""
    from leadercheck.checker.app.config import _regions

    j = judged("tickTime=2000\n# leadercheck.client.session_timeout=60s\n", pause=20.0)
    lines = _regions(j)[STALE]
    raise_ = [ln for ln in lines if "raise the session the server grants" in ln]
    assert raise_ and "raise it to at least 62771 ms too" in raise_[0]

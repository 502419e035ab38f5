"""A configuration judged: its rules, then each timing question put to a catalogue model.

Every question is answered by an exhaustive search of a catalogue model at a tick length
the numbers need (`resolution.py`): SAFE when the model holds with every duration rounded
against the claim, UNSAFE when it fails with every duration rounded for it (its trace is
then a real schedule, drawn in seconds), UNDECIDED when no tick within the size cap
separates the two (the margin is below the finest tick tried). Nothing is sampled.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from leadercheck.checker.config.knobs import CLAIMS, Configuration
from leadercheck.checker.config.questions import TIMINGS, Timing, values_of
from leadercheck.checker.config.resolution import Duration, in_ticks, tick_lengths
from leadercheck.checker.config.rules import broken_rules
from leadercheck.checker.engine.interrupts import ctrl_c_arrived
from leadercheck.checker.measure import measure
from leadercheck.checker.protocols import Catalogue, built_in
from leadercheck.checker.result import EndReason, PropertyResult, Verdict
from leadercheck.checker.search import check

SAFE, UNSAFE, UNDECIDED = "SAFE", "UNSAFE", "UNDECIDED"
RULES, STALE, FALSE_FAILOVER, LOST_ACK = CLAIMS
RENEWAL = {"nodes": 2, "tokens": 2, "pauses": 1}  # a leader and a standby; one pause


@dataclass(frozen=True)
class Run:
    """The model search that decided a question."""

    protocol: str
    params: Mapping[str, int]
    tick: float  # seconds per tick
    outcome: PropertyResult
    states: int


@dataclass(frozen=True)
class Finding:
    """One claim about the configuration, judged."""

    claim: str
    verdict: str  # SAFE, UNSAFE or UNDECIDED
    lines: tuple[str, ...]  # what it means, with the numbers
    run: Run | None = None  # the deciding search (its trace when UNSAFE)
    interrupted: bool = False


@dataclass(frozen=True)
class Judgement:
    config: Configuration
    findings: tuple[Finding, ...]
    failover: tuple[str, ...] = ()  # the worst failover time, in words
    values: Mapping[str, float] = field(default_factory=dict)
    stopped: bool = False  # the user's Ctrl-C ended the judging before its end

    @property
    def verdict(self) -> str:
        verdicts = {f.verdict for f in self.findings}
        for v in (UNSAFE, UNDECIDED):
            if v in verdicts:
                return v
        return SAFE

    @property
    def interrupted(self) -> bool:
        return self.stopped or any(f.interrupted for f in self.findings)

    def finding(self, claim: str) -> Finding | None:
        return next((f for f in self.findings if f.claim == claim), None)


Progress = Callable[[str], None]


def judge(config: Configuration, progress: Progress | None = None) -> Judgement:
    """Every claim the system has, in order; a Ctrl-C ends the judging where it is."""
    catalogue = built_in()
    values = values_of(config)
    timing = TIMINGS[config.system]
    say = progress or (lambda _: None)
    broken = broken_rules(config)
    notes = _notes(config, values)
    findings = [
        Finding(RULES, UNSAFE, tuple(broken) + notes)
        if broken
        else Finding(RULES, SAFE, (f"{config.system}'s own rules on these knobs hold", *notes))
    ]
    questions: list[Callable[[], Finding]] = [lambda: stale_leader(catalogue, timing, values, say)]
    if timing.renew is not None:
        questions.append(lambda: false_failover(catalogue, timing, values, say))
    if config.system == "patroni":
        questions.append(lambda: lost_ack_write(catalogue, values, say))
    for question in questions:
        findings.append(question())
        if findings[-1].interrupted or ctrl_c_arrived():
            return Judgement(config, tuple(findings), (), values, stopped=True)
    say("measuring the worst failover")
    failover = _failover(catalogue, timing, values)
    if ctrl_c_arrived():
        return Judgement(config, tuple(findings), failover, values, stopped=True)
    if config.system == "patroni":
        failover += (
            f"if PostgreSQL fails but Patroni runs, Patroni first restarts it for up to "
            f"primary_start_timeout ({_s(values['primary_start_timeout'])}) before a failover",
        )
    return Judgement(config, tuple(findings), failover, values)


def _notes(config: Configuration, values: Mapping[str, float]) -> tuple[str, ...]:
    """What the system makes of the knobs before any model sees them."""
    k = config.knobs
    if config.system == "zookeeper" and values["session_timeout"] != k["session_timeout"]:
        return (
            f"the client asks a {_s(k['session_timeout'])} session; the server grants "
            f"{_s(values['session_timeout'])} (minSessionTimeout {_s(k['min_session_timeout'])}"
            f", maxSessionTimeout {_s(k['max_session_timeout'])})",
        )
    return ()


def decide(
    catalogue: Catalogue,
    protocol: str,
    claim: str,
    durations: Mapping[str, Duration],
    fixed: Mapping[str, int],
    budget: int,
    cap: int,
) -> tuple[str, Run | None]:
    """SAFE, UNSAFE or UNDECIDED for `claim` on `protocol`, at the coarsest tick that
    tells (see the module's docstring), with the run that told."""
    entry = catalogue.lookup(protocol)
    prop = catalogue.claims[claim]
    for tick in tick_lengths(durations, budget, cap):
        tried: dict[tuple[tuple[str, int], ...], PropertyResult] = {}
        for against in (True, False):
            ticks = in_ticks(durations, tick, against)
            if ticks is None:
                continue
            values = {**entry.resolve({}), **fixed, **ticks}
            key = tuple(sorted(values.items()))
            if key not in tried:
                result = check(catalogue.build(entry, values), [prop])
                tried[key] = result.result(claim)
                if result.end is EndReason.INTERRUPTED:
                    return UNDECIDED, Run(protocol, values, tick, tried[key], 0)
                states = result.stats.distinct_states
            outcome = tried[key]
            if against and outcome.verdict is Verdict.HOLDS:
                return SAFE, Run(protocol, values, tick, outcome, states)
            if not against and outcome.verdict is Verdict.VIOLATED:
                return UNSAFE, Run(protocol, values, tick, outcome, states)
    return UNDECIDED, None


def _s(value: float) -> str:
    return f"{round(value, 3):g} s"


def stale_leader(catalogue: Catalogue, t: Timing, v: Mapping[str, float], say: Progress) -> Finding:
    say(f"{STALE}: can a deposed {t.leader} still act after another took over?")
    believes, ttl = t.believes(v), t.store_ttl(v)
    drifted = believes * v["clock_drift"]
    durations = {
        "lease": Duration(believes, harmful=True, least=1),
        "ttl": Duration(ttl, harmful=False, least=1),
        "drift": Duration(drifted, harmful=True),
        "pause": Duration(v["pause"], harmful=True),
    }
    verdict, run = decide(catalogue, "lease-timing", "no-stale-write", durations, {}, 16, 200)
    worst = believes + drifted + v["pause"]
    facts: tuple[str, ...] = (
        f"it believes it leads {_s(believes)} after it asked: {t.believes_why}; "
        f"{_s(believes + drifted)} by a clock {v['clock_drift']:.2%} slow",
        f"the store keeps its lease {_s(ttl)} ({t.store_ttl_why})",
    )
    if verdict == SAFE:
        head = (
            f"a pause up to {_s(ttl - believes - drifted)} keeps a single {t.leader} "
            f"(the environment's is {_s(v['pause'])})"
        )
    elif verdict == UNSAFE:
        head = (
            f"a pause of {_s(v['pause'])} lets a deposed {t.leader} act after another took "
            f"over: {_s(believes + drifted)} + {_s(v['pause'])} = {_s(worst)} > {_s(ttl)}"
        )
    elif _interrupted(run):
        head = "not judged: interrupted"
    else:  # the margin is below the finest tick: z3's region is exact at any resolution
        verdict = SAFE if _in_region(believes, ttl, v["clock_drift"], v["pause"]) else UNSAFE
        head = (
            f"{verdict} by z3's region, exactly: {_s(believes + drifted)} + {_s(v['pause'])} = "
            f"{_s(worst)} against {_s(ttl)}, a margin below the model's finest tick (no chart)"
        )
    if verdict != SAFE:
        facts += (f"remedy: {t.remedy}",)
    return Finding(STALE, verdict, (head, *facts), run, _interrupted(run))


def false_failover(
    catalogue: Catalogue, t: Timing, v: Mapping[str, float], say: Progress
) -> Finding:
    say(f"{FALSE_FAILOVER}: can a healthy {t.leader} be deposed?")
    assert t.renew is not None and t.delay is not None
    renew, delay, ttl, pause = t.renew(v), t.delay(v), t.store_ttl(v), v["pause"]
    durations = _renewal(t, v, ttl_harmful=False)
    fixed = {**RENEWAL, "crashes": 0}
    verdict, run = decide(
        catalogue, "lease-renewal", "healthy-leader-kept", durations, fixed, 12, 48
    )
    gap = renew + delay + pause
    room = ttl - renew - delay
    head = {
        SAFE: f"renewals at most {_s(gap)} apart (every {_s(renew)}, {_s(delay)} late, "
        f"{_s(pause)} paused) stay under the TTL {_s(ttl)}",
        UNSAFE: f"renewals up to {_s(gap)} apart (every {_s(renew)}, {_s(delay)} late, "
        f"{_s(pause)} paused) reach the TTL {_s(ttl)}: the store lets a healthy "
        f"{t.leader}'s lease lapse",
        UNDECIDED: f"renewals up to {_s(gap)} apart against a TTL of {_s(ttl)}: closer "
        "than the finest tick tried",
    }[verdict]
    conditions = (
        f"a healthy {t.leader} is deposed by a pause of {_s(max(room, 0))} or more, or a cut "
        f"from the store of {_s(max(room, 0))} or more (partitions up to "
        f"{_s(v['partition'])} assumed); {t.renew_why}",
    )
    return Finding(FALSE_FAILOVER, verdict, (head, *conditions), run, _interrupted(run))


def lost_ack_write(catalogue: Catalogue, v: Mapping[str, float], say: Progress) -> Finding:
    say(f"{LOST_ACK}: is an acknowledged write kept across a failover?")
    sync = bool(v["synchronous_mode"])
    protocol = "patroni-sync" if sync else "patroni"
    ttl = min(max(int(v["ttl"] // v["loop_wait"]), 2), 5)  # the model renews every tick
    entry = catalogue.lookup(protocol)
    values = {**entry.resolve({}), "ttl": ttl}
    result = check(catalogue.build(entry, values), [catalogue.claims["no-lost-ack-write"]])
    outcome = result.result("no-lost-ack-write")
    run = Run(protocol, values, v["loop_wait"], outcome, result.stats.distinct_states)
    if outcome.verdict is Verdict.HOLDS:
        return Finding(
            LOST_ACK,
            SAFE,
            ("synchronous_mode: a write is acknowledged once the /sync standby has it, and "
             "only that standby may be promoted",),
            run,
        )  # fmt: skip
    if outcome.verdict is Verdict.VIOLATED:
        lag = v["maximum_lag_on_failover"]
        return Finding(
            LOST_ACK,
            UNSAFE,
            (
                "asynchronous replication: the primary acknowledges a write before any "
                "replica has it, so a failover can lose it",
                f"maximum_lag_on_failover lets a replica up to {lag:.0f} bytes behind be "
                "promoted; synchronous_mode: true closes this",
            ),
            run,
        )
    return Finding(LOST_ACK, UNDECIDED, ("the search was interrupted",), run, True)


def _failover(catalogue: Catalogue, t: Timing, v: Mapping[str, float]) -> tuple[str, ...]:
    """The worst time from the leader's crash to a new leader, measured over every
    schedule of `lease-renewal`. In ticks a schedule's events fall on tick boundaries,
    which can cost up to a tick against real time, so with every duration rounded up the
    bound is the worst plus a tick; rounded down, the worst is one a real schedule has."""
    ttl = t.store_ttl(v)
    if t.renew is None or t.delay is None:
        retry = v.get("retry_delay", 0.0) + v.get("retry_jitter", 0.0)
        return (
            f"worst failover: {_s(ttl + retry)} after the holder fails (the keys expire "
            f"after the ttl {_s(ttl)}, then the next try comes within {_s(retry)})",
        )
    durations = _renewal(t, v, ttl_harmful=True)
    tick = tick_lengths(durations, 10, 10)[0]
    high = _worst_failover(catalogue, durations, tick, against=True)
    low = _worst_failover(catalogue, durations, tick, against=False)
    if high is None:
        return ("worst failover: not measured (interrupted)",)
    span = f"at most {_s((high + 1) * tick)}"
    if low is not None:
        span = f"between {_s(low * tick)} and {_s((high + 1) * tick)}"
    return (
        f"worst failover: {span} from the {t.leader}'s crash to a new {t.leader} (every "
        f"schedule of lease-renewal, a tick of {_s(tick)}: the durations rounded down, then up)",
    )


def _renewal(t: Timing, v: Mapping[str, float], ttl_harmful: bool) -> dict[str, Duration]:
    """`lease-renewal`'s timings for system `t`: the TTL protects against a false failover
    and lengthens a real one (`ttl_harmful`); the interval, delay and pause harm both."""
    assert t.renew is not None and t.delay is not None
    return {
        "ttl": Duration(t.store_ttl(v), harmful=ttl_harmful, least=1),
        "renew": Duration(t.renew(v), harmful=True, least=1),
        "delay": Duration(t.delay(v), harmful=True),
        "gc": Duration(v["pause"], harmful=True),
    }


def _worst_failover(
    catalogue: Catalogue, durations: Mapping[str, Duration], tick: float, against: bool
) -> int | None:
    """The worst failover in ticks at `tick`; None if a duration rounds below the model's
    least or the measurement was interrupted."""
    ticks = in_ticks(durations, tick, against)
    if ticks is None:
        return None
    entry = catalogue.lookup("lease-renewal")
    (metric,) = entry.measures
    values = {**entry.resolve({}), **RENEWAL, "crashes": 1, **ticks}
    found = measure(catalogue.build(entry, values), metric.value, metric.where)
    if found is None or found.end is EndReason.INTERRUPTED:
        return None
    return found.worst


def _in_region(lease: float, ttl: float, drift: float, pause: float) -> bool:
    """Whether z3's synthesized lease region holds the point (z3 loads only here)."""
    from leadercheck.checker.solver.encodings.lease_timing import safe_at  # noqa: PLC0415

    exact = [Fraction(str(round(x, 9))) for x in (lease, ttl, drift, pause)]
    return safe_at(*exact)


def _interrupted(run: Run | None) -> bool:
    return run is not None and run.outcome.verdict is Verdict.INCOMPLETE

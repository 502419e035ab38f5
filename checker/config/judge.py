"""A configuration judged: its rules, then each timing question put to a catalogue model.

Every question is answered by an exhaustive search of a catalogue model at a tick length
the numbers need (`resolution.py`): SAFE when the model holds with every duration rounded
against the claim, UNSAFE when it fails with every duration rounded for it (its trace is
then a real schedule, drawn in seconds), UNDECIDED when no tick within the size cap
separates the two (the margin is below the finest tick tried). Nothing is sampled.

A claim rests on the knobs its formulas read: if one of them cannot be read (a template
placeholder, a unit the program refuses, a place leadercheck does not read that may set it)
the claim is UNDECIDED and says which; every knob taken by default is named on the claim's
verdict line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from leadercheck.checker.config.knobs import CLAIMS, Configuration
from leadercheck.checker.config.questions import reads, timing_of, values_of
from leadercheck.checker.config.reading import Knob
from leadercheck.checker.config.resolution import Duration, in_ticks, tick_lengths
from leadercheck.checker.config.systems import SYSTEMS
from leadercheck.checker.config.systems.base import Timing
from leadercheck.checker.engine.interrupts import ctrl_c_arrived
from leadercheck.checker.engine.strategies.bfs import check
from leadercheck.checker.protocols.catalogue import Catalogue, built_in
from leadercheck.checker.result import EndReason, PropertyResult, Verdict

SAFE, UNSAFE, UNDECIDED = "SAFE", "UNSAFE", "UNDECIDED"
RULES, STALE, FALSE_FAILOVER, LOST_ACK = CLAIMS
RENEWAL = {"nodes": 2, "tokens": 2, "pauses": 1}  # a leader and a standby; one pause
Values = Mapping[str, float]


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
    defaults: tuple[str, ...] = ()  # the knobs taken by default it rests on, said

    @property
    def rests_on(self) -> str:
        """`(by default: leaseDuration 60 s (cert-manager's default))`, or nothing."""
        return f" (by default: {'; '.join(self.defaults)})" if self.defaults else ""


@dataclass(frozen=True)
class Judgement:
    config: Configuration
    findings: tuple[Finding, ...]
    failover: tuple[str, ...] = ()  # the worst failover time, in words
    values: Mapping[str, float] = field(default_factory=dict)
    stopped: bool = False  # the user's Ctrl-C ended the judging before its end
    notes: tuple[str, ...] = ()  # what the system makes of the values (clamps, negotiation)

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


@dataclass(frozen=True)
class Question:
    """One claim's inputs: the knobs it reads, and whether it can be answered."""

    claim: str
    reads: tuple[str, ...]
    knobs: Mapping[str, Knob]
    unknown: frozenset[str]  # knobs that cannot be known

    @property
    def blocked(self) -> list[str]:
        """Why it cannot be answered: each unreadable knob it reads, those that cannot be
        read for one reason named together."""
        why: dict[str, list[str]] = {}
        for n in self.reads:
            knob = self.knobs.get(n)
            if knob is not None and (not knob.readable or n in self.unknown):
                problem = (
                    knob.problem or "the system adjusts it together with a knob that cannot be read"
                )
                why.setdefault(problem, []).append(knob.label)
        return [f"{', '.join(labels)}: {problem}" for problem, labels in why.items()]

    @property
    def defaults(self) -> tuple[str, ...]:
        return tuple(
            self.knobs[n].said()
            for n in self.reads
            if n in self.knobs and self.knobs[n].default and self.knobs[n].readable
        )

    def cannot_tell(self) -> Finding:
        return Finding(
            self.claim,
            UNDECIDED,
            (f"cannot tell: {'; '.join(self.blocked)}",),
            defaults=self.defaults,
        )


def judge(config: Configuration, progress: Progress | None = None) -> Judgement:
    """Every claim the system has, in order; a Ctrl-C ends the judging where it is."""
    catalogue = built_in()
    values, adjusted, unknown = values_of(config)
    raw = {**config.values, **{k: v for k, v in values.items() if k not in config.knobs}}
    system = SYSTEMS[config.system]
    timing = timing_of(config)
    say = progress or (lambda _: None)

    def question(claim: str, formulas: Sequence[Callable[..., object] | None]) -> Question:
        return Question(claim, reads(formulas, values), config.knobs, unknown)

    findings = [
        _rules(
            config,
            [question(RULES, [lambda v, r=r: r(v, config.facts)]) for r in system.rules],
            raw,
        )
    ]
    asked: list[tuple[Question, Callable[[], Finding]]] = [
        (
            question(
                STALE,
                [timing.believes, timing.store_ttl]
                + ([timing.reset.lease, timing.reset.pause] if timing.reset else []),
            ),
            lambda: stale_leader(catalogue, timing, values, say, config),
        )
    ]
    if FALSE_FAILOVER in system.claims and timing.renew is not None:
        asked.append(
            (
                question(
                    FALSE_FAILOVER,
                    [timing.renew, timing.delay, timing.store_ttl, timing.holds_for, timing.outage],
                ),
                lambda: false_failover(catalogue, timing, values, say),
            )
        )
    if LOST_ACK in system.claims:
        asked.append(
            (
                question(
                    LOST_ACK, [lambda v: (v["synchronous_mode"], v["maximum_lag_on_failover"])]
                ),
                lambda: lost_ack_write(catalogue, values, say),
            )
        )
    for q, answer in asked:
        if q.blocked:
            findings.append(q.cannot_tell())
            continue
        found = answer()
        findings.append(
            Finding(
                found.claim, found.verdict, found.lines, found.run, found.interrupted, q.defaults
            )
        )
        if found.interrupted or ctrl_c_arrived():
            return Judgement(
                config, tuple(findings), (), values, stopped=True, notes=tuple(adjusted)
            )
    failover = _failover(timing, values, question("failover", [t.seconds for t in timing.failover]))
    if config.system == "patroni" and "primary_start_timeout" in values:
        failover += (
            f"if PostgreSQL fails but Patroni runs, Patroni first restarts it for up to "
            f"primary_start_timeout ({_s(values['primary_start_timeout'])}) before a failover",
        )
    return Judgement(config, tuple(findings), failover, values, notes=tuple(adjusted))


def _rules(config: Configuration, questions: list[Question], raw: Values) -> Finding:
    """Each rule on its own: broken ones UNSAFE, whatever others cannot be told."""
    system = SYSTEMS[config.system]
    broken: list[str] = []
    untold: list[str] = []
    defaults: list[str] = []
    for rule, q in zip(system.rules, questions, strict=True):
        if q.blocked:
            untold += [b for b in q.blocked if b not in untold]
            continue
        defaults += [d for d in q.defaults if d not in defaults]
        said = rule(raw, config.facts)
        if said is not None:
            broken.append(said)
    untold_line = [f"cannot tell the rules on: {'; '.join(untold)}"] if untold else []
    if broken:
        return Finding(RULES, UNSAFE, (*broken, *untold_line), defaults=tuple(defaults))
    if untold:
        return Finding(RULES, UNDECIDED, tuple(untold_line), defaults=tuple(defaults))
    return Finding(
        RULES, SAFE, (f"{system.title}'s own rules on these knobs hold",), defaults=tuple(defaults)
    )


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
    tells (see the module's docstring), with the run that told. A tick whose model would
    outgrow its size bound (SIZES: an estimate from its timings) is not tried: the caller
    then decides by the model's law, exactly."""
    entry = catalogue.lookup(protocol)
    prop = catalogue.claims[claim]
    size, most = SIZES[protocol]
    for tick in tick_lengths(durations, budget, cap):
        tried: dict[tuple[tuple[str, int], ...], tuple[PropertyResult, int]] = {}
        for against in (True, False):
            ticks = in_ticks(durations, tick, against)
            if ticks is None or size(ticks) > most:
                continue
            values = {**entry.resolve({}), **fixed, **ticks}
            key = tuple(sorted(values.items()))
            if key not in tried:
                result = check(catalogue.build(entry, values), [prop])
                tried[key] = (result.result(claim), result.stats.distinct_states)
                if result.end is EndReason.INTERRUPTED:
                    return UNDECIDED, Run(protocol, values, tick, tried[key][0], 0)
            outcome, states = tried[key]
            if against and outcome.verdict is Verdict.HOLDS:
                return SAFE, Run(protocol, values, tick, outcome, states)
            if not against and outcome.verdict is Verdict.VIOLATED:
                return UNSAFE, Run(protocol, values, tick, outcome, states)
    return UNDECIDED, None


# A model's size from its timings in ticks (its states are a few times this), bounded so
# that each search takes a fraction of a second on 2 cores, whatever the timings: a finer
# margin than the bound allows is decided by the model's law, exactly.
SIZES: dict[str, tuple[Callable[[Mapping[str, int]], int], int]] = {
    "lease-timing": (lambda t: t["ttl"] * (t["pause"] + 1) * (t["drift"] + 1), 4000),
    "lease-renewal": (lambda t: t["ttl"] * t["renew"] * (t["gc"] + 1) * (t["delay"] + 1), 1200),
}


def _s(value: float) -> str:
    return f"{round(value, 3):g} s"


def _lease_timing(
    catalogue: Catalogue, lease: float, ttl: float, rate: float, pause: float
) -> tuple[str, Run | None]:
    """Whether a holder believing it leads `lease` (its clock `rate` slow) and paused up to
    `pause` can act after the store's `ttl`: lease-timing, else z3's region exactly."""
    durations = {
        "lease": Duration(lease, harmful=True, least=1),
        "ttl": Duration(ttl, harmful=False, least=1),
        "drift": Duration(lease * rate, harmful=True),
        "pause": Duration(pause, harmful=True),
    }
    verdict, run = decide(catalogue, "lease-timing", "no-stale-write", durations, {}, 16, 200)
    if verdict == UNDECIDED and not _interrupted(run):
        return (SAFE if _in_region(lease, ttl, rate, pause) else UNSAFE), None
    return verdict, run


def stale_leader(
    catalogue: Catalogue, t: Timing, v: Values, say: Progress, config: Configuration | None = None
) -> Finding:
    say(f"{STALE}: can a deposed {t.leader} still act after another took over?")
    believes, ttl, rate, pause = t.believes(v), t.store_ttl(v), v["clock_drift"], v["pause"]
    drifted = believes * rate
    verdict, run = _lease_timing(catalogue, believes, ttl, rate, pause)
    worst = believes + drifted + pause
    facts: tuple[str, ...] = (
        f"it believes it leads {_s(believes)} after it last renewed: {t.believes_why}; "
        f"{_s(believes + drifted)} by a clock {rate:.2%} slow",
        f"the store keeps its lease {_s(ttl)} ({t.store_ttl_why})",
    )
    exact = run is None and verdict != UNDECIDED
    if verdict == SAFE:
        head = (
            f"a pause up to {_s(ttl - believes - drifted)} keeps a single {t.leader} "
            f"(the environment's is {_s(pause)})"
        )
    elif verdict == UNSAFE:
        head = (
            f"a pause of {_s(pause)} lets a deposed {t.leader} act after another took "
            f"over: {_s(believes + drifted)} + {_s(pause)} = {_s(worst)} > {_s(ttl)}"
        )
    else:
        head = "not judged: interrupted"
    if exact:
        head += " (z3's region, exactly: the margin is below the model's finest tick; no chart)"
    if t.reset is not None and verdict == UNSAFE:
        lease, cap = t.reset.lease(v), t.reset.pause(v)
        second, reset_run = _lease_timing(catalogue, lease, ttl, rate, cap)
        stop = lease * (1 + rate) + cap
        facts += (
            f"{t.reset.why}: it is stopped at most {_s(stop)} after its last renewal "
            f"({_s(lease)} + {_s(lease * rate)} drift + a pause of {_s(cap)})",
        )
        if second == SAFE:
            verdict, run = SAFE, reset_run
            head = (
                f"the watchdog stops a deposed {t.leader} before another takes over: "
                f"{_s(stop)} <= {_s(ttl)}"
            )
        elif second == UNDECIDED:
            verdict, run = UNDECIDED, reset_run
    if verdict != SAFE and config is not None:
        facts += tuple(f"remedy: {line}" for line in _remedy(config, t, v))
    return Finding(STALE, verdict, (head, *facts), run, _interrupted(run))


def _remedy(config: Configuration, t: Timing, v: Values) -> list[str]:
    advice = SYSTEMS[config.system].advice
    return advice(v, config.facts) if advice is not None else [t.remedy]


def false_failover(catalogue: Catalogue, t: Timing, v: Values, say: Progress) -> Finding:
    say(f"{FALSE_FAILOVER}: can a healthy {t.leader} be deposed?")
    assert t.renew is not None and t.delay is not None
    renew, delay, pause, cut = t.renew(v), t.delay(v), v["pause"], v["partition"]
    held = t.pause_ttl(v)
    # a pause or cut as long as the horizon deposes as surely as a longer one: the model's
    # law is ttl <= renew + delay + gc, so gc is taken at most ttl (a smaller model, same answer)
    verdict, run = _lease_renewal(catalogue, held, renew, delay, min(pause, held))
    room = max(held - renew - delay, 0.0)
    own = t.holds_for is not None and t.holds_for(v) < t.store_ttl(v)
    why = t.holds_for_why if own else t.renew_why
    by_pause = (
        f"a pause of {_s(room)} or more deposes it: renewals every {_s(renew)}, up to "
        f"{_s(delay)} late, against {_s(held)} ({why})"
    )
    horizon = t.outage(v) if t.outage is not None else None
    if horizon is None:
        cut_verdict, by_cut = SAFE, f"a store out of reach does not depose it: {t.rides_out_why}"
    else:
        cut_verdict, _ = _lease_renewal(catalogue, horizon, renew, delay, min(cut, horizon))
        gap = max(horizon - renew - delay, 0.0)
        by_cut = f"a store out of reach for {_s(gap)} or more deposes it: {t.outage_why}"
    assumed = f"(the environment: pauses up to {_s(pause)}, the store out of reach up to {_s(cut)})"
    verdicts = {verdict, cut_verdict}
    if UNSAFE in verdicts:
        which = [
            w
            for w, x in (
                (f"a pause of {_s(pause)}", verdict),
                (f"the store out of reach for {_s(cut)}", cut_verdict),
            )
            if x == UNSAFE
        ]
        head = f"{' or '.join(which)} deposes a healthy {t.leader} {assumed}"
        final = UNSAFE
    elif UNDECIDED in verdicts:
        head = f"a margin closer than the finest tick tried {assumed}"
        final = UNDECIDED
    else:
        head = f"neither a pause nor the store out of reach deposes a healthy {t.leader} {assumed}"
        final = SAFE
    chart = run if verdict == UNSAFE or final != UNSAFE else None  # a cut alone draws nothing
    return Finding(FALSE_FAILOVER, final, (head, by_pause, by_cut), chart, _interrupted(run))


def _lease_renewal(
    catalogue: Catalogue, ttl: float, renew: float, delay: float, gc: float
) -> tuple[str, Run | None]:
    """Whether a leader renewing every `renew`, up to `delay` late, held back up to `gc`,
    can see its lease of `ttl` lapse: lease-renewal, else its law exactly (deposed exactly
    when ttl <= renew + delay + gc, which tests/models/test_lease_renewal.py checks by search
    over a grid), for a margin below the finest tick the model's size allows."""
    fixed = {**RENEWAL, "crashes": 0}
    verdict, run = decide(
        catalogue,
        "lease-renewal",
        "healthy-leader-kept",
        _renewal(ttl, renew, delay, gc, harmful=False),
        fixed,
        12,
        48,
    )
    if verdict == UNDECIDED and not _interrupted(run):
        return (UNSAFE if ttl <= renew + delay + gc else SAFE), None
    return verdict, run


def _renewal(
    ttl: float, renew: float, delay: float, gc: float, harmful: bool
) -> dict[str, Duration]:
    """`lease-renewal`'s timings: the TTL protects against a false failover; the interval,
    delay and pause (or cut) harm it."""
    return {
        "ttl": Duration(ttl, harmful=harmful, least=1),
        "renew": Duration(renew, harmful=True, least=1),
        "delay": Duration(delay, harmful=True),
        "gc": Duration(gc, harmful=True),
    }


def lost_ack_write(catalogue: Catalogue, v: Values, say: Progress) -> Finding:
    say(f"{LOST_ACK}: is an acknowledged write kept across a failover?")
    sync = bool(v["synchronous_mode"])
    protocol = "patroni-sync" if sync else "patroni"
    # the model renews every tick; its verdict is the same at every ttl (the chart's scale only)
    ttl = min(max(int(v["ttl"] // v["loop_wait"]), 2), 5) if "ttl" in v and "loop_wait" in v else 3
    entry = catalogue.lookup(protocol)
    values = {**entry.resolve({}), "ttl": ttl}
    outcome, states = _replication(catalogue, protocol, ttl)
    run = Run(protocol, values, v.get("loop_wait", 10.0), outcome, states)
    if outcome.verdict is Verdict.HOLDS:
        return Finding(
            LOST_ACK,
            SAFE,
            (
                "synchronous_mode: a write is acknowledged once the /sync standby has it, and "
                "only that standby may be promoted",
            ),
            run,
        )
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


_REPLICATION: dict[tuple[str, int], tuple[PropertyResult, int]] = {}


def _replication(catalogue: Catalogue, protocol: str, ttl: int) -> tuple[PropertyResult, int]:
    """`protocol`'s no-lost-ack-write at `ttl` ticks, searched once per process (a gate
    judges many Patroni files, and these models have the same few sizes)."""
    key = (protocol, ttl)
    if key not in _REPLICATION:
        entry = catalogue.lookup(protocol)
        values = {**entry.resolve({}), "ttl": ttl}
        result = check(catalogue.build(entry, values), [catalogue.claims["no-lost-ack-write"]])
        outcome = result.result("no-lost-ack-write")
        if result.end is EndReason.INTERRUPTED:
            return outcome, result.stats.distinct_states
        _REPLICATION[key] = (outcome, result.stats.distinct_states)
    return _REPLICATION[key]


def _failover(t: Timing, v: Values, q: Question) -> tuple[str, ...]:
    """The worst time from the leader's crash to a new leader, term by term from the
    system's own loop (a watch where it watches, a poll where it polls)."""
    if not t.failover:
        return ()
    if q.blocked:
        return (f"worst failover: cannot tell ({'; '.join(q.blocked)})",)
    terms = [(term.what, float(term.seconds(v))) for term in t.failover]
    total = sum(s for _, s in terms)
    parts = " + ".join(f"{_s(s)} ({what})" for what, s in terms)
    return (
        f"worst failover: {_s(total)} from the {t.leader}'s crash to a new {t.leader}: "
        f"{parts}{Finding('', '', (), defaults=q.defaults).rests_on}",
    )


def _in_region(lease: float, ttl: float, drift: float, pause: float) -> bool:
    """Whether z3's synthesized lease region holds the point (z3 loads only here)."""
    from leadercheck.checker.solver.encodings.lease_timing import safe_at  # noqa: PLC0415

    exact = [Fraction(str(round(x, 9))) for x in (lease, ttl, drift, pause)]
    return safe_at(*exact)


def _interrupted(run: Run | None) -> bool:
    return run is not None and run.outcome.verdict is Verdict.INCOMPLETE

"""`verify conform`: a saved trace, or random schedules, run on a real system and compared.

Wiring only: the trace is read and replayed on the model as `verify replay` does (the
same checks, the same errors), the schedule is made real by checker/conform/ and the
record is printed, written as JSON (--timeline) and as the trace's HTML page (--html).
Exit codes: 0 the real system did what the model predicted, 1 it diverged (a
model-fidelity finding), 2 usage or setup error (a server that does not start or stops
answering, a step the system cannot run), 3 incomplete (Ctrl-C, or --random's budget
spent before its N schedules). Everything that can be checked without a server is
checked before one starts: the arguments, the endpoints (and how many the system
takes), the output paths, the client library and, for --random, hypothesis.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import shlex
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from leadercheck.checker.app.output import say, warn
from leadercheck.checker.conform import clocks
from leadercheck.checker.conform.bindings.base import Binding
from leadercheck.checker.conform.harness import Entry, ModelStep, model_steps, stall_words
from leadercheck.checker.conform.report import (
    breaks_json,
    client_words,
    partition_words,
    time_mapping,
    to_record,
)
from leadercheck.checker.conform.run import Report, conform_trace, parse_endpoints
from leadercheck.checker.conform.world import GIVEN, Timing
from leadercheck.checker.engine.interrupts import real_interrupt
from leadercheck.checker.engine.successors import trace_along
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.io import files
from leadercheck.checker.properties import Kind
from leadercheck.checker.render.conformance import (
    CONFORMANCE_CSS,
    entry_line,
    header_lines,
    timeline_section,
    verdict_lines,
    violated_line,
)
from leadercheck.checker.result import PropertyResult, Verdict

# The exit codes: a claim broken on the real system is a violation (1), whatever the model
# expected and whether or not the run conformed; a divergence alone is a finding of its own
# (4): the real system did something the model cannot, which is not a claim broken
CONFORMS, VIOLATED, INCOMPLETE, DIVERGES = 0, 1, 3, 4
MAX_SCHEDULES = 100_000
MAX_STEPS = 200
DEFAULT_STEPS = 12  # per random schedule, unless the danger is further (schedule_length)
REACH_SLACK = 4  # steps to spare beyond the nearest dangerous step (renewals, ticks between)


def timing_of(tick: float, settle: float | None, ttl_scale: float = 1.0) -> Timing:
    """The time mapping the options ask for; a settle window not given is derived once the
    system is known (Binding.settled)."""
    if not 0.05 <= tick <= 60:
        raise LeadercheckError(f"--tick {tick:g}: give seconds between 0.05 and 60")
    if settle is not None and not 0 <= settle <= 60:
        raise LeadercheckError(f"--settle {settle:g}: give seconds between 0 and 60")
    if not 0.1 <= ttl_scale <= 10:
        raise LeadercheckError(f"--ttl-scale {ttl_scale:g}: give a factor between 0.1 and 10")
    if settle is None:
        return Timing(tick=tick, ttl_scale=ttl_scale)
    return Timing(tick=tick, settle=settle, ttl_scale=ttl_scale, settle_why=GIVEN)


def check_outputs(
    timeline: Path | None, html_dir: Path | None, endpoint: str | None, binding: Binding
) -> None:
    """Before anything runs: the files asked for can be written (nothing half-done after)
    and the endpoints read, as many as the binding takes."""
    if endpoint is not None:
        binding.check_endpoints(len(parse_endpoints(endpoint)))
    if timeline is not None:
        files.check_output_file(timeline, "--timeline")
    if html_dir is not None:
        files.check_output_dir(html_dir, "--html")


def schedule_length(given: int | None, start: int | None) -> tuple[int, str | None]:
    """The most steps of one random schedule, and a warning if they cannot reach what the
    schedules look for. `start`: how many steps the nearest step where safety rests on the
    client is from the initial state (None: there is none), so it is taken at step
    start + 1. By default DEFAULT_STEPS, or that step with REACH_SLACK to spare."""
    reach = None if start is None else start + 1
    if given is None:
        if reach is None:
            return DEFAULT_STEPS, None
        return min(MAX_STEPS, max(DEFAULT_STEPS, reach + REACH_SLACK)), None
    if reach is not None and reach > given:
        return given, (
            f"note: --steps {given} cannot reach the nearest step where safety rests on the"
            f" client, step {reach} at the earliest: no schedule can break a claim there (give"
            f" --steps {min(MAX_STEPS, reach + REACH_SLACK)} or leave --steps out)"
        )
    return given, None


def check_random(schedules: int, max_steps: int, budget: float) -> None:
    """--random's own numbers, and hypothesis, which draws and shrinks the schedules."""
    if not 1 <= schedules <= MAX_SCHEDULES:
        raise LeadercheckError(
            f"--random {schedules}: give a number of schedules from 1 to {MAX_SCHEDULES}"
        )
    if not 1 <= max_steps <= MAX_STEPS:
        raise LeadercheckError(f"--steps {max_steps}: give 1 to {MAX_STEPS} steps per schedule")
    if not (math.isfinite(budget) and budget > 0):
        raise LeadercheckError(f"--budget {budget:g}: give a number of seconds above 0")
    if importlib.util.find_spec("hypothesis") is None:
        raise LeadercheckError(
            "conform --random needs hypothesis, which draws the schedules: "
            "pip install -e '.[conform]'"
        )


def trace_run(
    trace_file: Path,
    protocol_name: str | None,
    model_spec: str | None,
    against: str,
    endpoint: str | None,
    timing: Timing,
    as_json: bool,
    timeline: Path | None,
    html_dir: Path | None,
    client: list[str] | None = None,
    silent_cuts: bool = False,
    member_fault: tuple[str, str] | None = None,
) -> int:
    """A saved trace on the real system: the exit code."""
    from leadercheck.checker.app.traces import replayed_trace  # noqa: PLC0415

    saved, target, values, model, prop, replayed = replayed_trace(
        trace_file, protocol_name, model_spec
    )
    if not replayed.completed:
        parting = next(s for s in replayed.steps if not s.enabled)
        raise LeadercheckError(
            f"{trace_file}: {target.name} cannot take step {parting.index} of the trace"
            f" ({parting.recorded}); `verify replay` shows where it parts"
        )
    actions = [s.replayed for s in replayed.steps if s.replayed is not None]
    steps = model_steps(model, replayed.visited, actions)
    binding, timing = _binding(target.name, against, values, timing, client, silent_cuts)
    if member_fault is not None:
        binding.member_fault = member_fault_of(*member_fault, against, endpoint, len(actions))
    check_outputs(timeline, html_dir, endpoint, binding)
    echo = _printer(as_json)
    shown: list[dict[str, Any]] = []

    def progress(entry: Entry) -> None:
        row = entry.to_json()
        echo(entry_line(row, shown[-1] if shown else None))
        shown.append(row)

    report = _run(binding, steps, endpoint, timing, progress, trace_file, echo,
                  (prop.name, model_break(prop, replayed.visited)))  # fmt: skip
    record = to_record(report)
    _finish(record, as_json, echo, timeline)
    if html_dir is not None:
        page = _trace_page(model, target.name, values, saved, prop, replayed.visited, actions,
                           record)  # fmt: skip
        stem = trace_file.name.removesuffix(".json")
        files.write_files(html_dir, {f"{stem}.html": page})
        if not as_json:
            say(f"wrote {html_dir / (stem + '.html')}")
    return _code(record)


def _binding(
    protocol: str,
    against: str,
    values: Mapping[str, int],
    timing: Timing,
    client: list[str] | None = None,
    silent_cuts: bool = False,
) -> tuple[Binding, Timing]:
    """The binding (its client library imported: a missing one is one line now, before
    any server), its refusal of a time mapping it cannot honour, the mapping with the
    settle window this system needs, and the user's client if one is given."""
    from leadercheck.checker.conform.bindings import (  # noqa: PLC0415
        binding_for,
        user_client_protocols,
    )

    binding = binding_for(protocol, against, values)
    binding.check_timing(timing)
    if binding.drifting_clocks:
        clocks.require()  # libfaketime, before any server starts
    if client is not None:
        if not binding.user_clients:
            raise LeadercheckError(
                f"--client: a client under test is not driven on {against} ({protocol});"
                f" it is on {', '.join(user_client_protocols())}"
            )
        binding.client_command = client
    binding.silent_cuts = silent_cuts
    return binding, binding.settled(timing)


def member_fault_of(
    option: str, text: str, against: str, endpoint: str | None, steps: int, drawn: bool = False
) -> tuple[str, str, int | None]:
    """--kill-member or --cut-member ROLE[@STEP], checked before any server starts:
    ("kill" or "cut", role, step). Without @STEP, step 1 of a trace, or with `drawn`
    (random schedules) None: each schedule draws its own."""
    from leadercheck.checker.conform.servers import MEMBER_ROLES  # noqa: PLC0415

    if against != "etcd":
        raise LeadercheckError(
            f"{option}: {against} runs here as one server (or independent ones);"
            " only etcd's cluster has a member to lose"
        )
    if endpoint is not None:
        raise LeadercheckError(f"{option} acts on a member started here, not on --endpoint's")
    role, _, at = text.partition("@")
    if role not in MEMBER_ROLES:
        raise LeadercheckError(f"{option} {text[:40]!r}: give leader or follower, then @STEP")
    kind = option.removeprefix("--").removesuffix("-member")
    if not at and drawn:
        return kind, role, None
    step = int(at) if at.isascii() and at.isdigit() else (1 if not at else 0)
    if not 1 <= step <= steps:
        whose = "a schedule's (--steps)" if drawn else "the trace's"
        raise LeadercheckError(f"{option} {text[:40]!r}: the step is one of {whose}, 1 to {steps}")
    return kind, role, step


def member_fault_words(fault: tuple[str, str, int | None]) -> str:
    """How a run states its store member's fault (a schedule's header, the record)."""
    kind, role, step = fault
    done = "SIGKILLed" if kind == "kill" else "cut off from its peers"
    when = f"before step {step}" if step is not None else "before a step each schedule draws"
    return f"the Raft {role} {done} {when}, brought back after each schedule"


def client_command(text: str) -> list[str]:
    """--client's command line, split as a shell would (no shell runs it), its program
    found before any server starts."""
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise LeadercheckError(f"--client {text[:60]!r}: {exc}") from None
    if not argv:
        raise LeadercheckError("--client: give the command that starts your client")
    program = argv[0]
    found = shutil.which(program) if os.sep not in program else program
    if found is None or not os.path.isfile(found) or not os.access(found, os.X_OK):
        raise LeadercheckError(f"--client: {program!r}: no such program (or not executable)")
    return argv


def _run(
    binding: Binding,
    steps: list[ModelStep],
    endpoint: str | None,
    timing: Timing,
    progress: Any,
    trace_file: Path,
    echo: Any,
    claim: tuple[str, int | None],
) -> Report:
    values = binding.params
    shown = {"trace": str(trace_file), "protocol": binding.protocol,
             "params": dict(sorted(values.items())), "system": binding.system,
             "server": f"the servers at {endpoint}" if endpoint else "servers started on loopback",
             "client": client_words(binding.client_command),
             "partitions": partition_words(binding.silent_cuts),
             "time_mapping": time_mapping(timing)}  # fmt: skip
    for line in header_lines(shown, len(steps) - 1):
        echo(line)
    return conform_trace(binding.protocol, values, steps, binding.system, timing, endpoint,
                         progress, str(trace_file), binding, claim)  # fmt: skip


def model_break(prop: Any, visited: Sequence[Any]) -> int | None:
    """The first step of the schedule where the model breaks `prop` (an invariant), if any:
    a trace cut short of its violation, or run as a variant that holds, has none."""
    if getattr(prop, "kind", None) != Kind.ALWAYS:
        return None
    return next((k for k, state in enumerate(visited) if not prop.predicate(state)), None)


def _printer(as_json: bool) -> Any:
    """Progress lines on stdout, or nothing but the record with --json."""
    if as_json:
        return lambda line: None
    return lambda line: say(line)


def _record_json(record: Mapping[str, Any]) -> str:
    """The record as --json prints it and --timeline writes it (one form for both)."""
    return json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False)


def _write_timeline(timeline: Path, record: Mapping[str, Any]) -> None:
    files.write_text(timeline, _record_json(record) + "\n", "--timeline")


def _finish(record: Mapping[str, Any], as_json: bool, echo: Any, timeline: Path | None) -> None:
    if as_json:
        say(_record_json(record))
    else:
        for line in verdict_lines(record):
            echo(line)
        echo(f"server: {record['server']}")
    if timeline is not None:
        _write_timeline(timeline, record)
        if not as_json:
            say(f"wrote {timeline}")


def _code(record: Mapping[str, Any]) -> int:
    """1 if a claim broke on the real system (a trace's `real_breaks`, random schedules'
    `violating_history`), else the conformance verdict's: 0, 4, or 3."""
    if record.get("real_breaks") or record.get("violating_history"):
        return VIOLATED
    return {"CONFORMS": CONFORMS, "DIVERGES": DIVERGES}.get(record["verdict"], INCOMPLETE)


def _trace_page(
    model: Any,
    protocol: str,
    values: Mapping[str, int],
    saved: Any,
    prop: Any,
    visited: tuple[Any, ...],
    actions: list[Any],
    record: Mapping[str, Any],
) -> str:
    """The trace's HTML page (as `verify --html` writes it) with the real run below it."""
    from leadercheck.checker.render.context import TraceContext  # noqa: PLC0415
    from leadercheck.checker.render.dot import trace_to_dot  # noqa: PLC0415
    from leadercheck.checker.render.html import trace_to_html  # noqa: PLC0415
    from leadercheck.checker.render.svg import SvgUnavailable, dot_to_svg  # noqa: PLC0415

    moves = list(zip(actions, visited[1:], strict=True))
    trace = trace_along(model, visited[0], moves, saved.loop_from)
    known = {v.value for v in Verdict}
    verdict = Verdict(saved.verdict) if saved.verdict in known else Verdict.VIOLATED
    outcome = PropertyResult(prop, verdict, trace, saved.reason)
    ctx = TraceContext(protocol, dict(values), outcome)
    dot = trace_to_dot(ctx)
    try:
        svg: str | None = dot_to_svg(dot)
    except SvgUnavailable:
        svg = None
    return trace_to_html(ctx, svg, None, dict(values), timeline_section([record]), CONFORMANCE_CSS)


def random_run(
    protocol_name: str | None,
    model_spec: str | None,
    given: Mapping[str, str],
    against: str,
    endpoint: str | None,
    timing: Timing,
    schedules: int,
    seed: int,
    max_steps: int | None,
    budget: float,
    as_json: bool,
    timeline: Path | None,
    client: list[str] | None = None,
    keep_dir: Path | None = None,
    silent_cuts: bool = False,
    member_fault: tuple[str, str] | None = None,
) -> int:
    """N random schedules on the real system, every observation checked against the model.

    A Ctrl-C (in the servers' start, a schedule, hypothesis's shrinking or the servers'
    stop) ends in exit 3 with one line on stderr, what ran so far in --timeline and
    --json, and the servers stopped; a real system that fails is one line, exit 2."""
    from leadercheck.checker.app.common import catalogue_of, checked_model  # noqa: PLC0415
    from leadercheck.checker.conform.anomaly import OBSERVABLE  # noqa: PLC0415
    from leadercheck.checker.conform.guidance import MAX_STATES, build_guide  # noqa: PLC0415
    from leadercheck.checker.conform.random_walks import Walks, random_walks  # noqa: PLC0415
    from leadercheck.checker.conform.run import (  # noqa: PLC0415
        running_servers,
        server_options,
        world_for,
    )

    check_random(schedules, DEFAULT_STEPS if max_steps is None else max_steps, budget)
    catalogue = catalogue_of(model_spec)
    entry = catalogue.lookup(_random_protocol(protocol_name, against, catalogue.protocols))
    values = entry.resolve(dict(given))
    binding, timing = _binding(entry.name, against, values, timing, client, silent_cuts)
    if member_fault is not None:  # checked now, against --steps when given (the guide,
        # which sizes schedules otherwise, takes seconds to build on a large model)
        bound = MAX_STEPS if max_steps is None else max_steps
        member_fault_of(*member_fault, against, endpoint, bound, drawn=True)
    model = checked_model(catalogue, entry, values, ())
    check_outputs(timeline, None, endpoint, binding)
    if keep_dir is not None:
        files.check_output_dir(keep_dir, "--keep")
    claims = [catalogue.claims[c] for c in OBSERVABLE if c in catalogue.claims]
    guide = build_guide(model, binding.risky, claims)
    start = None if guide is None else guide.now(list(model.initial_states()))
    max_steps, short = schedule_length(max_steps, start)
    if member_fault is not None:
        binding.member_fault = member_fault_of(
            *member_fault, against, endpoint, max_steps, drawn=True
        )
    echo = _printer(as_json)
    params = " ".join(f"{k}={v}" for k, v in sorted(values.items()))
    echo(f"conform --random {schedules}: {entry.name} ({params}) against {against},"
         f" seed {seed}, at most {max_steps} steps per schedule, budget {budget:g} s")  # fmt: skip
    if binding.client_command is not None:
        echo(f"client: {client_words(binding.client_command)}")
    if binding.silent_cuts:
        echo(f"partitions: {partition_words(True)}")
    if binding.member_fault is not None:
        echo(f"store member: {member_fault_words(binding.member_fault)}")
    echo(f"time: {time_mapping(timing)}")
    echo(
        f"guided: toward the steps where safety rests on the client ({start} steps from the"
        " start at the nearest)"
        if guide is not None
        else f"unguided: no such step in the model, or more than {MAX_STATES:,} states"
    )
    if short is not None:  # the report's own line (the record's `steps_note` too)
        echo(short)
    kept = _Keeper(keep_dir, model, entry.name, values, claims)

    def progress(run: Any) -> None:
        n = len(run.entries) - 1
        echo(f"  schedule of {n} step{'s' * (n != 1)}: {run.verdict.lower()}")

    found = Walks(binding.protocol, binding.system)
    server = f"{against} (not started: interrupted)"
    try:
        with (
            running_servers(against, endpoint, **server_options(binding)) as running,
            tempfile.TemporaryDirectory(prefix="leadercheck-clients-") as logs,
        ):
            server = running.version
            random_walks(
                model, binding, lambda: world_for(binding, running, timing, Path(logs)),
                schedules, seed, max_steps, budget, progress, found, guide, kept.keep,
            )  # fmt: skip
    except KeyboardInterrupt:  # starting or stopping the servers (random_walks keeps its own)
        if not real_interrupt():
            raise
        found.interrupted = True
    record = _random_record(found, entry.name, values, against, server, timing, seed, schedules)
    record["client"] = client_words(binding.client_command)
    record["partitions"] = partition_words(binding.silent_cuts)
    record["member_fault"] = (
        None if binding.member_fault is None else member_fault_words(binding.member_fault)
    )
    record["steps_per_schedule"] = max_steps
    record["steps_note"] = short
    record["kept"] = kept.written
    if binding.member_fault is not None and keep_dir is not None:  # how to replay each
        record["kept_member_faults"] = kept.member_faults
    if keep_dir is not None:
        files.write_files(keep_dir, kept.files)
        if not as_json:
            say(f"kept {len(kept.written)} schedules as traces in {keep_dir}")
    if as_json:
        say(_record_json(record))
    elif not found.interrupted or record["violating_history"] is not None:
        _random_summary(record)  # a claim broken for real is told, Ctrl-C or not
    if timeline is not None:
        _write_timeline(timeline, record)
    if found.interrupted:
        warn(_interrupted_line(record, timeline))
    return _code(record)


class _Keeper:
    """Every schedule that ran, kept as a trace file (`schedule-0001.json`, ...) that
    `verify replay` and `verify conform` take: the model's path that agrees with what
    the real system showed, judged on the first observable claim."""

    def __init__(
        self,
        keep_dir: Path | None,
        model: Any,
        protocol: str,
        values: Mapping[str, int],
        claims: Sequence[Any],
    ) -> None:
        self.keep_dir, self.model, self.protocol = keep_dir, model, protocol
        self.values, self.claims = dict(values), list(claims)
        self.files: dict[str, str] = {}
        self.written: list[str] = []
        self.member_faults: dict[str, str | None] = {}  # file: the option that replays it

    def keep(self, run: Any) -> None:
        if self.keep_dir is None or run.path is None or not self.claims:
            return
        from leadercheck.checker.render.context import TraceContext  # noqa: PLC0415
        from leadercheck.checker.render.trace_json import trace_to_json  # noqa: PLC0415

        start, moves = run.path
        trace = trace_along(self.model, start, moves)
        prop = self.claims[-1]  # no-stale-write where the protocol has it
        broken = model_break(prop, [step.state for step in trace.steps])
        verdict = Verdict.HOLDS if broken is None else Verdict.VIOLATED
        reason = f"schedule {len(self.written) + 1} of a --random run"
        outcome = PropertyResult(prop, verdict, trace, reason)
        name = f"schedule-{len(self.written) + 1:04d}.json"
        self.files[name] = trace_to_json(TraceContext(self.protocol, self.values, outcome))
        self.written.append(name)
        self.member_faults[name] = run.member_fault


def _random_protocol(name: str | None, against: str, known: Mapping[str, Any]) -> str:
    """The protocol --random runs: the one named, else the first the system runs that the
    catalogue has (Redlock is the tutorial's: it needs --model examples/redlock.py)."""
    from leadercheck.checker.conform.bindings import SYSTEMS, protocols_on  # noqa: PLC0415

    if name is not None:
        if name not in known and name in protocols_on(against) and against == "redis":
            raise LeadercheckError(
                f"{name} is the tutorial's protocol, not this catalogue's: give --model"
                " examples/redlock.py"
            )
        return name
    if against not in SYSTEMS:
        raise LeadercheckError(f"unknown system {against!r}: choose one of {', '.join(SYSTEMS)}")
    runs = protocols_on(against)
    found = next((p for p in runs if p in known), None)
    if found is None:
        raise LeadercheckError(
            f"{against} runs {', '.join(runs)}, none of them in this catalogue"
            + (" (the tutorial's: give --model examples/redlock.py)" if against == "redis" else "")
        )
    return found


def _random_record(
    found: Any,
    protocol: str,
    values: Mapping[str, int],
    against: str,
    server: str,
    timing: Timing,
    seed: int,
    schedules: int,
) -> dict[str, Any]:
    """What the random schedules came to, as --json prints it and --timeline writes it.

    Ctrl-C makes it INCOMPLETE whatever was found (as a search's Ctrl-C does); a divergent
    history found before it is kept, not fully shrunk. A budget spent before the N
    schedules ran, with no divergence, is INCOMPLETE too, and so is a schedule that went
    wrong only after the machine fell behind the time mapping (`unjudged`): it may hide a
    divergence as well as make one up."""
    shortest = found.shortest
    if found.interrupted:
        verdict = "INCOMPLETE"
    elif shortest is not None:
        verdict = "DIVERGES"
    else:
        verdict = "INCOMPLETE" if found.out_of_budget or found.unjudged else "CONFORMS"
    record: dict[str, Any] = {
        "schema": "leadercheck.conformance-random/1",
        "protocol": protocol,
        "params": dict(sorted(values.items())),
        "system": against,
        "server": server,
        "time_mapping": time_mapping(found.timing or timing),
        "seed": seed,
        "schedules_asked": schedules,
        "schedules_run": found.drawn,
        "shrink_runs": found.shrinks,
        "steps_run": found.steps,
        "seconds": found.seconds,
        "budget_ran_out": found.out_of_budget,
        "schedules_unjudged": found.unjudged,
        "fell_behind": None if found.stall is None else stall_words(*found.stall),
        "interrupted": found.interrupted,
        "verdict": verdict,
        "guided": found.guided,
        "coverage": found.coverage.to_json(),
        "divergent_history": None,
        "violating_history": None,
        "interrupted_schedule": None,
    }
    violation = found.shortest_violation
    if violation is not None:
        record["violating_history"] = {
            **_history(violation, len(found.violations), found.first_violation),
            "real_breaks": breaks_json(violation.breaks()),
            "diverged": violation.divergence is not None,
            "shortest_possible": found.shortest_possible,
        }
    if shortest is not None:
        d = shortest.divergence
        assert d is not None
        record["divergent_history"] = {
            **_history(shortest, len(found.failures), found.first_found),
            "divergence": {
                "step": d.step,
                "model": d.model_event,
                "real": d.real_event,
                "differences": d.differences(),
            },  # fmt: skip
        }
    if found.partial is not None:
        record["interrupted_schedule"] = {
            "steps": max(0, len(found.partial.entries) - 1),
            "timeline": [e.to_json() for e in found.partial.entries],
        }
    return record


def _history(run: Any, among: int, first: tuple[int, float] | None) -> dict[str, Any]:
    """A schedule the random search reports, as the record keeps it: its length, how to
    replay its member fault, how many such were found and when the first was, its timeline."""
    schedules, seconds = first or (None, None)
    return {
        "steps": len(run.entries) - 1,
        "member_fault": run.member_fault,
        "found_among": among,
        "first_found_after_schedules": schedules,
        "first_found_after_seconds": seconds,
        "timeline": [e.to_json() for e in run.entries],
    }


def _interrupted_line(record: Mapping[str, Any], timeline: Path | None) -> str:
    """The one line a Ctrl-C ends with (on stderr)."""
    line = (
        f"interrupted after {record['schedules_run']} of {record['schedules_asked']} schedules"
        f" ({_count(record['steps_run'], 'step')} in {record['seconds']:g} s)"
    )
    history = record["divergent_history"]
    violating = record["violating_history"]
    if violating is not None:
        line += (
            f"; a claim broke on the real system in a schedule of"
            f" {_count(violating['steps'], 'step')} (above)"
        )
    elif history is not None:
        line += (
            f"; a divergent history of {_count(history['steps'], 'step')} was found, shrinking"
            f" stopped after {_count(record['shrink_runs'], 'run')}"
        )
    if timeline is not None:
        line += f"; wrote {timeline}"
    return line


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def _random_summary(record: Mapping[str, Any]) -> None:
    ran = f"{record['schedules_run']} of {record['schedules_asked']} schedules"
    if record["shrink_runs"]:
        ran += f" and {record['shrink_runs']} runs shrinking"
    ran += f", {record['steps_run']} steps on {record['server']} in {record['seconds']:g} s"
    if record["budget_ran_out"]:
        ran += " (the time budget ran out)"
    if record["schedules_unjudged"]:
        ran += (
            f"; {_count(record['schedules_unjudged'], 'schedule')} not judged: the machine fell"
            f" behind the time mapping ({record['fell_behind']})"
        )
    _violation_summary(record)
    history = record["divergent_history"]
    if history is None:
        judged = "every judged" if record["schedules_unjudged"] else "every"
        say(f"{record['verdict']}: {ran}; {judged} observed history is a path of the model")
    else:
        d = history["divergence"]
        shrunk = f"{history['steps']} steps (the shortest of {history['found_among']} found)"
        first = history.get("first_found_after_schedules")
        if first is not None:
            when = history["first_found_after_seconds"]
            shrunk += f"; the first found in schedule {first}, after {when:g} s"
        if history.get("member_fault"):
            shrunk += f"; replayed with {history['member_fault']}"
        say(f"DIVERGES: {ran}; a history the model cannot produce, shrunk to {shrunk}:")
        for entry in history["timeline"]:
            say(entry_line(entry))
        say(f"  at step {d['step']}: " + "; ".join(d["differences"]))
    for line in coverage_lines(record.get("coverage")):
        say(line)


def _violation_summary(record: Mapping[str, Any]) -> None:
    """The headline of random schedules that broke a claim on the real system: where each
    claim broke, then the shortest such schedule, whole."""
    history = record["violating_history"]
    if history is None:
        return
    found = f"  in a schedule of {_count(history['steps'], 'step')}, "
    if history.get("shortest_possible"):
        found += "as short as the model allows (the search stopped there: none breaks it sooner)"
    else:
        found += f"the shortest of {history['found_among']} found"
    first = history.get("first_found_after_schedules")
    if first is not None:
        found += (
            f"; the first in schedule {first}, after {history['first_found_after_seconds']:g} s"
        )
    if history.get("member_fault"):
        found += f"; replayed with {history['member_fault']}"
    say(violated_line(record["system"], history["real_breaks"]))
    say(found + ":")
    for entry in history["timeline"]:
        say(entry_line(entry))
    if history["diverged"]:
        say("  the same schedule also diverged from the model (below)")


def coverage_lines(coverage: Mapping[str, Any] | None) -> list[str]:
    """What the schedules did, in a few lines (the record's `coverage`)."""
    if not coverage:
        return []

    def counts(found: Mapping[str, int]) -> str:
        return ", ".join(f"{name} {n}" for name, n in found.items()) or "none"

    anomalies = coverage["schedules_with_anomaly"]
    return [
        f"coverage: actions fired: {counts(coverage['actions'])}",
        f"  faults with an effect on the real system: {counts(coverage['faults_with_effect'])};"
        f" without: {counts(coverage['faults_without_effect'])}",
        f"  steps where safety rested on the client: {coverage['dangerous_steps']};"
        " schedules in which a claim broke on the real system: "
        + (counts(anomalies) if anomalies else "none"),
    ]

"""`verify conform`: a saved trace, or random schedules, run on a real system and compared.

Wiring only: the trace is read and replayed on the model as `verify replay` does (the
same checks, the same errors), the schedule is made real by checker/conform/ and the
record is printed, written as JSON (--timeline) and as the trace's HTML page (--html).
Exit codes: 0 the real system did what the model predicted, 1 it diverged (a
model-fidelity finding), 2 usage or setup error (a server that does not start, a step
the system cannot run), 3 interrupted.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from leadercheck.checker.conform.harness import Entry, ModelStep, model_steps
from leadercheck.checker.conform.report import time_mapping, to_record
from leadercheck.checker.conform.run import Report, conform_trace, parse_endpoints
from leadercheck.checker.conform.world import Timing
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.render.conformance import (
    CONFORMANCE_CSS,
    entry_line,
    header_lines,
    timeline_section,
    verdict_lines,
)
from leadercheck.checker.render.files import check_writable, check_writable_file, write_all
from leadercheck.checker.result import PropertyResult, Verdict
from leadercheck.checker.trace import Step, Trace

CONFORMS, DIVERGES, INCOMPLETE = 0, 1, 3


def timing_of(tick: float, settle: float, ttl_scale: float = 1.0) -> Timing:
    if not 0.05 <= tick <= 60:
        raise LeadercheckError(f"--tick {tick:g}: give seconds between 0.05 and 60")
    if not 0 <= settle <= 60:
        raise LeadercheckError(f"--settle {settle:g}: give seconds between 0 and 60")
    if not 0.1 <= ttl_scale <= 10:
        raise LeadercheckError(f"--ttl-scale {ttl_scale:g}: give a factor between 0.1 and 10")
    return Timing(tick=tick, settle=settle, ttl_scale=ttl_scale)


def check_outputs(timeline: Path | None, html_dir: Path | None, endpoint: str | None) -> None:
    """Before anything runs: the files asked for can be written (nothing half-done after)
    and the endpoints read."""
    if endpoint is not None:
        parse_endpoints(endpoint)
    if timeline is not None:
        check_writable_file(timeline, "--timeline")
    if html_dir is not None:
        check_writable(html_dir)


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
    ctx: click.Context,
) -> int:
    """A saved trace on the real system: the exit code."""
    from leadercheck.checker import cli  # noqa: PLC0415 (cli imports this module lazily)
    from leadercheck.checker.replay import replay  # noqa: PLC0415

    saved, catalogue, recorded_on, prop = cli._checked_trace(ctx, trace_file, model_spec)
    target = catalogue.lookup(protocol_name) if protocol_name else recorded_on
    cross = target.name != recorded_on.name
    values = cli._replay_params(trace_file, target, saved, cross)
    model = cli._checked_model(catalogue, target, values, (prop,))
    replayed = replay(model, saved, prop, compare_states=not cross)
    if not replayed.completed:
        parting = next(s for s in replayed.steps if not s.enabled)
        raise LeadercheckError(
            f"{trace_file}: {target.name} cannot take step {parting.index} of the trace"
            f" ({parting.recorded}); `verify replay` shows where it parts"
        )
    actions = [s.replayed for s in replayed.steps if s.replayed is not None]
    steps = model_steps(model, replayed.visited, actions)
    check_outputs(timeline, html_dir, endpoint)
    echo = _printer(as_json)
    shown: list[dict[str, Any]] = []

    def progress(entry: Entry) -> None:
        row = entry.to_json()
        echo(entry_line(row, shown[-1] if shown else None))
        shown.append(row)

    report = _run(target.name, values, steps, against, endpoint, timing, progress, trace_file,
                  echo)  # fmt: skip
    record = to_record(report)
    _finish(record, as_json, echo, timeline)
    if html_dir is not None:
        page = _trace_page(model, target.name, values, saved, prop, replayed.visited, actions,
                           record)  # fmt: skip
        stem = trace_file.name.removesuffix(".json")
        write_all(html_dir, {f"{stem}.html": page})
        if not as_json:
            click.echo(f"wrote {html_dir / (stem + '.html')}")
    return _code(record["verdict"])


def _run(
    protocol: str,
    values: dict[str, int],
    steps: list[ModelStep],
    against: str,
    endpoint: str | None,
    timing: Timing,
    progress: Any,
    trace_file: Path,
    echo: Any,
) -> Report:
    from leadercheck.checker.conform.bindings import binding_for  # noqa: PLC0415

    binding = binding_for(protocol, against, values)
    binding.check_timing(timing)
    shown = {"trace": str(trace_file), "protocol": protocol, "params": dict(sorted(values.items())),
             "system": against,
             "server": f"the servers at {endpoint}" if endpoint else "servers started on loopback",
             "time_mapping": time_mapping(timing)}  # fmt: skip
    for line in header_lines(shown, len(steps) - 1):
        echo(line)
    return conform_trace(protocol, values, steps, against, timing, endpoint, progress,
                         str(trace_file), binding)  # fmt: skip


def _printer(as_json: bool) -> Any:
    """Progress lines on stdout, or nothing but the record with --json."""
    if as_json:
        return lambda line: None
    return lambda line: click.echo(line)


def _record_json(record: Mapping[str, Any]) -> str:
    """The record as --json prints it and --timeline writes it (one form for both)."""
    return json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False)


def _write_timeline(timeline: Path, record: Mapping[str, Any]) -> None:
    write_all(timeline.parent, {timeline.name: _record_json(record) + "\n"})


def _finish(record: Mapping[str, Any], as_json: bool, echo: Any, timeline: Path | None) -> None:
    if as_json:
        click.echo(_record_json(record))
    else:
        for line in verdict_lines(record):
            echo(line)
        echo(f"server: {record['server']}")
    if timeline is not None:
        _write_timeline(timeline, record)
        if not as_json:
            click.echo(f"wrote {timeline}")


def _code(verdict: str) -> int:
    return {"CONFORMS": CONFORMS, "DIVERGES": DIVERGES}.get(verdict, INCOMPLETE)


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

    steps = [Step(0, None, model.describe(visited[0]), model.summary(visited[0]), visited[0])]
    for k, (action, state) in enumerate(zip(actions, visited[1:], strict=True), start=1):
        steps.append(Step(k, action, model.describe(state), model.summary(state), state))
    trace = Trace(tuple(steps), saved.loop_from)
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
    max_steps: int,
    budget: float,
    as_json: bool,
    timeline: Path | None,
) -> int:
    """N random schedules on the real system, every observation checked against the model."""
    from leadercheck.checker import cli  # noqa: PLC0415
    from leadercheck.checker.conform.bindings import binding_for, protocols_on  # noqa: PLC0415
    from leadercheck.checker.conform.random_walks import random_walks  # noqa: PLC0415
    from leadercheck.checker.conform.run import running_servers, world_for  # noqa: PLC0415

    if schedules < 1 or schedules > 100_000:
        raise LeadercheckError(f"--random {schedules}: give a number of schedules from 1")
    if not 1 <= max_steps <= 200:
        raise LeadercheckError(f"--steps {max_steps}: give 1 to 200 steps per schedule")
    catalogue = cli._catalogue(model_spec)
    name = protocol_name or (protocols_on(against) or [""])[0]
    entry = catalogue.lookup(name)
    values = entry.resolve(dict(given))
    binding = binding_for(entry.name, against, values)
    binding.check_timing(timing)
    model = cli._checked_model(catalogue, entry, values, ())
    check_outputs(timeline, None, endpoint)
    echo = _printer(as_json)
    params = " ".join(f"{k}={v}" for k, v in sorted(values.items()))
    echo(f"conform --random {schedules}: {entry.name} ({params}) against {against},"
         f" seed {seed}, at most {max_steps} steps per schedule, budget {budget:g} s")  # fmt: skip
    echo(f"time: {time_mapping(timing)}")

    def progress(run: Any) -> None:
        n = len(run.entries) - 1
        echo(f"  schedule of {n} step{'s' * (n != 1)}: {run.verdict.lower()}")

    with (
        running_servers(against, endpoint) as running,
        tempfile.TemporaryDirectory(prefix="leadercheck-clients-") as logs,
    ):
        found = random_walks(
            model, binding, lambda: world_for(binding, running, timing, Path(logs)),
            schedules, seed, max_steps, budget, progress,
        )  # fmt: skip
    shortest = found.shortest
    record: dict[str, Any] = {
        "schema": "leadercheck.conformance-random/1",
        "protocol": entry.name,
        "params": dict(sorted(values.items())),
        "system": against,
        "server": running.version,
        "time_mapping": time_mapping(timing),
        "seed": seed,
        "schedules_run": found.schedules,
        "steps_run": found.steps,
        "seconds": found.seconds,
        "budget_ran_out": found.out_of_budget,
        "interrupted": found.interrupted,
        "verdict": "DIVERGES" if shortest else ("INCOMPLETE" if found.interrupted else "CONFORMS"),
        "divergent_history": None,
    }
    if shortest is not None:
        d = shortest.divergence
        assert d is not None
        record["divergent_history"] = {
            "steps": len(shortest.entries) - 1,
            "found_among": len(found.failures),
            "divergence": {
                "step": d.step,
                "model": d.model_event,
                "real": d.real_event,
                "differences": d.differences(),
            },  # fmt: skip
            "timeline": [e.to_json() for e in shortest.entries],
        }
    if as_json:
        click.echo(_record_json(record))
    else:
        _random_summary(record)
    if timeline is not None:
        _write_timeline(timeline, record)
    return _code(record["verdict"])


def _random_summary(record: Mapping[str, Any]) -> None:
    ran = (
        f"{record['schedules_run']} schedules, {record['steps_run']} steps on"
        f" {record['server']} in {record['seconds']:g} s"
    )
    if record["budget_ran_out"]:
        ran += " (the time budget ran out)"
    history = record["divergent_history"]
    if history is None:
        verdict = record["verdict"]
        tail = (
            "every observed history is a path of the model"
            if verdict == "CONFORMS"
            else ("interrupted")
        )
        click.echo(f"{verdict}: {ran}; {tail}")
        return
    d = history["divergence"]
    shrunk = f"{history['steps']} steps (the shortest of {history['found_among']} found)"
    click.echo(f"DIVERGES: {ran}; a history the model cannot produce, shrunk to {shrunk}:")
    for entry in history["timeline"]:
        click.echo(entry_line(entry))
    click.echo(f"  at step {d['step']}: " + "; ".join(d["differences"]))

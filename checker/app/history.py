"""`verify history FILE`: a recorded history judged on its own and against a model.

The file is read and checked whole (format, nodes, times, tokens), the protocol and its
parameters resolved and fitted, and `--out` checked, before any search: bad input is one
line, exit 2, nothing written. Then single-leader and no-stale-write are judged on the
events themselves (checker/history/safety.py) and the model is searched for a behaviour
that shows exactly those events (checker/history/permits.py). Exit codes: 0 the model
permits the history and it breaks neither claim, 1 it breaks a claim or the model cannot
take it (both are said when both), 3 Ctrl-C (nothing written). Charts only with --out.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import click

from leadercheck.checker.app.args import Described, Once, Seconds, output_dir, parse_params
from leadercheck.checker.app.output import reporting, say, warn
from leadercheck.checker.engine.explore import peak_memory
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.history.chart import contexts, marked, replayed
from leadercheck.checker.history.events import History, seconds
from leadercheck.checker.history.fit import Fitted, fit, token_numbers
from leadercheck.checker.history.format import DEFAULT_PROTOCOL, load_history
from leadercheck.checker.history.permits import BEAM, Permission, Refusal, permits
from leadercheck.checker.history.safety import (
    NO_STALE_WRITE,
    SINGLE_LEADER,
    VIOLATED,
    Finding,
    judge,
)
from leadercheck.checker.io import files
from leadercheck.checker.model import TICK
from leadercheck.checker.protocols.catalogue import Catalogue, built_in
from leadercheck.checker.render import SvgUnavailable, dot_to_svg, trace_to_dot, trace_to_json
from leadercheck.models.cluster import ClusterModel
from leadercheck.models.cluster.base import BUILT_IN_FAULTS
from leadercheck.specs.expectations import load_expectations

SUFFIXES = (".json", ".dot", ".svg")
PERMITTED, NOT_PERMITTED, INCOMPLETE = "PERMITTED", "NOT PERMITTED", "INCOMPLETE"
REPORT_SCHEMA = "leadercheck.history-report/1"


@click.command(
    "history",
    params=[
        Described(
            ["history_file"], "the recorded history to judge", metavar="FILE",
            type=click.Path(path_type=Path),
        ),
        Once(["--protocol", "protocol_name"], metavar="NAME",
             help=f"The protocol the history is a run of (else the file's, else "
                  f"{DEFAULT_PROTOCOL}; see verify --list)."),
        click.Option(["-p", "--param", "params"], multiple=True, metavar="NAME=VALUE",
                     help="Set a model parameter (repeatable; over the file's params). A "
                          "fault budget given is kept; one not given is unbounded."),
        Once(["--tick"], type=Seconds(positive=True), metavar="SECONDS",
             help="How long one model tick is, in seconds (over the file's tick_seconds)."),
        Once(["--out"], type=click.Path(path_type=Path), metavar="DIR",
             help="Write the charts (JSON, DOT, SVG) into DIR; nothing is written without it."),
        click.Option(["--json", "as_json"], is_flag=True,
                     help="Print one JSON object on stdout and nothing else."),
        click.Option(["--debug"], is_flag=True, help="Show tracebacks for errors."),
    ],
)  # fmt: skip
@reporting
def history_command(
    history_file: Path,
    protocol_name: str | None,
    params: tuple[str, ...],
    tick: float | None,
    out: Path | None,
    as_json: bool,
    debug: bool,
) -> int:
    """Judge a recorded history (acquire, renew, lose, write): is it a behaviour the model
    permits, and does it break single-leader or no-stale-write?"""
    if out is not None:
        output_dir(out, "--out")
    history = load_history(history_file)
    catalogue = built_in(load_expectations())
    fitted, model = fitted_model(catalogue, history, protocol_name, params, tick)
    stem = history_file.stem
    if out is not None:
        _check_outputs(history_file, out, stem)
    findings = judge(history.events, fitted.ttl_seconds)
    if not as_json:  # the search can be long: say that it has begun (progress on stderr)
        warn(f"{history_file}: {len(history.events)} events, taken through {fitted.protocol.name}")
    permission = permits(model, history, fitted)
    written = (
        []
        if permission.interrupted
        else _charts(catalogue, history, fitted, permission, findings, out, stem)
    )
    if as_json:
        say(json.dumps(_report(history, fitted, permission, findings, written), indent=2,
                       sort_keys=True))  # fmt: skip
    else:
        say("\n".join(report_lines(history, fitted, permission, findings, written)))
    if permission.interrupted:
        return 3  # judged nothing to the end: never 0 or 1
    broken = not permission.permitted or any(f.verdict == VIOLATED for f in findings)
    return 1 if broken else 0


def fitted_model(
    catalogue: Catalogue,
    history: History,
    protocol_name: str | None,
    params: Sequence[str],
    tick: float | None,
) -> tuple[Fitted, ClusterModel]:
    """The protocol the history names (or --protocol), its parameters fitted, its model."""
    protocol = catalogue.lookup(protocol_name or history.protocol or DEFAULT_PROTOCOL)
    defaults = catalogue.build(protocol, protocol.resolve({}))
    if not isinstance(defaults, ClusterModel):
        raise LeadercheckError(
            f"{protocol.name}: verify history follows the cluster protocols (models/cluster: "
            "nodes, a store, a storage), and this one is not built on them"
        )
    budgets = [*BUILT_IN_FAULTS, *(kind.name for kind in defaults.fault_kinds)]
    told = Fraction(repr(tick)) if tick is not None else None
    fitted = fit(protocol, history, parse_params(params), told, budgets)
    model = catalogue.build(protocol, fitted.values)
    assert isinstance(model, ClusterModel), "the same builder made a cluster model above"
    return fitted, model


def _check_outputs(history_file: Path, out: Path, stem: str) -> None:
    """Every chart file --out may receive, checked now: never the history itself, never a
    link, a FIFO, a device or a directory (a missing --out is made when written)."""
    if not out.is_dir():
        return
    for what in ("history", SINGLE_LEADER, NO_STALE_WRITE):
        for suffix in SUFFIXES:
            target = out / f"{stem}.{what}{suffix}"
            if target.exists() and os.path.samefile(target, history_file):
                raise LeadercheckError(f"--out {out}: {target} is the history itself")
            files.check_output_file(target, "--out")


def _charts(
    catalogue: Catalogue,
    history: History,
    fitted: Fitted,
    permission: Permission,
    findings: Sequence[Finding],
    out: Path | None,
    stem: str,
) -> list[str]:
    """Each chart as JSON, DOT and SVG in `out`, all of them or none (none without --out).
    The DOT and SVG mark the steps that took events in their notes; the JSON keeps the
    model's own notes, so `verify replay` re-executes it as it is."""
    if out is None:
        return []

    def build(values: Mapping[str, int]) -> Any:
        return catalogue.build(fitted.protocol, values)

    trace, values = replayed(build, fitted, permission.steps)
    broken = [
        (catalogue.claims[f.claim], f.reason, f.breaking)
        for f in findings
        if f.verdict == VIOLATED and f.breaking is not None
    ]
    plain = contexts(trace, history, fitted, values, permission, broken)
    drawn = contexts(
        marked(trace, history, permission), history, fitted, values, permission, broken
    )
    contents: dict[str, str | bytes] = {}
    for suffix, ctx in drawn.items():
        name = f"{stem}.{suffix}"
        dot = contents[f"{name}.dot"] = trace_to_dot(ctx)
        contents[f"{name}.json"] = trace_to_json(plain[suffix])
        try:
            contents[f"{name}.svg"] = dot_to_svg(dot)
        except SvgUnavailable as exc:
            warn(f"note: {exc}")
    return [str(path) for path in files.write_files(out, contents)]


def _verdict(permission: Permission) -> str:
    if permission.interrupted:
        return INCOMPLETE
    return PERMITTED if permission.permitted else NOT_PERMITTED


def report_lines(
    history: History,
    fitted: Fitted,
    permission: Permission,
    findings: Sequence[Finding],
    written: Sequence[str],
) -> list[str]:
    """The report as text: the history, the model, the verdicts, the charts."""
    events = history.events
    nodes = history.nodes or sorted({e.node for e in events}, key=lambda n: int(n[1:]))
    tokens = len(token_numbers(history).numbers)
    lines = [
        f"history {history.source}: {len(events)} events over {seconds(events[-1].at)}, "
        f"{len(nodes)} node{'s' * (len(nodes) != 1)}, {tokens} token{'s' * (tokens != 1)}"
        + (f" (a {history.origin})" if history.origin != "history" else ""),
        f"model: {fitted.protocol.name} {fitted.words()}",
        f"time: a tick is {seconds(fitted.tick)}; an event at t s is taken after floor(t / "
        f"tick) or ceil(t / tick) ticks; a lease lasts {seconds(fitted.ttl_seconds)}",
    ]
    lines += _permission_lines(history, permission)
    for f in findings:
        lines.append(f"{f.verdict:<14} {f.claim}: {f.reason}")
        if f.count > 1:
            lines.append(f"{'':<14} ({f.count} times in all; the first is told)")
    if written:
        svg = [p for p in written if p.endswith(".svg")] or [
            p for p in written if p.endswith(".dot")
        ]
        lines.append(f"chart: {', '.join(svg)}")
    lines.append(f"verdict: {_summary(permission, findings)}")
    return lines


def _permission_lines(history: History, permission: Permission) -> list[str]:
    p = permission
    ticks = sum(1 for action, _ in p.steps if action.kind == TICK)
    cost = f"{p.states:,} states in {p.seconds:.2f} s"
    if p.passes > 1:
        cost += f" (two passes: the first followed at most {BEAM} states from event to event)"
    if p.interrupted:
        return [f"{INCOMPLETE:<14} interrupted: the model took {_taken(p.taken)} so far; {cost}"]
    if p.refusal is None:
        return [
            f"{PERMITTED:<14} the model takes all {p.events} events: {len(p.steps)} steps "
            f"({ticks} ticks); {cost}"
        ]
    return [
        f"{NOT_PERMITTED:<14} the model takes {_taken(p.taken)} but not "
        f"{p.refusal.event.named()}; {cost}",
        *(f"{'':<14} {line}" for line in refusal_lines(history, p.refusal)),
    ]


def _taken(count: int) -> str:
    if count == 0:
        return "no event"
    if count <= 2:
        return "event 1" if count == 1 else "events 1 and 2"
    return f"events 1 to {count}"


def refusal_lines(history: History, refusal: Refusal) -> list[str]:
    """What the model would have to show, and what it could show at that time instead."""
    want, event = refusal.want, refusal.event
    when = f"t={want.lo}" if want.lo == want.hi else f"t={want.lo} or t={want.hi}"
    lines = []
    node = want.node if event.node == want.node else f"{want.node} ({event.node})"
    if want.seen is None:
        lines.append(f"the model would have {node} running and not leading at {when}")
        if refusal.leads_always and refusal.reached >= want.lo:
            lines.append(f"but {node} leads (or cannot run) in every state it can be in then")
    else:
        seen = want.seen
        words = f"{node} {seen.kind} token {seen.token}"
        if seen.accepted is not None:
            words += " accepted" if seen.accepted else " rejected"
        lines.append(f"the model would have to show {words} at {when}")
        if event.token is not None and event.token != seen.token:
            lines.append(f"(the history's token {event.token} is the model's token {seen.token}: "
                         "tokens are numbered in the order first seen)")  # fmt: skip
    if refusal.reached < want.lo:
        lines.append(f"but time cannot get past t={refusal.reached} in any state that agrees "
                     "with the events before (a running node owes a step first)")  # fmt: skip
    if refusal.could:
        lines.append("what the model could show at that time instead:")
        lines += [f"  {text}" for text in refusal.could]
        if refusal.more:
            lines.append(f"  ... and {refusal.more} more")
    elif refusal.reached >= want.lo:
        lines.append("the model shows no event at that time (only unobserved steps)")
    return lines


def _summary(permission: Permission, findings: Sequence[Finding]) -> str:
    broken = [f"breaks {f.claim}" for f in findings if f.verdict == VIOLATED]
    if permission.interrupted:
        return "; ".join(["INCOMPLETE (interrupted)", *broken])
    parts = [] if permission.permitted else ["not permitted by the model"]
    return "; ".join(parts + broken) or "permitted by the model, breaks no claim"


def _report(
    history: History,
    fitted: Fitted,
    permission: Permission,
    findings: Sequence[Finding],
    written: Sequence[str],
) -> dict[str, Any]:
    """The report as one JSON object (--json)."""
    p = permission
    refused = None
    if p.refusal is not None:
        r = p.refusal
        refused = {
            "event": r.event.number,
            "at": float(r.event.at),
            "text": r.event.text(),
            "ticks": [r.want.lo, r.want.hi],
            "reached": r.reached,
            "explanation": refusal_lines(history, r),
            "could": list(r.could),
        }
    return {
        "schema": REPORT_SCHEMA,
        "file": history.source,
        "origin": history.origin,
        "protocol": fitted.protocol.name,
        "params": fitted.shown(),
        "fitted": list(fitted.fitted),
        "unbounded": list(fitted.unbounded),
        "tick_seconds": float(fitted.tick),
        "ttl_seconds": float(fitted.ttl_seconds),
        "events": p.events,
        "verdict": _verdict(p),
        "taken": p.taken,
        "refused": refused,
        "claims": [
            {
                "name": f.claim,
                "verdict": f.verdict,
                "reason": f.reason,
                "events": list(f.events),
                "count": f.count,
            }
            for f in findings
        ],
        "stats": {
            "states": p.states,
            "transitions": p.transitions,
            "steps": len(p.steps),
            "passes": p.passes,
            "seconds": round(p.seconds, 6),
            "states_per_second": round(p.states / p.seconds, 1) if p.seconds > 0 else 0.0,
            "peak_memory_bytes": peak_memory(),
        },
        "files": list(written),
    }

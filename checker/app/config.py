"""`verify config`: a real configuration judged, or a directory of them gated.

Every file is read and checked (format, knobs, environment, expectations) and every
output path is checked before any model runs, so bad input is one line, exit 2, with
nothing written. A file may configure several leader elections (a Deployment's sidecars, a
kubeadm configuration's controller manager and scheduler): each is judged. Exit codes: 0
every claim SAFE (with --all: every verdict as expected), 1 a claim UNSAFE or a system rule
broken (with --all: a verdict other than expected), 3 a claim UNDECIDED (a knob it rests on
cannot be read), the run interrupted, or (with --all) a file that cannot be judged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

import click

from leadercheck.checker.app.args import Described, Once, output_dir, output_file
from leadercheck.checker.app.output import reporting, say, warn
from leadercheck.checker.config.environment import NAMES as ENVIRONMENT
from leadercheck.checker.config.environment import environment_value
from leadercheck.checker.config.judge import (
    SAFE,
    STALE,
    UNDECIDED,
    UNSAFE,
    Finding,
    Judgement,
    judge,
)
from leadercheck.checker.config.knobs import Configuration, load_configurations
from leadercheck.checker.config.questions import timing_of
from leadercheck.checker.config.systems import SYSTEMS
from leadercheck.checker.engine.interrupts import real_interrupt
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.io import files
from leadercheck.checker.render.context import TraceContext, seconds_text
from leadercheck.checker.render.files import write_trace_files
from leadercheck.checker.render.gate_report import JunitCase, junit_suite

SUFFIXES = (".yml", ".yaml", ".cfg", ".conf", ".properties", ".flags", ".txt")
MOST_FILES = 1000  # a directory of configurations, not a file system
EXIT = {SAFE: 0, UNSAFE: 1, UNDECIDED: 3}


def _environment_options() -> list[click.Option]:
    helps = {
        "pause": "Longest process pause (GC, VM stall), e.g. 10s [default 10 s].",
        "clock_drift": "Clock drift rate between nodes, e.g. 0.01 or 1% [default 1%].",
        "network_delay": "Longest one-way network delay, e.g. 500ms [default 0.5 s].",
        "dcs_latency": "Longest request to the store (DCS, API server) and its answer "
        "[default 0.5 s].",
        "partition": "Longest the store may be out of a node's reach: a partition from it, "
        "or its outage [default 60 s].",
    }
    return [
        Once([f"--{name.replace('_', '-')}", name], metavar="VALUE", help=helps[name])
        for name in ENVIRONMENT
    ]


@click.command(
    "config",
    params=[
        Described(
            ["target"],
            "the configuration file to judge (with --all: the directory of them)",
            metavar="FILE|DIR",
            type=click.Path(path_type=Path),
        ),
        Once(
            ["--system"],
            type=click.Choice(list(SYSTEMS)),
            help="The system the file configures (inferred from the file when not given).",
        ),
        click.Option(
            ["--all", "gate"],
            is_flag=True,
            help="Gate every configuration in the "
            "directory DIR against the verdicts each expects (leadercheck.expect).",
        ),
        Once(
            ["--out"],
            type=click.Path(path_type=Path),
            default=Path("counterexamples"),
            show_default=True,
            help="Directory for the counterexample charts.",
        ),
        Once(
            ["--junit"],
            type=click.Path(path_type=Path),
            metavar="FILE",
            help="With --all: write a JUnit XML report.",
        ),
        click.Option(
            ["--json", "as_json"],
            is_flag=True,
            help="Print one JSON object on stdout and nothing else.",
        ),
        *_environment_options(),
    ],
)
@reporting
def config_command(
    target: Path,
    system: str | None,
    gate: bool,
    out: Path,
    junit: Path | None,
    as_json: bool,
    **environment: str | None,
) -> int:
    """Judge a Patroni, Kubernetes, etcd, ZooKeeper or Redlock configuration: SAFE with its
    margin, or UNSAFE with the shortest counterexample drawn in seconds."""
    if junit is not None and not gate:
        raise LeadercheckError("--junit goes with --all (a gate's report)")
    if not gate and target.is_dir():
        raise LeadercheckError(f"{target} is a directory: give a file, or --all {target}")
    options = _options(environment)
    configs: list[Configuration] = []
    unjudged: list[tuple[str, str]] = []  # (file, why) the gate lists
    for path in _directory(target) if gate else [target]:
        try:
            configs += [_with_options(c, options) for c in load_configurations(path, system)]
        except LeadercheckError as exc:
            if not gate:
                raise
            unjudged.append((str(path), str(exc).removeprefix(f"{path}: ")))
    if gate and not configs:
        why = "; ".join(f"{f}: {w}" for f, w in unjudged[:3])
        raise LeadercheckError(f"{target}: nothing to judge ({why})")
    output_dir(out, "--out")
    if junit is not None:
        output_file(junit, "--junit")
    judgements = []
    cut = False  # a Ctrl-C between two searches: the judging so far is still reported
    try:
        for config in configs:
            if not as_json:
                warn(f"{config.title}: {config.program}")
            judgement = judge(config, progress=None if as_json else warn)
            judgements.append((judgement, _write_charts(judgement, out, len(configs) > 1)))
            if judgement.interrupted:
                break
    except KeyboardInterrupt:
        if not judgements or not real_interrupt():
            raise
        cut = True
    interrupted = cut or any(j.interrupted for j, _ in judgements)
    if gate:
        return _gate(judgements, unjudged, junit, as_json, interrupted, len(configs))
    regions = [_regions(j) for j, _ in judgements]
    if as_json:
        docs = [_json(j, charts, r) for (j, charts), r in zip(judgements, regions, strict=True)]
        doc = (
            docs[0]
            if len(docs) == 1
            else {
                "file": str(target),
                "verdict": _worst(judgements, interrupted),
                "elections": docs,
            }
        )
        say(json.dumps(doc, indent=2, sort_keys=True))
    else:
        blocks = [
            report_lines(j, charts, r) for (j, charts), r in zip(judgements, regions, strict=True)
        ]
        say("\n\n".join("\n".join(b) for b in blocks))
    if interrupted:
        return 3
    return EXIT[_worst(judgements, False)]


def _worst(judgements: Sequence[tuple[Judgement, Any]], interrupted: bool) -> str:
    if interrupted:
        return "INCOMPLETE"
    verdicts = {j.verdict for j, _ in judgements}
    return next((v for v in (UNSAFE, UNDECIDED) if v in verdicts), SAFE)


def _directory(target: Path) -> list[Path]:
    if not target.is_dir():
        raise LeadercheckError(f"--all needs a directory of configurations, not {target}")
    found = sorted(
        p
        for p in target.iterdir()
        if p.suffix in SUFFIXES and not p.name.startswith(".") and not p.is_symlink()
    )
    if not found:
        raise LeadercheckError(
            f"{target} holds no configuration files (named *{', *'.join(SUFFIXES)})"
        )
    if len(found) > MOST_FILES:
        raise LeadercheckError(
            f"{target} holds {len(found)} configurations, more than {MOST_FILES}"
        )
    return found


def _options(given: Mapping[str, str | None]) -> dict[str, float]:
    """The environment the command line states (each checked before any file is read)."""
    return {
        name: environment_value(name, raw, f"--{name.replace('_', '-')}")
        for name, raw in given.items()
        if raw is not None
    }


def _with_options(config: Configuration, values: Mapping[str, float]) -> Configuration:
    """The environment the command line states instead of the file's (or the default)."""
    return replace(config, environment=replace(config.environment, **values))


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text).strip("-")[:60]


def _write_charts(judgement: Judgement, out: Path, several: bool) -> dict[str, list[str]]:
    """Each UNSAFE claim's counterexample as JSON, DOT and SVG, its time column in seconds."""
    config = judgement.config
    stem = Path(config.source).stem + (f".{_slug(config.name)}" if config.name and several else "")
    written: dict[str, list[str]] = {}
    for f in judgement.findings:
        if f.verdict != UNSAFE or f.run is None or f.run.outcome.trace is None:
            continue
        run = f.run
        ctx = TraceContext(
            run.protocol,
            run.params,
            run.outcome,
            title=f"{config.title}: {f.claim} UNSAFE ({run.protocol}, a tick is "
            f"{seconds_text(run.tick)} s)",
            tick_seconds=run.tick,
        )
        done = write_trace_files(out, f"{stem}.{f.claim}", ctx)
        if done.note:
            warn(f"note: {done.note}")
        written[f.claim] = [str(p) for p in done.paths]
    return written


def _regions(judgement: Judgement) -> dict[str, list[str]]:
    """z3's safe region around the configuration, by claim (z3 is loaded only here)."""
    stale = judgement.finding(STALE)
    if judgement.interrupted or stale is None or stale.lines[0].startswith("cannot tell"):
        return {}
    from leadercheck.checker.config.region import stale_leader_region

    region = stale_leader_region(judgement.config, timing_of(judgement.config), judgement.values)
    if stale.verdict == SAFE and not region.inside:  # a second path (a watchdog) keeps it safe
        return {}
    return {STALE: region.lines()}


def report_lines(
    judgement: Judgement, charts: Mapping[str, Sequence[str]], regions: Mapping[str, list[str]]
) -> list[str]:
    c = judgement.config
    system = SYSTEMS[c.system]
    facts = ", ".join(f"{k} {v}" for k, v in c.facts.items() if k != "operator")
    lines = [f"{c.title}: {system.title}, {c.program}" + (f" ({facts})" if facts else "")]
    width = max((len(k.label) for k in c.knobs.values()), default=0)
    texts = [k.text() if k.readable else "cannot be read" for k in c.knobs.values()]
    room = max((len(t) for t in texts), default=0)
    for knob, value in zip(c.knobs.values(), texts, strict=True):
        where = knob.origin if knob.readable else knob.problem
        lines.append(f"  {knob.label:<{width}}  {value:<{room}}  {where}")
    lines += [f"  note: {note}" for note in (*c.notes, *judgement.notes)]
    lines.append(f"  environment: {'; '.join(c.environment.lines())}")
    for f in judgement.findings:
        lines.append(f"{f.verdict:<9} {f.claim}: {f.lines[0] if f.lines else ''}{f.rests_on}")
        lines += [f"          {line}" for line in f.lines[1:]]
        if f.claim == STALE:
            lines += [f"          {line}" for line in regions.get(STALE, ())]
        if f.run is not None and f.claim in charts:
            svg = [p for p in charts[f.claim] if p.endswith(".svg")] or list(charts[f.claim])
            lines.append(
                f"          counterexample: {svg[0]} ({f.run.protocol} at "
                f"{seconds_text(f.run.tick)} s a tick, {len(f.run.outcome.trace or ())} steps)"
            )
    lines += [f"  {line}" for line in judgement.failover]
    verdict = "INCOMPLETE (interrupted)" if judgement.interrupted else judgement.verdict
    lines.append(f"verdict: {verdict}")
    return lines


def _json(
    judgement: Judgement, charts: Mapping[str, Sequence[str]], regions: Mapping[str, list[str]]
) -> dict[str, Any]:
    c = judgement.config
    return {
        "file": c.source,
        "election": c.name,
        "system": c.system,
        "program": c.program,
        "facts": dict(c.facts),
        "knobs": {n: k.value for n, k in c.knobs.items()},
        "origins": {n: (k.origin if k.readable else k.problem) for n, k in c.knobs.items()},
        "defaulted": list(c.defaulted),
        "unreadable": [n for n, k in c.knobs.items() if not k.readable],
        "notes": [*c.notes, *judgement.notes],
        "environment": {name: getattr(c.environment, name) for name in ENVIRONMENT},
        "verdict": "INCOMPLETE" if judgement.interrupted else judgement.verdict,
        "claims": [
            _finding_json(f, charts.get(f.claim, ()), regions.get(f.claim, ()))
            for f in judgement.findings
        ],
        "failover": list(judgement.failover),
    }


def _finding_json(f: Finding, written: Sequence[str], region: Sequence[str]) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "claim": f.claim,
        "verdict": f.verdict,
        "lines": list(f.lines),
        "defaults": list(f.defaults),
    }
    if region:
        doc["region"] = [line.strip() for line in region]
    if f.run is not None:
        doc["model"] = {
            "protocol": f.run.protocol,
            "params": dict(f.run.params),
            "tick_seconds": f.run.tick,
            "states": f.run.states,
        }
    if written:
        doc["files"] = list(written)
    return doc


class GateRow(NamedTuple):
    """One claim of one configuration, against what the file expects."""

    source: str
    claim: str
    expected: str
    got: str
    finding: Finding

    @property
    def ok(self) -> bool:
        return self.got == self.expected


def _gate(
    judgements: list[tuple[Judgement, dict[str, list[str]]]],
    unjudged: list[tuple[str, str]],
    junit: Path | None,
    as_json: bool,
    interrupted: bool,
    total: int,
) -> int:
    """Each file's verdicts against what it expects (SAFE unless `leadercheck.expect`), and
    the files that cannot be judged, with why."""
    rows = [
        GateRow(j.config.title, f.claim, j.config.expected.get(f.claim, SAFE), f.verdict, f)
        for j, _ in judgements
        for f in j.findings
        if not f.interrupted  # the claim the Ctrl-C cut short was not judged
    ]
    failed = [r for r in rows if not r.ok]
    if junit is not None:
        cases = [
            JunitCase(
                r.source,
                r.claim,
                None,
                "" if r.ok else f"expected {r.expected}, got {r.got}",
                "\n".join(r.finding.lines) + r.finding.rests_on,
            )
            for r in rows
        ] + [JunitCase(f, "read", None, f"cannot judge: {why}", why) for f, why in unjudged]
        files.write_text(junit, junit_suite("leadercheck-config", cases), "--junit")
    if as_json:
        doc = {
            "passed": not failed and not interrupted and not unjudged,
            "interrupted": interrupted,
            "configurations": [_json(j, charts, {}) for j, charts in judgements],
            "unjudged": [{"file": f, "why": why} for f, why in unjudged],
        }
        say(json.dumps(doc, indent=2, sort_keys=True))
    else:
        for r in rows:
            said = f" ({r.finding.lines[0]})" if not r.ok and r.finding.lines else ""
            mark = "ok  " if r.ok else "DIFF"
            say(
                f"{mark} {r.source} {r.claim}: expected {r.expected}, got {r.got}{said}"
                f"{r.finding.rests_on}"
            )
        for f, why in unjudged:
            say(f"SKIP {f}: cannot judge: {why}")
        if interrupted:
            say(f"interrupted after {len(judgements)} of {total} configurations")
        tail = f"; {len(unjudged)} file(s) cannot be judged" if unjudged else ""
        say(f"{len(rows) - len(failed)} of {len(rows)} verdicts as expected{tail}")
    if interrupted:
        return 3
    if failed and not all(r.got == UNDECIDED for r in failed):
        return 1
    return 3 if failed or unjudged else 0

"""`verify --protocol NAME`: search one protocol's states and report its verdicts.

Everything is checked before the search: the parameters, the output directory, the
checkpoint directory (and the checkpoint to resume), the strategy's settings. A model
error prints one line; the trace that led there goes to a file.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import click

from leadercheck.checker.app import common, search_options
from leadercheck.checker.app.args import Count, Once, Seconds, given_params, output_dir
from leadercheck.checker.app.modes import Call, Mode
from leadercheck.checker.app.output import say
from leadercheck.checker.engine.checkpoint import Checkpoints
from leadercheck.checker.engine.graph import (
    GraphTooLarge,
    StateGraph,
    fitting_parameters,
    state_graph,
)
from leadercheck.checker.engine.measure import measure
from leadercheck.checker.engine.settings import (
    DEFAULT_DEPTH,
    DEFAULT_SECONDS,
    MAX_SWARM,
    NO_REDUCTIONS,
    Sampling,
    SearchSettings,
)
from leadercheck.checker.engine.strategies import chosen as chosen_strategy
from leadercheck.checker.engine.strategies import describe, searcher
from leadercheck.checker.errors import LeadercheckError, ModelError
from leadercheck.checker.io.sizes import parse_size
from leadercheck.checker.model import Model
from leadercheck.checker.properties import Property
from leadercheck.checker.protocols.catalogue import Catalogue
from leadercheck.checker.render.files import Written, write_counterexamples, write_model_error
from leadercheck.checker.render.progress import ProgressLine
from leadercheck.checker.render.report import MeasureTable, Run, json_report, report_lines
from leadercheck.checker.result import CheckResult, EndReason, Verdict
from leadercheck.models.params import ProtocolEntry

EXIT = {Verdict.HOLDS: 0, Verdict.VIOLATED: 1, Verdict.INCOMPLETE: 3}
INCOMPLETE = 3

OPTIONS = (
    Once(
        ["--max-states"],
        type=Count(1),
        help="Stop with INCOMPLETE after this many distinct states.",
    ),
    Once(
        ["--max-depth"],
        type=Count(0),
        help="Explore at most this many steps from the initial states.",
    ),
    click.Option(
        ["--progress"],
        is_flag=True,
        help="Print a progress line on stderr every second, also when stderr is no terminal "
        "(a CI log, a supervisor waiting for the search to start).",
    ),
    click.Option(
        ["--stats", "with_stats"],
        is_flag=True,
        help="With --protocol: also report the protocol's measures (e.g. messages per election).",
    ),
    Once(
        ["--diagram"],
        type=click.Choice(["sequence", "state-graph"]),
        default="sequence",
        show_default=True,
        help="state-graph: also draw the explored state graph with the trace in red "
        "(<protocol>.state-graph.dot/.svg; small models only).",
    ),
    Once(
        ["--checkpoint", "checkpoint_dir"],
        type=click.Path(path_type=Path, file_okay=False),
        help="Save the search's progress in DIR at a level's start, every --checkpoint-every "
        "seconds and where the search stops, so --resume DIR can go on after Ctrl-C, a bound "
        "or a crash.",
    ),
    Once(
        ["--resume", "resume_dir"],
        type=click.Path(path_type=Path, file_okay=False),
        help="Go on from the checkpoint in DIR (of the same protocol, parameters and options); "
        "further checkpoints go there too unless --checkpoint says elsewhere.",
    ),
    Once(
        ["--checkpoint-every"],
        type=Seconds(),
        default=60.0,
        show_default=True,
        metavar="SECONDS",
        help="With --checkpoint or --resume: seconds between checkpoints (0: every level).",
    ),
    Once(
        ["--seed"],
        type=Count(0),
        help="With --strategy simulate or bitstate: the seed of the walks (or of a swarm's "
        "orders); the same seed gives the same trace. Default 1.",
    ),
    Once(
        ["--depth", "walk_depth"],
        type=Count(1),
        metavar="D",
        help=f"With --strategy simulate: the most steps of one walk (default {DEFAULT_DEPTH}).",
    ),
    Once(
        ["--walks"],
        type=Count(1),
        metavar="N",
        help="With --strategy simulate: run N walks (with --time too: whichever ends first).",
    ),
    Once(
        ["--time", "time_budget"],
        type=Seconds(positive=True),
        metavar="SECONDS",
        help=f"With --strategy simulate or bitstate: stop after SECONDS (simulate without "
        f"--walks: {DEFAULT_SECONDS:g}).",
    ),
    Once(
        ["--memory", "bit_memory"],
        metavar="SIZE",
        help="With --strategy bitstate: the bit array's size, e.g. 64M (rounded down to a power "
        "of two; default 64M).",
    ),
    Once(
        ["--swarm"],
        type=Count(1, MAX_SWARM),
        metavar="K",
        help="Run K diversified sampled searches as processes (simulate unless --strategy "
        "bitstate), all stopped at the first violation.",
    ),
)


def exit_code(result: CheckResult) -> int:
    """The verdict's exit code, the one the report's `verdict:` line states: a violation
    found and replayed is VIOLATED (1) even when Ctrl-C cut its shortening short (its trace is
    as found); otherwise a run stopped by Ctrl-C is incomplete (3)."""
    if result.verdict is Verdict.VIOLATED:
        return EXIT[Verdict.VIOLATED]
    return INCOMPLETE if result.end is EndReason.INTERRUPTED else EXIT[result.verdict]


def sampling_of(call: Call) -> Sampling:
    memory = call["bit_memory"]
    return Sampling.of(
        seed=call["seed"],
        depth=call["walk_depth"],
        walks=call["walks"],
        seconds=call["time_budget"],
        memory=parse_size(memory) if memory is not None else None,
    )


def run(call: Call) -> int:
    """Check one protocol: everything checked first, then the search, then the report."""
    settings = search_options.settings_of(
        call.values,
        call.given,
        trusted=call["model_spec"] is None,
        bounds=(call["max_states"], call["max_depth"]),
        sampling=sampling_of(call),
        swarm=call["swarm"],
    )
    with_html, out = common.html_target(call.values)
    output_dir(out, "--html" if with_html and call["html_dir"] else "--out")
    catalogue = common.catalogue_of(call["model_spec"])
    protocol = catalogue.lookup(call["protocol_name"])
    values = protocol.resolve(given_params(call["params"], call["nodes"]))
    properties = catalogue.expectations.properties(protocol.name)
    if not properties:
        raise LeadercheckError(
            f"{protocol.name}: {catalogue.expected_source} names no property for it"
        )
    checkpoints = _checkpoints(catalogue, protocol, values, properties, settings, call)
    model = common.checked_model(catalogue, protocol, values, properties)
    if checkpoints is not None and checkpoints.resume_from is not None:
        # once the model is built (its state classes loaded, wherever it imports them) and
        # before the search: a missing, unreadable or foreign checkpoint fails here
        checkpoints.load()
    graph = (
        _state_graph(catalogue, protocol, values, model)
        if call["diagram"] == "state-graph"
        else None
    )
    terminal = sys.stderr.isatty()
    wanted = terminal or call["progress"]
    progress = ProgressLine(sys.stderr, lines=not terminal) if wanted else None
    try:
        with searcher(settings) as search:
            result = search(model, properties, progress=progress, checkpoints=checkpoints)
    except ModelError as exc:  # one line; the trace that led there goes to a file
        path = write_model_error(out, protocol.name, values, exc, catalogue.model)
        where = "" if path is None else f"; the trace that led there: {path}"
        raise ModelError(f"{exc}{where}") from exc
    finally:
        if progress is not None:
            progress.clear()
    written = write_counterexamples(
        protocol.name, values, result, out, with_html, graph, catalogue.model
    )
    report = Run(
        protocol.name,
        values,
        result,
        written,
        catalogue.expectations.expected(protocol.name),
        describe(settings),
        catalogue.model,
    )
    tables: list[MeasureTable] = []
    if call["with_stats"] and result.end is not EndReason.INTERRUPTED:  # Ctrl-C ends the run
        unreduced = settings.but(progress=progress, reductions=NO_REDUCTIONS)
        try:
            tables = measures(protocol, unreduced)
        finally:
            if progress is not None:
                progress.clear()
    if call["as_json"]:
        say(json.dumps({**json_report(report), "measures": [t.to_json() for t in tables]}))
    else:
        say("\n".join(report_lines(report)))
        for table in tables:
            say("\n" + "\n".join(table.lines()))
        if call["with_stats"] and not tables:
            say(f"\n{protocol.name} declares no measures")
        say("\n".join(next_steps(written, catalogue.model)))
    code = exit_code(result)
    if code == 0 and not all(t.complete for t in tables):
        return INCOMPLETE  # a measure cut short by a bound or Ctrl-C
    return code


def next_steps(written: Mapping[str, Written], model: str | None) -> list[str]:
    """Where to look next, after a run that wrote a counterexample: its page when --html
    wrote one, else the suggestion to add --html."""
    paths = sorted(p for w in written.values() for p in w.paths)
    traces = [p for p in paths if p.suffix == ".json"]
    if not traces:
        return []
    page = traces[0].with_suffix(".html")
    page_words = f"open {page}" if page in paths else "add --html for a page"
    again = f" --model {model}" if model else ""
    return [
        "",
        f"next: `verify explain {traces[0]}{again}` tells it step by step; {page_words} to step "
        f"through it; `verify replay {traces[0]}{again} --protocol OTHER` runs its schedule "
        "on another variant",
    ]


def _state_graph(
    catalogue: Catalogue, protocol: ProtocolEntry, values: dict[str, int], model: Model[Any]
) -> StateGraph:
    """The whole state graph, before the search; a model too big to draw is refused in one
    line that says how big it is and which lower parameters would fit (nodes first, then
    the last declared: the fault budgets)."""
    try:
        return state_graph(model)
    except GraphTooLarge as exc:
        params = [p for p in protocol.params if not p.choices]
        order = [p for p in params if p.name == "nodes"]
        order += [p for p in reversed(params) if p.name != "nodes"]
        fit = fitting_parameters(
            partial(catalogue.build, protocol), values, [(p.name, p.low) for p in order], exc.limit
        )
        if fit is not None:
            lowered, states = fit
            given = " ".join(f"-p {k}={v}" for k, v in lowered.items())
            adding = any(values[p.name] != p.default for p in protocol.params)
            hint = f"try {'adding ' if adding else ''}{given} ({states:,} states)"
        else:
            lower = [f"{p.name}={values[p.name]}" for p in order if values[p.name] > p.low]
            hint = f"lower {', '.join(lower)}" if lower else "it cannot be made smaller"
        raise LeadercheckError(
            f"{protocol.name}: too many states for --diagram state-graph ({exc.size}; it draws"
            f" at most {exc.limit}): {hint}, or leave it out for the sequence diagram alone"
        ) from None


def _checkpoints(
    catalogue: Catalogue,
    protocol: ProtocolEntry,
    values: dict[str, int],
    properties: Sequence[Property],
    settings: SearchSettings,
    call: Call,
) -> Checkpoints | None:
    """Where this search saves its progress and what it resumes, checked before any work."""
    resume_dir = call["resume_dir"]
    directory = call["checkpoint_dir"] or resume_dir
    if directory is None:
        if "checkpoint_every" in call.given:
            raise LeadercheckError("--checkpoint-every goes with --checkpoint DIR or --resume DIR")
        return None
    reductions = settings.reductions
    identity = {
        "model": catalogue.model,
        "protocol": protocol.name,
        "params": dict(values),
        "properties": [p.name for p in properties],
        "symmetry": reductions.symmetry,
        "por": reductions.por,
        "exact": reductions.exact,
    }
    found = Checkpoints(directory, identity, call["checkpoint_every"], resume_dir)
    chosen_strategy(settings.but(checkpoints=found))  # the strategy refuses what it cannot save
    output_dir(directory, "--checkpoint" if call["checkpoint_dir"] else "--resume")
    return found


def measures(protocol: ProtocolEntry, settings: SearchSettings | None = None) -> list[MeasureTable]:
    """Run each of the protocol's measures at each of its sizes, within the `settings`'
    bounds (none if not given); Ctrl-C stops at the measurement it interrupts (the tables
    so far are returned)."""
    tables = []
    for m in protocol.measures:
        rows = []
        for size in m.sizes:
            found = measure(m.build(size), m.value, m.where, settings)
            rows.append((size, found))
            if found is not None and found.end is EndReason.INTERRUPTED:
                break
        tables.append(MeasureTable(m.title, m.size_name, tuple(rows)))
        if tables[-1].interrupted:
            break
    return tables


MODE = Mode(
    label="--protocol",
    flags=(),
    options=OPTIONS,
    shared=common.NAMES | search_options.NAMES,
    run=run,
)

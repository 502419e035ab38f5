"""`verify`: the one place that wires the catalogue, the specs, the engine and rendering.

Exit codes: 0 every checked property holds (or, with --all, every verdict is as
expected; with --prove, proved), 1 a property is violated (or a verdict differs, or a
counterexample to induction), 2 bad usage or a model error, 3 the search was incomplete
(a bound was hit) or z3 gave no answer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from leadercheck.checker.bench import (
    CASES,
    DEFAULT_SEARCHES,
    bench_lines,
    run_case,
    searches,
    with_reductions,
)
from leadercheck.checker.checkpoint import Checkpoints
from leadercheck.checker.engine.settings import (
    DEFAULT_DEPTH,
    DEFAULT_SECONDS,
    NO_REDUCTIONS,
    Reductions,
    Sampling,
    SearchSettings,
    default_max_memory,
)
from leadercheck.checker.engine.strategies import (
    chosen as chosen_strategy,
)
from leadercheck.checker.engine.strategies import (
    help_lines,
    iter_strategies,
    names,
    strategy,
)
from leadercheck.checker.engines import describe, searcher
from leadercheck.checker.errors import LeadercheckError, ModelError
from leadercheck.checker.gate import CaseOutcome, GateCase, GateReport, judge
from leadercheck.checker.graph import GraphTooLarge, StateGraph, fitting_parameters, state_graph
from leadercheck.checker.hashing import pin_hashing
from leadercheck.checker.measure import measure
from leadercheck.checker.model import Model
from leadercheck.checker.properties import Property
from leadercheck.checker.protocols import Catalogue, built_in, load_catalogue
from leadercheck.checker.render.cost_plot import write_cost_plot
from leadercheck.checker.render.explain import explain_lines
from leadercheck.checker.render.files import (
    check_writable,
    check_writable_file,
    write_counterexamples,
    write_model_error,
)
from leadercheck.checker.render.gate_report import (
    case_lines,
    json_summary,
    junit_xml,
    summary_lines,
    table_header,
    verdict_table,
)
from leadercheck.checker.render.golden import compare_golden, update_golden
from leadercheck.checker.render.html import overview_html
from leadercheck.checker.render.progress import ProgressLine
from leadercheck.checker.render.readme import check_block, replace_block
from leadercheck.checker.render.report import MeasureTable, Run, json_report, report_lines
from leadercheck.checker.render.text import step_count
from leadercheck.checker.render.trace_file import load_trace
from leadercheck.checker.replay import Replay, SavedTrace, replay
from leadercheck.checker.result import CheckResult, EndReason, Verdict
from leadercheck.checker.sampling.options import MAX_SWARM, SIMULATE
from leadercheck.checker.sizes import parse_size
from leadercheck.models.catalogue import PROTOCOLS, lookup
from leadercheck.models.params import ProtocolEntry
from leadercheck.specs.expectations import load_expectations

EXIT = {Verdict.HOLDS: 0, Verdict.VIOLATED: 1, Verdict.INCOMPLETE: 3}
COST_PROTOCOLS = ("bully", "raft")  # the message-passing elections `message-cost` compares
USAGE_ERROR = 2
CHECKPOINT_FLAGS = frozenset({"--checkpoint", "--resume"})
INCOMPLETE = 3
README_BLOCK = "verdicts"


@dataclass(frozen=True)
class Options:
    params: tuple[str, ...]
    nodes: int | None
    out: Path
    as_json: bool
    with_stats: bool = False
    with_html: bool = False
    html_dir: Path = Path("counterexamples")
    state_graph: bool = False
    search: SearchSettings = field(default_factory=SearchSettings)  # whole, to the strategy
    out_given: bool = False  # --out on the command line (not its default)
    checkpoint_dir: Path | None = None
    resume_dir: Path | None = None
    checkpoint_every: float = 60.0


class VerifyGroup(click.Group):
    """The `verify` command with the exit-code contract enforced around everything it runs.

    0 holds, 1 violated, 2 usage, model or internal error (one line on stderr; the
    traceback with --debug), 3 incomplete, Ctrl-C included. Only a verdict may exit 1:
    click's own errors (which exit 1 for some) and any unexpected exception exit 2.
    """

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        debug = "--debug" in argv
        if args is None and CHECKPOINT_FLAGS & {a.partition("=")[0] for a in argv}:
            pin_hashing(argv)  # a checkpoint's fingerprints must mean the same when resumed
        try:
            code = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
            code = code if isinstance(code, int) else 0
        except (click.exceptions.Abort, KeyboardInterrupt) as exc:
            if debug:
                traceback.print_exception(exc, file=sys.stderr)
            click.echo("interrupted", err=True)
            code = INCOMPLETE
        except click.ClickException as exc:
            if debug:
                traceback.print_exception(exc, file=sys.stderr)
            click.echo(f"error: {_one_line(exc.format_message())}", err=True)
            code = USAGE_ERROR
        except Exception as exc:  # a bug of ours or a library's: never read as a verdict
            if debug:
                traceback.print_exception(exc, file=sys.stderr)
            hint = "" if debug else " (--debug shows the traceback)"
            message = _one_line(f"{type(exc).__name__}: {exc}")
            click.echo(f"internal error: {message}{hint}", err=True)
            code = USAGE_ERROR
        if standalone_mode:
            sys.exit(code)
        return code


def _one_line(text: str) -> str:
    return " ".join(text.split())


@click.group(
    cls=VerifyGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--protocol", "protocol_name", metavar="NAME", help="Protocol to verify (see --list)."
)
@click.option(
    "--model",
    "model_spec",
    metavar="FILE.py|MODULE",
    help="Check the protocols your own module exports (PROTOCOLS, PROPERTIES, EXPECTED) "
    "instead of the built-in ones.",
)
@click.option(
    "--lint",
    is_flag=True,
    help="With --model: check the model itself (value semantics, fixed successor order, "
    "also under another hash seed) and search nothing.",
)
@click.option(
    "--list", "list_protocols", is_flag=True, help="List protocols, parameters, expected verdicts."
)
@click.option(
    "--all", "run_all", is_flag=True, help="Regression gate: every protocol against specs/."
)
@click.option(
    "-p",
    "--param",
    "params",
    multiple=True,
    metavar="NAME=VALUE",
    help="Set a model parameter (repeatable).",
)
@click.option("--nodes", type=int, help="Shorthand for -p nodes=N.")
@click.option(
    "--max-states",
    type=click.IntRange(min=1),
    help="Stop with INCOMPLETE after this many distinct states.",
)
@click.option(
    "--max-depth",
    type=click.IntRange(min=0),
    help="Explore at most this many steps from the initial states.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("counterexamples"),
    show_default=True,
    help="Directory for counterexample files (with --all: the golden directory).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON object on stdout and nothing else."
)
@click.option(
    "--junit", type=click.Path(path_type=Path), help="With --all: write JUnit XML to this file."
)
@click.option(
    "--check-golden",
    is_flag=True,
    help="With --all: fail if a regenerated counterexample differs from the one in --out.",
)
@click.option(
    "--update-golden", is_flag=True, help="With --all: rewrite the counterexamples in --out."
)
@click.option(
    "--readme",
    type=click.Path(path_type=Path, dir_okay=False),
    help="With --all: rewrite the verdict table in this README.",
)
@click.option(
    "--stats",
    "with_stats",
    is_flag=True,
    help="With --protocol: also report the protocol's measures (e.g. messages per election).",
)
@click.option(
    "--html",
    "html_dir",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[DIR]",
    help="Also write an offline HTML page per trace (to DIR, else --out); "
    "with --all, plus index.html linking every protocol.",
)
@click.option(
    "--diagram",
    type=click.Choice(["sequence", "state-graph"]),
    default="sequence",
    show_default=True,
    help="state-graph: also draw the explored state graph with the trace in red "
    "(<protocol>.state-graph.dot/.svg; small models only).",
)
@click.option(
    "--symmetry",
    is_flag=True,
    help="Store one state per orbit of the nodes the protocol declares interchangeable.",
)
@click.option(
    "--checkpoint",
    "checkpoint_dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="Save the search's progress in DIR at a level's start, every --checkpoint-every "
    "seconds, so --resume DIR can go on after Ctrl-C, a bound or a crash.",
)
@click.option(
    "--resume",
    "resume_dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="Go on from the checkpoint in DIR (of the same protocol, parameters and options); "
    "further checkpoints go there too unless --checkpoint says elsewhere.",
)
@click.option(
    "--checkpoint-every",
    type=click.FloatRange(min=0),
    default=60.0,
    show_default=True,
    metavar="SECONDS",
    help="With --checkpoint or --resume: seconds between checkpoints (0: every level).",
)
@click.option(
    "--exact",
    is_flag=True,
    help="Keep full states instead of 60-bit fingerprints: no collision can hide a state, "
    "at several times the memory (one process only).",
)
@click.option(
    "--por",
    is_flag=True,
    help="Partial-order reduction over the protocol's local actions (traces may be longer).",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Search with this many processes (states partitioned by fingerprint).",
)
@click.option(
    "--strategy",
    "--engine",
    "engine",
    type=click.Choice(names()),
    help=f"How to search ({help_lines()}). Default: bfs, or processes with --workers K.",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    help="With --strategy simulate or bitstate: the seed of the walks (or of a swarm's "
    "orders); the same seed gives the same trace. Default 1.",
)
@click.option(
    "--depth",
    "walk_depth",
    type=click.IntRange(min=1),
    metavar="D",
    help=f"With --strategy simulate: the most steps of one walk (default {DEFAULT_DEPTH}).",
)
@click.option(
    "--walks",
    type=click.IntRange(min=1),
    metavar="N",
    help="With --strategy simulate: run N walks (with --time too: whichever ends first).",
)
@click.option(
    "--time",
    "time_budget",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help=f"With --strategy simulate or bitstate: stop after SECONDS (simulate without "
    f"--walks: {DEFAULT_SECONDS:g}).",
)
@click.option(
    "--memory",
    "bit_memory",
    metavar="SIZE",
    help="With --strategy bitstate: the bit array's size, e.g. 64M (rounded down to a power "
    "of two; default 64M).",
)
@click.option(
    "--swarm",
    type=click.IntRange(1, MAX_SWARM),
    metavar="K",
    help="Run K diversified sampled searches as processes (simulate unless --strategy "
    "bitstate), all stopped at the first violation.",
)
@click.option(
    "--address", metavar="HOST:PORT", help="With an engine that joins a cluster: its address."
)
@click.option(
    "--max-memory",
    metavar="SIZE",
    help="Stop with INCOMPLETE when the search's resident memory reaches SIZE "
    "(e.g. 4G; default 80% of RAM).",
)
@click.option(
    "--prove",
    is_flag=True,
    help="z3: prove the claims for any number of nodes by an inductive invariant, or show "
    "a counterexample to induction.",
)
@click.option(
    "--without",
    "without",
    metavar="CONJUNCT",
    multiple=True,
    help="With --prove: leave this strengthening conjunct out (repeatable).",
)
@click.option(
    "--synthesize",
    is_flag=True,
    help="z3: the timing parameters (lease, TTL, drift, pause) that keep the protocol safe.",
)
@click.option(
    "--bmc",
    "bmc_bound",
    type=click.IntRange(min=0),
    metavar="K",
    help="z3: bounded model checking to K steps, cross-checked by explicit search.",
)
@click.option(
    "--solver-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=120.0,
    show_default=True,
    metavar="SECONDS",
    help="Give z3 this long in all; past it the answer is UNKNOWN (exit 3).",
)
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.pass_context
def main(
    ctx: click.Context,
    protocol_name: str | None,
    model_spec: str | None,
    lint: bool,
    list_protocols: bool,
    run_all: bool,
    params: tuple[str, ...],
    nodes: int | None,
    max_states: int | None,
    max_depth: int | None,
    out: Path,
    as_json: bool,
    junit: Path | None,
    check_golden: bool,
    update_golden: bool,
    readme: Path | None,
    with_stats: bool,
    html_dir: str | None,
    diagram: str,
    symmetry: bool,
    checkpoint_dir: Path | None,
    resume_dir: Path | None,
    checkpoint_every: float,
    exact: bool,
    por: bool,
    workers: int,
    engine: str | None,
    seed: int | None,
    walk_depth: int | None,
    walks: int | None,
    time_budget: float | None,
    bit_memory: str | None,
    swarm: int | None,
    address: str | None,
    max_memory: str | None,
    prove: bool,
    without: tuple[str, ...],
    synthesize: bool,
    bmc_bound: int | None,
    solver_timeout: float,
    debug: bool,
) -> None:
    """Exhaustively check a leader-election protocol for two leaders and stale writes."""
    if ctx.invoked_subcommand is not None:
        return
    pages = Path(html_dir) if html_dir else out
    try:
        sampling = Sampling.of(
            seed=seed,
            depth=walk_depth,
            walks=walks,
            seconds=time_budget,
            memory=parse_size(bit_memory) if bit_memory is not None else None,
        )
        if run_all and (_is_sampled(engine) or sampling.given or swarm is not None):
            raise LeadercheckError(
                "--all judges each protocol with the strategy specs/ names for it; drop "
                "--strategy simulate/bitstate and its options"
            )
        workers_given = ctx.get_parameter_source("workers") is not ParameterSource.DEFAULT
        engine, workers = _swarm(engine, workers, workers_given, swarm)
        settings = SearchSettings(
            strategy=engine,
            workers=workers,
            address=address,
            max_states=max_states,
            max_depth=max_depth,
            max_memory=parse_size(max_memory) if max_memory is not None else default_max_memory(),
            reductions=Reductions(symmetry=symmetry, por=por, exact=exact),
            sampling=sampling,
            # the built-in catalogue's value semantics are its tests' to prove (see
            # SearchSettings); a user's model (--model) is walked on every state
            trust_values=model_spec is None,
        )
        chosen_strategy(settings)  # the strategy refuses what it cannot honour, before any work
    except LeadercheckError as exc:
        _fail(exc, debug)
        ctx.exit(USAGE_ERROR)
    opts = Options(
        params=params,
        nodes=nodes,
        out=out,
        as_json=as_json,
        with_stats=with_stats,
        with_html=html_dir is not None,
        html_dir=pages,
        state_graph=diagram == "state-graph",
        search=settings,
        out_given=ctx.get_parameter_source("out") is not ParameterSource.DEFAULT,
        checkpoint_dir=checkpoint_dir,
        resume_dir=resume_dir,
        checkpoint_every=checkpoint_every,
    )
    try:
        catalogue = _catalogue(model_spec)
        if lint:
            if model_spec is None:
                raise click.UsageError("--lint needs --model FILE.py")
            if run_all or list_protocols:
                raise click.UsageError("--lint checks a model; drop --all/--list")
            ctx.exit(_lint(catalogue, protocol_name, opts))
        if list_protocols:
            click.echo("\n".join(_catalogue_lines(catalogue)))
            ctx.exit(0)
        gate_only = {
            "--junit": junit,
            "--check-golden": check_golden,
            "--update-golden": update_golden,
            "--readme": readme,
        }
        if not run_all:
            used = [flag for flag, value in gate_only.items() if value]
            if used:
                raise click.UsageError(f"{used[0]} needs --all")
        symbolic = {"--prove": prove, "--synthesize": synthesize, "--bmc": bmc_bound is not None}
        chosen = [flag for flag, on in symbolic.items() if on]
        if len(chosen) > 1:
            raise click.UsageError(f"{chosen[0]} and {chosen[1]} exclude each other")
        if without and not prove:
            raise click.UsageError("--without needs --prove")
        if chosen and run_all:
            raise click.UsageError(f"{chosen[0]} needs --protocol, not --all")
        if (checkpoint_dir or resume_dir) and (run_all or chosen):
            raise click.UsageError("--checkpoint and --resume go with a --protocol search")
        if run_all:
            if protocol_name or params or nodes is not None or with_stats or diagram != "sequence":
                raise click.UsageError(
                    "--all runs every protocol at its defaults; "
                    "drop --protocol/-p/--nodes/--stats/--diagram"
                )
            if check_golden and update_golden:
                raise click.UsageError("--check-golden and --update-golden exclude each other")
            if (check_golden or update_golden) and (symmetry or por):
                raise click.UsageError(
                    "golden counterexamples come from the unreduced search; "
                    "drop --symmetry/--por with --check-golden/--update-golden"
                )
            code = _gate(catalogue, opts, junit, check_golden, update_golden, readme)
        elif protocol_name is None:
            raise click.UsageError("give --protocol NAME, --all, or --list to see the protocols")
        elif prove or synthesize or bmc_bound is not None or without:
            if catalogue.model is not None:
                raise click.UsageError(
                    "--prove, --bmc and --synthesize work on the built-in protocols' z3 "
                    "encodings, not on a --model"
                )
            code = _symbolic(
                catalogue.lookup(protocol_name),
                catalogue,
                opts,
                prove=prove,
                without=without,
                synthesize=synthesize,
                bmc_bound=bmc_bound,
                timeout=solver_timeout,
            )
        else:
            code = _verify(catalogue.lookup(protocol_name), catalogue, opts)
    except LeadercheckError as exc:  # a ModelError's trace went to a file (_verify)
        _fail(exc, debug)
        ctx.exit(USAGE_ERROR)
    ctx.exit(code)


def _is_sampled(engine: str | None) -> bool:
    return engine is not None and engine in names() and strategy(engine).sampled


def _swarm(
    engine: str | None, workers: int, workers_given: bool, swarm: int | None
) -> tuple[str | None, int]:
    """The strategy and worker count that --swarm K asks for: K sampled searches."""
    if swarm is None:
        return engine, workers
    if workers_given and workers != swarm:
        raise LeadercheckError(f"--swarm {swarm} and --workers {workers}: give one")
    if engine is None:
        engine = SIMULATE
    if not _is_sampled(engine):
        sampled = " or ".join(s.name for s in iter_strategies() if s.sampled)
        raise LeadercheckError(
            f"--swarm runs sampled searches (--strategy {sampled}), not {engine}"
        )
    return engine, swarm


def exit_code(result: CheckResult) -> int:
    """The verdict's exit code; a run stopped by Ctrl-C is incomplete (3), whatever it found."""
    return INCOMPLETE if result.end is EndReason.INTERRUPTED else EXIT[result.verdict]


def _fail(exc: Exception, debug: bool) -> None:
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    click.echo(f"error: {exc}", err=True)


def _parse_params(raw: Sequence[str]) -> dict[str, str]:
    given: dict[str, str] = {}
    for item in raw:
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name or not value:
            raise LeadercheckError(f"-p expects NAME=VALUE, got {item!r}")
        if name in given:
            raise LeadercheckError(f"-p {name} given twice ({given[name]} and {value})")
        given[name] = value
    return given


def _given(opts: Options) -> dict[str, str]:
    """The parameters given with -p, and --nodes as `nodes` (never both)."""
    given = _parse_params(opts.params)
    if opts.nodes is not None:
        if "nodes" in given:
            raise LeadercheckError(
                f"--nodes {opts.nodes} and -p nodes={given['nodes']} both set nodes; give one"
            )
        given["nodes"] = str(opts.nodes)
    return given


def _catalogue(model_spec: str | None) -> Catalogue:
    """The built-in protocols, or those of the user's module."""
    if model_spec is None:
        return built_in(load_expectations())
    return load_catalogue(model_spec)


def _checked_model(
    catalogue: Catalogue,
    protocol: ProtocolEntry,
    values: Mapping[str, int],
    properties: Sequence[Property],
) -> Model[Any]:
    """The protocol's model; a user's is checked before the search (checker/guard.py) and
    watched during it, its warnings printed on stderr."""
    model = catalogue.build(protocol, values)
    if catalogue.model is None:
        return model
    from leadercheck.checker.guard import GuardedModel, preflight  # noqa: PLC0415 (only a user's model)

    for warning in preflight(model, properties):
        click.echo(f"warning: {warning}", err=True)
    return GuardedModel(model)


LINT_STATES = 2000  # states whose successor order is compared under two hash seeds
LINT_SEEDS = ("1", "2")
LINT_SECONDS = 300


def _lint(catalogue: Catalogue, protocol_name: str | None, opts: Options) -> int:
    """`--lint`: each protocol's model checked (checker/guard.py's preflight, on more states)
    and its successor order compared under two hash seeds; no search. Exit 0 or 2."""
    given = _given(opts)
    if given and protocol_name is None:
        raise LeadercheckError("-p and --nodes go with --protocol NAME")
    assert catalogue.model is not None
    from leadercheck.checker.guard import preflight  # noqa: PLC0415 (only a user's model)

    names = [catalogue.lookup(protocol_name).name] if protocol_name else list(catalogue.protocols)
    for name in names:
        protocol = catalogue.protocols[name]
        values = protocol.resolve(given)
        model = catalogue.build(protocol, values)
        warnings = preflight(model, catalogue.expectations.properties(name), LINT_STATES)
        for warning in warnings:
            click.echo(f"warning: {warning}", err=True)
        digests = [_order_in_child(catalogue.model, name, values, seed) for seed in LINT_SEEDS]
        _same_order(name, digests)
        states = len(digests[0])
        click.echo(
            f"{name}: ok: value semantics, immutability and a fixed successor order on "
            f"{min(states, LINT_STATES)} states; the same order under PYTHONHASHSEED "
            f"{' and '.join(LINT_SEEDS)}" + (f"; {len(warnings)} warning(s)" if warnings else "")
        )
    return 0


def _order_in_child(spec: str, name: str, values: Mapping[str, int], seed: str) -> list[str]:
    """The successor order of the first LINT_STATES states, from a process hashing with `seed`."""
    command = [
        sys.executable,
        "-m",
        "leadercheck.checker.order_probe",
        spec,
        name,
        json.dumps(dict(values)),
        str(LINT_STATES),
    ]
    env = {**os.environ, "PYTHONHASHSEED": seed}
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, env=env, timeout=LINT_SECONDS, check=False
        )
    except subprocess.TimeoutExpired:
        raise LeadercheckError(
            f"{name}: --lint's probe under PYTHONHASHSEED={seed} took over {LINT_SECONDS} s"
        ) from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ModelError(f"{name}: under PYTHONHASHSEED={seed} the model fails: {last}")
    digest: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return digest


def _same_order(name: str, digests: list[list[str]]) -> None:
    first, second = digests
    for k, (a, b) in enumerate(zip(first, second, strict=False)):
        if a != b:
            raise ModelError(
                f"{name}: the successor order depends on the hash seed (it iterates a set "
                f"or dict of strings?): state {k} in breadth-first order gives "
                f"{_clip(a)} under PYTHONHASHSEED={LINT_SEEDS[0]} and {_clip(b)} under "
                f"{LINT_SEEDS[1]}; yield successors in a fixed order (sort them)"
            )
    if len(first) != len(second):
        raise ModelError(
            f"{name}: the successor order depends on the hash seed: {len(first)} states "
            f"under PYTHONHASHSEED={LINT_SEEDS[0]}, {len(second)} under {LINT_SEEDS[1]}"
        )


def _clip(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _verify(protocol: ProtocolEntry, catalogue: Catalogue, opts: Options) -> int:
    expectations = catalogue.expectations
    given = _given(opts)
    values = protocol.resolve(given)
    out = opts.html_dir if opts.with_html else opts.out
    check_writable(out)
    properties = expectations.properties(protocol.name)
    if not properties:
        raise LeadercheckError(
            f"{protocol.name}: {catalogue.expected_source} names no property for it"
        )
    model = _checked_model(catalogue, protocol, values, properties)
    graph = _state_graph(catalogue, protocol, values, model) if opts.state_graph else None
    checkpoints = _checkpoints(catalogue, protocol, values, properties, opts)
    progress = ProgressLine(sys.stderr) if sys.stderr.isatty() else None
    try:
        with searcher(opts.search) as search:
            result = search(model, properties, progress=progress, checkpoints=checkpoints)
    except ModelError as exc:  # one line; the trace that led there goes to a file
        path = write_model_error(out, protocol.name, values, exc, catalogue.model)
        where = "" if path is None else f"; the trace that led there: {path}"
        raise ModelError(f"{exc}{where}") from exc
    finally:
        if progress is not None:
            progress.clear()
    written = write_counterexamples(
        protocol.name, values, result, out, opts.with_html, graph, catalogue.model
    )
    run = Run(
        protocol.name,
        values,
        result,
        written,
        expectations.expected(protocol.name),
        describe(opts.search),
        catalogue.model,
    )
    tables: list[MeasureTable] = []
    if opts.with_stats and result.end is not EndReason.INTERRUPTED:  # Ctrl-C ends the run
        unreduced = opts.search.but(progress=progress, reductions=NO_REDUCTIONS)
        try:
            tables = _measure(protocol, unreduced)
        finally:
            if progress is not None:
                progress.clear()
    if opts.as_json:
        click.echo(json.dumps({**json_report(run), "measures": [t.to_json() for t in tables]}))
    else:
        click.echo("\n".join(report_lines(run)))
        for table in tables:
            click.echo("\n" + "\n".join(table.lines()))
        if opts.with_stats and not tables:
            click.echo(f"\n{protocol.name} declares no measures")
    code = exit_code(result)
    if code == 0 and not all(t.complete for t in tables):
        return INCOMPLETE  # a measure cut short by a bound or Ctrl-C
    return code


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
    opts: Options,
) -> Checkpoints | None:
    """Where this search saves its progress and what it resumes, checked before any work."""
    directory = opts.checkpoint_dir or opts.resume_dir
    if directory is None:
        return None
    reductions = opts.search.reductions
    identity = {
        "model": catalogue.model,
        "protocol": protocol.name,
        "params": dict(values),
        "properties": [p.name for p in properties],
        "symmetry": reductions.symmetry,
        "por": reductions.por,
        "exact": reductions.exact,
    }
    found = Checkpoints(directory, identity, opts.checkpoint_every, opts.resume_dir)
    chosen_strategy(opts.search.but(checkpoints=found))  # the strategy refuses what it cannot save
    check_writable(directory)
    if opts.resume_dir is not None:
        found.load()  # a missing, unreadable or foreign checkpoint fails here, before the search
    return found


def _symbolic(
    protocol: ProtocolEntry,
    catalogue: Catalogue,
    opts: Options,
    *,
    prove: bool,
    without: tuple[str, ...],
    synthesize: bool,
    bmc_bound: int | None,
    timeout: float,
) -> int:
    """--prove, --synthesize or --bmc K (checker/cli_solver.py); only --bmc takes -p."""
    from leadercheck.checker import cli_solver  # noqa: PLC0415 (z3 loads only when asked for)

    given = _given(opts)
    if opts.as_json or opts.with_stats or opts.with_html or opts.state_graph:
        raise LeadercheckError("--json, --stats, --html and --diagram go with a search, not z3")
    if bmc_bound is not None:
        values = protocol.resolve(given)
        return cli_solver.bmc_command(
            protocol, values, catalogue.expectations, bmc_bound, timeout, opts.out
        )
    if prove:
        cli_solver.refuse_params("--prove", given)
        return cli_solver.prove_command(protocol, without, timeout, opts.out)
    cli_solver.refuse_params("--synthesize", given)
    return cli_solver.synthesize_command(protocol, timeout)


def _measure(protocol: ProtocolEntry, settings: SearchSettings | None = None) -> list[MeasureTable]:
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


def _gate(
    catalogue: Catalogue,
    opts: Options,
    junit: Path | None,
    check_golden: bool,
    update: bool,
    readme: Path | None,
) -> int:
    """Run every protocol at its defaults against its expectations; exit 1 on any
    difference."""
    expectations, protocols = catalogue.expectations, catalogue.protocols
    source = catalogue.expected_source
    coverage = [
        f"{source} has no section for protocol {name}"
        for name in protocols
        if not expectations.of(name)
    ] + [
        f"{source} names unknown protocol {case.protocol}"
        for case in expectations.cases.values()
        if case.protocol not in protocols
    ]
    names = _gate_names() if catalogue.model is None else list(protocols)
    cases: list[GateCase] = []
    engines: dict[str, SearchSettings] = {}  # case -> its sampled strategy, if it names one
    for name in names:
        for spec in [c for c in expectations.cases.values() if c.protocol == name]:
            protocol = protocols[name]
            try:
                values = protocol.resolve(dict(spec.params))
            except LeadercheckError as exc:
                raise LeadercheckError(f"{source}: [{spec.name}]: {exc}") from None
            props = expectations.properties(spec.name)
            cases.append(
                GateCase(
                    spec.name,
                    values,
                    partial(_checked_model, catalogue, protocol, values, props),
                    props,
                    expectations.of(spec.name),
                    protocol=name,
                    stem=spec.file_stem,
                    judged_by=spec.judged_by.describe() if spec.judged_by else "",
                )
            )
            if spec.judged_by is not None:
                judged = spec.judged_by
                engines[spec.name] = SearchSettings(
                    strategy=judged.strategy,
                    workers=judged.workers,
                    max_memory=opts.search.max_memory,
                    sampling=judged.sampling,
                    trust_values=opts.search.trust_values,
                )
    # Every output is checked before the first search; --html DIR writes only under DIR
    # (and --out, when given).
    copy_out = not opts.as_json and not check_golden and (opts.out_given or not opts.with_html)
    if copy_out or update:
        check_writable(opts.out)
    if junit is not None:
        check_writable_file(junit, "--junit")
    if readme is not None:
        check_block(readme, README_BLOCK)
    if opts.with_html:
        check_writable(opts.html_dir)
    if not opts.as_json:
        click.echo("\n".join(table_header()))

    with ExitStack() as stack:
        fresh = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="leadercheck-")))

        outcomes: list[CaseOutcome] = []
        pages: dict[str, dict[str, str]] = {}
        # the gate judges every case whole, as before: --max-states/--max-depth are the
        # single search's (issue 26's argument layer is to refuse them here)
        whole = opts.search.but(max_states=None, max_depth=None)
        exhaustive = stack.enter_context(searcher(whole))
        for case in cases:
            sampled = engines.get(case.name)
            search = exhaustive if sampled is None else stack.enter_context(searcher(sampled))
            result = search(case.build(), case.properties)
            if result.end is EndReason.INTERRUPTED:  # Ctrl-C: stop the gate, write nothing
                click.echo(
                    f"interrupted during {case.name}, after {len(outcomes)} of {len(cases)} "
                    f"protocols ({result.stats.distinct_states:,} states in "
                    f"{result.stats.seconds:.2f} s); nothing written",
                    err=True,
                )
                return INCOMPLETE
            shortest = not opts.search.reductions.por  # POR keeps verdicts, not trace lengths
            outcome = CaseOutcome(case, result, judge(case, result, shortest))
            files = partial(
                write_counterexamples, case.protocol_name, case.params, result,
                model=catalogue.model, stem=case.stem or None,
            )  # fmt: skip
            files(fresh)
            if opts.with_html:
                written = files(opts.html_dir, html=True)
                pages[case.name] = {
                    prop: next(p.name for p in w.paths if p.suffix == ".html")
                    for prop, w in written.items()
                }
            if not opts.as_json:
                click.echo("\n".join(case_lines(outcome)))
            outcomes.append(outcome)
        report = GateReport(tuple(outcomes), tuple(coverage))
        golden_findings: list[str] = []
        if check_golden:
            golden_findings = compare_golden(fresh, opts.out)
        elif update:
            changed = update_golden(fresh, opts.out)
            if not opts.as_json:
                click.echo(f"\nupdated {len(changed)} file(s) in {opts.out}")
        elif copy_out:
            _copy_into(fresh, opts.out)
    if golden_findings:
        report = GateReport(report.outcomes, report.extra_findings + tuple(golden_findings))
    if junit is not None:
        junit.write_text(junit_xml(report), encoding="utf-8")
    if opts.with_html:
        opts.html_dir.mkdir(parents=True, exist_ok=True)
        (opts.html_dir / "index.html").write_text(overview_html(report, pages), encoding="utf-8")
    if readme is not None:
        summaries = {name: p.summary for name, p in protocols.items()}
        replace_block(readme, README_BLOCK, verdict_table(report, summaries))
    if opts.as_json:
        click.echo(json.dumps(json_summary(report)))
    else:
        click.echo("\n".join(summary_lines(report)))
    return 0 if report.passed else 1


def _gate_names() -> list[str]:
    """The protocols the gate runs, in catalogue order (a seam for tests)."""
    return list(PROTOCOLS)


def _copy_into(fresh: Path, out: Path) -> list[str]:
    """Plain `--all` leaves every counterexample in --out, as `verify --protocol` would."""
    out.mkdir(parents=True, exist_ok=True)
    names = []
    for path in sorted(fresh.iterdir()):
        (out / path.name).write_bytes(path.read_bytes())
        names.append(path.name)
    return names


def _catalogue_lines(catalogue: Catalogue) -> list[str]:
    expectations = catalogue.expectations
    lines = [f"from {catalogue.model}:"] if catalogue.model else []
    for name, protocol in catalogue.protocols.items():
        lines.append(f"{name}: {protocol.summary}")
        verdicts = ", ".join(f"{p} {v.value}" for p, v in expectations.expected(name).items())
        lines.append(f"    expected: {verdicts or 'none recorded'}")
        for p in protocol.params:
            setting = f"-p {p.name}={p.choices[p.default] if p.choices else p.default}"
            values = "|".join(p.choices) if p.choices else f"range {p.low}..{p.high}"
            lines.append(f"    {setting:<16} {values}  {p.help}")
    return lines


MODEL_OPTION = click.option(
    "--model",
    "model_spec",
    metavar="FILE.py|MODULE",
    help="The user's module that defines the trace's protocol (default: the one the trace "
    "records, else the built-in catalogue).",
)


@main.command("replay")
@click.argument("trace_file", metavar="TRACE.json", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--protocol",
    "protocol_name",
    metavar="NAME",
    help="Replay on this protocol instead, with the file's parameters.",
)
@MODEL_OPTION
@click.pass_context
def replay_command(
    ctx: click.Context, trace_file: Path, protocol_name: str | None, model_spec: str | None
) -> None:
    """Re-execute a saved trace; exit 0 if it reproduces, 1 where it parts, 2 if malformed."""
    try:
        saved, catalogue, recorded_on, prop = _checked_trace(ctx, trace_file, model_spec)
        target = catalogue.lookup(protocol_name) if protocol_name else recorded_on
        cross = target.name != recorded_on.name
        values = _replay_params(trace_file, target, saved, cross)
        model = _checked_model(catalogue, target, values, (prop,))
        result = replay(model, saved, prop, compare_states=not cross)
    except ModelError as exc:
        _fail(exc, bool(ctx.find_root().params.get("debug")))
        ctx.exit(USAGE_ERROR)
    except LeadercheckError as exc:
        _fail(exc, bool(ctx.find_root().params.get("debug")))
        ctx.exit(USAGE_ERROR)
    click.echo("\n".join(_replay_lines(trace_file, saved, target.name, result)))
    ctx.exit(0 if result.reproduces else 1)


@main.command("conform")
@click.argument(
    "trace_file", metavar="[TRACE.json]", required=False,
    type=click.Path(path_type=Path, dir_okay=False),
)  # fmt: skip
@click.option(
    "--against", "system", required=True, metavar="SYSTEM",
    help="The real system: etcd, postgres, zookeeper or redis (started on loopback unless "
    "--endpoint names running servers).",
)  # fmt: skip
@click.option(
    "--protocol", "protocol_name", metavar="NAME",
    help="With a trace: run its schedule as this protocol instead (the fenced variant of an "
    "unfenced counterexample); with --random: the protocol (default: the first one the "
    "system runs).",
)  # fmt: skip
@MODEL_OPTION
@click.option(
    "--endpoint", metavar="HOST:PORT[,...]",
    help="Servers already running (left running); default: fresh ones on loopback.",
)  # fmt: skip
@click.option(
    "--tick", type=float, default=1.0, show_default=True, metavar="SECONDS",
    help="Real seconds per model tick (a TTL of k ticks is granted as k * SECONDS).",
)  # fmt: skip
@click.option(
    "--settle", type=float, default=1.5, show_default=True, metavar="SECONDS",
    help="How long a step's effect may take to show (a lease's expiry is etcd's own timer).",
)  # fmt: skip
@click.option(
    "--ttl-scale", type=float, default=1.0, show_default=True, metavar="X",
    help="Grant real TTLs X times the model's: a deliberately wrong mapping, to see the "
    "comparison catch it (any X but 1 must diverge where a lease runs out).",
)  # fmt: skip
@click.option(
    "--random", "schedules", type=int, metavar="N",
    help="Run N random schedules instead of a trace; every observation is checked "
    "against the model, and a divergent history is shrunk.",
)  # fmt: skip
@click.option("-p", "params", multiple=True, metavar="NAME=VALUE", help="With --random.")
@click.option("--seed", type=int, default=0, show_default=True, help="With --random.")
@click.option(
    "--steps", "max_steps", type=int, default=12, show_default=True,
    help="With --random: the most steps of one schedule.",
)  # fmt: skip
@click.option(
    "--budget", type=float, default=600.0, show_default=True, metavar="SECONDS",
    help="With --random: wall-clock limit for all schedules, shrinking included.",
)  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print only the JSON record.")
@click.option(
    "--timeline", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE.json",
    help="Also write the record (the timeline) to FILE.json.",
)  # fmt: skip
@click.option(
    "--html", "html_dir", type=click.Path(path_type=Path, file_okay=False), metavar="DIR",
    help="With a trace: write DIR/<trace>.html, the trace's page with the real run below it.",
)  # fmt: skip
@click.pass_context
def conform_command(
    ctx: click.Context,
    trace_file: Path | None,
    system: str,
    protocol_name: str | None,
    model_spec: str | None,
    endpoint: str | None,
    tick: float,
    settle: float,
    ttl_scale: float,
    schedules: int | None,
    params: tuple[str, ...],
    seed: int,
    max_steps: int,
    budget: float,
    as_json: bool,
    timeline: Path | None,
    html_dir: Path | None,
) -> None:
    """Run a trace (or random schedules) on a real system and compare it with the model:
    exit 0 if it does what the model predicts, 1 where it diverges, 2 on bad input."""
    from leadercheck.checker import cli_conform  # noqa: PLC0415 (client libraries load when asked)

    debug = bool(ctx.find_root().params.get("debug"))
    try:
        timing = cli_conform.timing_of(tick, settle, ttl_scale)
        if schedules is None:
            if trace_file is None:
                raise LeadercheckError("conform needs a TRACE.json, or --random N")
            if params:
                raise LeadercheckError("-p is for --random; a trace carries its parameters")
            code = cli_conform.trace_run(
                trace_file, protocol_name, model_spec, system, endpoint, timing, as_json,
                timeline, html_dir, ctx,
            )  # fmt: skip
        else:
            if trace_file is not None:
                raise LeadercheckError("give a TRACE.json or --random N, not both")
            if html_dir is not None:
                raise LeadercheckError("--html is for a trace; --random writes --timeline")
            code = cli_conform.random_run(
                protocol_name, model_spec or ctx.find_root().params.get("model_spec"),
                _parse_params(params), system, endpoint, timing, schedules, seed, max_steps,
                budget, as_json, timeline,
            )  # fmt: skip
    except LeadercheckError as exc:
        _fail(exc, debug)
        ctx.exit(USAGE_ERROR)
    ctx.exit(code)


@main.command("explain")
@click.argument("trace_file", metavar="TRACE.json", type=click.Path(path_type=Path, dir_okay=False))
@MODEL_OPTION
@click.pass_context
def explain_command(ctx: click.Context, trace_file: Path, model_spec: str | None) -> None:
    """Tell a saved trace as prose: one sentence per step, then the broken property."""
    try:
        saved, _, recorded_on, _ = _checked_trace(ctx, trace_file, model_spec)
        _replay_params(trace_file, recorded_on, saved, cross=False)  # as replay checks them
    except LeadercheckError as exc:
        _fail(exc, bool(ctx.find_root().params.get("debug")))
        ctx.exit(USAGE_ERROR)
    click.echo("\n".join(explain_lines(saved)))


def _checked_trace(
    ctx: click.Context, trace_file: Path, model_spec: str | None
) -> tuple[SavedTrace, Catalogue, ProtocolEntry, Property]:
    """The trace file read and checked against its catalogue, as replay and explain need it:
    a known protocol, a known property of the kind the file says. The catalogue is the
    --model given (to the subcommand or to verify), else the one the trace records."""
    saved = load_trace(trace_file)
    spec = model_spec or ctx.find_root().params.get("model_spec")
    if spec is None and saved.model is not None:
        spec = _recorded_model(trace_file, saved.model)
    catalogue = _catalogue(spec)
    recorded_on = _trace_protocol(trace_file, saved.protocol, catalogue)
    claims = catalogue.claims
    prop = claims.get(saved.property_name)
    if prop is None:
        raise LeadercheckError(
            f"{trace_file}: 'property.name' {saved.property_name!r} is not a known property"
            f" ({', '.join(claims)})"
        )
    if prop.kind.value != saved.property_kind:
        raise LeadercheckError(
            f"{trace_file}: 'property.kind' is {saved.property_kind!r} but"
            f" {prop.name} is {prop.kind.value!r}"
        )
    return saved, catalogue, recorded_on, prop


def _recorded_model(trace_file: Path, recorded: str) -> str:
    """The model a trace records, found from here or from a folder above the trace file
    (a relative path is recorded as given, relative to where `verify` ran)."""
    path = Path(recorded)
    if path.is_absolute() or not recorded.endswith(".py") or path.exists():
        return recorded
    for folder in list(trace_file.resolve().parents)[:8]:
        if (folder / path).is_file():
            return str(folder / path)
    raise LeadercheckError(
        f"{trace_file}: its model {recorded} is not found from here or above the trace; "
        "give --model FILE.py"
    )


def _trace_protocol(trace_file: Path, name: str, catalogue: Catalogue) -> ProtocolEntry:
    try:
        return catalogue.lookup(name)
    except LeadercheckError as exc:
        raise LeadercheckError(f"{trace_file}: 'protocol': {exc}") from None


def _replay_params(
    trace_file: Path, protocol: ProtocolEntry, saved: SavedTrace, cross: bool
) -> dict[str, int]:
    """The file's parameters for `protocol`: on another protocol, extra ones are ignored."""
    known = {p.name for p in protocol.params}
    unknown = [name for name in saved.params if name not in known]
    if unknown and not cross:
        raise LeadercheckError(
            f"{trace_file}: 'params.{unknown[0]}' is not a parameter of {protocol.name}"
        )
    missing = [p.name for p in protocol.params if p.name not in saved.params]
    if missing:
        raise LeadercheckError(
            f"{trace_file}: 'params' lacks {', '.join(missing)}, which {protocol.name} requires"
        )
    given = {name: str(v) for name, v in saved.params.items() if name in known}
    try:
        return protocol.resolve(given)
    except LeadercheckError as exc:
        raise LeadercheckError(f"{trace_file}: 'params': {exc}") from None


def _replay_lines(trace_file: Path, saved: SavedTrace, target: str, result: Replay) -> list[str]:
    """The replayed trace as numbered lines, then every difference and the verdict."""
    total = len(saved.steps) - 1
    on = f", on {target}" if target != saved.protocol else ""
    lines = [
        f"replaying {trace_file}: {saved.protocol} {saved.trace_kind or 'trace'} of"
        f" {step_count(total)} for {saved.property_name}{on}"
    ]
    width = len(str(total))
    first = saved.steps[0].summary
    lines.append(f"  {0:>{width}}  initial: " + "; ".join(f"{k} {v}" for k, v in first.items()))
    for step in result.steps:
        shown = step.replayed if step.replayed is not None else f"{step.recorded}  [not enabled]"
        lines.append(f"  {step.index:>{width}}  {shown}")
    prop, state, last = result.prop, result.final_state, result.last_index
    assert prop is not None
    sometimes = prop.kind.value == "sometimes"
    if result.prop_broken:
        mark, status = ("reached", "is reached") if sometimes else ("broken", "is broken")
        lines.append(f"  {'':>{width}}  => {prop.name} {mark}: {prop.why(state)}")
    else:
        mark, status = ("not reached", "is not reached") if sometimes else ("holds", "holds")
        lines.append(f"  {'':>{width}}  => {prop.name} {mark} after step {last}")
    if result.reproduces:
        every = {0: "the initial state", 1: "the one step"}.get(total, f"all {total} steps")
        lines.append(f"reproduced: {every} as recorded; {prop.name} {status} again")
        return lines
    lines += result.findings
    if not result.completed:
        lines.append(f"diverged: the replay stops at step {result.steps[-1].index} of {total}")
    parting = result.first_parting
    if parting is not None:
        lines.append(
            f"the replay parts from the record at step {parting};"
            f" {prop.name} {status} after step {last}"
        )
    else:
        lines.append(f"every step is as recorded, but {prop.name} {status} at the end")
    return lines


@main.command("message-cost")
@click.option(
    "--plot",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Also draw worst, mean and best messages per election against N (SVG).",
)
@click.pass_context
def message_cost_command(ctx: click.Context, plot: Path | None) -> None:
    """Messages per election for bully and raft, N = 3..7: Bully's quadratic cost."""
    try:
        if plot is not None:
            check_writable(plot.parent)  # a bare file name has parent "."
        tables = {name: _measure(PROTOCOLS[name])[0] for name in COST_PROTOCOLS}
        for name, table in tables.items():
            click.echo(f"{name}: " + "\n".join(table.lines()) + "\n")
        if plot is not None:
            written = write_cost_plot(tables, plot, "messages per election")
            click.echo(f"wrote {written}")
    except LeadercheckError as exc:
        _fail(exc, False)
        ctx.exit(USAGE_ERROR)


@main.command("bench")
@click.option("--repeat", type=click.IntRange(1, 20), default=3, show_default=True)
@click.option("--large", is_flag=True, help="Also run the long, memory-hungry sizes.")
@click.option("--only", metavar="MODEL", help="Only the benchmarks of this model.")
@click.option(
    "--search",
    "searches",
    multiple=True,
    type=click.Choice(list(searches())),
    help="How to search each model: a registered engine (parallel ones with 2 workers), "
    f"alone or +symmetry or +por (repeatable; default {', '.join(DEFAULT_SEARCHES)}).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object, for tracking over time.")
@click.option(
    "--sampled",
    is_flag=True,
    help="Measure the sampled strategies instead: time to a five-node violation (simulate "
    "against a swarm of 2), shortened against shortest traces, bitstate's coverage.",
)
@click.option(
    "--seeds",
    type=click.IntRange(1, 50),
    default=5,
    show_default=True,
    help="With --sampled: seeds 1..N per protocol and search.",
)
@click.option(
    "--spin",
    is_flag=True,
    help="Time `verify --symmetry` against Spin's pan on raft-election N=3 NC=3 MaxTerm=3 "
    "and N=4 NC=4 MaxTerm=2, side by side (needs spin and cc).",
)
@click.pass_context
def bench_command(
    ctx: click.Context,
    repeat: int,
    large: bool,
    only: str | None,
    searches: tuple[str, ...],
    as_json: bool,
    sampled: bool,
    seeds: int,
    spin: bool,
) -> None:
    """Time the benchmark models (../shared/benchmarks), each run in a fresh process."""
    if spin:
        if only is not None or searches or sampled or large:
            _fail(
                LeadercheckError(
                    "--spin runs its own models and searches: drop "
                    "--only/--search/--large/--sampled"
                ),
                False,
            )
            ctx.exit(USAGE_ERROR)
        ctx.exit(_bench_spin(repeat, as_json))
    if sampled:
        if only is not None or searches:
            _fail(
                LeadercheckError(
                    "--sampled runs its own models and searches: drop --only/--search"
                ),
                False,
            )
            ctx.exit(USAGE_ERROR)
        ctx.exit(_bench_sampled(seeds, large, as_json))
    cases = [c for c in CASES if (large or not c.large) and (only is None or c.protocol == only)]
    searches = searches or DEFAULT_SEARCHES
    try:
        for case in cases:
            lookup(case.protocol)
        if not cases:
            raise LeadercheckError(f"no benchmark of model {only!r}")
        rows = []
        for case in cases:
            for search in searches:
                rows.append(run_case(case, repeat, search))
                if not as_json:
                    click.echo(f"  done: {case.label} ({search})", err=True)
        rows = with_reductions(rows)
    except LeadercheckError as exc:
        _fail(exc, False)
        ctx.exit(USAGE_ERROR)
    if as_json:
        click.echo(json.dumps({"repeat": repeat, "benchmarks": [r.to_json() for r in rows]}))
    else:
        click.echo("\n".join(bench_lines(rows)))


def _bench_spin(repeat: int, as_json: bool) -> int:
    from leadercheck.checker import bench_spin  # noqa: PLC0415 (only when asked for)

    try:
        rows = bench_spin.side_by_side(repeat=repeat)
    except LeadercheckError as exc:
        _fail(exc, False)
        return USAGE_ERROR
    if as_json:
        click.echo(json.dumps({"repeat": repeat, "spin": [r.to_json() for r in rows]}))
    else:
        click.echo("\n".join(bench_spin.spin_lines(rows)))
    return 0


def _bench_sampled(seeds: int, large: bool, as_json: bool) -> int:
    from leadercheck.checker import bench_sampled as b  # noqa: PLC0415 (only when asked for)

    numbers = list(range(1, seeds + 1))
    try:
        finds = b.time_to_violation(numbers)
        shorts = b.shortening(numbers)
        coverage = b.bitstate_coverage(large)
    except LeadercheckError as exc:
        _fail(exc, False)
        return USAGE_ERROR
    if as_json:
        doc = {
            "seeds": numbers,
            "time_to_violation": [r.to_json() for r in finds],
            "shortening": [r.to_json() for r in shorts],
            "bitstate": coverage.to_json(),
        }
        click.echo(json.dumps(doc))
    else:
        click.echo("\n".join(b.sampled_lines(finds, shorts, coverage)))
    return 0


if __name__ == "__main__":
    main()

"""`verify`: the one place that wires the catalogue, the specs, the engine and rendering.

Exit codes: 0 every checked property holds, 1 a property is violated, 2 bad usage or
a model error, 3 the search was incomplete (a bound was hit).
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

import click

from checker.errors import LeadercheckError, ModelError
from checker.render.context import TraceContext
from checker.render.files import Written, check_writable, write_trace_files
from checker.render.report import Run, json_report, report_lines
from checker.result import CheckResult, Verdict
from checker.search import check
from models.catalogue import PROTOCOLS, lookup
from models.params import ProtocolEntry
from specs.expectations import Expectations, load_expectations

EXIT = {Verdict.HOLDS: 0, Verdict.VIOLATED: 1, Verdict.INCOMPLETE: 3}
USAGE_ERROR = 2


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--protocol", "protocol_name", metavar="NAME", help="Protocol to verify (see --list)."
)
@click.option(
    "--list", "list_protocols", is_flag=True, help="List protocols, parameters, expected verdicts."
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
    help="Directory for counterexample files.",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON object on stdout and nothing else."
)
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.pass_context
def main(
    ctx: click.Context,
    protocol_name: str | None,
    list_protocols: bool,
    params: tuple[str, ...],
    nodes: int | None,
    max_states: int | None,
    max_depth: int | None,
    out: Path,
    as_json: bool,
    debug: bool,
) -> None:
    """Exhaustively check a leader-election protocol for two leaders and stale writes."""
    if ctx.invoked_subcommand is not None:
        return
    try:
        expectations = load_expectations()
        if list_protocols:
            click.echo("\n".join(_catalogue_lines(expectations)))
            ctx.exit(0)
        if protocol_name is None:
            raise click.UsageError("give --protocol NAME (or --list to see the protocols)")
        protocol = lookup(protocol_name)
        given = _parse_params(params)
        if nodes is not None:
            given["nodes"] = str(nodes)
        values = protocol.resolve(given)
        check_writable(out)
        code = _verify(protocol, values, expectations, max_states, max_depth, out, as_json)
    except ModelError as exc:
        _fail(exc, debug)
        if exc.trace is not None:
            for step in exc.trace.steps[1:]:
                click.echo(f"  {step.index}  {step.action}", err=True)
        ctx.exit(USAGE_ERROR)
    except LeadercheckError as exc:
        _fail(exc, debug)
        ctx.exit(USAGE_ERROR)
    ctx.exit(code)


def _fail(exc: Exception, debug: bool) -> None:
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    click.echo(f"error: {exc}", err=True)


def _parse_params(raw: Sequence[str]) -> dict[str, str]:
    given: dict[str, str] = {}
    for item in raw:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise LeadercheckError(f"-p expects NAME=VALUE, got {item!r}")
        given[name.strip()] = value.strip()
    return given


def _verify(
    protocol: ProtocolEntry,
    values: dict[str, int],
    expectations: Expectations,
    max_states: int | None,
    max_depth: int | None,
    out: Path,
    as_json: bool,
) -> int:
    properties = expectations.properties(protocol.name)
    if not properties:
        raise LeadercheckError(f"{protocol.name}: specs/expected.toml names no property for it")
    model = protocol.build(values)
    result = check(model, properties, max_states=max_states, max_depth=max_depth)
    written = _write_counterexamples(protocol.name, values, result, out)
    run = Run(protocol.name, values, result, written, expectations.expected(protocol.name))
    if as_json:
        click.echo(json.dumps(json_report(run)))
    else:
        click.echo("\n".join(report_lines(run)))
    return EXIT[result.verdict]


def _file_stems(name: str, result: CheckResult) -> dict[str, str]:
    """`<protocol>` for the first violated property, `<protocol>.<property>` for any others."""
    violated = [r.prop.name for r in result.results if r.verdict is Verdict.VIOLATED and r.trace]
    return {prop: name if k == 0 else f"{name}.{prop}" for k, prop in enumerate(violated)}


def _write_counterexamples(
    name: str, values: dict[str, int], result: CheckResult, out: Path
) -> dict[str, Written]:
    stems = _file_stems(name, result)
    return {
        prop: write_trace_files(out, stem, TraceContext(name, values, result.result(prop)))
        for prop, stem in stems.items()
    }


def _catalogue_lines(expectations: Expectations) -> list[str]:
    lines = []
    for name, protocol in PROTOCOLS.items():
        lines.append(f"{name}: {protocol.summary}")
        verdicts = ", ".join(f"{p} {v.value}" for p, v in expectations.expected(name).items())
        lines.append(f"    expected: {verdicts or 'none recorded'}")
        for p in protocol.params:
            setting = f"-p {p.name}={p.default}"
            lines.append(f"    {setting:<16} range {p.low}..{p.high}  {p.help}")
    return lines


if __name__ == "__main__":
    main()

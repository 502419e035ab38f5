"""Writes a trace's JSON, DOT and SVG files all-or-nothing.

Every file is first written beside its target under a temporary name and only
renamed into place once all of them exist (`checker/io/files.py`, the one file layer), so an
error never leaves a half-written counterexample behind, and a device, FIFO or link where
a file should go is refused, never replaced. A missing `dot` is not an error: the JSON and
DOT files are still written and the caller gets a one-line note on how to get SVG.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from leadercheck.checker.engine.graph import StateGraph
from leadercheck.checker.errors import LeadercheckError, ModelError
from leadercheck.checker.io import files
from leadercheck.checker.render.context import TraceContext
from leadercheck.checker.render.dot import trace_to_dot
from leadercheck.checker.render.html import trace_to_html
from leadercheck.checker.render.state_graph import state_graph_dot
from leadercheck.checker.render.svg import SvgUnavailable, dot_to_svg
from leadercheck.checker.render.trace_json import model_error_to_json, trace_to_json
from leadercheck.checker.result import CheckResult, Stats, Verdict


@dataclass(frozen=True)
class Written:
    paths: tuple[Path, ...]
    note: str | None  # why no SVG was written, if it was not


def check_writable(directory: Path, option: str | None = None) -> None:
    """Fail early (before a long search) unless files can be written in `directory`
    (`files.check_output_dir`; kept for its callers)."""
    files.check_output_dir(directory, option)


def check_writable_file(path: Path, option: str) -> None:
    """Fail early unless `path` can be written whole (`files.check_output_file`)."""
    files.check_output_file(path, option)


def write_trace_files(
    directory: Path,
    stem: str,
    ctx: TraceContext,
    html_stats: Stats | None = None,
    state_graph_dot: str | None = None,
) -> Written:
    """JSON, DOT and (with `dot`) SVG; with `html_stats`, also the interactive HTML page;
    with `state_graph_dot`, also `<stem>.state-graph.dot` and its SVG."""
    dot = trace_to_dot(ctx)
    contents = {f"{stem}.json": trace_to_json(ctx), f"{stem}.dot": dot}
    note = None
    svg = None
    try:
        svg = contents[f"{stem}.svg"] = dot_to_svg(dot)
    except SvgUnavailable as exc:
        note = str(exc)
    if state_graph_dot is not None:
        contents[f"{stem}.state-graph.dot"] = state_graph_dot
        if note is None:
            contents[f"{stem}.state-graph.svg"] = dot_to_svg(state_graph_dot)
    if html_stats is not None:
        contents[f"{stem}.html"] = trace_to_html(ctx, svg, html_stats, ctx.params)
    return Written(write_all(directory, contents), note)


def file_stems(name: str, result: CheckResult) -> dict[str, str]:
    """`<protocol>` for the first violated property, `<protocol>.<property>` for any others
    and for each finding reached (a `sometimes` claim whose witness is a problem)."""
    violated = [r.prop.name for r in result.results if r.verdict is Verdict.VIOLATED and r.trace]
    stems = {prop: name if k == 0 else f"{name}.{prop}" for k, prop in enumerate(violated)}
    for r in result.results:
        if r.prop.finding and r.verdict is Verdict.HOLDS and r.trace:
            stems[r.prop.name] = f"{name}.{r.prop.name}"
    return stems


def write_counterexamples(
    name: str,
    values: Mapping[str, int],
    result: CheckResult,
    out: Path,
    html: bool = False,
    graph: StateGraph | None = None,
    model: str | None = None,
    stem: str | None = None,
) -> dict[str, Written]:
    """Each counterexample of `result` as `verify` writes it: `<name>.json/.dot/.svg` in
    `out` for the first violated property, `<name>.<property>.*` for the others (with
    `html`, the offline page too). `values` are the model's parameters, recorded for
    replay; `model`, the user's module that defines it; `stem`, a file name other than
    the protocol's (a gate case at other parameters). Returns property -> its files."""
    stats = result.stats if html else None
    written = {}
    for prop, file_stem in file_stems(stem or name, result).items():
        ctx = TraceContext(name, values, result.result(prop), model=model, coverage=result.coverage)
        drawn = state_graph_dot(graph, ctx) if graph is not None else None
        written[prop] = write_trace_files(out, file_stem, ctx, stats, drawn)
    return written


def write_model_error(
    directory: Path,
    protocol: str,
    values: Mapping[str, int],
    error: ModelError,
    model: str | None = None,
) -> Path | None:
    """The trace that led to a model error as `<protocol>.model-error.json` in `directory`;
    None when the error has no trace or the file cannot be written (the error itself is
    what the user must see)."""
    if error.trace is None:
        return None
    text = model_error_to_json(protocol, values, str(error), error.trace, model)
    try:
        (path,) = write_all(directory, {f"{protocol}.model-error.json": text})
    except LeadercheckError:
        return None
    return path


def write_diagram_files(directory: Path, stem: str, ctx: TraceContext) -> Written:
    """DOT and (with `dot`) SVG only: for a trace that is not a run of an explicit model
    (a counterexample to induction), which no JSON file should offer to replay."""
    dot = trace_to_dot(ctx)
    contents = {f"{stem}.dot": dot}
    note = None
    try:
        contents[f"{stem}.svg"] = dot_to_svg(dot)
    except SvgUnavailable as exc:
        note = str(exc)
    return Written(write_all(directory, contents), note)


def write_all(directory: Path, contents: Mapping[str, str | bytes]) -> tuple[Path, ...]:
    """Every file or none (`files.write_files`): never over a device, FIFO or link."""
    return files.write_files(directory, contents)

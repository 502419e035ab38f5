"""`verify --all`: the regression gate, every protocol at its defaults against specs/.

Every output (--out, --junit, --readme, --html) is checked before the first search. Each
case is searched whole: the gate takes no bound, since a bounded case proves nothing
(its verdict would be INCOMPLETE), and a sampled strategy only where specs/ names one.
"""

from __future__ import annotations

import json
import tempfile
from contextlib import ExitStack
from functools import partial
from pathlib import Path

import click

from leadercheck.checker.app import common, search_options
from leadercheck.checker.app.args import Once, output_dir, output_file
from leadercheck.checker.app.modes import Call, Mode
from leadercheck.checker.app.output import say, warn
from leadercheck.checker.app.tracked import untracked_files
from leadercheck.checker.engine.interrupts import real_interrupt
from leadercheck.checker.engine.settings import SearchSettings
from leadercheck.checker.engine.strategies import searcher
from leadercheck.checker.errors import LeadercheckError, ModelError
from leadercheck.checker.gate.cases import CaseOutcome, GateCase, GateReport, judge
from leadercheck.checker.io import files
from leadercheck.checker.protocols.catalogue import Catalogue
from leadercheck.checker.render.files import write_counterexamples, write_model_error
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
from leadercheck.checker.render.readme import check_block, replace_block
from leadercheck.checker.result import EndReason
from leadercheck.models.catalogue import PROTOCOLS

INCOMPLETE = 3
README_BLOCK = "verdicts"

OPTIONS = (
    click.Option(
        ["--all", "run_all"], is_flag=True, help="Regression gate: every protocol against specs/."
    ),
    Once(
        ["--junit"],
        type=click.Path(path_type=Path),
        help="With --all: write JUnit XML to this file.",
    ),
    click.Option(
        ["--check-golden"],
        is_flag=True,
        help="With --all: fail if a regenerated counterexample differs from the one in --out.",
    ),
    click.Option(
        ["--update-golden"],
        is_flag=True,
        help="With --all: rewrite the counterexamples in --out.",
    ),
    Once(
        ["--readme"],
        type=click.Path(path_type=Path, dir_okay=False),
        help="With --all: rewrite the verdict table in this README.",
    ),
)


def _stopped(where: str, done: int, total: int, pages: Path | None) -> str:
    """The one line a Ctrl-C ends the gate with: where, how far, and what was written."""
    written = "nothing written" if pages is None else f"only the pages so far under {pages}"
    return f"interrupted during {where}, after {done} of {total} protocols; {written}"


def run(call: Call) -> int:
    """Run every protocol at its defaults against its expectations; exit 1 on any
    difference."""
    check_golden, update = call["check_golden"], call["update_golden"]
    if check_golden and update:
        raise LeadercheckError("--check-golden and --update-golden exclude each other")
    reductions = call["symmetry"] or call["por"]
    if (check_golden or update) and reductions:
        raise LeadercheckError(
            "golden counterexamples come from the unreduced search; "
            "drop --symmetry/--por with --check-golden/--update-golden"
        )
    if search_options.is_sampled(call["engine"]):
        raise LeadercheckError(
            "--all judges each protocol with the strategy specs/ names for it; drop "
            "--strategy simulate/bitstate and its options"
        )
    whole = search_options.settings_of(call.values, call.given, trusted=call["model_spec"] is None)
    junit, readme = call["junit"], call["readme"]
    with_html, pages_dir = common.html_target(call.values)
    out, as_json = call["out"], call["as_json"]
    # Every output is checked before the first search; --html DIR writes only under DIR
    # (and --out, when given).
    copy_out = not as_json and not check_golden and ("out" in call.given or not with_html)
    if copy_out or update:
        output_dir(out, "--out")
    if junit is not None:
        output_file(junit, "--junit")
    if readme is not None:
        check_block(readme, README_BLOCK)
    if with_html:
        output_dir(pages_dir, "--html")
    catalogue = common.catalogue_of(call["model_spec"])
    cases, coverage, engines = _cases(catalogue, whole)
    if not as_json:
        say("\n".join(table_header()))

    outcomes: list[CaseOutcome] = []
    pages: dict[str, dict[str, str]] = {}
    current = "the first protocol"  # a Ctrl-C between searches ends the gate too
    with ExitStack() as stack:
        try:
            fresh = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="leadercheck-")))
            exhaustive = stack.enter_context(searcher(whole))
            for case in cases:
                current = case.name
                sampled = engines.get(case.name)
                search = exhaustive if sampled is None else stack.enter_context(searcher(sampled))
                try:
                    result = search(case.build(), case.properties)
                except ModelError as exc:  # one line; the trace that led there goes to a file
                    where = (
                        out if copy_out or update else Path(tempfile.mkdtemp(prefix="leadercheck-"))
                    )
                    path = write_model_error(
                        where, case.protocol_name, case.params, exc, catalogue.model
                    )
                    said = "" if path is None else f"; the trace that led there: {path}"
                    raise ModelError(f"{case.name}: {exc}{said}") from exc
                if result.end is EndReason.INTERRUPTED:  # Ctrl-C: stop the gate, write nothing
                    stats = result.stats
                    where = (
                        f"{case.name} ({stats.distinct_states:,} states in {stats.seconds:.2f} s)"
                    )
                    warn(
                        _stopped(where, len(outcomes), len(cases), pages_dir if with_html else None)
                    )
                    return INCOMPLETE
                shortest = not whole.reductions.por  # POR keeps verdicts, not trace lengths
                outcome = CaseOutcome(case, result, judge(case, result, shortest))
                write_case = partial(
                    write_counterexamples, case.protocol_name, case.params, result,
                    model=catalogue.model, stem=case.stem or None,
                )  # fmt: skip
                write_case(fresh)
                if with_html:
                    written = write_case(pages_dir, html=True)
                    pages[case.name] = {
                        prop: next(p.name for p in w.paths if p.suffix == ".html")
                        for prop, w in written.items()
                    }
                if not as_json:
                    say("\n".join(case_lines(outcome)))
                outcomes.append(outcome)
        except KeyboardInterrupt:
            if not real_interrupt():
                raise
            warn(_stopped(current, len(outcomes), len(cases), pages_dir if with_html else None))
            return INCOMPLETE
        report = GateReport(tuple(outcomes), tuple(coverage))
        golden_findings: list[str] = []
        if check_golden:
            golden_findings = compare_golden(fresh, out, untracked_files(out))
        elif update:
            changed = update_golden(fresh, out)
            if not as_json:
                say(f"\nupdated {len(changed)} file(s) in {out}")
        elif copy_out:
            _copy_into(fresh, out)
    if golden_findings:
        report = GateReport(report.outcomes, report.extra_findings + tuple(golden_findings))
    if junit is not None:
        files.write_text(junit, junit_xml(report), "--junit")
    if with_html:
        files.write_files(pages_dir, {"index.html": overview_html(report, pages)})
    if readme is not None:
        summaries = {name: p.summary for name, p in catalogue.protocols.items()}
        replace_block(readme, README_BLOCK, verdict_table(report, summaries))
    if as_json:
        say(json.dumps(json_summary(report)))
    else:
        say("\n".join(summary_lines(report)))
    return 0 if report.passed else 1


def _cases(
    catalogue: Catalogue, whole: SearchSettings
) -> tuple[list[GateCase], list[str], dict[str, SearchSettings]]:
    """The gate's cases in catalogue order, what specs/ fails to cover, and the sampled
    strategy of each case that names one."""
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
    names = gate_names() if catalogue.model is None else list(protocols)
    cases: list[GateCase] = []
    engines: dict[str, SearchSettings] = {}
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
                    partial(common.checked_model, catalogue, protocol, values, props),
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
                    max_memory=whole.max_memory,
                    sampling=judged.sampling,
                    trust_values=whole.trust_values,
                )
    return cases, coverage, engines


def gate_names() -> list[str]:
    """The protocols the gate runs, in catalogue order (a seam for tests)."""
    return list(PROTOCOLS)


def _copy_into(fresh: Path, out: Path) -> list[str]:
    """Plain `--all` leaves every counterexample in --out, as `verify --protocol` would: all
    or none, never over a device, FIFO or link."""
    names = sorted(p.name for p in fresh.iterdir())
    files.write_files(out, {n: files.read_bytes(fresh / n, files.OUTPUT_LIMIT) for n in names})
    return names


MODE = Mode(
    label="--all",
    flags=("run_all",),
    options=OPTIONS,
    shared=(common.NAMES - {"protocol_name", "params", "nodes"}) | search_options.NAMES,
    run=run,
    why="--all runs every protocol at its defaults, each search whole",
)

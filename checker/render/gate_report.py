"""The regression gate's outputs: the terminal table, JUnit XML, JSON, and the README table."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from leadercheck.checker.gate.cases import CaseOutcome, GateReport, Row
from leadercheck.checker.properties import Kind
from leadercheck.checker.result import Verdict

HEADER = ("protocol", "property", "expected", "got", "states", "seconds")
WIDTHS = (34, 24, 10, 10, 11, 8)  # a case may name its parameters


def _cells(cells: tuple[str, ...]) -> str:
    return "  ".join(
        c.ljust(w) if k < 4 else c.rjust(w)
        for k, (c, w) in enumerate(zip(cells, WIDTHS, strict=True))
    ).rstrip()


def table_header() -> list[str]:
    return [_cells(HEADER), _cells(tuple("-" * w for w in WIDTHS))]


def _got(row: Row) -> str:
    return row.result.verdict.value


def case_lines(outcome: CaseOutcome) -> list[str]:
    """The table rows of one case: protocol, states and seconds on its first row only."""
    lines = []
    stats = outcome.result.stats
    for k, row in enumerate(outcome.rows):
        first = k == 0
        cells = (
            outcome.case.name if first else "",
            row.result.prop.name,
            row.expected.value if row.expected else "-",
            _got(row),
            f"{stats.distinct_states:,}" if first else "",
            f"{stats.seconds:.2f}" if first else "",
        )
        lines.append(_cells(cells) + ("" if row.ok else "   <-- differs"))
    if outcome.case.judged_by:  # a sampled case: its strategy, under its rows
        lines.append(f"{'':<{WIDTHS[0]}}  (judged by {outcome.case.judged_by})")
    return lines


def summary_lines(report: GateReport) -> list[str]:
    cases = len(report.outcomes)
    props = sum(len(o.rows) for o in report.outcomes)
    if report.passed:
        return ["", f"gate: PASS ({cases} cases, {props} verdicts as expected)"]
    findings = report.findings
    lines = ["", f"gate: FAIL ({len(findings)} difference{'s' if len(findings) != 1 else ''})"]
    lines += [f"  {f}" for f in findings]
    return lines


@dataclass(frozen=True)
class JunitCase:
    """One test case of a JUnit report: a failure when `failure` names one."""

    classname: str
    name: str
    seconds: float | None = None
    failure: str = ""  # the message; empty when the case passed
    details: str = ""  # the failure's text


def junit_suite(name: str, cases: Sequence[JunitCase]) -> str:
    """A JUnit XML test suite, as `verify --all` and `verify config --all` write one."""
    suite = ET.Element(
        "testsuite",
        name=name,
        tests=str(len(cases)),
        failures=str(sum(1 for c in cases if c.failure)),
        errors="0",
    )
    for c in cases:
        case = ET.SubElement(suite, "testcase", classname=c.classname, name=c.name)
        if c.seconds is not None:
            case.set("time", f"{c.seconds:.3f}")
        if c.failure:
            ET.SubElement(case, "failure", message=c.failure).text = c.details
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def junit_xml(report: GateReport) -> str:
    """One test case per protocol and property; a difference is a failure with its reason."""
    cases = [
        JunitCase(
            outcome.case.name,
            row.result.prop.name,
            outcome.result.stats.seconds / max(len(outcome.rows), 1),
            "" if row.ok else row.findings[0],
            "\n".join(row.findings),
        )
        for outcome in report.outcomes
        for row in outcome.rows
    ]
    cases += [JunitCase("specs", "coverage", None, f, f) for f in report.extra_findings]
    return junit_suite("leadercheck", cases)


def json_summary(report: GateReport) -> dict[str, Any]:
    protocols = []
    for o in report.outcomes:
        s = o.result.stats
        protocols.append(
            {
                "protocol": o.case.name,
                "params": dict(o.case.params),
                "judged_by": o.case.judged_by or "exhaustive search",
                "verdict": o.result.verdict.value,
                "properties": [
                    {
                        "name": r.result.prop.name,
                        "kind": r.result.prop.kind.value,
                        "expected": r.expected.value if r.expected else None,
                        "got": r.result.verdict.value,
                        "max_steps": r.max_steps,
                        "trace_length": len(r.result.trace) if r.result.trace else None,
                        "ok": r.ok,
                        "findings": list(r.findings),
                    }
                    for r in o.rows
                ],
                "stats": {
                    "distinct_states": s.distinct_states,
                    "generated_states": s.generated_states,
                    "depth": s.depth,
                    "seconds": round(s.seconds, 6),
                    "states_per_second": round(s.states_per_second, 1),
                    "peak_memory_bytes": s.peak_memory_bytes,
                },
            }
        )
    return {
        "gate": "PASS" if report.passed else "FAIL",
        "findings": report.findings,
        "protocols": protocols,
    }


def verdict_table(report: GateReport, summaries: Mapping[str, str]) -> list[str]:
    """A Markdown table of every protocol's verdicts, for the README; nothing time-dependent."""
    lines = [
        "| protocol | what it models | safety and liveness verdicts | witnesses reached "
        "| distinct states |",
        "|---|---|---|---|---|",
    ]
    for o in report.outcomes:
        safety, witnesses = [], []
        for r in o.rows:
            res = r.result
            if res.prop.kind is not Kind.SOMETIMES:
                text = f"{res.prop.name} {res.verdict.value}"
                if res.verdict is Verdict.VIOLATED:
                    text = f"{res.prop.name} **VIOLATED**"
                    if res.trace is not None and res.trace.loop_from is not None:
                        text += f" (lasso, {len(res.trace)} steps)"
                    elif res.trace is not None:
                        text += f" ({len(res.trace)} steps)"
                safety.append(text)
            else:
                mark = "yes" if res.verdict is Verdict.HOLDS else "**no**"
                witnesses.append(f"{res.prop.name}: {mark}")
        what = summaries.get(o.case.protocol_name, "")
        if o.case.judged_by:
            what += f" (judged by {o.case.judged_by})"
        lines.append(
            f"| `{o.case.name}` | {what} | {'; '.join(safety)} "
            f"| {'; '.join(witnesses)} | {o.result.stats.distinct_states:,} |"
        )
    return lines

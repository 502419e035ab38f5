"""The regression gate: run every case and compare each verdict with its expectation.

A difference is a finding: a verdict other than expected, a counterexample longer
than its bound, or a safety verdict of HOLDS in a case whose witness (a `sometimes`
claim expected to hold) was never reached, which would make that HOLDS vacuous.
This module only compares; the CLI decides what the cases are and runs them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from leadercheck.checker.model import Model
from leadercheck.checker.properties import Kind, Property
from leadercheck.checker.result import CheckResult, PropertyResult, Verdict


class ExpectationLike(Protocol):
    @property
    def prop(self) -> str: ...

    @property
    def verdict(self) -> Verdict: ...

    @property
    def max_steps(self) -> int | None: ...


@dataclass(frozen=True)
class GateCase:
    name: str  # the protocol, then any parameters the case sets ("raft nodes=5")
    params: Mapping[str, int]
    build: Callable[[], Model[Any]]
    properties: Sequence[Property]
    expectations: Sequence[ExpectationLike]
    protocol: str = ""  # the protocol's own name (default: `name`)
    stem: str = ""  # the counterexample files' name (default: `name`)
    judged_by: str = ""  # the sampled strategy that judges it, in words; "": exhaustive

    @property
    def protocol_name(self) -> str:
        return self.protocol or self.name


@dataclass(frozen=True)
class Row:
    """One property of one case: what was expected, what the search said, and any finding."""

    case: str
    result: PropertyResult
    expected: Verdict | None
    max_steps: int | None
    findings: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.findings


@dataclass(frozen=True)
class CaseOutcome:
    case: GateCase
    result: CheckResult
    rows: tuple[Row, ...]


@dataclass(frozen=True)
class GateReport:
    outcomes: tuple[CaseOutcome, ...]
    extra_findings: tuple[str, ...] = ()  # about the cases as a whole (e.g. a missing spec)

    @property
    def findings(self) -> list[str]:
        rows = [f for o in self.outcomes for r in o.rows for f in r.findings]
        return list(self.extra_findings) + rows

    @property
    def passed(self) -> bool:
        return not self.findings


def _steps(n: int) -> str:
    return "1 step" if n == 1 else f"{n} steps"


def _trace_words(r: PropertyResult) -> str:
    """'counterexample of 10 steps', or 'reached in 2 steps' for a witness."""
    assert r.trace is not None
    if r.trace_kind == "witness":
        return f"reached in {_steps(len(r.trace))}"
    return f"{r.trace_kind} of {_steps(len(r.trace))}"


def judge(case: GateCase, result: CheckResult, shortest: bool = True) -> tuple[Row, ...]:
    """Compare one case's results with its expectations.

    `shortest` says the search returns shortest traces, so a counterexample longer than
    its expected bound is a finding; a partial-order-reduced search does not.
    """
    wanted = {e.prop: e for e in case.expectations}
    unreached = [
        r.prop.name
        for r in result.results
        if r.prop.kind is Kind.SOMETIMES
        and r.verdict is not Verdict.HOLDS
        and getattr(wanted.get(r.prop.name), "verdict", None) is Verdict.HOLDS
    ]
    rows = []
    for r in result.results:
        exp = wanted.get(r.prop.name)
        findings = []
        where = f"{case.name} {r.prop.name}"
        if exp is None:
            findings.append(f"{where}: no expected verdict in the specs")
        elif r.verdict is not exp.verdict:
            got = r.verdict.value
            if r.trace is not None:
                got += f" ({_trace_words(r)})"
            findings.append(f"{where}: expected {exp.verdict.value}, got {got}")
        elif (
            shortest
            and exp.max_steps is not None
            and r.trace is not None
            and len(r.trace) > exp.max_steps
        ):
            findings.append(
                f"{where}: {r.trace_kind} of {_steps(len(r.trace))}, "
                f"longer than the expected {exp.max_steps}"
            )
        if r.prop.kind is Kind.ALWAYS and r.verdict is Verdict.HOLDS and unreached:
            findings.append(
                f"{where}: HOLDS vacuously: witness {', '.join(unreached)} never reached"
            )
        rows.append(
            Row(
                case.name,
                r,
                exp.verdict if exp else None,
                exp.max_steps if exp else None,
                tuple(findings),
            )
        )
    return tuple(rows)

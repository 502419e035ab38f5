"""The summary of one verification run: terminal lines and the `--json` object."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from leadercheck.checker.render.context import TraceContext
from leadercheck.checker.render.coverage import NEVER_HOLDS, coverage_json, coverage_lines
from leadercheck.checker.render.files import Written
from leadercheck.checker.render.text import step_count, trace_lines
from leadercheck.checker.result import (
    CheckResult,
    EndReason,
    Measurement,
    PropertyResult,
    Stats,
    Verdict,
)

TOO_BIG = (
    "hint: the state space does not fit; --strategy simulate (or --swarm K) looks for a "
    "violation instead, --strategy bitstate visits states in fixed memory (neither shows HOLDS)"
)


@dataclass(frozen=True)
class Run:
    """A finished check with what it was about and what was written for it."""

    protocol: str
    params: Mapping[str, int]
    result: CheckResult
    written: Mapping[str, Written]  # property name -> its trace files
    expected: Mapping[str, Verdict]  # property name -> the verdict specs expect
    search: str = ""  # the engine and reductions, when not the plain one-process search
    model: str | None = None  # the user's module (--model) that defines the protocol


def _outcome(r: PropertyResult) -> str:
    """What the verdict rests on: 'reached in 5 steps', 'counterexample of 1 step', ..."""
    if r.trace is None:
        return r.reason
    length = step_count(len(r.trace))
    if r.trace.loop_from is not None:
        return f"lasso of {length}, looping from step {r.trace.loop_from}"
    found = ""
    if r.found_length is not None and r.found_length > len(r.trace):  # sampled, shortened
        found = f" (found with {r.found_length}, shortened)"
    if r.trace_kind == "witness":
        return f"reached in {length}{found}" if len(r.trace) else "reached in the initial state"
    return f"{r.trace_kind} of {length}{found}"


def written_lines(w: Written) -> list[str]:
    """Where a trace's files went, and why there is no SVG if there is none."""
    lines = ["  wrote " + ", ".join(str(p) for p in w.paths)]
    return lines + ([f"  no SVG: {w.note}"] if w.note else [])


def report_lines(run: Run) -> list[str]:
    """Verdict table, each trace as numbered lines with where its files went, then statistics."""
    result = run.result
    source = f" (from {run.model})" if run.model else ""
    lines = [f"{run.protocol}{source}  " + " ".join(f"{k}={v}" for k, v in run.params.items())]
    width = max(len(r.prop.name) for r in result.results)
    for r in result.results:
        expected = run.expected.get(r.prop.name, r.verdict)
        surprise = ""
        if r.verdict is not Verdict.INCOMPLETE and expected is not r.verdict:
            who = "expected" if run.model else "specs expect"
            surprise = f"  ({who} {expected.value})"
        lines.append(f"  {r.prop.name:<{width}}  {r.verdict.value:<10}  {_outcome(r)}{surprise}")
    for r in result.results:
        if r.trace is None:
            continue
        lines += ["", f"{r.trace_kind} for {r.prop.name}:"]
        lines += trace_lines(TraceContext(run.protocol, run.params, r))
        if r.prop.name in run.written:
            lines += written_lines(run.written[r.prop.name])
    s = result.stats
    lines += [
        "",
        f"{s.distinct_states:,} distinct states, {s.generated_states:,} generated, "
        f"depth {s.depth}, {s.seconds:.2f} s, {s.states_per_second:,.0f} states/s, "
        f"peak memory {s.peak_memory_bytes / 2**20:.1f} MiB ({result.end.value})",
    ]
    lines += phase_lines(s)
    coverage = result.coverage
    if coverage is not None:
        lines += coverage_lines(coverage)
    if s.exact:
        lines.append("states kept in full (--exact): no fingerprint collision can hide one")
    elif coverage is None or coverage.strategy != "bitstate":  # a bit array keeps none
        hint = " (--exact keeps full states)" if coverage is None else ""
        bits = f"{s.fingerprint_bits} bits"
        if s.collision_elsewhere:  # a second search, on fingerprints of its own
            bits += " in the largest search, each other search's estimate added"
        lines.append(
            f"fingerprints: {bits}; estimated chance that a collision hid a state: "
            f"{s.collision_probability:.1e}{hint}"
        )
    lines += [f"note: {note}" for note in result.notes]
    if coverage is None and result.end in (EndReason.MAX_MEMORY, EndReason.MAX_STATES):
        lines.append(TOO_BIG)
    if run.search:
        lines.append(f"search: {run.search}")
    if result.coverage is not None and result.verdict is Verdict.INCOMPLETE:
        lines.append(f"note: {NEVER_HOLDS}")
    lines.append(f"verdict: {result.verdict.value}")
    return lines


def json_report(run: Run) -> dict[str, Any]:
    """The one JSON object `verify --json` prints."""
    props = []
    for r in run.result.results:
        expected = run.expected.get(r.prop.name)
        entry: dict[str, Any] = {
            "name": r.prop.name,
            "kind": r.prop.kind.value,
            "verdict": r.verdict.value,
            "expected": expected.value if expected else None,
            "reason": r.reason,
        }
        if r.trace is not None:
            entry["trace_length"] = len(r.trace)
        if r.found_length is not None:
            entry["found_length"] = r.found_length  # as a sampled search found it
        if r.prop.name in run.written:
            w = run.written[r.prop.name]
            entry["trace_file"] = str(w.paths[0])
            entry["files"] = [str(p) for p in w.paths]
            if w.note:
                entry["svg_note"] = w.note
        props.append(entry)
    s = run.result.stats
    where = {"model": run.model} if run.model is not None else {}
    return {
        **where,
        "protocol": run.protocol,
        "params": dict(run.params),
        "verdict": run.result.verdict.value,
        "end": run.result.end.name.lower(),
        "search": run.search or "plain",
        "properties": props,
        "stats": {
            "distinct_states": s.distinct_states,
            "generated_states": s.generated_states,
            "transitions": s.transitions,
            "depth": s.depth,
            "seconds": round(s.seconds, 6),
            "states_per_second": round(s.states_per_second, 1),
            "peak_memory_bytes": s.peak_memory_bytes,
            "fingerprint_collision_probability": float(f"{s.collision_probability:.3g}"),
            "fingerprint_bits": s.fingerprint_bits,
            "exact": s.exact,
            "phases": [
                {
                    "name": ph.name,
                    "distinct_states": ph.distinct_states,
                    "transitions": ph.transitions,
                    "seconds": round(ph.seconds, 6),
                    "peak_memory_bytes": ph.peak_memory_bytes,
                    "end": ph.end.name.lower(),
                }
                for ph in s.phases
            ],
        },
        "notes": list(run.result.notes),
        "coverage": None if run.result.coverage is None else coverage_json(run.result.coverage),
    }


def phase_lines(s: Stats) -> list[str]:
    """One line per phase of a check that had more than one (search, then fair cycles)."""
    lines = []
    for ph in s.phases:
        judged = ph.name == "fair cycles"
        what = "edges" if judged else "transitions"
        end = ph.end.value
        if ph.end is EndReason.EXHAUSTED and ph.name in ("fair cycles", "shorten"):
            end = "all judged" if judged else "done"
        lines.append(
            f"  {ph.name}: {ph.distinct_states:,} states, {ph.transitions:,} {what}, "
            f"{ph.seconds:.2f} s ({end})"
        )
    return lines


@dataclass(frozen=True)
class MeasureTable:
    """A measure taken at several sizes: one row per size (None: nothing to measure there).

    `ends` is how many reachable states the value was taken over (the mean's denominator);
    `states` is how many the search explored.
    """

    title: str
    size_name: str
    rows: tuple[tuple[int | tuple[int, ...], Measurement | None], ...]

    def lines(self) -> list[str]:
        head = ("worst", "best", "mean", "ends", "states", "seconds")
        widths = (6, 6, 7, 6, 10, 7)
        cells = "  ".join(h.rjust(w) for h, w in zip(head, widths, strict=True))
        lines = [f"{self.title}:", f"  {self.size_name:>6}  {cells}"]
        for size, m in self.rows:
            label = "/".join(map(str, size)) if isinstance(size, tuple) else str(size)
            if m is None:
                lines.append(f"  {label:>6}  {'-':>6}")
                continue
            cut = "" if m.complete else f"  INCOMPLETE ({m.end.value})"
            if not m.count:  # cut short before any state where the value applies
                lines.append(f"  {label:>6}  {'-':>6}{cut}")
                continue
            lines.append(
                f"  {label:>6}  {m.worst:>6}  {m.best:>6}  {m.mean:>7.2f}  {m.count:>6,}  "
                f"{m.stats.distinct_states:>10,}  {m.stats.seconds:>7.2f}{cut}"
            )
        return lines

    @property
    def complete(self) -> bool:
        return all(m is None or m.complete for _, m in self.rows)

    @property
    def interrupted(self) -> bool:
        return any(m is not None and m.end is EndReason.INTERRUPTED for _, m in self.rows)

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "rows": [
                {self.size_name: size}
                | (
                    {
                        "worst": m.worst,
                        "best": m.best,
                        "mean": round(m.mean, 4),
                        "count": m.count,
                        "distinct_states": m.stats.distinct_states,
                        "seconds": round(m.stats.seconds, 6),
                        "end": m.end.value,
                    }
                    if m
                    else {}
                )
                for size, m in self.rows
            ],
        }

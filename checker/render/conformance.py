"""A conformance record (checker/conform/report.py) as terminal text and as an HTML section.

The timeline has one row per model step: the model's step, what was done on the real
system, when (seconds since the clients started) and whether both sides' facts agreed.
A divergence is told as the step, what the model said and what the real system did.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

Record = Mapping[str, Any]


def entry_line(entry: Mapping[str, Any], before: Mapping[str, Any] | None = None) -> str:
    """One timeline row, as progress prints it while the run goes on; with the entry
    `before` it, also the real facts the step changed."""
    mark = "ok" if entry["matches"] else "DIVERGES"
    text = (
        f"{entry['step']:>4}  t={entry['t']:<3} {entry['at_seconds']:>8.3f}s  "
        f"{entry['model']}\n{'':>24}real: {entry['real']}  [{mark}]"
    )
    seen, earlier = entry["observed"], (before or {}).get("observed", {})
    changed = [f"{k}: {seen[k]}" for k in sorted(seen) if k != "call" and seen[k] != earlier.get(k)]
    if before is not None and changed:
        text += f"\n{'':>24}now:  " + "; ".join(changed)
    return text


def header_lines(record: Record, steps: int) -> list[str]:
    params = " ".join(f"{k}={v}" for k, v in record["params"].items())
    return [
        f"conform {record['trace']}: {record['protocol']} ({params}), {steps} steps,"
        f" against {record['system']} ({record['server']})",
        *([f"client: {record['client']}"] if "under test" in record.get("client", "") else []),
        *([f"partitions: {record['partitions']}"] if _silent(record) else []),
        f"time: {record['time_mapping']}",
        "step  t    real time  model step / what the real system did",
    ]


def _silent(record: Record) -> bool:
    return str(record.get("partitions", "")).startswith("silent")


def verdict_lines(record: Record) -> list[str]:
    """A claim broken on the real system first (the headline: exit 1), then whether the
    run conformed, then (for a trace) whether its anomaly happened on the real system."""
    anomaly = record.get("anomaly")
    breaks = record.get("real_breaks") or []
    head = [violated_line(record["system"], breaks)] if breaks else []
    return head + _verdict(record) + ([anomaly["text"]] if anomaly else [])


def violated_line(system: str, breaks: Sequence[Mapping[str, Any]], where: str = "") -> str:
    """ "VIOLATED on etcd: no-stale-write broke at step 10 (storage: ...)": what a claim
    broken on the real system is told as, whatever the model expected."""
    said = "; ".join(
        f"{b['claim']} broke at step {b['step']}{where} ({b['evidence']})" for b in breaks
    )
    return f"VIOLATED on {system}: {said}"


def _verdict(record: Record) -> list[str]:
    verdict, seconds = record["verdict"], record["seconds"]
    if verdict == "CONFORMS":
        return [
            f"CONFORMS: {record['system']} did what the model predicted at every step"
            f" ({seconds:g} s)"
        ]
    if verdict == "INCOMPLETE" and record.get("fell_behind") and not record["divergence"]:
        return [
            f"INCOMPLETE: the machine fell behind the time mapping {record['fell_behind']};"
            " what the real system showed after that cannot be held against the model (run"
            f" it on a quieter machine, or with a longer --tick) ({seconds:g} s)"
        ]
    if verdict == "INCOMPLETE":
        done = len(record["timeline"]) - 1  # its first entry is the start, no step
        if done < 1:
            return [f"INCOMPLETE: interrupted before the first step ({seconds:g} s)"]
        return [
            f"INCOMPLETE: interrupted after {done} step{'s' if done > 1 else ''} ({seconds:g} s)"
        ]
    d = record["divergence"]
    finding = (
        f"the client under test did not do what {record['protocol']} does"
        if "under test" in record.get("client", "")
        else "a model-fidelity finding"
    )
    lines = [
        f"DIVERGES at step {d['step']}: {finding} ({seconds:g} s)",
        f"  the model: {d['model']}",
        f"  the real system: {d['real']}",
    ]
    return lines + [f"  {text}" for text in d["differences"]]


def record_text(record: Record, steps: int) -> str:
    lines = header_lines(record, steps)
    timeline = record["timeline"]
    lines += [entry_line(e, timeline[k - 1] if k else None) for k, e in enumerate(timeline)]
    return "\n".join(lines + verdict_lines(record)) + "\n"


def _facts(facts: Mapping[str, str], other: Mapping[str, str]) -> str:
    cells = []
    for key in sorted(facts):
        text = html.escape(f"{key}: {facts[key]}")
        cells.append(f'<b class="off">{text}</b>' if other.get(key) != facts[key] else text)
    return "<br>".join(cells)


def timeline_section(records: Sequence[Record]) -> str:
    """The HTML section a trace's page gets for each run against a real system."""
    parts = []
    for record in records:
        rows = []
        for e in record["timeline"]:
            cls = "" if e["matches"] else ' class="diverges"'
            rows.append(
                f'<tr data-step="{e["step"]}"{cls}><td>{e["step"]}</td><td>t={e["t"]}</td>'
                f"<td>{e['at_seconds']:.3f} s</td><td>{html.escape(e['model'])}</td>"
                f"<td>{html.escape(e['real'])}</td>"
                f"<td>{_facts(e['expected'], e['observed'])}</td>"
                f"<td>{_facts(e['observed'], e['expected'])}</td></tr>"
            )
        verdict = " ".join(verdict_lines(record))
        parts.append(
            f'<section class="conformance {record["verdict"].lower()}">'
            f"<h2>Against the real system: {html.escape(record['server'])}</h2>"
            f'<p class="verdict-line">{html.escape(verdict)}</p>'
            f'<p class="note">{html.escape(record["time_mapping"])}. Real timings differ'
            " from run to run; the model's side does not.</p>"
            '<table class="timeline"><thead><tr><th>step</th><th>model time</th>'
            "<th>real time</th><th>model step</th><th>real event</th><th>the model says</th>"
            "<th>the real system shows</th></tr></thead><tbody>"
            + "\n".join(rows)
            + "</tbody></table></section>"
        )
    return "\n".join(parts)


CONFORMANCE_CSS = """.conformance { margin-top: 1.5em; }
.conformance table.timeline { border-collapse: collapse; font-size: .85em; width: 100%; }
.conformance td, .conformance th { border-top: 1px solid #ddd; padding: .25em .4em;
  vertical-align: top; text-align: left; }
.conformance tr.diverges td { background: #fde7e7; }
.conformance b.off { color: #b00; }
.conformance.conforms .verdict-line { color: #176b2c; font-weight: bold; }
.conformance.diverges .verdict-line { color: #b00; font-weight: bold; }
"""

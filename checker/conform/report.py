"""A conformance run as one JSON-able record: what ran against what, and the timeline.

The record is what `--json` prints, what `--timeline FILE` writes and what the text and
HTML renderings read (checker/render/conformance.py), so the three always agree.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from leadercheck.checker.conform.anomaly import Broken, anomaly_record
from leadercheck.checker.conform.harness import stall_words
from leadercheck.checker.conform.run import Report
from leadercheck.checker.conform.world import Timing

SCHEMA = "leadercheck.conformance/1"


def time_mapping(t: Timing) -> str:
    """How model time was made real, in one sentence (every report states it)."""
    scale = ""
    if t.ttl_scale != 1.0:
        scale = f" (scaled by {t.ttl_scale:g}: a deliberately wrong mapping)"
    return (
        f"a tick is {t.tick:g} s of real time; a TTL of k ticks is granted as"
        f" {t.tick * t.ttl_scale:g}·k s{scale}; facts may take up to {t.settle:g} s to show"
        f" ({t.settle_why})"
    )


def partition_words(silent: bool) -> str:
    """How a partition was made real, as the report says it."""
    if silent:
        return (
            "silent: the proxy holds every byte until the heal; nobody hears until its"
            " timeouts fire"
        )
    return "reset: the proxy resets every connection at once, and new ones"


def client_words(command: list[str] | None) -> str:
    """Whose client each node runs, as the report says it."""
    if command is None:
        return "leadercheck's own client"
    return "the client under test: " + shlex.join(command)


def breaks_json(breaks: Mapping[str, Broken]) -> list[dict[str, Any]]:
    """Where each claim broke on the real system, first break first."""
    ordered = sorted(breaks.values(), key=lambda b: (b.step, b.claim))
    return [{"claim": b.claim, "step": b.step, "evidence": b.evidence} for b in ordered]


def to_record(report: Report) -> dict[str, Any]:
    result = report.result
    timing = result.timing or report.timing
    divergence = result.divergence
    breaks = result.breaks()
    last = result.entries[-1].step if result.entries else 0
    under_test = report.binding.client_command is not None
    anomaly = anomaly_record(
        report.claim, report.model_break, breaks, result.system, last, under_test
    )
    return {
        "schema": SCHEMA,
        "trace": report.trace,
        "protocol": result.protocol,
        "params": dict(sorted(report.binding.params.items())),
        "system": result.system,
        "client": client_words(report.binding.client_command),
        "partitions": partition_words(report.binding.silent_cuts),
        "server": report.version,
        "time_mapping": time_mapping(timing),
        "timing": {
            "tick_seconds": timing.tick,
            "ttl_scale": timing.ttl_scale,
            "settle_seconds": timing.settle,
        },
        "verdict": result.verdict,
        "fell_behind": None if result.stall is None else stall_words(*result.stall),
        "divergence": None
        if divergence is None
        else {
            "step": divergence.step,
            "model": divergence.model_event,
            "real": divergence.real_event,
            "differences": divergence.differences(),
        },
        "anomaly": anomaly,
        # every observable claim that broke on the real system, whatever the model expected:
        # the run's headline and its exit code (1), apart from whether it conformed
        "real_breaks": breaks_json(breaks),
        "seconds": result.seconds,
        "timeline": [e.to_json() for e in result.entries],
    }

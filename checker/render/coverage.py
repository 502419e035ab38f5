"""What a sampled search covered, in words and as JSON: walks, bits, the collision estimate."""

from __future__ import annotations

from typing import Any

from leadercheck.checker.io.sizes import format_size
from leadercheck.checker.result import Coverage


def coverage_lines(c: Coverage) -> list[str]:
    """The report's lines on a simulation's walks or a bitstate search's bit array."""
    swarm = f", a swarm of {c.workers} diversified workers" if c.workers > 1 else ""
    if c.strategy == "simulate":
        return [
            f"simulation: seed {c.seed}{swarm}; {c.walks:,} walks of at most {c.walk_depth} "
            f"steps, {c.steps:,} steps taken, the deepest {c.deepest} steps from an initial state"
        ]
    share = c.bits_set / c.bits if c.bits else 0.0
    each, whose = (" each", "their union has") if c.workers > 1 else ("", "")
    return [
        f"bitstate: seed {c.seed}{swarm}; a bit array of {format_size(c.bits // 8)}{each} "
        f"(2^{c.bits.bit_length() - 1} bits, {c.hashes} per state): {whose}{' ' * bool(whose)}"
        f"{c.bits_set:,} bits set ({share:.2%}), which imply {c.implied:,} states",
        f"estimated share of states a collision may have skipped: at most {c.omitted:.1e} "
        "(the chance that a state met at the end looked visited; a state reachable only "
        "through a skipped one is skipped too)",
    ]


NEVER_HOLDS = (
    "a sampled search never shows that a claim holds: what it did not find is INCOMPLETE "
    "(the exhaustive search proves claims)"
)


def coverage_json(c: Coverage) -> dict[str, Any]:
    doc: dict[str, Any] = {"strategy": c.strategy, "seed": c.seed, "workers": c.workers}
    if c.strategy == "simulate":
        doc |= {"walks": c.walks, "walk_depth": c.walk_depth}
    else:
        doc |= {
            "bits": c.bits,
            "hashes": c.hashes,
            "bits_set": c.bits_set,
            "estimated_states": c.implied,
            "estimated_omitted_share": float(f"{c.omitted:.3g}"),
        }
    return doc | {"steps": c.steps, "deepest": c.deepest}

"""`verify bench --sampled`: the sampled strategies measured, each run in a fresh process.

Three questions, each answered side by side in one run (the machine is noisy: compare
medians and ratios, not single runs):

1. how soon a five-node violation is found, by one simulation process and by a swarm of
   two, over several seeds (runs alternate between the two, seed by seed);
2. how close the shortened trace comes to the shortest one, where the exhaustive search
   (with --symmetry) still finds the shortest;
3. how much of a state space a bitstate search visits, against the exhaustive count.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from leadercheck.checker.app.benchmarks.timed import run_verify

# the five-node protocols the exhaustive search cannot finish, and where it still finds the
# shortest trace (with --symmetry) to compare the shortened ones with
FIND_AT = (("raft-volatile-vote", 5), ("raft-no-quorum", 5))
SEARCHES = (("simulate", ("--strategy", "simulate")), ("swarm of 2", ("--swarm", "2")))
SHORTEST_AT = (("raft-no-quorum", 4), ("raft-volatile-vote", 4), ("raft-no-quorum", 5))
BITSTATE_SIZES = {
    False: (("N", "4"), ("NC", "4"), ("MaxTerm", "2")),
    True: (("N", "5"), ("NC", "3"), ("MaxTerm", "2")),  # --large: the largest that finishes here
}
TIME_LIMIT = "60"  # seconds a five-node search may take (the goal)


@dataclass
class FindRow:
    """One protocol and search over the seeds: time to the first violation, lengths."""

    protocol: str
    nodes: int
    search: str
    seconds: list[float] = field(default_factory=list)  # the sampled search, to the violation
    wall: list[float] = field(default_factory=list)  # the whole command
    found: list[int] = field(default_factory=list)  # trace lengths as found
    shortened: list[int] = field(default_factory=list)
    missed: int = 0  # seeds with no violation within the time limit

    def to_json(self) -> dict[str, Any]:
        return {
            "protocol": self.protocol,
            "nodes": self.nodes,
            "search": self.search,
            "seconds": [round(s, 3) for s in self.seconds],
            "median_seconds": round(_median(self.seconds), 3),
            "median_wall_seconds": round(_median(self.wall), 3),
            "found_lengths": self.found,
            "shortened_lengths": self.shortened,
            "missed": self.missed,
        }


@dataclass(frozen=True)
class ShortRow:
    protocol: str
    nodes: int
    prop: str
    shortest: int
    seed: int
    found: int
    shortened: int

    def to_json(self) -> dict[str, Any]:
        return self.__dict__.copy()


@dataclass(frozen=True)
class CoverageRow:
    label: str
    exhaustive: dict[str, Any]
    bitstate: dict[str, Any]

    @property
    def share(self) -> float:
        return (
            self.bitstate["stats"]["distinct_states"] / self.exhaustive["stats"]["distinct_states"]
        )

    def to_json(self) -> dict[str, Any]:
        cov = self.bitstate["coverage"]
        return {
            "model": self.label,
            "exhaustive_states": self.exhaustive["stats"]["distinct_states"],
            "exhaustive_seconds": self.exhaustive["stats"]["seconds"],
            "exhaustive_peak_bytes": self.exhaustive["stats"]["peak_memory_bytes"],
            "bitstate_states": self.bitstate["stats"]["distinct_states"],
            "bitstate_seconds": self.bitstate["stats"]["seconds"],
            "bitstate_peak_bytes": self.bitstate["stats"]["peak_memory_bytes"],
            "visited_share": round(self.share, 6),
            "estimated_omitted_share": cov["estimated_omitted_share"],
            "implied_states": cov["estimated_states"],
        }


def _median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _violated(doc: dict[str, Any]) -> dict[str, Any] | None:
    return next((p for p in doc["properties"] if p["verdict"] == "VIOLATED"), None)


def time_to_violation(seeds: Sequence[int]) -> list[FindRow]:
    rows = {(p, name): FindRow(p, n, name) for p, n in FIND_AT for name, _ in SEARCHES}
    for protocol, nodes in FIND_AT:
        for seed in seeds:
            for name, flags in SEARCHES:  # alternate: both see the same machine
                extra = [*flags, "--seed", str(seed), "--time", TIME_LIMIT]
                doc = run_verify(protocol, [("nodes", str(nodes))], extra)
                row, hit = rows[(protocol, name)], _violated(doc)
                if hit is None:
                    row.missed += 1
                    continue
                row.seconds.append(doc["stats"]["phases"][0]["seconds"])
                row.wall.append(doc["wall_seconds"])
                row.found.append(hit["found_length"])
                row.shortened.append(hit["trace_length"])
    return list(rows.values())


def shortening(seeds: Sequence[int]) -> list[ShortRow]:
    rows = []
    for protocol, nodes in SHORTEST_AT:
        params = [("nodes", str(nodes))]
        exhaustive = run_verify(protocol, params, ["--symmetry"])
        shortest = {p["name"]: p.get("trace_length") for p in exhaustive["properties"]}
        for seed in seeds:
            doc = run_verify(protocol, params, ["--strategy", "simulate", "--seed", str(seed)])
            hit = _violated(doc)
            if hit is not None and shortest.get(hit["name"]) is not None:
                rows.append(
                    ShortRow(
                        protocol,
                        nodes,
                        hit["name"],
                        shortest[hit["name"]],
                        seed,
                        hit["found_length"],
                        hit["trace_length"],
                    )
                )
    return rows


def bitstate_coverage(large: bool) -> CoverageRow:
    params = BITSTATE_SIZES[large]
    label = "raft-election " + " ".join(f"{k}={v}" for k, v in params)
    exhaustive = run_verify("raft-election", params, [])
    bitstate = run_verify("raft-election", params, ["--strategy", "bitstate", "--memory", "64M"])
    return CoverageRow(label, exhaustive, bitstate)


def sampled_lines(
    finds: Sequence[FindRow], shorts: Sequence[ShortRow], coverage: CoverageRow
) -> list[str]:
    lines = ["time to the first violation (seconds of search, median over seeds):"]
    head = (
        f"  {'protocol':<20} {'nodes':>5} {'search':<11} {'found':>6} {'median s':>9} {'min s':>7} "
        f"{'max s':>7} {'whole s':>8} {'ratio':>6} {'found':>6} {'short':>6}"
    )
    lines += [head, "  " + "-" * (len(head) - 2)]
    base = {r.protocol: _median(r.seconds) for r in finds if r.search == SEARCHES[0][0]}
    for r in finds:
        n = len(r.seconds)
        ratio = base[r.protocol] / _median(r.seconds) if n else float("nan")
        lines.append(
            f"  {r.protocol:<20} {r.nodes:>5} {r.search:<11} {n:>3}/{n + r.missed:<2} "
            f"{_median(r.seconds):>9.2f} {min(r.seconds, default=0):>7.2f} "
            f"{max(r.seconds, default=0):>7.2f} {_median(r.wall):>8.2f} {ratio:>5.2f}x "
            f"{_median(r.found):>6.0f} {_median(r.shortened):>6.0f}"
        )
    lines += ["", "shortened against the shortest (the exhaustive search with --symmetry):"]
    lines.append(
        f"  {'protocol':<20} {'nodes':>5} {'property':<15} {'shortest':>8} {'seed':>4} "
        f"{'found':>6} {'shortened':>9} {'over':>5}"
    )
    for s in shorts:
        lines.append(
            f"  {s.protocol:<20} {s.nodes:>5} {s.prop:<15} {s.shortest:>8} {s.seed:>4} "
            f"{s.found:>6} {s.shortened:>9} {s.shortened - s.shortest:>+5}"
        )
    c = coverage.to_json()
    lines += [
        "",
        f"bitstate with 64 MiB on {coverage.label}:",
        f"  exhaustive: {c['exhaustive_states']:,} states, {c['exhaustive_seconds']:.1f} s, "
        f"peak {c['exhaustive_peak_bytes'] / 2**20:.0f} MiB",
        f"  bitstate:   {c['bitstate_states']:,} states ({c['visited_share']:.4%} of them), "
        f"{c['bitstate_seconds']:.1f} s, peak {c['bitstate_peak_bytes'] / 2**20:.0f} MiB; "
        f"estimated omitted share at most {c['estimated_omitted_share']:.1e}, the bits set "
        f"imply {c['implied_states']:,} states",
    ]
    return lines

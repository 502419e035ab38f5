"""`verify bench`: timed runs of the benchmark models, each in a fresh process.

A fresh process per run makes peak memory mean something: the peak resident size of a
run minus that of a run that stops after the first step (the initial states and their
successors: the process and the code a search loads, compiled kernels included) is what the
search itself used,
which divided by the distinct states gives bytes per state. Seconds are the median
of the repeats; the machine is noisy, so compare medians and ratios, not single runs.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from leadercheck.checker.engine.strategies import ONE_PROCESS, PARTITIONED, iter_strategies
from leadercheck.checker.errors import LeadercheckError


@dataclass(frozen=True)
class BenchCase:
    protocol: str
    params: tuple[tuple[str, str], ...]
    large: bool = False  # only with --large: long or memory-hungry

    @property
    def label(self) -> str:
        return f"{self.protocol} " + " ".join(f"{k}={v}" for k, v in self.params)


def _case(protocol: str, large: bool = False, **params: object) -> BenchCase:
    return BenchCase(protocol, tuple((k, str(v)) for k, v in params.items()), large)


CASES = (
    _case("raft-election", N=3, NC=3, MaxTerm=2, variant="correct"),
    _case("raft-election", N=3, NC=2, MaxTerm=3, variant="correct"),
    _case("raft-election", N=5, NC=2, MaxTerm=2, variant="correct"),
    _case("raft-election", large=True, N=4, NC=4, MaxTerm=2, variant="correct"),
    _case("lease-bench", N=2, TTL=2, MaxTime=8, fencing="true"),
    _case("lease-bench", N=3, TTL=2, MaxTime=6, fencing="true"),
    _case("lease-bench", large=True, N=3, TTL=4, MaxTime=20, fencing="true"),
)


# Reductions a search may add to an engine: a suffix of the search's name and its options.
REDUCTIONS: dict[str, tuple[str, ...]] = {"": (), "symmetry": ("--symmetry",), "por": ("--por",)}
PLAIN = ONE_PROCESS  # the search every other one is compared with


def searches() -> dict[str, tuple[str, ...]]:
    """How a case may be searched: every registered engine (a parallel one with its
    `bench_workers`), alone or with a reduction; the name and the `verify` options it adds."""
    found: dict[str, tuple[str, ...]] = {}
    for engine in iter_strategies():
        if engine.sampled:  # no state count to compare: `verify bench --sampled` has them
            continue
        flags: tuple[str, ...] = ("--engine", engine.name)
        if engine.parallel:
            flags += ("--workers", str(engine.bench_workers))
        for reduction, extra in REDUCTIONS.items():
            if reduction == "por" and engine.bench_workers > 1:
                continue  # partial-order reduction needs one worker
            found[engine.name + (f"+{reduction}" if reduction else "")] = flags + extra
    return found


DEFAULT_SEARCHES = (PLAIN, f"{PLAIN}+symmetry", PARTITIONED)


@dataclass(frozen=True)
class BenchRow:
    case: BenchCase
    search: str  # a key of searches()
    distinct: int
    generated: int
    depth: int
    seconds: float  # median over the repeats
    peak_bytes: int
    search_bytes: int  # peak minus the peak of a process that stops at depth 1
    reduction: float | None = None  # distinct states of the plain search / of this one

    @property
    def states_per_second(self) -> float:
        return self.distinct / self.seconds if self.seconds else 0.0

    @property
    def bytes_per_state(self) -> float:
        return self.search_bytes / self.distinct if self.distinct else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.case.protocol,
            "params": dict(self.case.params),
            "search": self.search,
            "reduction": round(self.reduction, 2) if self.reduction else None,
            "distinct_states": self.distinct,
            "generated_states": self.generated,
            "depth": self.depth,
            "seconds": round(self.seconds, 4),
            "states_per_second": round(self.states_per_second, 1),
            "peak_memory_bytes": self.peak_bytes,
            "bytes_per_state": round(self.bytes_per_state, 1),
        }


def run_verify(
    protocol: str, params: Sequence[tuple[str, str]], extra: Sequence[str]
) -> dict[str, Any]:
    """`verify --protocol ... --json` in a fresh process: its JSON, plus `wall_seconds`, the
    whole command's time (start-up and files included)."""
    with tempfile.TemporaryDirectory(prefix="leadercheck-bench-") as out:
        args = [sys.executable, "-m", "leadercheck.checker.app", "--protocol", protocol, "--json"]
        args += [a for k, v in params for a in ("-p", f"{k}={v}")]
        args += ["--out", out, *extra]
        began = time.perf_counter()
        proc = subprocess.run(args, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - began
    if proc.returncode not in (0, 1, 3):
        raise LeadercheckError(f"benchmark {protocol} failed: {proc.stderr.strip()[:300]}")
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc | {"wall_seconds": wall}


def run_case(
    case: BenchCase, repeat: int, search: str = PLAIN, interpreted: bool = False
) -> BenchRow:
    flags = searches()[search] + (("--interpreted",) if interpreted else ())
    runs = [run_verify(case.protocol, case.params, flags) for _ in range(repeat)]
    baseline = run_verify(case.protocol, case.params, [*flags, "--max-depth", "1"])
    stats = runs[0]["stats"]
    peak = max(r["stats"]["peak_memory_bytes"] for r in runs)
    return BenchRow(
        case,
        search,
        distinct=stats["distinct_states"],
        generated=stats["generated_states"],
        depth=stats["depth"],
        seconds=statistics.median(r["stats"]["seconds"] for r in runs),
        peak_bytes=peak,
        search_bytes=max(0, peak - baseline["stats"]["peak_memory_bytes"]),
    )


def with_reductions(rows: Sequence[BenchRow]) -> list[BenchRow]:
    """The rows, each with its reduction factor against the plain search of its case."""
    plain = {r.case: r.distinct for r in rows if r.search == PLAIN}
    return [
        replace(r, reduction=plain[r.case] / r.distinct) if r.case in plain else r for r in rows
    ]


def bench_lines(rows: Sequence[BenchRow]) -> list[str]:
    head = (
        f"{'model and size':<50} {'search':<20} {'distinct':>10} {'generated':>11} {'depth':>5} "
        f"{'seconds':>8} {'states/s':>9} {'peak MiB':>9} {'B/state':>8} {'reduction':>9}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        factor = f"{r.reduction:.1f}x" if r.reduction else "-"
        lines.append(
            f"{r.case.label:<50} {r.search:<20} {r.distinct:>10,} {r.generated:>11,} "
            f"{r.depth:>5} {r.seconds:>8.2f} {r.states_per_second:>9,.0f} "
            f"{r.peak_bytes / 2**20:>9.1f} {r.bytes_per_state:>8.0f} {factor:>9}"
        )
    return lines

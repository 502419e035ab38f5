"""How fast `verify history` follows long histories: generated ones, each run in a fresh process.

`leader_history` writes the history a correct lease leader leaves in its logs (renewals
every tick, writes in between, a failover now and then after the old lease ran out), the
same for a given seed. The benchmark runs `verify history FILE --json` on it in a fresh
process per run, as `verify bench` runs its searches, and reports the command's own
figures: events, the model's steps, states and moves followed, seconds (the median of
the repeats), states per second and the process's peak memory.

    python -m leadercheck.checker.history.bench [--events 2000 ...] [--nodes 3 ...]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.history.format import HISTORY_SCHEMA

EVENTS = (500, 2000, 10000)
NODES = (3, 5)


def leader_history(
    events: int,
    nodes: int = 3,
    seed: int = 0,
    protocol: str = "lease-no-fencing",
    failover: float = 0.05,
) -> dict[str, Any]:
    """A history document of `events` events that a correct leader election leaves: one
    holder at a time, each write under a live lease, tokens growing (as etcd revisions
    do, by more than one). A tick is 1 s and a lease 2 s: the holder renews every second,
    0.2 s into its tick, and writes twice in between; at a failover it stops renewing,
    logs `lose` once its lease has run out, and another node acquires 0.2 s later."""
    pick = random.Random(seed)
    found: list[dict[str, Any]] = []
    holder, token, at = 1, 100, 0.2

    def log(kind: str, when: float, **fields: Any) -> None:
        found.append({"at": round(when, 3), "node": f"n{holder}", "event": kind, **fields})

    log("acquire", at, token=token)
    while len(found) < events:
        if pick.random() < failover:
            log("lose", at + 2.1)
            holder = pick.choice([n for n in range(1, nodes + 1) if n != holder])
            token += pick.randint(1, 9)
            at += 2.3
            log("acquire", at, token=token)
            continue
        log("write", at + 0.3, token=token, accepted=True)
        log("write", at + 0.6, token=token, accepted=True)
        at += 1.0
        log("renew", at, token=token)
    return {
        "schema": HISTORY_SCHEMA,
        "protocol": protocol,
        "tick_seconds": 1,
        "ttl_seconds": 2,
        "nodes": [f"n{k}" for k in range(1, nodes + 1)],
        "events": found[:events],
    }


@dataclass(frozen=True)
class BenchRow:
    events: int
    nodes: int
    verdict: str
    steps: int
    states: int
    transitions: int
    passes: int
    seconds: float  # the search's, median of the repeats
    wall_seconds: float  # the whole command's (start-up, reading, judging), median
    peak_bytes: int

    @property
    def states_per_second(self) -> float:
        return self.states / self.seconds if self.seconds else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "events": self.events,
            "nodes": self.nodes,
            "verdict": self.verdict,
            "steps": self.steps,
            "states": self.states,
            "transitions": self.transitions,
            "passes": self.passes,
            "seconds": round(self.seconds, 3),
            "wall_seconds": round(self.wall_seconds, 3),
            "states_per_second": round(self.states_per_second, 1),
            "peak_memory_bytes": self.peak_bytes,
        }


def run_history(path: Path, extra: Sequence[str] = ()) -> dict[str, Any]:
    """`verify history FILE --json` in a fresh process: its report and `wall_seconds`."""
    args = [sys.executable, "-m", "leadercheck.checker.app", "history", str(path), "--json"]
    began = time.perf_counter()
    proc = subprocess.run([*args, *extra], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - began
    if proc.returncode not in (0, 1):
        raise LeadercheckError(f"verify history {path} failed: {proc.stderr.strip()[:300]}")
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc | {"wall_seconds": wall}


def bench_case(events: int, nodes: int, repeat: int = 3, seed: int = 0) -> BenchRow:
    with tempfile.TemporaryDirectory(prefix="leadercheck-history-") as tmp:
        path = Path(tmp) / f"leader-{events}-{nodes}.json"
        path.write_text(json.dumps(leader_history(events, nodes, seed)))
        runs = [run_history(path) for _ in range(repeat)]
    stats = runs[0]["stats"]
    return BenchRow(
        events=events,
        nodes=nodes,
        verdict=runs[0]["verdict"],
        steps=stats["steps"],
        states=stats["states"],
        transitions=stats["transitions"],
        passes=stats["passes"],
        seconds=statistics.median(r["stats"]["seconds"] for r in runs),
        wall_seconds=statistics.median(r["wall_seconds"] for r in runs),
        peak_bytes=max(r["stats"]["peak_memory_bytes"] for r in runs),
    )


def bench_lines(rows: Sequence[BenchRow]) -> list[str]:
    head = (
        f"{'events':>7} {'nodes':>5} {'verdict':<10} {'steps':>7} {'states':>9} "
        f"{'moves':>10} {'passes':>6} {'seconds':>8} {'wall s':>7} {'states/s':>9} {'peak MiB':>9}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r.events:>7,} {r.nodes:>5} {r.verdict:<10} {r.steps:>7,} {r.states:>9,} "
            f"{r.transitions:>10,} {r.passes:>6} {r.seconds:>8.2f} {r.wall_seconds:>7.2f} "
            f"{r.states_per_second:>9,.0f} {r.peak_bytes / 2**20:>9.1f}"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, nargs="+", default=list(EVENTS))
    parser.add_argument("--nodes", type=int, nargs="+", default=list(NODES))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = [bench_case(e, n, args.repeat) for n in args.nodes for e in args.events]
    if args.json:
        print(json.dumps([r.to_json() for r in rows], indent=2))
    else:
        print("\n".join(bench_lines(rows)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

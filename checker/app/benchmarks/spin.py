"""The raft-election benchmark in Promela, and Spin's `pan` run on it, for side-by-side timing.

`promela(n, nc, max_term, variant)` writes the raft-election benchmark
(models/raft_election.py) as one Promela process whose every action instance is one
`d_step` option of a loop, so Spin's "states, stored" is the benchmark's distinct-state
count and its "transitions" the generated count (tests check both against the reference).
The message set is a bit per possible message, indexed by (term, source, destination[,
granted]); ElectionSafety is asserted at the end of every step, inside the step, so it adds
no state.

`SpinRun` compiles the verifier once (`spin -a`, then `cc -O2 -DSAFETY`: Spin's default
depth-first search, no compression) and runs it. `verify bench --spin` times it against
`verify --protocol raft-election ... --symmetry` (checker/app/benchmarks/timed.py pairs them).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leadercheck.checker.errors import LeadercheckError

VARIANTS = {"correct": 0, "noquorum": 1, "forgetvote": 2}
DEPTH = 10_000_000  # pan's search depth bound: far above any of these models' DFS stacks


def promela(n: int, nc: int, max_term: int, variant: str = "correct") -> str:
    """The benchmark as Promela text (node ids 1..n, roles 0 follower 1 candidate 2 leader)."""
    if variant not in VARIANTS:
        raise LeadercheckError(f"unknown raft-election variant {variant!r}")
    need = "2" if variant == "noquorum" else f"{n // 2 + 1}"
    forget = variant == "forgetvote"
    nn = n + 1
    terms = max_term + 1

    def rv(t: str, s: int | str, d: int | str) -> str:
        return f"rv[({t}) * {nn * nn} + ({s}) * {nn} + ({d})]"

    def rvr(t: str, s: int | str, d: int | str, g: int | str) -> str:
        return f"rvr[(({t}) * {nn * nn} + ({s}) * {nn} + ({d})) * 2 + ({g})]"

    safe = " && ".join(
        f"!(role[{i}] == 2 && role[{j}] == 2 && term[{i}] == term[{j}])"
        for i in range(1, n + 1)
        for j in range(i + 1, n + 1)
    )
    lines = [
        f"/* raft-election N={n} NC={nc} MaxTerm={max_term} variant={variant} */",
        f"byte term[{nn}] = 1; byte role[{nn}]; byte voted[{nn}]; byte granted[{nn}];",
        f"bit rv[{terms * nn * nn}]; bit rvr[{terms * nn * nn * 2}];",
        "byte ti; byte vf; bit grant;  /* scratch, zero between steps */",
        "active proctype raft() {",
        "end: do",
    ]
    for i in range(1, n + 1):
        if i <= nc:
            sends = "; ".join(rv(f"term[{i}]", i, j) + " = 1" for j in range(1, n + 1) if j != i)
            lines.append(
                f"  :: d_step {{ (role[{i}] != 2 && term[{i}] < {max_term}) -> "
                f"term[{i}]++; role[{i}] = 1; voted[{i}] = {i}; granted[{i}] = {1 << i}; "
                f"{sends}; assert({safe}) }}"
            )
        count = " + ".join(f"((granted[{i}] >> {j}) & 1)" for j in range(1, n + 1))
        lines.append(
            f"  :: d_step {{ (role[{i}] == 1 && ({count}) >= {need}) -> role[{i}] = 2; "
            f"assert({safe}) }}"
        )
    for t in range(2, max_term + 1):
        for s in range(1, n + 1):
            for d in range(1, n + 1):
                if s == d:
                    continue
                m = rv(str(t), s, d)
                # HandleRequestVote(RV(t, s, d)): node d answers candidate s
                vote = (
                    ""
                    if forget
                    else f"if :: grant -> voted[{d}] = {s} :: else -> voted[{d}] = vf fi; "
                )
                grants = "(vf == 0 || vf == " + str(s) + ")" if not forget else "1"
                lines.append(
                    f"  :: d_step {{ {m} -> {m} = 0; "
                    f"if :: {t} > term[{d}] -> ti = {t}; vf = 0; role[{d}] = 0; granted[{d}] = 0; "
                    f"voted[{d}] = 0 :: else -> ti = term[{d}]; vf = voted[{d}] fi; "
                    f"term[{d}] = ti; "
                    f"if :: ({t} == ti && {grants}) -> grant = 1 :: else -> grant = 0 fi; "
                    f"{vote}"
                    f"{rvr('ti', d, s, 'grant')} = 1; ti = 0; vf = 0; grant = 0; "
                    f"assert({safe}) }}"
                )
                lines.append(f"  :: d_step {{ {m} -> {m} = 0; assert({safe}) }}")
                for g in (0, 1):
                    r = rvr(str(t), s, d, g)
                    # HandleRequestVoteResponse(RVR(t, s, d, g)): candidate d hears from s
                    lines.append(
                        f"  :: d_step {{ {r} -> {r} = 0; "
                        f"if :: {t} > term[{d}] -> term[{d}] = {t}; role[{d}] = 0; "
                        f"voted[{d}] = 0; granted[{d}] = 0 "
                        f":: ({t} == term[{d}] && role[{d}] == 1 && {g}) -> "
                        f"granted[{d}] = granted[{d}] | {1 << s} "
                        f":: else -> skip fi; assert({safe}) }}"
                    )
                    lines.append(f"  :: d_step {{ {r} -> {r} = 0; assert({safe}) }}")
    lines += ["od", "}"]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class SpinResult:
    stored: int  # "states, stored": the distinct states
    transitions: int  # "transitions (= stored+matched)": the generated states
    errors: int
    seconds: float  # pan's own "elapsed time"


def parse_pan(output: str) -> SpinResult:
    """What pan printed: its counts, errors and elapsed time."""

    def number(pattern: str) -> float:
        found = re.search(pattern, output)
        if found is None:
            raise LeadercheckError(f"pan's output has no {pattern!r}: {output[-400:]}")
        return float(found.group(1))

    return SpinResult(
        stored=int(number(r"([0-9.e+]+) states, stored")),
        transitions=int(number(r"([0-9.e+]+) transitions \(= stored\+matched\)")),
        errors=int(number(r"errors: (\d+)")),
        seconds=number(r"pan: elapsed time ([0-9.e+]+) seconds")
        if "elapsed time" in output
        else 0.0,
    )


class SpinRun:
    """A compiled verifier for one model, in a temporary directory (removed by `close`)."""

    def __init__(self, n: int, nc: int, max_term: int, variant: str = "correct") -> None:
        spin, cc = shutil.which("spin"), shutil.which("cc") or shutil.which("gcc")
        if spin is None or cc is None:
            raise LeadercheckError("--spin needs Spin and a C compiler (apt-get install spin gcc)")
        self.directory = Path(tempfile.mkdtemp(prefix="leadercheck-spin-"))
        model = self.directory / "raft.pml"
        model.write_text(promela(n, nc, max_term, variant), encoding="utf-8")
        self._run([spin, "-a", model.name], 120)
        self._run([cc, "-O2", "-DSAFETY", "-o", "pan", "pan.c"], 300)
        self.pan = self.directory / "pan"

    def _run(self, command: list[str], timeout: float) -> str:
        done = subprocess.run(
            command,
            cwd=self.directory,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            raise LeadercheckError(f"{command[0]} failed: {(done.stdout + done.stderr)[-400:]}")
        return done.stdout

    def command(self) -> list[str]:
        """The verifier's command line (for timing it as a whole process)."""
        return [str(self.pan), f"-m{DEPTH}"]

    def run(self, timeout: float = 3600) -> SpinResult:
        return parse_pan(self._run(self.command(), timeout))

    def close(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


# -- side by side ---------------------------------------------------------------------

SIZES = ((3, 3, 3), (4, 4, 2))  # the sizes issue 25 compares with --symmetry against pan


@dataclass(frozen=True)
class Timed:
    """One whole process: its wall seconds and its peak resident memory."""

    seconds: float
    peak_bytes: int


def timed(command: Sequence[str], timeout: float) -> tuple[Timed, str]:
    """Run `command` as a whole process; its wall time, its own peak memory and its stdout."""
    began = time.perf_counter()
    proc = subprocess.Popen(list(command), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    timer = threading.Timer(timeout, proc.kill)  # a bound on every run
    timer.start()
    try:
        assert proc.stdout is not None
        out = proc.stdout.read().decode("utf-8", "replace")
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage
    finally:
        timer.cancel()
        proc.returncode = proc.returncode if proc.returncode is not None else 0
        if proc.stdout is not None:
            proc.stdout.close()
    seconds = time.perf_counter() - began
    if os.waitstatus_to_exitcode(status) < 0:
        raise LeadercheckError(
            f"{command[0]} was stopped after {seconds:.0f} s (bound {timeout:g} s)"
        )
    return Timed(seconds, usage.ru_maxrss * 1024), out


@dataclass(frozen=True)
class SpinRow:
    size: tuple[int, int, int]
    representatives: int  # verify --symmetry's distinct states
    spin_states: int  # pan's states stored (every state: Spin has no symmetry here)
    ours: tuple[Timed, ...]
    spin: tuple[Timed, ...]

    @property
    def label(self) -> str:
        n, nc, max_term = self.size
        return f"raft-election N={n} NC={nc} MaxTerm={max_term}"

    def median(self, runs: Sequence[Timed]) -> float:
        return statistics.median(r.seconds for r in runs)

    @property
    def ratio(self) -> float:
        """pan's median over ours: above 1, verify --symmetry is the faster."""
        return self.median(self.spin) / self.median(self.ours)

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.label,
            "representatives": self.representatives,
            "spin_states": self.spin_states,
            "verify_symmetry_seconds": [round(r.seconds, 3) for r in self.ours],
            "spin_seconds": [round(r.seconds, 3) for r in self.spin],
            "verify_peak_bytes": max(r.peak_bytes for r in self.ours),
            "spin_peak_bytes": max(r.peak_bytes for r in self.spin),
            "spin_over_verify": round(self.ratio, 3),
        }


def side_by_side(
    sizes: Sequence[tuple[int, int, int]] = SIZES, repeat: int = 3, timeout: float = 3600
) -> list[SpinRow]:
    """For each size: `verify ... --symmetry` and pan, A B A B, `repeat` pairs, each a whole
    process (pan compiled once beforehand, outside the timing)."""
    rows = []
    for n, nc, max_term in sizes:
        spin = SpinRun(n, nc, max_term)
        try:
            with tempfile.TemporaryDirectory(prefix="leadercheck-bench-") as out:
                ours_cmd = [
                    sys.executable, "-m", "leadercheck.checker.app",
                    "--protocol", "raft-election", "-p", f"N={n}", "-p", f"NC={nc}",
                    "-p", f"MaxTerm={max_term}", "--symmetry", "--json", "--out", out,
                ]  # fmt: skip
                ours: list[Timed] = []
                theirs: list[Timed] = []
                reps = stored = 0
                for _ in range(repeat):
                    run, text = timed(ours_cmd, timeout)
                    ours.append(run)
                    reps = json.loads(text)["stats"]["distinct_states"]
                    run, text = timed(spin.command(), timeout)
                    theirs.append(run)
                    stored = parse_pan(text).stored
        finally:
            spin.close()
        rows.append(SpinRow((n, nc, max_term), reps, stored, tuple(ours), tuple(theirs)))
    return rows


def spin_lines(rows: Sequence[SpinRow]) -> list[str]:
    """The rows as a Markdown table (medians, then the ratio in the same run)."""
    lines = [
        "| model | verify --symmetry | pan -DSAFETY (DFS) | pan / verify | representatives "
        "| pan states | peak MiB verify | peak MiB pan |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.label} | {r.median(r.ours):.2f} s | {r.median(r.spin):.2f} s | "
            f"{r.ratio:.2f}x | {r.representatives:,} | {r.spin_states:,} | "
            f"{max(t.peak_bytes for t in r.ours) / 2**20:.0f} | "
            f"{max(t.peak_bytes for t in r.spin) / 2**20:.0f} |"
        )
    return lines

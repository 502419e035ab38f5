"""Spin's `pan` on the raft-election benchmark at its best, timed side by side with `verify`.

The Promela is the shared benchmark's own compact encoding (raft_election.pml beside this
module, a copy of ../shared/benchmarks/raft_election.pml): a byte per node variable and one
bit per possible message, packed in ints (a 68 to 76-byte state vector), one `d_step` per
action instance, so Spin's "states, stored" is the benchmark's distinct-state count and its
"transitions" the generated count (tests check both against the reference). An earlier
encoding of our own, a `bit` array per message kind, made Spin store a byte per bit (a
228-byte vector) and ran pan with a ten-million-deep stack: twice the time and three times
the memory of this one, so it flattered `verify`.

`SpinRun` compiles the verifier once (`spin -D... -a`, then `cc -O2 -DSAFETY`: Spin's
default depth-first search, no compression, its default depth bound, which these models'
searches stay far below) and runs it. `verify bench --spin` times it against `verify
--protocol raft-election ...`, with `--symmetry` and without reductions, each a whole process.
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
# The compact encoding of ../shared/benchmarks/raft_election.pml, kept here byte for byte
# (tests/checker/test_bench_spin.py compares the two where both are present).
COMPACT = Path(__file__).with_name("raft_election.pml")


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

    if "max search depth too small" in output:
        raise LeadercheckError("pan's depth bound cut its search short, so its counts are partial")
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
        if variant not in VARIANTS:
            raise LeadercheckError(f"unknown raft-election variant {variant!r}")
        self.directory = Path(tempfile.mkdtemp(prefix="leadercheck-spin-"))
        shutil.copyfile(COMPACT, self.directory / COMPACT.name)
        defines = [
            f"-DN={n}",
            f"-DNC={nc}",
            f"-DMAXTERM={max_term}",
            f"-DVARIANT={VARIANTS[variant]}",
        ]
        self._run([spin, *defines, "-a", COMPACT.name], 120)
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
        return [str(self.pan)]

    def run(self, timeout: float = 3600) -> SpinResult:
        return parse_pan(self._run(self.command(), timeout))

    def close(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


# -- side by side ---------------------------------------------------------------------

# The sizes `verify bench --spin` compares: issue 42's three (N, NC, MaxTerm), the third
# beyond the other two (6.3 million states, 22 s of pan)
SIZES = ((3, 3, 3), (4, 4, 2), (5, 3, 2))
SYMMETRY, PLAIN, PAN = "verify --symmetry", "verify", "pan"


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
class Contender:
    """One command timed at one size: its runs and the distinct states it stored."""

    name: str
    states: int
    runs: tuple[Timed, ...]

    @property
    def seconds(self) -> float:
        """The median whole-process time."""
        return statistics.median(r.seconds for r in self.runs)

    @property
    def peak_bytes(self) -> int:
        return max(r.peak_bytes for r in self.runs)

    @property
    def rate(self) -> float:
        """Distinct states stored per second of the whole process."""
        return self.states / self.seconds if self.seconds else 0.0

    @property
    def bytes_per_state(self) -> float:
        return self.peak_bytes / self.states if self.states else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "states": self.states,
            "seconds": [round(r.seconds, 3) for r in self.runs],
            "median_seconds": round(self.seconds, 3),
            "states_per_second": round(self.rate),
            "peak_bytes": self.peak_bytes,
            "peak_bytes_per_state": round(self.bytes_per_state, 1),
        }


@dataclass(frozen=True)
class SpinRow:
    size: tuple[int, int, int]
    contenders: tuple[Contender, ...]  # verify --symmetry, verify (no reductions), pan

    @property
    def label(self) -> str:
        n, nc, max_term = self.size
        return f"raft-election N={n} NC={nc} MaxTerm={max_term}"

    def of(self, name: str) -> Contender:
        return next(c for c in self.contenders if c.name == name)

    @property
    def ratio(self) -> float:
        """pan's median over verify --symmetry's: above 1, verify --symmetry is the faster."""
        return self.of(PAN).seconds / self.of(SYMMETRY).seconds

    @property
    def rate_share(self) -> float:
        """verify's distinct states per second without reductions, over pan's."""
        return self.of(PLAIN).rate / self.of(PAN).rate

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.label,
            **{c.name: c.to_json() for c in self.contenders},
            "pan_over_verify_symmetry": round(self.ratio, 3),
            "verify_rate_over_pan_rate": round(self.rate_share, 3),
        }


def verify_command(size: tuple[int, int, int], out: str, *extra: str) -> list[str]:
    n, nc, max_term = size
    return [
        sys.executable, "-m", "leadercheck.checker.app",
        "--protocol", "raft-election", "-p", f"N={n}", "-p", f"NC={nc}",
        "-p", f"MaxTerm={max_term}", "--json", "--out", out, *extra,
    ]  # fmt: skip


def side_by_side(
    sizes: Sequence[tuple[int, int, int]] = SIZES,
    repeat: int = 3,
    timeout: float = 3600,
    interpreted: bool = False,
) -> list[SpinRow]:
    """For each size: `verify --symmetry`, `verify` and pan, in turn, `repeat` rounds, each
    a whole process (pan compiled once beforehand, outside the timing); `interpreted`:
    verify searches the model's Python code, not its compiled kernel."""
    extra = ("--interpreted",) if interpreted else ()
    rows = []
    for size in sizes:
        spin = SpinRun(*size)
        try:
            with tempfile.TemporaryDirectory(prefix="leadercheck-bench-") as out:
                commands = {
                    SYMMETRY: verify_command(size, out, "--symmetry", *extra),
                    PLAIN: verify_command(size, out, *extra),
                    PAN: spin.command(),
                }
                runs: dict[str, list[Timed]] = {name: [] for name in commands}
                states: dict[str, int] = {}
                for _ in range(repeat):
                    for name, command in commands.items():
                        run, text = timed(command, timeout)
                        runs[name].append(run)
                        states[name] = (
                            parse_pan(text).stored
                            if name == PAN
                            else json.loads(text)["stats"]["distinct_states"]
                        )
        finally:
            spin.close()
        contenders = tuple(Contender(name, states[name], tuple(runs[name])) for name in runs)
        rows.append(SpinRow(size, contenders))
    return rows


def spin_lines(rows: Sequence[SpinRow]) -> list[str]:
    """The rows as a Markdown table: medians, then the ratios of the same run."""
    lines = [
        "| model | verify --symmetry | pan | pan / verify --symmetry | representatives "
        "| verify | verify states/s | pan states/s | verify / pan states/s | distinct states "
        "| peak MiB verify --symmetry | peak MiB verify | peak MiB pan |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        sym, plain, pan = r.of(SYMMETRY), r.of(PLAIN), r.of(PAN)
        lines.append(
            f"| {r.label} | {sym.seconds:.2f} s | {pan.seconds:.2f} s | {r.ratio:.2f}x | "
            f"{sym.states:,} | {plain.seconds:.2f} s | {plain.rate:,.0f} | {pan.rate:,.0f} | "
            f"{r.rate_share:.2f} | {plain.states:,} | {sym.peak_bytes / 2**20:.0f} | "
            f"{plain.peak_bytes / 2**20:.0f} | {pan.peak_bytes / 2**20:.0f} |"
        )
    return lines

"""What `verify --model` costs a state beyond the user's own code: `verify bench --user-model`.

Paxos Commit (paxos_commit.py, TLC's 1,321,761 states at 2 RMs, 3 acceptors, ballots 0
and 1) in two representations, each searched two ways, every search a whole process,
in turn, `repeat` rounds:

- states as a user writes them (named tuples, a frozenset of messages): `verify --model`
  against the same breadth-first loop over the same model's `next_states` with nothing
  around it (paxos_commit.py run as a program);
- states as one int (paxos_plain.py's layout, `paxos-commit-bits`): `verify --model ...
  --exact` (an int of 100 bits is no fingerprint: Python hashes ints modulo 2^61 - 1)
  against the plain program alone (paxos_plain.py run as a program), the floor a Python
  search reaches.

In each pair the successors are the same code, so the difference is the checker's: the
guard, the value walk, the store, the claims, traces kept. Divided by the distinct states
it is the checker's cost a state.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leadercheck.checker.app.benchmarks.spin import Contender, Timed, timed
from leadercheck.checker.errors import LeadercheckError

MODEL = Path(__file__).with_name("paxos_commit.py")
SIZE = (2, 3, 2)  # rms, acceptors, ballots: the TLA+ Examples' PaxosCommit.cfg
USER, INTS = "user's states", "one int a state"


@dataclass(frozen=True)
class Pair:
    """One representation: verify and the plain loop over the same successors."""

    states: str
    verify: Contender
    bare: Contender

    @property
    def overhead_us(self) -> float:
        """The checker's microseconds a distinct state (verify's median less the loop's)."""
        return (self.verify.seconds - self.bare.seconds) / self.verify.states * 1e6

    @property
    def ratio(self) -> float:
        return self.verify.seconds / self.bare.seconds

    def to_json(self) -> dict[str, Any]:
        return {
            "states_as": self.states,
            "verify": self.verify.to_json(),
            "bare_search": self.bare.to_json(),
            "verify_over_bare": round(self.ratio, 3),
            "checker_us_per_state": round(self.overhead_us, 2),
        }


def _verify(protocol: str, size: tuple[int, int, int], out: str, *extra: str) -> list[str]:
    rms, acceptors, ballots = size
    return [
        sys.executable, "-m", "leadercheck.checker.app", "--model", str(MODEL),
        "--protocol", protocol, "-p", f"rms={rms}", "-p", f"acceptors={acceptors}",
        "-p", f"ballots={ballots}", "--json", "--out", out, *extra,
    ]  # fmt: skip


def _bare(module: str, size: tuple[int, int, int]) -> list[str]:
    """The bare loop of `module` (paxos_plain: over ints; paxos_commit: its own states)."""
    return [sys.executable, "-m", f"{__package__}.{module}", *map(str, size)]


def side_by_side(
    size: tuple[int, int, int] = SIZE, repeat: int = 3, timeout: float = 3600
) -> list[Pair]:
    """Both representations, verify and the bare loop each, in turn, `repeat` rounds."""
    with tempfile.TemporaryDirectory(prefix="leadercheck-bench-") as out:
        commands = {
            ("verify", USER): _verify("paxos-commit", size, out),
            ("bare", USER): _bare("paxos_commit", size),
            ("verify", INTS): _verify("paxos-commit-bits", size, out, "--exact"),
            ("bare", INTS): _bare("paxos_plain", size),
        }
        runs: dict[tuple[str, str], list[Timed]] = {key: [] for key in commands}
        states: dict[tuple[str, str], int] = {}
        for _ in range(repeat):
            for key, command in commands.items():
                run, text = timed(command, timeout)
                runs[key].append(run)
                states[key] = _distinct(key, text)
    counts = set(states.values())
    if len(counts) != 1:  # four searches of one protocol: one count, or no comparison
        raise LeadercheckError(f"the four searches disagree on the state count: {states}")
    return [
        Pair(
            rep,
            *(
                Contender(how, states[how, rep], tuple(runs[how, rep]))
                for how in ("verify", "bare")
            ),
        )
        for rep in (USER, INTS)
    ]


def _distinct(key: tuple[str, str], text: str) -> int:
    try:
        if key[0] == "verify":
            return int(json.loads(text)["stats"]["distinct_states"])
        return int(text.split()[0])
    except (ValueError, KeyError, IndexError, TypeError):
        raise LeadercheckError(f"{' '.join(key)} printed no state count: {text[-300:]!r}") from None


def user_model_lines(pairs: Sequence[Pair]) -> list[str]:
    """The pairs as a Markdown table: medians, then the ratio and cost of the same run."""
    lines = [
        "| Paxos Commit, states as | distinct states | verify --model | the bare loop "
        "| verify / loop | checker's us a state | peak MiB verify | peak MiB loop |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for p in pairs:
        lines.append(
            f"| {p.states} | {p.verify.states:,} | {p.verify.seconds:.2f} s | "
            f"{p.bare.seconds:.2f} s | {p.ratio:.2f}x | {p.overhead_us:.1f} | "
            f"{p.verify.peak_bytes / 2**20:.0f} | {p.bare.peak_bytes / 2**20:.0f} |"
        )
    return lines

"""The environment a configuration must survive, with a stated default for each assumption.

A timing knob is safe or not only against the pauses, delays and drift the system really
sees, so the judgement names them. The defaults are deliberately pessimistic round numbers
that the report prints beside every verdict; a file's `leadercheck` section (or the
command's options) replaces them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace

from leadercheck.checker.config.durations import fraction, seconds
from leadercheck.checker.errors import LeadercheckError


@dataclass(frozen=True)
class Environment:
    """What the system's surroundings may do to it (seconds, and a drift rate)."""

    pause: float = 10.0  # the longest process pause: a stop-the-world GC, a VM stall
    clock_drift: float = 0.01  # how far one clock may run from another, as a rate (1%)
    network_delay: float = 0.5  # the longest one-way delay between a node and its peers
    dcs_latency: float = 0.5  # the longest a request to the store (DCS, etcd, ZooKeeper) takes
    partition: float = 60.0  # the longest the store is out of a node's reach (cut, or outage)

    def lines(self) -> list[str]:
        return [
            f"pause up to {self.pause:g} s",
            f"clock drift {self.clock_drift:.2%}",
            f"network delay up to {self.network_delay:g} s",
            f"store latency up to {self.dcs_latency:g} s",
            f"the store out of reach up to {self.partition:g} s",
        ]


NAMES = tuple(f.name for f in fields(Environment))


def environment_from(section: Mapping[str, object], where: str) -> Environment:
    """The defaults, with what `section` (a file's `leadercheck` section) says instead."""
    given: dict[str, float] = {}
    for key, value in section.items():
        name = str(key).replace("-", "_")
        if name not in NAMES:
            raise LeadercheckError(
                f"{where}: unknown environment key {key!r} (known: {', '.join(NAMES)})"
            )
        given[name] = environment_value(name, value, f"{where}: {key}")
    return replace(Environment(), **given)


def environment_value(name: str, value: object, knob: str) -> float:
    """One environment figure as written (a duration, or the drift rate), read strictly;
    `knob` names it in the error (a file's key, or a command-line option)."""
    return fraction(value, knob) if name == "clock_drift" else seconds(value, knob)

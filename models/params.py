"""How a protocol module presents itself to the catalogue: its name, parameters and builder.

A parameter has a default and an inclusive range; `resolve` validates user values
before any model is constructed, so a bad value never reaches the search.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.model import Model

_INTEGER = re.compile(r"-?[0-9]{1,18}")  # ASCII digits only, and no more than fit a bound


@dataclass(frozen=True)
class Param:
    name: str
    default: int
    low: int
    high: int
    help: str
    choices: tuple[str, ...] = ()  # names for the values low.. in order (e.g. a variant)

    def parse(self, protocol: str, text: str) -> int:
        if text in self.choices:
            return self.low + self.choices.index(text)
        try:
            if not _INTEGER.fullmatch(text):  # int() also takes "1_0" and other scripts' digits
                raise ValueError(text)
            value = int(text)
        except ValueError:
            if self.choices:
                raise LeadercheckError(
                    f"{protocol}: parameter {self.name} must be one of "
                    f"{', '.join(self.choices)}, got {text!r}"
                ) from None
            raise LeadercheckError(
                f"{protocol}: parameter {self.name} must be an integer, got {text!r}"
            ) from None
        if not self.low <= value <= self.high:
            raise LeadercheckError(
                f"{protocol}: parameter {self.name}={value} is out of range {self.low}..{self.high}"
            )
        return value


def choice(name: str, default: str, choices: tuple[str, ...], help: str) -> Param:
    """A parameter named by one of `choices`; its value is the choice's position (from 0)."""
    return Param(name, choices.index(default), 0, len(choices) - 1, help, choices)


Size = int | tuple[int, ...]  # one parameter, or several (shown as 4/1)


@dataclass(frozen=True)
class Measure:
    """A quantity `verify --stats` reports for a protocol, over every reachable state of a model.

    For each size, `build(size)` is searched exhaustively and `value` is taken on every
    reachable state where `where` holds: the table shows its worst, best and mean. Each
    distinct state counts once in the mean, however many schedules reach it, so the title
    should say what those states are (for example, the distinct ways an election ends).
    """

    title: str
    size_name: str
    sizes: tuple[Size, ...]
    build: Callable[[Any], Model]
    value: Callable[[Any], int]
    where: Callable[[Any], bool]


@dataclass(frozen=True)
class ProtocolEntry:
    name: str
    summary: str
    params: tuple[Param, ...]
    factory: Callable[..., Model]
    measures: tuple[Measure, ...] = ()

    def resolve(self, given: Mapping[str, str]) -> dict[str, int]:
        """Defaults overridden by `given` (raw strings), validated; in declaration order."""
        known = {p.name: p for p in self.params}
        for name in given:
            if name not in known:
                hint = did_you_mean(name, known)
                raise LeadercheckError(
                    f"{self.name}: unknown parameter {name!r}{hint}; parameters: {', '.join(known)}"
                )
        return {
            p.name: p.parse(self.name, given[p.name]) if p.name in given else p.default
            for p in self.params
        }

    def build(self, values: Mapping[str, int]) -> Model:
        return self.factory(**values)


def did_you_mean(name: str, choices: object) -> str:
    close = difflib.get_close_matches(name, list(choices), n=1)  # type: ignore[call-overload]
    return f" (did you mean {close[0]!r}?)" if close else ""


def fault_params(crashes: int, partitions: int, losses: int, pauses: int) -> tuple[Param, ...]:
    """The four fault budgets, with this protocol's defaults."""
    return (
        Param("crashes", crashes, 0, 3, "node crashes (a restart keeps only durable state)"),
        Param("partitions", partitions, 0, 3, "network partitions (healing is free)"),
        Param("losses", losses, 0, 3, "lost messages or replies"),
        Param("pauses", pauses, 0, 3, "process pauses (GC): the node stops while time passes"),
    )


NODES = Param("nodes", 3, 2, 5, "cluster size")

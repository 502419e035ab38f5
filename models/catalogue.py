"""The protocol catalogue: names as the CLI spells them, parameters, and how to build each model.

A parameter has a default and an inclusive range; `build` validates user values
before any model is constructed, so a bad value never reaches the search.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from checker.errors import LeadercheckError
from checker.model import Model
from models.cluster import FaultBounds
from models.heartbeat import HeartbeatModel
from models.lease import LeaseModel


@dataclass(frozen=True)
class Param:
    name: str
    default: int
    low: int
    high: int
    help: str

    def parse(self, protocol: str, text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise LeadercheckError(
                f"{protocol}: parameter {self.name} must be an integer, got {text!r}"
            ) from None
        if not self.low <= value <= self.high:
            raise LeadercheckError(
                f"{protocol}: parameter {self.name}={value} is out of range {self.low}..{self.high}"
            )
        return value


@dataclass(frozen=True)
class Protocol:
    name: str
    summary: str
    params: tuple[Param, ...]
    factory: Callable[..., Model]

    def resolve(self, given: Mapping[str, str]) -> dict[str, int]:
        """Defaults overridden by `given` (raw strings), validated; in declaration order."""
        known = {p.name: p for p in self.params}
        for name in given:
            if name not in known:
                hint = _did_you_mean(name, known)
                raise LeadercheckError(
                    f"{self.name}: unknown parameter {name!r}{hint}; parameters: {', '.join(known)}"
                )
        return {
            p.name: p.parse(self.name, given[p.name]) if p.name in given else p.default
            for p in self.params
        }

    def build(self, values: Mapping[str, int]) -> Model:
        return self.factory(**values)


def _did_you_mean(name: str, choices: object) -> str:
    close = difflib.get_close_matches(name, list(choices), n=1)  # type: ignore[call-overload]
    return f" (did you mean {close[0]!r}?)" if close else ""


def _faults(crashes: int, partitions: int, losses: int, pauses: int) -> tuple[Param, ...]:
    return (
        Param("crashes", crashes, 0, 3, "node crashes (a restart keeps only durable state)"),
        Param("partitions", partitions, 0, 3, "network partitions (healing is free)"),
        Param("losses", losses, 0, 3, "lost messages or replies"),
        Param("pauses", pauses, 0, 3, "process pauses (GC): the node stops while time passes"),
    )


NODES = Param("nodes", 3, 2, 5, "cluster size")
_LEASE_PARAMS = (
    NODES,
    Param("ttl", 2, 1, 5, "lease time-to-live in ticks"),
    Param("tokens", 3, 1, 6, "most lease tokens the store grants (bounds acquisitions)"),
    *_faults(crashes=1, partitions=1, losses=1, pauses=1),
)


def _lease(fencing: bool) -> Callable[..., Model]:
    def build(
        nodes: int, ttl: int, tokens: int, crashes: int, partitions: int, losses: int, pauses: int
    ) -> Model:
        faults = FaultBounds(crashes, partitions, losses, pauses)
        return LeaseModel(nodes, ttl, tokens, fencing, faults)

    return build


def _heartbeat(
    nodes: int, timeout: int, crashes: int, partitions: int, losses: int, pauses: int
) -> Model:
    return HeartbeatModel(nodes, timeout, FaultBounds(crashes, partitions, losses, pauses))


PROTOCOLS: dict[str, Protocol] = {
    p.name: p
    for p in (
        Protocol(
            "lease-fencing",
            "lease by compare-and-swap with TTL; the storage rejects stale tokens",
            _LEASE_PARAMS,
            _lease(fencing=True),
        ),
        Protocol(
            "lease-no-fencing",
            "the same lease; the storage accepts every write",
            _LEASE_PARAMS,
            _lease(fencing=False),
        ),
        Protocol(
            "heartbeat-no-quorum",
            "promote on a missed heartbeat, no quorum, no store (split brain)",
            (
                NODES,
                Param("timeout", 2, 1, 5, "ticks without a heartbeat before a follower promotes"),
                *_faults(crashes=0, partitions=1, losses=1, pauses=0),
            ),
            _heartbeat,
        ),
    )
}


def lookup(name: str) -> Protocol:
    """The protocol called `name`, or a LeadercheckError with a did-you-mean."""
    try:
        return PROTOCOLS[name]
    except KeyError:
        hint = _did_you_mean(name, PROTOCOLS)
        raise LeadercheckError(
            f"unknown protocol {name!r}{hint}; run `verify --list` to see them"
        ) from None

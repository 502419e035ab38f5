"""Reads specs/expected.toml: the properties each protocol is judged on, and expected verdicts.

Each entry is `property = "HOLDS"` or `"VIOLATED"`, or an inline table
`{ verdict = "VIOLATED", max_steps = N }` that also bounds the length of the shortest
counterexample. Every protocol must name at least one `sometimes` witness expected to
hold, so that no safety verdict can pass on a model in which nothing ever happens.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checker.errors import LeadercheckError
from checker.properties import Kind, Property
from checker.result import Verdict
from specs.claims import PROPERTIES

EXPECTED_FILE = Path(__file__).with_name("expected.toml")


@dataclass(frozen=True)
class Expectation:
    prop: str
    verdict: Verdict
    max_steps: int | None = None  # bound on the shortest counterexample or witness


@dataclass(frozen=True)
class Expectations:
    """protocol -> its expectations, in file order."""

    table: dict[str, tuple[Expectation, ...]]

    def properties(self, protocol: str) -> tuple[Property, ...]:
        return tuple(PROPERTIES[e.prop] for e in self.table.get(protocol, ()))

    def expected(self, protocol: str) -> dict[str, Verdict]:
        return {e.prop: e.verdict for e in self.table.get(protocol, ())}

    def of(self, protocol: str) -> tuple[Expectation, ...]:
        return self.table.get(protocol, ())


def _entry(path: Path, protocol: str, name: str, value: Any) -> Expectation:
    where = f"{path}: [{protocol}] {name}"
    if name not in PROPERTIES:
        raise LeadercheckError(f"{path}: [{protocol}] names unknown property {name!r}")
    max_steps = None
    if isinstance(value, dict):
        unknown = set(value) - {"verdict", "max_steps"}
        if unknown:
            raise LeadercheckError(f"{where} has unknown key {sorted(unknown)[0]!r}")
        max_steps = value.get("max_steps")
        if max_steps is not None and (not isinstance(max_steps, int) or max_steps < 0):
            raise LeadercheckError(f"{where}: max_steps must be a non-negative integer")
        value = value.get("verdict")
    if value not in ("HOLDS", "VIOLATED"):
        raise LeadercheckError(f"{where} = {value!r}; expected HOLDS or VIOLATED")
    return Expectation(name, Verdict(value), max_steps)


def load_expectations(path: Path = EXPECTED_FILE) -> Expectations:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise LeadercheckError(f"cannot read {path}: {exc}") from exc
    table: dict[str, tuple[Expectation, ...]] = {}
    for protocol, props in raw.items():
        if not isinstance(props, dict):
            raise LeadercheckError(f"{path}: [{protocol}] must be a table of property = verdict")
        entries = tuple(_entry(path, protocol, name, v) for name, v in props.items())
        witnesses = [
            e
            for e in entries
            if PROPERTIES[e.prop].kind is Kind.SOMETIMES and e.verdict is Verdict.HOLDS
        ]
        if not witnesses:
            raise LeadercheckError(
                f"{path}: [{protocol}] names no witness (a `sometimes` property expected to "
                "hold), so a safety verdict could pass on a model where nothing happens"
            )
        table[protocol] = entries
    return Expectations(table)

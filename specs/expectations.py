"""Reads specs/expected.toml: the properties each protocol is judged on, and expected verdicts.

Each entry is `property = "HOLDS"` or `"VIOLATED"`, or an inline table
`{ verdict = "VIOLATED", max_steps = N }` that also bounds the length of the shortest
counterexample. Every protocol must name at least one `sometimes` witness expected to
hold, so that no safety verdict can pass on a model in which nothing ever happens.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.properties import Kind, Property
from leadercheck.checker.result import Verdict
from leadercheck.specs.claims import PROPERTIES

EXPECTED_FILE = Path(__file__).with_name("expected.toml")


@dataclass(frozen=True)
class Expectation:
    prop: str
    verdict: Verdict
    max_steps: int | None = None  # bound on the shortest counterexample or witness


@dataclass(frozen=True)
class Expectations:
    """protocol -> its expectations, in file order; `claims` are the properties they name
    (the built-in ones, or a user's module's beside them)."""

    table: dict[str, tuple[Expectation, ...]]
    claims: Mapping[str, Property] = field(default_factory=lambda: PROPERTIES)

    def properties(self, protocol: str) -> tuple[Property, ...]:
        return tuple(self.claims[e.prop] for e in self.table.get(protocol, ()))

    def expected(self, protocol: str) -> dict[str, Verdict]:
        return {e.prop: e.verdict for e in self.table.get(protocol, ())}

    def of(self, protocol: str) -> tuple[Expectation, ...]:
        return self.table.get(protocol, ())


def _entry(
    path: Path | str, protocol: str, name: str, value: Any, claims: Mapping[str, Property]
) -> Expectation:
    where = f"{path}: [{protocol}] {name}"
    if not isinstance(name, str) or name not in claims:
        raise LeadercheckError(f"{path}: [{protocol}] names unknown property {name!r}")
    max_steps = None
    if isinstance(value, Mapping):
        unknown = set(value) - {"verdict", "max_steps"}
        if unknown:
            raise LeadercheckError(f"{where} has unknown key {sorted(unknown)[0]!r}")
        max_steps = value.get("max_steps")
        if max_steps is not None and (
            isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 0
        ):
            raise LeadercheckError(f"{where}: max_steps must be a non-negative integer")
        value = value.get("verdict")
    if value not in ("HOLDS", "VIOLATED"):
        raise LeadercheckError(f"{where} = {value!r}; expected HOLDS or VIOLATED")
    return Expectation(name, Verdict(value), max_steps)


def load_expectations(
    path: Path = EXPECTED_FILE, claims: Mapping[str, Property] = PROPERTIES
) -> Expectations:
    """The expectations of a TOML file, naming properties among `claims`."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise LeadercheckError(f"cannot read {path}: {exc}") from exc
    return expectations_from(raw, path, claims)


def expectations_from(
    raw: Mapping[str, Any], path: Path | str, claims: Mapping[str, Property] = PROPERTIES
) -> Expectations:
    """Expectations from the parsed table (a TOML file's, or a user module's EXPECTED dict);
    `path` names where it came from in messages."""
    if not isinstance(raw, Mapping):
        raise LeadercheckError(f"{path} must map each protocol to its property = verdict table")
    table: dict[str, tuple[Expectation, ...]] = {}
    for protocol, props in raw.items():
        if not isinstance(props, Mapping):
            raise LeadercheckError(f"{path}: [{protocol}] must be a table of property = verdict")
        entries = tuple(_entry(path, protocol, name, v, claims) for name, v in props.items())
        witnesses = [
            e
            for e in entries
            if claims[e.prop].kind is Kind.SOMETIMES and e.verdict is Verdict.HOLDS
        ]
        if not witnesses:
            raise LeadercheckError(
                f"{path}: [{protocol}] names no witness (a `sometimes` property expected to "
                "hold), so a safety verdict could pass on a model where nothing happens"
            )
        table[protocol] = entries
    return Expectations(table, claims)

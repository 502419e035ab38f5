"""Reads specs/expected.toml: the properties each protocol is judged on, and expected verdicts."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from checker.errors import LeadercheckError
from checker.properties import Property
from checker.result import Verdict
from specs.claims import PROPERTIES

EXPECTED_FILE = Path(__file__).with_name("expected.toml")


@dataclass(frozen=True)
class Expectations:
    """protocol -> ordered (property name, expected verdict) pairs."""

    table: dict[str, tuple[tuple[str, Verdict], ...]]

    def properties(self, protocol: str) -> tuple[Property, ...]:
        return tuple(PROPERTIES[name] for name, _ in self.table.get(protocol, ()))

    def expected(self, protocol: str) -> dict[str, Verdict]:
        return dict(self.table.get(protocol, ()))


def load_expectations(path: Path = EXPECTED_FILE) -> Expectations:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise LeadercheckError(f"cannot read {path}: {exc}") from exc
    table: dict[str, tuple[tuple[str, Verdict], ...]] = {}
    for protocol, props in raw.items():
        if not isinstance(props, dict):
            raise LeadercheckError(f"{path}: [{protocol}] must be a table of property = verdict")
        rows = []
        for name, verdict in props.items():
            if name not in PROPERTIES:
                raise LeadercheckError(f"{path}: [{protocol}] names unknown property {name!r}")
            if verdict not in ("HOLDS", "VIOLATED"):
                raise LeadercheckError(
                    f"{path}: [{protocol}] {name} = {verdict!r}; expected HOLDS or VIOLATED"
                )
            rows.append((name, Verdict(verdict)))
        table[protocol] = tuple(rows)
    return Expectations(table)

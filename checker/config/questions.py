"""The numbers a configuration's questions are put in: its knobs as the system runs them and
the environment, by name, and which of them a formula reads.

A verdict rests on exactly the knobs its formulas read (`names_in`), so a verdict line can
name the defaults it rests on, and a verdict that would read an unreadable knob is not given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from leadercheck.checker.config.environment import NAMES as ENVIRONMENT
from leadercheck.checker.config.knobs import Configuration
from leadercheck.checker.config.systems import SYSTEMS
from leadercheck.checker.config.systems.base import Formula, Timing


class _Missing(Exception):
    """A formula read a knob that has no value."""


def names_in(formula: Formula, values: Mapping[str, float]) -> tuple[str, ...]:
    """The knobs and environment figures a formula reads, in the order it reads them (a
    knob without a value reads as 1, so that the formula can go on)."""
    read: list[str] = []

    class Recording(dict[str, float]):
        def __getitem__(self, key: str) -> float:
            if key not in read:
                read.append(key)
            return super().get(key, 1.0)

    formula(Recording(values))
    return tuple(read)


def environment_of(config: Configuration) -> dict[str, float]:
    return {name: getattr(config.environment, name) for name in ENVIRONMENT}


def values_of(config: Configuration) -> tuple[dict[str, float], list[str], frozenset[str]]:
    """The knobs as the system runs them, the environment, what the system changed, and the
    knobs that cannot be known because the system adjusts them together with an unreadable
    one (Patroni's ttl with an unreadable retry_timeout)."""
    values = dict(config.values)
    effective = SYSTEMS[config.system].effective
    touched = set(reads([lambda v: effective(v, config.facts)], values))
    missing = {n for n, k in config.knobs.items() if not k.readable}
    if touched & missing:
        return values | environment_of(config), [], frozenset(touched & set(config.knobs))
    notes = effective(values, config.facts)
    return values | environment_of(config), notes, frozenset()


def timing_of(config: Configuration) -> Timing:
    facts = dict(config.facts)
    return SYSTEMS[config.system].timing(facts)


def reads(formulas: Sequence[Any], values: Mapping[str, float]) -> tuple[str, ...]:
    """Every name the formulas read (None entries skipped), in order."""
    names: list[str] = []
    for formula in formulas:
        if formula is not None:
            names += [n for n in names_in(formula, values) if n not in names]
    return tuple(names)

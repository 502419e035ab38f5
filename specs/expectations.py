"""Reads specs/expected.toml: the properties each protocol is judged on, and expected verdicts.

Each entry is `property = "HOLDS"` or `"VIOLATED"`, or an inline table
`{ verdict = "VIOLATED", max_steps = N }` that also bounds the length of the shortest
counterexample. Every protocol must name at least one `sometimes` witness expected to
hold, so that no safety verdict can pass on a model in which nothing ever happens.

A section is a gate case: `[protocol]` at the protocol's defaults, judged by the
exhaustive search, or `["protocol name=value ..."]` at other parameters. A case may say
it is judged by a sampled strategy, `strategy = { name = "simulate", seed = 1, walks =
2000 }` (or `"bitstate"`, with `memory = "64M"`; `workers = K` for a swarm): such a
search never shows that an invariant holds, so its expectations are VIOLATED or
INCOMPLETE (HOLDS only for a witness), and it is bounded by counts, not time, so that
the gate gives the same verdicts and traces in every run.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from leadercheck.checker.engine.settings import BITSTATE, DEFAULT_SAMPLING, SIMULATE, Sampling
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.io import files
from leadercheck.checker.io.sizes import format_size, parse_size
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
class SampledJudge:
    """The sampled strategy a gate case is judged with, and its count-bounded budget."""

    strategy: str  # SIMULATE or BITSTATE
    sampling: Sampling
    workers: int = 1

    def describe(self) -> str:
        s = self.sampling
        if self.strategy == SIMULATE:
            what = f"simulation, seed {s.seed}, {s.walks:,} walks of at most {s.depth} steps"
        else:
            what = f"bitstate, seed {s.seed}, a bit array of {format_size(s.memory)}"
        return what + (f", {self.workers} workers" if self.workers > 1 else "")


@dataclass(frozen=True)
class Case:
    """One section of the file: a protocol at some parameters, and how it is judged."""

    name: str  # the section's name: the protocol, then any `name=value` settings
    protocol: str
    params: tuple[tuple[str, str], ...] = ()  # as written; the catalogue resolves them
    judged_by: SampledJudge | None = None  # None: the exhaustive search

    @property
    def file_stem(self) -> str:
        """The counterexample files' name: the protocol, `@name=value,...` for settings."""
        if not self.params:
            return self.protocol
        return self.protocol + "@" + ",".join(f"{k}={v}" for k, v in self.params)


@dataclass(frozen=True)
class Expectations:
    """case -> its expectations, in file order; `claims` are the properties they name
    (the built-in ones, or a user's module's beside them). A protocol's own section is
    the case named after it."""

    table: dict[str, tuple[Expectation, ...]]
    claims: Mapping[str, Property] = field(default_factory=lambda: PROPERTIES)
    cases: dict[str, Case] = field(default_factory=dict)  # every section, by name

    def case(self, name: str) -> Case:
        return self.cases.get(name) or Case(name, name)

    def properties(self, protocol: str) -> tuple[Property, ...]:
        return tuple(self.claims[e.prop] for e in self.table.get(protocol, ()))

    def expected(self, protocol: str) -> dict[str, Verdict]:
        return {e.prop: e.verdict for e in self.table.get(protocol, ())}

    def of(self, protocol: str) -> tuple[Expectation, ...]:
        return self.table.get(protocol, ())


def _entry(
    path: Path | str,
    protocol: str,
    name: str,
    value: Any,
    claims: Mapping[str, Property],
    sampled: bool = False,
) -> Expectation:
    where = f"{path}: [{protocol}] {name}"
    if not isinstance(name, str) or name not in claims:
        raise LeadercheckError(f"{path}: [{protocol}] names unknown property {name!r}")
    max_steps = None
    if isinstance(value, Mapping):
        unknown = set(value) - {"verdict", "max_steps"}
        if unknown:
            raise LeadercheckError(f"{where} has unknown key {sorted(unknown)[0]!r}")
        max_steps = _count(where, "max_steps", value.get("max_steps"), 0)
        value = value.get("verdict")
    if sampled:
        if value not in ("HOLDS", "VIOLATED", "INCOMPLETE"):
            raise LeadercheckError(f"{where} = {value!r}; expected VIOLATED or INCOMPLETE")
        if value == "HOLDS" and claims[name].kind is not Kind.SOMETIMES:
            raise LeadercheckError(
                f"{where} = HOLDS: a sampled search never shows that a claim holds (only a "
                "witness proves its `sometimes` claim); expect INCOMPLETE or VIOLATED"
            )
    elif value not in ("HOLDS", "VIOLATED"):
        hint = " (INCOMPLETE only with a sampled strategy)" if value == "INCOMPLETE" else ""
        raise LeadercheckError(f"{where} = {value!r}; expected HOLDS or VIOLATED{hint}")
    return Expectation(name, Verdict(value), max_steps)


def _count(where: str, key: str, value: Any, low: int) -> int | None:
    """`value` if it is None or an integer of at least `low` (a bool is not), else an error."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < low):
        wanted = "a non-negative integer" if low == 0 else f"an integer of at least {low}"
        raise LeadercheckError(f"{where}: {key} must be {wanted}")
    return value


STRATEGY_KEYS = {
    SIMULATE: {"name", "seed", "walks", "depth", "workers"},
    BITSTATE: {"name", "seed", "memory", "workers"},
}


def _case(path: Path | str, section: str, raw: Mapping[str, Any]) -> Case:
    """The case a section names: `protocol [name=value ...]`, and its `strategy`."""
    words = section.split()
    if not words:
        raise LeadercheckError(f"{path}: a section needs a protocol name")
    params: list[tuple[str, str]] = []
    for word in words[1:]:
        key, sep, value = word.partition("=")
        if not sep or not key or not value:
            raise LeadercheckError(
                f"{path}: [{section}]: {word!r} is not name=value (a case is a protocol, then "
                "its settings)"
            )
        params.append((key, value))
    spec = raw.get("strategy")
    return Case(
        section, words[0], tuple(params), None if spec is None else _judge(path, section, spec)
    )


def _judge(path: Path | str, section: str, spec: Any) -> SampledJudge:
    where = f"{path}: [{section}] strategy"
    if not isinstance(spec, Mapping):
        raise LeadercheckError(
            f'{where} must be a table, e.g. {{ name = "simulate", walks = 2000 }}'
        )
    name = spec.get("name")
    if name not in STRATEGY_KEYS:
        raise LeadercheckError(f'{where}: name must be "{SIMULATE}" or "{BITSTATE}", got {name!r}')
    if "time" in spec:
        raise LeadercheckError(
            f"{where}: a gate gives the same verdicts in every run, so its budget is a count "
            "(walks), not time"
        )
    unknown = sorted(set(spec) - STRATEGY_KEYS[name])
    if unknown:
        raise LeadercheckError(f"{where}: unknown key {unknown[0]!r} for {name}")

    def count(key: str, low: int, default: int | None) -> int | None:
        return _count(where, key, spec.get(key, default), low)

    if name == SIMULATE and "walks" not in spec:
        raise LeadercheckError(
            f"{where}: give walks = N (a gate's simulation is bounded by a count)"
        )
    memory = spec.get("memory", DEFAULT_SAMPLING.memory)
    if isinstance(memory, str):
        memory = parse_size(memory)
    elif isinstance(memory, bool) or not isinstance(memory, int) or memory < 1:
        raise LeadercheckError(f'{where}: memory must be a size such as "64M"')
    sampling = Sampling(
        seed=count("seed", 0, DEFAULT_SAMPLING.seed) or 0,
        depth=count("depth", 1, DEFAULT_SAMPLING.depth) or DEFAULT_SAMPLING.depth,
        walks=count("walks", 1, None),
        memory=memory,
    )
    return SampledJudge(name, sampling, count("workers", 1, 1) or 1)


def load_expectations(
    path: Path = EXPECTED_FILE, claims: Mapping[str, Property] = PROPERTIES
) -> Expectations:
    """The expectations of a TOML file (a regular file of at most `files.TOML_LIMIT` bytes),
    naming properties among `claims`."""
    text = files.read_text(path, files.TOML_LIMIT)
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LeadercheckError(f"cannot read {path}: {exc}") from None
    return expectations_from(raw, path, claims)


def expectations_from(
    raw: Mapping[str, Any], path: Path | str, claims: Mapping[str, Property] = PROPERTIES
) -> Expectations:
    """Expectations from the parsed table (a TOML file's, or a user module's EXPECTED dict);
    `path` names where it came from in messages."""
    if not isinstance(raw, Mapping):
        raise LeadercheckError(f"{path} must map each protocol to its property = verdict table")
    table: dict[str, tuple[Expectation, ...]] = {}
    cases: dict[str, Case] = {}
    for protocol, props in raw.items():
        if not isinstance(props, Mapping):
            raise LeadercheckError(f"{path}: [{protocol}] must be a table of property = verdict")
        case = cases[protocol] = _case(path, protocol, props)
        sampled = case.judged_by is not None
        entries = tuple(
            _entry(path, protocol, name, v, claims, sampled)
            for name, v in props.items()
            if name != "strategy"
        )
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
    return Expectations(table, claims, cases)

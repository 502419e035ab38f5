"""A configuration file read into the leader elections it configures, each knob with its
origin: read from the file, taken from a named program's default, or named as unreadable.

The file is parsed within bounds (`document.py`), its system recognised (or given with
`--system`), and its system's reader (`systems/`) says where each knob is spelled and whose
default a missing one takes. What leadercheck needs beyond the file goes in a `leadercheck`
section: a YAML mapping, or `leadercheck.KEY=VALUE` lines (which may be comments,
`# leadercheck.pause=10s`) in zoo.cfg and flags files: `environment`, `client` (a client's
session or lock settings), `expect` (the verdicts a gate expects) and `program` (whose
defaults apply, when the file does not say).

Nothing is substituted silently: a key that looks like a knob in a place no reader looked
at is named (`unread`), and makes a knob that would otherwise be taken by default
unreadable, since the file may set it there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from leadercheck.checker.config.document import Document, dotted, parse, shown
from leadercheck.checker.config.environment import Environment, environment_from
from leadercheck.checker.config.reading import Finder, Knob, unread
from leadercheck.checker.config.systems import SYSTEMS
from leadercheck.checker.config.systems import redlock as redlock_system
from leadercheck.checker.config.systems.base import Elector
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.io import files

CONFIG_LIMIT = 1 << 20  # a configuration file is kilobytes; more is not one
CLAIMS = ("rules", "stale-leader", "false-failover", "lost-ack-write")  # what `judge` decides
VERDICTS = ("SAFE", "UNSAFE")
SECTION = ("environment", "client", "expect", "program")
SECTION_NAME = "leadercheck"


@dataclass(frozen=True)
class Configuration:
    """One leader election a file configures, as its system will run it."""

    system: str
    source: str
    program: str  # "kube-scheduler", "Patroni", "cert-manager-controller"
    knobs: Mapping[str, Knob]  # by leadercheck's name
    facts: Mapping[str, str]  # settings that are not numbers (Patroni's DCS, watchdog mode)
    notes: tuple[str, ...]  # what the reading found worth saying (ignored places, precedence)
    environment: Environment
    expected: Mapping[str, str]  # claim -> the verdict `verify config --all` expects
    name: str = ""  # which election of the file, when it holds several

    @property
    def title(self) -> str:
        return f"{self.source} [{self.name}]" if self.name else self.source

    @property
    def values(self) -> dict[str, float]:
        """The readable knobs' values by name."""
        return {n: k.value for n, k in self.knobs.items() if k.value is not None}

    @property
    def defaulted(self) -> tuple[str, ...]:
        return tuple(n for n, k in self.knobs.items() if k.default and k.readable)


def load_configurations(path: Path, system: str | None = None) -> list[Configuration]:
    """Read `path` (bounded, a regular file) into the elections it configures: one line for
    anything wrong."""
    if system is not None and system not in SYSTEMS:
        raise LeadercheckError(f"unknown system {system!r}: give one of {', '.join(SYSTEMS)}")
    text = files.read_text(path, CONFIG_LIMIT, "config")
    return read_configurations(text, str(path), system)


def read_configurations(text: str, source: str, system: str | None = None) -> list[Configuration]:
    """`text` (a file's content, named `source` in messages) as its Configurations."""
    javascript = redlock_system.from_javascript(text, source)
    if javascript is not None:
        doc, clients = javascript
        system = system or "redlock"
    else:
        doc, clients = parse(text, source), None
    section, doc = _section(doc, text)
    embedded = _embedded(doc, section, system)
    if embedded is not None:
        return embedded
    found = system or _infer(doc)
    spec = SYSTEMS[found]
    client = _mapping(section.get("client", {}) or {}, source, "leadercheck.client")
    if "program" in section:
        client = {**client, "program": section["program"]}
    finder = Finder(doc)
    if javascript is not None:  # the README's `new Redlock([clients], {settings})`
        electors = [Elector("node-redlock", redlock_system.read_settings(finder, client, clients))]
    else:
        electors = spec.read(finder, client)
    environment = environment_from(
        _mapping(section.get("environment", {}) or {}, source, "leadercheck.environment"), source
    )
    expected = _expected(
        _mapping(section.get("expect", {}) or {}, source, "leadercheck.expect"), source
    )
    unseen = unread(doc, finder.looked, spec.like, skip=(SECTION_NAME,))
    notes = list(dict.fromkeys(finder.notes))
    notes += [
        f"{where} is set twice{_lines(lines)}; the last is kept"
        for where, lines in _twice(doc, finder)
    ]
    configs = []
    for elector in electors:
        knobs = dict(elector.knobs)
        for knob, _, where in unseen:
            held = knobs.get(knob)
            if held is not None and held.default:
                knobs[knob] = Knob(
                    knob,
                    held.label,
                    None,
                    held.origin,
                    True,
                    problem=f"{where} may set it, in a place leadercheck does not read",
                    kind=held.kind,
                )
        said = [
            f"{where} looks like {knob} but is in a place leadercheck does not read"
            for knob, _, where in unseen
        ]
        configs.append(
            Configuration(
                found,
                source,
                elector.program,
                knobs,
                dict(elector.facts),
                tuple(notes + list(elector.notes) + said),
                environment,
                expected,
                elector.name,
            )
        )
    return configs


CONFIG_NAMES = re.compile(r".*\.(ya?ml|json|cfg|conf|properties|flags|env)$|zoo\.cfg")


def _embedded(
    doc: Document, section: Mapping[str, Any], system: str | None
) -> list[Configuration] | None:
    """A ConfigMap that carries configuration files in its `data`: each entry a system
    recognises, judged as the file it is mounted as. None when the document is none."""
    entries = [
        (i, key, text)
        for i, root in enumerate(doc.roots)
        if isinstance(root, dict)
        and root.get("kind") == "ConfigMap"
        and isinstance(root.get("data"), dict)
        for key, text in root["data"].items()
        if isinstance(text, str) and CONFIG_NAMES.fullmatch(str(key))
    ]
    if not entries or (system is None and any(s.recognise(doc) for s in SYSTEMS.values())):
        return None
    configs: list[Configuration] = []
    for i, key, text in entries:
        where = doc.where((i, "data", key))
        try:
            inner = read_configurations(text, f"{doc.source} ({where})", system)
        except LeadercheckError:
            continue  # an entry that is no configuration of a system (a script, a log setup)
        outer = environment_from(
            _mapping(section.get("environment", {}) or {}, doc.source, "leadercheck.environment"),
            doc.source,
        )
        expected = _expected(
            _mapping(section.get("expect", {}) or {}, doc.source, "leadercheck.expect"), doc.source
        )
        for c in inner:
            knobs = {
                n: k
                if k.default or not k.readable
                else replace(k, origin=f"{k.origin} of data.{key}")
                for n, k in c.knobs.items()
            }
            configs.append(
                replace(
                    c,
                    source=doc.source,
                    name=f"data.{key}" + (f" {c.name}" if c.name else ""),
                    knobs=knobs,
                    environment=outer if section.get("environment") else c.environment,
                    expected={**c.expected, **expected},
                )
            )
    return configs or None


def _lines(lines: tuple[int | None, ...]) -> str:
    known = [str(n) for n in lines if n is not None]
    return f" (lines {' and '.join(known)})" if known else ""


def _twice(doc: Document, finder: Finder) -> list[tuple[str, tuple[int | None, ...]]]:
    read = {p[: i + 1] for p in finder.looked for i in range(len(p))}
    return [(dotted(p[1:]), lines) for p, lines in doc.duplicates.items() if p not in read]


# -- the leadercheck section ---------------------------------------------------------------

_PROPERTY = re.compile(r"\s*(#\s*)?(leadercheck\.[\w.\-]+)\s*=\s*(.*?)\s*$")


def _section(doc: Document, text: str) -> tuple[dict[str, Any], Document]:
    """The `leadercheck` section, and the document without it (so no reader sees it)."""
    if doc.format in ("properties", "flags"):
        section = _dotted_section(text)
        if doc.format == "properties":
            root = {k: v for k, v in doc.roots[0].items() if not k.startswith("leadercheck.")}
            doc = Document(doc.source, doc.format, (root,), doc.lines, doc.duplicates)
    else:
        section = {}
        roots = list(doc.roots)
        for i, root in enumerate(roots):
            if isinstance(root, dict) and SECTION_NAME in root:
                if section:
                    raise LeadercheckError(f"{doc.source}: the leadercheck section is given twice")
                section = _mapping(root[SECTION_NAME] or {}, doc.source, SECTION_NAME)
                roots[i] = {k: v for k, v in root.items() if k != SECTION_NAME}
        doc = Document(doc.source, doc.format, tuple(roots), doc.lines, doc.duplicates)
    for key in section:
        if key not in SECTION:
            raise LeadercheckError(
                f"{doc.source}: unknown key leadercheck.{key} (known: {', '.join(SECTION)})"
            )
    return section, doc


def _dotted_section(text: str) -> dict[str, Any]:
    """`leadercheck.environment.pause=10s` lines (comments too) as a nested section."""
    section: dict[str, Any] = {}
    for ln in text.splitlines():
        found = _PROPERTY.match(ln)
        if not found:
            continue
        parts = found.group(2).split(".")[1:]
        if len(parts) == 1 and parts[0] != "program":  # leadercheck.pause: an environment key
            parts = ["environment", *parts]
        node = section
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise LeadercheckError(
                    f"leadercheck.{'.'.join(parts)} is given as a value and as a section"
                )
        node[parts[-1]] = found.group(3)
    return section


def _mapping(value: object, source: str, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise LeadercheckError(f"{source}: {what} must be a mapping, not {type(value).__name__}")
    return {str(k): v for k, v in value.items()}


def _expected(section: Mapping[str, Any], source: str) -> dict[str, str]:
    """The verdicts a gate expects, by claim (SAFE unless the file says otherwise)."""
    expected = {}
    for claim, verdict in section.items():
        if claim not in CLAIMS:
            raise LeadercheckError(
                f"{source}: leadercheck.expect names no claim {shown(claim)} "
                f"(claims: {', '.join(CLAIMS)})"
            )
        if str(verdict).upper() not in VERDICTS:
            raise LeadercheckError(
                f"{source}: leadercheck.expect.{claim} must be SAFE or UNSAFE, got {shown(verdict)}"
            )
        expected[claim] = str(verdict).upper()
    return expected


def _infer(doc: Document) -> str:
    found = [name for name, spec in SYSTEMS.items() if spec.recognise(doc)]
    if len(found) == 1:
        return found[0]
    if not found:
        raise LeadercheckError(
            f"{doc.source}: cannot tell which system this configures; give --system "
            f"{'|'.join(SYSTEMS)}"
        )
    raise LeadercheckError(
        f"{doc.source}: this file configures {' and '.join(found)}: give --system with the one "
        "to judge"
    )

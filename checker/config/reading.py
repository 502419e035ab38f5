"""Knobs read from a Document with their origin: the file's place, a named default, or a
reason they cannot be read. Never a silent substitution.

Each system's reader (`systems/`) asks a `Finder` for a knob by the places the system itself
reads it from, highest precedence first, and says what the system does with the other
places (ignored, overridden). The Finder returns a `Knob` that carries where its value came
from: the file (a path and line), the default of a named program ("cert-manager's default")
when the file says nothing, or the reason it cannot be read (a template placeholder, a unit
the program does not take). It also records every place it looked, so that `unread` can
name the keys that look like a knob in a place no reader looked at: a section leadercheck
does not understand may carry a value the verdict would otherwise take by default.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from leadercheck.checker.config.document import Document, KeyPath, dotted, shown
from leadercheck.checker.errors import LeadercheckError

SECONDS, COUNT, FLAG, RATE, BYTES = "s", "count", "flag", "rate", "bytes"
LONGEST_TEXT = 256  # characters in a knob's value; `{{ .Values.x | default "15s" }}` is 30

# `{{ .Values.x }}` (Helm, Jinja), `{% ... %}`, `${VAR}` (envsubst, Terraform), `$(VAR)` (a
# Pod's env expansion), `<%= x %>` (ERB), `%(x)s` (Python), `@VAR@` (autoconf)
_PLACEHOLDER = re.compile(
    r"\{\{.*?\}\}|\{%.*?%\}|\$\{[^}]*\}|\$\([A-Za-z_]\w*\)|<%.*?%>"
    r"|%\([A-Za-z_]\w*\)[sd]|@[A-Za-z_]\w*@"
)


def placeholder(value: object) -> str | None:
    """The template placeholder `value` holds, if it holds one."""
    if isinstance(value, str):
        found = _PLACEHOLDER.search(value)
        if found:
            return found.group(0)
    return None


class Unreadable(Exception):
    """A value the knob's parser cannot read (an unknown unit, text that is no number): the
    knob is named as unreadable, and what depends on it is not judged."""


@dataclass(frozen=True)
class Knob:
    """One knob as the system will run with it, and where that value comes from."""

    name: str  # leadercheck's name for it (the formulas use it)
    label: str  # the system's own spelling, as the report shows it
    value: float | None  # seconds, a count, 0/1, a rate; None when it cannot be read
    origin: str  # `bootstrap.dcs.ttl (line 14)`, or `Patroni's default`
    default: bool = False  # the file does not set it
    problem: str = ""  # why it cannot be read (value is None)
    kind: str = SECONDS

    @property
    def readable(self) -> bool:
        return self.value is not None

    def text(self) -> str:
        """The value in words: `15 s`, `on`, `0.01`, `1048576 bytes`."""
        if self.value is None:
            return "unreadable"
        return value_text(self.value, self.kind)

    def said(self) -> str:
        """`leaseDuration 60 s (cert-manager's default)`: how a verdict line names it."""
        if self.value is None:
            return f"{self.label} unreadable ({self.problem})"
        return f"{self.label} {self.text()} ({self.origin})"


def value_text(value: float, kind: str) -> str:
    if kind == FLAG:
        return "on" if value else "off"
    if kind in (COUNT, BYTES):
        return f"{value:.0f}" + (" bytes" if kind == BYTES else "")
    if kind == RATE:
        return f"{value:g}"
    return f"{round(value, 3):g} s"


@dataclass(frozen=True)
class Place:
    """Where a system may read a knob: a path in the document, and what the system makes of a
    value found there when a place of higher precedence has one too (or always, `ignored`)."""

    path: KeyPath
    ignored: str = ""  # why the system never reads this place, when it does not


Parser = Callable[[object, str], float]  # (value, knob's label) -> number; raises


@dataclass
class Finder:
    """Reads knobs from `doc` by place, and remembers every place it looked at."""

    doc: Document
    notes: list[str] = field(default_factory=list)
    looked: set[KeyPath] = field(default_factory=set)

    def get(self, path: KeyPath) -> tuple[bool, Any]:
        """(found, value) at `path`; marks the path as read. A key the file sets twice is
        refused here, in the one place every reader goes through."""
        self.looked.add(path)
        for i in range(2, len(path) + 1):
            lines = self.doc.duplicates.get(path[:i])
            if lines is not None:
                said = " and ".join(f"line {n}" for n in lines if n is not None)
                raise LeadercheckError(
                    f"{self.doc.source}: {dotted(path[1:i])} is set twice"
                    f"{f' ({said})' if said else ''}; YAML forbids it and the programs that "
                    "read it disagree on which wins: keep one"
                )
        node: Any = self.doc.roots
        for depth, key in enumerate(path):
            if isinstance(node, dict) and isinstance(key, str) and key in node:
                node = node[key]
            elif isinstance(node, list | tuple) and isinstance(key, int) and key < len(node):
                node = node[key]
            elif isinstance(key, str) and node is not None and not isinstance(node, dict):
                raise LeadercheckError(
                    f"{self.doc.source}: "
                    f"{self.doc.where(path[:depth]) if depth > 1 else 'the file'}"
                    f" must be a mapping, not {type(node).__name__}"
                )
            else:
                return False, None
        return True, node

    def mapping(self, path: KeyPath) -> dict[str, Any]:
        """The mapping at `path` ({} when absent); one line when it is something else."""
        found, value = self.get(path)
        if not found or value is None:
            return {}
        if not isinstance(value, dict):
            raise LeadercheckError(
                f"{self.doc.source}: {self.doc.where(path)} must be a mapping, not "
                f"{type(value).__name__}"
            )
        return value

    def knob(
        self,
        name: str,
        label: str,
        places: Sequence[Place],
        parse: Parser,
        default: float,
        default_of: str,
        kind: str = SECONDS,
    ) -> Knob:
        """The knob from the first place of `places` that has it (the system's precedence),
        naming the others the file also sets; else `default`, said to be `default_of`'s."""
        chosen: tuple[Place, Any] | None = None
        for place in places:
            found, value = self.get(place.path)
            if not found:
                continue
            where = self.doc.where(place.path)
            if place.ignored:
                self.notes.append(f"{where} is not used: {place.ignored}")
            elif chosen is None:
                chosen = (place, value)
            else:
                used = self.doc.where(chosen[0].path)
                self.notes.append(f"{where} is not used: {used} comes first")
        if chosen is None:
            return Knob(name, label, default, f"{default_of} default", True, kind=kind)
        place, value = chosen
        return self.parsed(name, label, value, self.doc.where(place.path), parse, kind)

    def parsed(
        self, name: str, label: str, value: object, where: str, parse: Parser, kind: str
    ) -> Knob:
        """A value found at `where` read by `parse`, or the knob named as unreadable."""
        if isinstance(value, str) and len(value) > LONGEST_TEXT:
            raise LeadercheckError(
                f"{self.doc.source}: {where}: a value of {len(value):,} "
                f"characters, {shown(value)}: no setting is that long"
            )
        hole = placeholder(value)
        if hole is not None:
            return Knob(
                name,
                label,
                None,
                where,
                problem=f"a template placeholder {shown(hole)} at {where}",
                kind=kind,
            )
        try:
            number = parse(value, f"{self.doc.source}: {where}")
        except Unreadable as exc:
            return Knob(name, label, None, where, problem=f"{exc} at {where}", kind=kind)
        return Knob(name, label, number, where, kind=kind)


# -- flags ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Flag:
    name: str  # without its dashes: `leader-elect-lease-duration`
    value: str | None  # None: given without a value (`--leader-elect`)
    path: KeyPath  # the list item that holds it


def flags_in(items: object, path: KeyPath) -> list[Flag]:
    """The `--name[=value]` flags of a command line held as a list (a Pod's `command:` or
    `args:`, a flags file): `--name value` pairs too, and items that are whole shell lines."""
    if not isinstance(items, list):
        return []
    words: list[tuple[str, KeyPath]] = []
    for i, item in enumerate(items):
        if not isinstance(item, str | int | float) or isinstance(item, bool):
            continue
        text = str(item)
        if any(c.isspace() for c in text.strip()) and "--" in text:  # `sh -c "cmd --a=1 --b"`
            try:
                parts = shlex.split(text, comments=True)
            except ValueError:
                parts = text.split()
            # a backslash-newline leaves the newline on the next word: `\\\n--flag`
            words += [(w, path + (i,)) for p in parts for w in p.split()]
        else:
            words.append((text.strip(), path + (i,)))
    flags = []
    for j, (word, where) in enumerate(words):
        if not word.startswith("--") or len(word) < 3:
            continue
        name, eq, value = word[2:].partition("=")
        if not eq:
            following = words[j + 1][0] if j + 1 < len(words) else None
            value_or_none = following if following and not following.startswith("-") else None
            flags.append(Flag(name, value_or_none, where))
        else:
            flags.append(Flag(name, value, where))
    return flags


def one_flag(flags: Iterable[Flag], names: Sequence[str], doc: Document) -> Flag | None:
    """The flag of `names` (aliases of one knob) the command line sets, if any; one line
    when it sets it twice to different values, since which one wins depends on the
    program's flag parser (the same value twice is harmless)."""
    found = [f for f in flags if f.name in names]
    if len({f.value for f in found}) > 1:
        places = " and ".join(doc.where(f.path) for f in found[:2])
        raise LeadercheckError(
            f"{doc.source}: --{found[0].name} is given twice ({places}): keep one"
        )
    return found[-1] if found else None


# -- what no reader looked at -------------------------------------------------------------


def normal(name: str) -> str:
    """A key or flag name compared loosely: `leader-elect-lease-duration`, `leaseDuration`
    and `LEASE_DURATION` all become `leaseduration`-like lower-case letters and digits."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def unread(
    doc: Document, looked: set[KeyPath], like: Mapping[str, str], skip: Sequence[str] = ()
) -> list[tuple[str, KeyPath, str]]:
    """(knob, path, text) for each key or flag that looks like a knob (`like`: a normalised
    name -> the knob) in a place no reader looked at, outside the top-level sections `skip`."""
    found: list[tuple[str, KeyPath, str]] = []
    read = {p[: i + 1] for p in looked for i in range(len(p))}
    for path, value in doc.walk():
        if len(path) > 1 and isinstance(path[1], str) and path[1] in skip:
            continue
        key = path[-1] if len(path) > 1 else None
        if isinstance(key, str) and normal(key) in like and path not in read:
            found.append((like[normal(key)], path, doc.where(path)))
        elif (
            isinstance(value, str)
            and value.lstrip().startswith("--")
            and path not in read
            and path[:-1] not in looked
        ):  # a command line a reader read is read whole
            for flag in flags_in([value], path[:-1]):
                if normal(flag.name) in like:
                    found.append(
                        (like[normal(flag.name)], path, f"--{flag.name} at {doc.where(path)}")
                    )
    return found


def named(path: KeyPath) -> str:
    return dotted(path[1:])

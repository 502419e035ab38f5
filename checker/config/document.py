"""A configuration file's text as plain data, read within bounds no hostile file can pass.

Four formats, told apart by the text itself: YAML (one document or several, as a Helm
render or a kubeadm file has), JSON (indented with tabs too, which YAML refuses), Java
properties (`zoo.cfg`, an environment file) and command-line flags one per line (with
`# comments`, inline ones too). Whatever the file holds, reading it takes bounded time and
memory and ends in a `Document` or in one `LeadercheckError` that names the file, the line
when there is one, and the problem:

- nesting deeper than DEPTH levels (100,000 `[` once ended in a RecursionError);
- more than VALUES values once YAML's aliases are expanded (a 398-byte "billion laughs"
  once grew to 5.8 GB), or an alias that contains itself;
- a number of more than DIGITS digits (Python refuses to convert 4,300 and more);

A key set twice in one mapping or file is kept as the last value (what PyYAML and Java's
Properties do) and recorded in `duplicates`: YAML forbids it and Go's strict decoders refuse
the file, so a reader that reads a duplicated knob refuses it in one line, and the report
names the others.

A value is never echoed whole: `shown` cuts it to a few dozen characters. The tree the
readers get is plain Python (dicts, lists, str, int, float, bool, None) with aliases
expanded, so nothing downstream can meet a cycle or a shared node, and every key's line is
kept by its path for the messages.
"""

from __future__ import annotations

import json
import re
import reprlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from leadercheck.checker.errors import LeadercheckError

DEPTH = 64  # levels of nesting; the deepest real configuration has a dozen
VALUES = 200_000  # values once aliases are expanded; a large Helm values file has ~5,000
DIGITS = 40  # digits in one number; no knob is written with more
DOCUMENTS = 500  # YAML documents in one file
MERGE = "tag:yaml.org,2002:merge"

Key = str | int
KeyPath = tuple[Key, ...]  # (document index, key or list index, ...)

_SHOW = reprlib.Repr()
_SHOW.maxstring, _SHOW.maxother, _SHOW.maxlevel, _SHOW.maxlist, _SHOW.maxdict = 40, 40, 2, 4, 4


def shown(value: object) -> str:
    """`value` as a message shows it: its repr, cut to a few dozen characters."""
    return _SHOW.repr(value)


@dataclass(frozen=True)
class Document:
    """A file's content: one root per YAML document (one for the other formats)."""

    source: str
    format: str  # "yaml", "json", "properties" or "flags"
    roots: tuple[Any, ...]
    lines: Mapping[KeyPath, int] = field(default_factory=dict)  # a key's line, 1-based
    duplicates: Mapping[KeyPath, tuple[int | None, ...]] = field(default_factory=dict)

    def line(self, path: KeyPath) -> int | None:
        return self.lines.get(path)

    def where(self, path: KeyPath) -> str:
        """`bootstrap.dcs.ttl (line 14)`: a path as a person finds it in the file."""
        text = dotted(path[1:])
        if len(self.roots) > 1:
            text = f"document {int(path[0]) + 1}: {text}"
        line = self.line(path)
        return f"{text} (line {line})" if line is not None else text

    def walk(self) -> Iterator[tuple[KeyPath, Any]]:
        """Every value with its path, parents before children (the tree is bounded)."""
        stack: list[tuple[KeyPath, Any]] = [((i,), root) for i, root in enumerate(self.roots)]
        stack.reverse()
        while stack:
            path, value = stack.pop()
            yield path, value
            if isinstance(value, dict):
                children = [(path + (k,), v) for k, v in value.items()]
            elif isinstance(value, list):
                children = [(path + (i,), v) for i, v in enumerate(value)]
            else:
                continue
            stack.extend(reversed(children))


def dotted(path: KeyPath) -> str:
    """`spec.containers[0].command`: keys joined by dots, list indexes in brackets."""
    text = ""
    for key in path:
        text += f"[{key}]" if isinstance(key, int) else (f".{key}" if text else str(key))
    return text or "(the top level)"


class _Refused(Exception):
    """A bound crossed while reading; becomes one LeadercheckError naming the file."""

    def __init__(self, problem: str, line: int | None = None) -> None:
        super().__init__(problem)
        self.problem, self.line = problem, line


def parse(text: str, source: str) -> Document:
    """`text` (a file's content, named `source` in messages) as a Document."""
    text = text.removeprefix("\ufeff")
    try:
        return _parse(text, source)
    except _Refused as exc:
        where = f" line {exc.line}:" if exc.line is not None else ""
        raise LeadercheckError(f"{source}:{where} {exc.problem}") from None
    except RecursionError:  # a parser of the standard library's, past our own bounds
        raise LeadercheckError(f"{source}: nested too deeply to read") from None


def _parse(text: str, source: str) -> Document:
    lines = [ln for ln in text.splitlines() if ln.strip() and not _comment(ln)]
    if lines and all(_FLAG_LINE.match(ln) for ln in lines):
        return _flags(text, source)
    if lines and all(_PROPERTY_LINE.match(ln) for ln in lines):
        return _properties(text, source)
    if text.lstrip()[:1] in ("{", "[") and not text.lstrip().startswith(("{{", "{%")):
        try:
            return _json(text, source)
        except json.JSONDecodeError as exc:
            try:
                return _yaml(text, source)  # flow YAML such as {ttl: 30} is not JSON
            except _Refused:
                raise _Refused(f"does not parse as JSON: {exc.msg}", exc.lineno) from None
    try:
        return _yaml(text, source)
    except _Refused as refused:
        return _template(text, source, refused)


# -- templates ---------------------------------------------------------------------------

_CONTROL = re.compile(
    r"^[^#]*(\{%|%\{|\{\{-?\s*(?:if|range|with|define|template|include|toYaml|"
    r"end)\b)"
)  # Jinja, Terraform's %{ for }, Go's {{ if }}
_VALUE = re.compile(
    r"^(\s*(?:-\s+)?[^\s#:{\[\]'\"][^#:]*:\s+|\s*-\s+)(\{\{.*?\}\}[^#]*?)(\s+#.*)?$"
)


def _template(text: str, source: str, refused: _Refused) -> Document:
    """A file that is a template (Jinja, Helm, Go), not YAML: the values that are a whole
    `{{ ... }}` are read as the placeholders they are (each knob so written is named as
    unreadable), and a template with control blocks is refused, naming the first."""
    if "{{" not in text and "{%" not in text and "%{" not in text:
        raise refused
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if _CONTROL.search(line):
            raise _Refused(
                f"a template ({line.strip()[:40]!r}): render it, then judge what it renders",
                number,
            )
    quoted = []
    for line in lines:
        found = _VALUE.match(line)
        if found and "{{" in found.group(2):
            line = found.group(1) + json.dumps(found.group(2).strip()) + (found.group(3) or "")
        quoted.append(line)
    try:
        return _yaml("\n".join(quoted) + "\n", source)
    except _Refused:
        raise refused from None


def _comment(line: str) -> bool:
    return line.lstrip().startswith(("#", "!"))


# -- flags -----------------------------------------------------------------------------

# `--name`, `--name=value` or `--name value`, then an optional `# comment` and a shell's `\`
_FLAG_LINE = re.compile(
    r"\s*--[A-Za-z][\w.\-]*(?:[=\s]\s*(?:\"[^\"]*\"|'[^']*'|[^\s#\"']\S*))?"
    r"\s*(?:#.*)?\\?\s*$"
)
_FLAG_PARTS = re.compile(r"\s*(--[A-Za-z][\w.\-]*)(?:[=\s]\s*(\"[^\"]*\"|'[^']*'|[^\s#\"']\S*))?")


def _flags(text: str, source: str) -> Document:
    """A flags file as one list of `--name=value` items, the way a Pod's `args:` holds them."""
    items: list[str] = []
    lines: dict[KeyPath, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or _comment(line):
            continue
        found = _FLAG_PARTS.match(line)
        assert found is not None  # every such line matched _FLAG_LINE
        name, value = found.group(1), found.group(2)
        if value is not None and value[:1] in ("'", '"'):
            value = value[1:-1]
        lines[(0, len(items))] = number
        items.append(name if value is None else f"{name}={value}")
    return Document(source, "flags", (items,), lines)


# -- properties ------------------------------------------------------------------------

_PROPERTY_LINE = re.compile(r"\s*(?:export\s+)?[A-Za-z0-9_][\w.\-]*\s*=.*$")
_PROPERTY_PARTS = re.compile(r"\s*(?:export\s+)?([A-Za-z0-9_][\w.\-]*)\s*=\s*(.*?)\s*$")


def _properties(text: str, source: str) -> Document:
    """`key=value` lines (zoo.cfg, an environment file); the value as written, trimmed."""
    found: dict[str, str] = {}
    lines: dict[KeyPath, int] = {}
    twice: dict[KeyPath, tuple[int | None, ...]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or _comment(line):
            continue
        parts = _PROPERTY_PARTS.match(line)
        assert parts is not None
        key, value = parts.group(1), parts.group(2)
        if key in found:
            twice[(0, key)] = twice.get((0, key), (lines[(0, key)],)) + (number,)
        found[key] = value
        lines[(0, key)] = number
    return Document(source, "properties", (found,), lines, twice)


# -- JSON ----------------------------------------------------------------------------------


def _json(text: str, source: str) -> Document:
    twice: list[dict[str, Any]] = []  # objects with a key set twice, and which keys

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        mapping: dict[str, Any] = {}
        repeated = set()
        for key, value in items:
            if key in mapping:
                repeated.add(key)
            mapping[key] = value
        if repeated:
            twice.append({"object": mapping, "keys": repeated})
        return mapping

    def integer(digits: str) -> int:
        if len(digits.lstrip("-")) > DIGITS:
            raise _Refused(f"a number of {len(digits)} digits, more than any setting has")
        return int(digits)

    def constant(name: str) -> float:
        raise _Refused(f"{name} is not a number a setting can have")

    root = json.loads(text, object_pairs_hook=pairs, parse_int=integer, parse_constant=constant)
    _bounded(root)
    where = {id(t["object"]): t["keys"] for t in twice}
    duplicates: dict[KeyPath, tuple[int | None, ...]] = {}
    if where:
        for path, value in Document(source, "json", (root,)).walk():
            for key in where.get(id(value), ()) if isinstance(value, dict) else ():
                duplicates[path + (key,)] = (None, None)
    return Document(source, "json", (root,), {}, duplicates)


def _bounded(root: Any) -> None:
    """Refuse a parsed tree deeper than DEPTH or larger than VALUES (iteratively)."""
    stack, count = [(root, 1)], 0
    while stack:
        value, depth = stack.pop()
        count += 1
        if depth > DEPTH:
            raise _Refused(f"nested deeper than {DEPTH} levels")
        if count > VALUES:
            raise _Refused(f"more than {VALUES:,} values")
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)


# -- YAML ----------------------------------------------------------------------------------


class _Composer(yaml.SafeLoader):
    """PyYAML's safe loader, composing nodes no deeper than DEPTH (its composer recurses)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.depth = 0

    def compose_node(self, parent: Node | None, index: object) -> Node:
        self.depth += 1
        try:
            if self.depth > DEPTH:
                mark = self.peek_event().start_mark
                raise _Refused(f"nested deeper than {DEPTH} levels", mark.line + 1)
            return super().compose_node(parent, index)  # type: ignore[no-any-return]
        finally:
            self.depth -= 1


def _yaml(text: str, source: str) -> Document:
    loader = _Composer(text)
    try:
        nodes: list[Node] = []
        while loader.check_node():
            if len(nodes) == DOCUMENTS:
                raise _Refused(f"more than {DOCUMENTS} YAML documents")
            nodes.append(loader.get_node())
        builder = _Builder(loader)
        roots = tuple(builder.build(node, (i,), 1) for i, node in enumerate(nodes))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or "not YAML"
        raise _Refused(
            f"does not parse as YAML: {problem}", mark.line + 1 if mark is not None else None
        ) from None
    finally:
        loader.dispose()
    if not roots:
        roots = (None,)
    return Document(source, "yaml", roots, builder.lines if nodes else {}, builder.twice)


class _Builder:
    """Composed YAML nodes into plain values, aliases expanded within the VALUES budget."""

    def __init__(self, loader: _Composer) -> None:
        self.loader = loader
        self.count = 0
        self.open: set[int] = set()  # the nodes being built: an alias to one is a cycle
        self.lines: dict[KeyPath, int] = {}
        self.twice: dict[KeyPath, tuple[int | None, ...]] = {}

    def build(self, node: Node, path: KeyPath, depth: int) -> Any:
        line = node.start_mark.line + 1
        self.count += 1
        if self.count > VALUES:
            raise _Refused(f"more than {VALUES:,} values once its aliases are expanded", line)
        if depth > DEPTH:
            raise _Refused(f"nested deeper than {DEPTH} levels once its aliases are expanded", line)
        if isinstance(node, ScalarNode):
            return self.scalar(node)
        if id(node) in self.open:
            raise _Refused("an alias that contains itself", line)
        self.open.add(id(node))
        try:
            if isinstance(node, SequenceNode):
                for i, item in enumerate(node.value):
                    self.lines[path + (i,)] = item.start_mark.line + 1
                return [
                    self.build(item, path + (i,), depth + 1) for i, item in enumerate(node.value)
                ]
            assert isinstance(node, MappingNode)
            return self.mapping(node, path, depth)
        finally:
            self.open.discard(id(node))

    def mapping(self, node: MappingNode, path: KeyPath, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        merged: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == MERGE:  # `<<: *defaults`: its keys, unless given here
                for source in self._merged(value_node):
                    for key, value in self.build(source, path, depth).items():
                        merged.setdefault(key, value)
                continue
            if not isinstance(key_node, ScalarNode):
                raise _Refused("a key that is not a plain name", key_node.start_mark.line + 1)
            key = key_node.value
            line = key_node.start_mark.line + 1
            if key in result:
                first = self.twice.get(path + (key,), (self.lines.get(path + (key,)),))
                self.twice[path + (key,)] = first + (line,)
            self.lines[path + (key,)] = line
            result[key] = self.build(value_node, path + (key,), depth + 1)
        return {**merged, **result}

    def _merged(self, node: Node) -> list[Node]:
        if isinstance(node, MappingNode):
            return [node]
        if isinstance(node, SequenceNode) and all(isinstance(n, MappingNode) for n in node.value):
            return list(node.value)
        raise _Refused("a merge (<<) of something other than mappings", node.start_mark.line + 1)

    def scalar(self, node: ScalarNode) -> Any:
        if node.tag.endswith((":int", ":float")) and len(node.value) > DIGITS:
            raise _Refused(
                f"a number of {len(node.value)} digits, more than any setting has",
                node.start_mark.line + 1,
            )
        return self.loader.construct_object(node, deep=True)

"""Hostile input never gets a traceback: mutated trace files for `replay` and `explain`, and
random command lines, end with exit 0, 1, 2 or 3 as documented (2 with one line on stderr)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leadercheck.checker.app.main import main

ROOT = Path(__file__).resolve().parents[1]
TRACES = sorted((ROOT / "counterexamples").glob("*.json"))[:6]

# Values a mutation may put anywhere: every JSON type, and the shapes that broke the loader.
ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.just(int("9" * 60)),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.builds(list),  # fresh objects: a later mutation may change them in place
    st.builds(dict),
    st.builds(lambda: json.loads("[" * 200 + "]" * 200)),
)


def _paths(doc: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [here]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*here, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*here, i))
    return out


def _mutate(doc: Any, data: st.DataObject) -> Any:
    """One random mutation: a key deleted, a value replaced, a list truncated, or nesting."""
    paths = _paths(doc)
    path = data.draw(st.sampled_from(paths), label="path")
    how = data.draw(st.sampled_from(["delete", "replace", "truncate", "nest"]), label="how")
    if not path:
        return data.draw(ODD) if how == "replace" else [doc]
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if how == "delete":
        del parent[last]
    elif how == "replace":
        parent[last] = data.draw(ODD, label="value")
    elif how == "truncate" and isinstance(parent[last], list):
        parent[last] = parent[last][: data.draw(st.integers(0, 2))]
    else:
        parent[last] = [[parent[last]]]
    return doc


def _both(text: bytes) -> list[Result]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.json"
        path.write_bytes(text)
        runner = CliRunner()
        return [runner.invoke(main, [cmd, str(path)]) for cmd in ("replay", "explain")]


def _documented(result: Result, allowed: tuple[int, ...]) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    assert result.exit_code in allowed, result.output
    if result.exit_code == 2:
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
        assert "Traceback" not in result.output


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), which=st.sampled_from(TRACES), times=st.integers(1, 3))
def test_mutated_trace_files(data: st.DataObject, which: Path, times: int) -> None:
    doc = json.loads(which.read_text())
    for _ in range(times):
        doc = _mutate(doc, data)
    replayed, explained = _both(json.dumps(doc).encode())
    _documented(replayed, (0, 1, 2))
    _documented(explained, (0, 2))
    if replayed.exit_code == 2:  # the same validation for both
        assert explained.exit_code == 2


@settings(max_examples=30, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_as_a_trace_file(blob: bytes) -> None:
    for result in _both(blob):
        _documented(result, (2,))


def test_oversized_deep_and_huge_files_are_refused_in_one_line() -> None:
    for text in ("[" * 100_000 + "]" * 100_000, '{"schema": ' + "9" * 5000 + "}"):
        for result in _both(text.encode()):
            _documented(result, (2,))
    runner = CliRunner()
    for cmd in ("replay", "explain"):
        _documented(runner.invoke(main, [cmd, "/dev/zero"]), (2,))


OPTIONS = {
    "--protocol": st.sampled_from(["lease-fencing", "raft", "nope", "", "raft-election"]),
    "--nodes": st.sampled_from(["0", "3", "99", "x", "-1", "\u0663"]),
    "-p": st.sampled_from(["ttl=2", "ttl=", "=2", "nodes=3", "ttl=1_0", "zz=1", "x"]),
    "--max-depth": st.sampled_from(["0", "2", "-1", "z"]),
    "--max-memory": st.sampled_from(["1", "64M", "lots", "1" * 60, "0"]),
    "--workers": st.sampled_from(["1", "2", "0"]),
    "--engine": st.sampled_from(["bfs", "processes", "warp"]),
    "--diagram": st.sampled_from(["sequence", "state-graph", "x"]),
    "--without": st.sampled_from(["one-vote-per-term", "nothing"]),
}
FLAGS = ["--symmetry", "--por", "--json", "--stats", "--list", "--check-golden", "--debug"]


@settings(max_examples=40, deadline=None)
@given(
    chosen=st.lists(st.sampled_from(sorted(OPTIONS)), max_size=4, unique=True),
    flags=st.lists(st.sampled_from(FLAGS), max_size=3, unique=True),
    data=st.data(),
)
def test_random_command_lines(chosen: list[str], flags: list[str], data: st.DataObject) -> None:
    args = [a for name in chosen for a in (name, data.draw(OPTIONS[name], label=name))]
    with tempfile.TemporaryDirectory() as tmp:
        # A state bound keeps every search short; the output goes to a scratch directory.
        line = [*args, *flags, "--max-states", "300", "--out", tmp]
        result = CliRunner().invoke(main, line)
    if "--debug" in flags and result.exit_code == 2:
        return  # --debug adds the traceback on purpose
    _documented(result, (0, 1, 2, 3))

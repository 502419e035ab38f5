"""`verify` end to end through click's runner: exit codes, output lines, files written."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest
from click.testing import CliRunner, Result

from leadercheck.checker import Action, Model
from leadercheck.checker.app.main import main
from leadercheck.models.catalogue import PROTOCOLS
from leadercheck.models.cluster import Storage
from leadercheck.models.params import ProtocolEntry

ROOT = Path(__file__).resolve().parents[1]


def verify(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_lease_no_fencing_is_violated_and_writes_the_trace(tmp_path: Path) -> None:
    result = verify("--protocol", "lease-no-fencing", "--out", str(tmp_path))
    assert result.exit_code == 1
    out = result.stdout
    assert re.search(r"no-stale-write\s+VIOLATED\s+counterexample of 10 steps", out)
    assert re.search(r"single-leader\s+HOLDS", out)
    assert " 10  n1 -> storage: write (token 1 accepted)" in out
    assert "78,245 distinct states" in out and "depth 21" in out
    doc = json.loads((tmp_path / "lease-no-fencing.json").read_text())
    assert doc["schema"] == "leadercheck.trace/1"
    assert doc["length"] == 10 and len(doc["steps"]) == 11
    assert doc["steps"][0]["action"] is None
    assert doc["steps"][10]["state"]["storage"] == {"hi_epoch": 2, "stale_write_accepted": True}
    dot = (tmp_path / "lease-no-fencing.dot").read_text()
    assert "no-stale-write broken" in dot and "#c0392b" in dot
    if shutil.which("dot"):
        assert (tmp_path / "lease-no-fencing.svg").read_text().lstrip().startswith("<?xml")


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_lease_fencing_holds_and_prints_statistics(tmp_path: Path) -> None:
    out_dir = tmp_path / "never-created"
    result = verify("--protocol", "lease-fencing", "--out", str(out_dir))
    assert result.exit_code == 0
    assert re.search(r"no-stale-write\s+HOLDS", result.stdout)
    assert "75,455 distinct states, 381,252 generated, depth 20" in result.stdout
    assert "verdict: HOLDS" in result.stdout
    assert not out_dir.exists()


def test_heartbeat_two_leaders_under_a_partition(tmp_path: Path) -> None:
    result = verify("--protocol", "heartbeat-no-quorum", "--out", str(tmp_path))
    assert result.exit_code == 1
    assert "network: partition ({n1} | {n2, n3}, 2 in flight lost)" in result.stdout
    assert "n1 and n2 are both leader at the same time" in result.stdout
    names = sorted(p.name for p in tmp_path.iterdir())
    assert "heartbeat-no-quorum.json" in names
    assert "heartbeat-no-quorum.no-stale-write.json" in names


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_json_output_is_one_object_with_the_documented_keys(tmp_path: Path) -> None:
    result = verify("--protocol", "lease-no-fencing", "--out", str(tmp_path), "--json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc["protocol"] == "lease-no-fencing"
    assert doc["params"]["ttl"] == 2
    assert doc["verdict"] == "VIOLATED"
    by_name = {p["name"]: p for p in doc["properties"]}
    assert by_name["no-stale-write"]["verdict"] == "VIOLATED"
    assert by_name["no-stale-write"]["trace_length"] == 10
    assert by_name["no-stale-write"]["trace_file"] == str(tmp_path / "lease-no-fencing.json")
    assert "trace_file" not in by_name["single-leader"]
    stats = doc["stats"]
    for key in (
        "distinct_states",
        "generated_states",
        "depth",
        "seconds",
        "states_per_second",
        "peak_memory_bytes",
    ):
        assert key in stats
    assert stats["distinct_states"] == 78_245 and stats["generated_states"] == 393_144


def test_parameters_and_nodes_shorthand(tmp_path: Path) -> None:
    result = verify(
        "--protocol",
        "lease-no-fencing",
        "--nodes",
        "2",
        "-p",
        "ttl=3",
        "-p",
        "crashes=0",
        "--out",
        str(tmp_path),
        "--json",
    )
    doc = json.loads(result.stdout)
    assert doc["params"]["nodes"] == 2 and doc["params"]["ttl"] == 3
    assert doc["properties"][0]["trace_length"] == 11


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--protocol", "lease-fenc"],
            "unknown protocol 'lease-fenc' (did you mean 'lease-fencing'?)",
        ),
        (
            ["--protocol", "lease-fencing", "-p", "tll=2"],
            "unknown parameter 'tll' (did you mean 'ttl'?)",
        ),
        (["--protocol", "lease-fencing", "-p", "ttl=9"], "ttl=9 is out of range 1..5"),
        (["--protocol", "lease-fencing", "-p", "ttl=two"], "must be an integer, got 'two'"),
        (["--protocol", "lease-fencing", "-p", "ttl"], "-p expects NAME=VALUE"),
        (["--protocol", "lease-fencing", "--nodes", "9"], "nodes=9 is out of range 2..5"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str, tmp_path: Path) -> None:
    result = verify(*args, "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr
    assert result.stdout == ""
    assert not (tmp_path / "out").exists()


def test_unwritable_out_fails_before_searching(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = verify("--protocol", "lease-no-fencing", "--out", str(blocker / "sub"))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: cannot write to {blocker / 'sub'}")
    assert result.stdout == ""


def test_missing_protocol_is_a_usage_error() -> None:
    result = verify()
    assert result.exit_code == 2
    assert "give --protocol NAME" in result.stderr


def test_list_shows_protocols_parameters_and_expectations() -> None:
    result = verify("--list")
    assert result.exit_code == 0
    for name in ("lease-fencing", "lease-no-fencing", "heartbeat-no-quorum"):
        assert f"{name}: " in result.stdout
    assert re.search(r"-p ttl=2\s+range 1..5", result.stdout)
    assert "expected: no-stale-write VIOLATED, single-leader HOLDS" in result.stdout


def test_bounds_give_incomplete_and_exit_3(tmp_path: Path) -> None:
    result = verify("--protocol", "lease-fencing", "--max-states", "500", "--out", str(tmp_path))
    assert result.exit_code == 3
    assert "500 distinct states" in result.stdout and "verdict: INCOMPLETE" in result.stdout
    result = verify("--protocol", "lease-fencing", "--max-depth", "4", "--json")
    assert result.exit_code == 3
    assert json.loads(result.stdout)["stats"]["depth"] == 4


def test_without_dot_the_json_and_dot_are_still_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = verify("--protocol", "heartbeat-no-quorum", "--out", str(tmp_path))
    assert result.exit_code == 1
    assert "no SVG: Graphviz `dot` not found: install Graphviz" in result.stdout
    names = {p.name for p in tmp_path.iterdir()}
    assert {"heartbeat-no-quorum.json", "heartbeat-no-quorum.dot"} <= names
    assert "heartbeat-no-quorum.svg" not in names


class _Count(NamedTuple):
    value: int
    storage: Storage = Storage()
    nodes: tuple[()] = ()

    def leaders(self) -> tuple[tuple[int, int | None], ...]:
        return ()


class _Exploding(Model[_Count]):
    def initial_states(self) -> list[_Count]:
        return [_Count(0)]

    def successors(self, state: _Count) -> Iterator[tuple[Action, _Count]]:
        if state.value == 2:
            raise KeyError("missing node")
        yield Action("step", "n1", None, f"to {state.value + 1}"), _Count(state.value + 1)


def test_an_exception_in_a_model_is_reported_with_its_trace(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """One line on the terminal; the trace that led to the failing state in a file."""
    broken = ProtocolEntry("lease-fencing", "explodes", (), lambda: _Exploding())
    monkeypatch.setitem(PROTOCOLS, "lease-fencing", broken)
    result = verify("--protocol", "lease-fencing", "--out", str(tmp_path))
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert "model raised KeyError in successors after 2 steps" in result.stderr
    written = tmp_path / "lease-fencing.model-error.json"
    assert f"the trace that led there: {written}" in result.stderr
    doc = json.loads(written.read_text())
    assert doc["schema"] == "leadercheck.model-error/1" and doc["length"] == 2
    assert [step["text"] for step in doc["steps"]][1:] == ["n1: step (to 1)", "n1: step (to 2)"]
    assert "model raised KeyError" in doc["error"]


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_same_command_gives_byte_identical_files(tmp_path: Path) -> None:
    for run in ("a", "b"):
        verify("--protocol", "lease-no-fencing", "--out", str(tmp_path / run))
    for suffix in ("json", "dot", "svg"):
        a = tmp_path / "a" / f"lease-no-fencing.{suffix}"
        if a.exists():
            assert a.read_bytes() == (tmp_path / "b" / f"lease-no-fencing.{suffix}").read_bytes()


@pytest.mark.slow  # every size of raft's and bully's measures: 7 s
def test_stats_reports_the_protocols_measures(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from dataclasses import replace

    from leadercheck.models.bully import WORST_ELECTION
    from leadercheck.models.catalogue import PROTOCOLS

    small = replace(PROTOCOLS["bully"], measures=(replace(WORST_ELECTION, sizes=(3, 4)),))
    monkeypatch.setitem(PROTOCOLS, "bully", small)
    result = verify("--protocol", "bully", "--stats", "--json", "--out", str(tmp_path))
    (table,) = json.loads(result.stdout)["measures"]
    assert [(r["nodes"], r["worst"], r["best"]) for r in table["rows"]] == [(3, 7, 2), (4, 17, 3)]
    text = verify("--protocol", "bully", "--stats", "--out", str(tmp_path)).stdout
    assert "messages per election after the coordinator crashes" in text
    assert re.search(r"^\s+4\s+17\s+3\s+10\.00\s+6\s+155\s", text, re.MULTILINE)

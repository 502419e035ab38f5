"""`verify` engine options: reductions, memory bound, workers and engine choice."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import leadercheck.checker.app.bench as bench
from leadercheck.checker.app.check import measures
from leadercheck.checker.app.main import main
from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.io.sizes import parse_size
from leadercheck.checker.render.report import MeasureTable
from leadercheck.models.catalogue import PROTOCOLS

RAFT_4 = ["--protocol", "raft-election", "-p", "N=4", "-p", "NC=3", "-p", "MaxTerm=2"]


def verify(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_symmetry_reports_fewer_states_and_says_so(tmp_path: Path) -> None:
    plain = json.loads(verify(*RAFT_4, "--json", "--out", str(tmp_path)).stdout)
    reduced = verify(*RAFT_4, "--symmetry", "--out", str(tmp_path))
    assert reduced.exit_code == 0
    assert "search: symmetry (states counted are orbit representatives)" in reduced.stdout
    found = re.search(r"([\d,]+) distinct states", reduced.stdout)
    assert found is not None
    assert plain["stats"]["distinct_states"] == 78_850
    assert int(found.group(1).replace(",", "")) == 13_345
    assert plain["search"] == "plain"


def test_symmetric_counterexample_is_written_and_replays(tmp_path: Path) -> None:
    args = [*RAFT_4, "-p", "variant=noquorum", "--symmetry", "--out", str(tmp_path)]
    result = verify(*args)
    assert result.exit_code == 1
    assert re.search(r"single-leader\s+VIOLATED\s+counterexample of 8 steps", result.stdout)
    replayed = verify("replay", str(tmp_path / "raft-election.json"))
    assert replayed.exit_code == 1, replayed.stdout  # the violation reproduces


def test_memory_bound_stops_incomplete_with_statistics(tmp_path: Path) -> None:
    result = verify("--protocol", "raft-election", "--max-memory", "1M", "--out", str(tmp_path))
    assert result.exit_code == 3
    assert "INCOMPLETE  memory bound reached" in result.stdout
    assert "(memory bound reached)" in result.stdout
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-memory", "lots"], "memory size 'lots'"),
        (["--address", "127.0.0.1:6379"], "--address needs --engine ray"),
        (
            ["--all", "--symmetry", "--check-golden"],
            "golden counterexamples come from the unreduced",
        ),
        (["--all", "--por", "--update-golden"], "golden counterexamples come from the unreduced"),
    ],
)
def test_engine_usage_errors(args: list[str], message: str) -> None:
    result = verify("--protocol", "raft-election", *args) if "--all" not in args else verify(*args)
    assert result.exit_code == 2
    assert message in result.output


@pytest.mark.parametrize(
    ("text", "size"), [("512M", 512 << 20), ("8G", 8 << 30), ("1.5GiB", 3 << 29), ("4096", 4096)]
)
def test_sizes(text: str, size: int) -> None:
    assert parse_size(text) == size


def test_zero_size_is_refused() -> None:
    with pytest.raises(LeadercheckError, match="must be positive"):
        parse_size("0")


@pytest.mark.parametrize(
    "engine",
    [
        ("--workers", "2"),
        pytest.param(("--engine", "ray", "--workers", "2"), marks=pytest.mark.slow),
    ],
    ids=["2-processes", "ray"],
)
def test_partitioned_engines_give_the_same_report(tmp_path: Path, engine: tuple[str, ...]) -> None:
    args = ["--protocol", "raft-volatile-vote", "--json"]
    plain = json.loads(verify(*args, "--out", str(tmp_path / "plain")).stdout)
    other = verify(*args, *engine, "--out", str(tmp_path / "other"))
    assert other.exit_code == 1
    doc = json.loads(other.stdout)
    assert [p["verdict"] for p in doc["properties"]] == [p["verdict"] for p in plain["properties"]]
    assert doc["search"].endswith("2 worker processes") or doc["search"] == "ray, 2 worker(s)"
    mine = (tmp_path / "other" / "raft-volatile-vote.json").read_bytes()
    assert mine == (tmp_path / "plain" / "raft-volatile-vote.json").read_bytes()


def test_por_with_several_workers_is_refused() -> None:
    result = verify("--protocol", "lease-fencing", "--por", "--workers", "2")
    assert result.exit_code == 2
    assert "partial-order reduction needs one worker" in result.output


def test_message_cost_prints_both_tables_and_draws_the_plot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def small(name: str) -> list[MeasureTable]:  # N = 3, 4 only: seconds
        protocol = PROTOCOLS[name]
        shrunk = [replace(m, sizes=tuple(s for s in m.sizes if s <= 4)) for m in protocol.measures]
        return measures(replace(protocol, measures=tuple(shrunk)))

    monkeypatch.setattr(bench, "cost_tables", small)
    plot = tmp_path / "cost.svg"
    result = verify("message-cost", "--plot", str(plot))
    assert result.exit_code == 0, result.output
    assert re.search(r"^\s+3\s+7\s+2\s+4\.67", result.stdout, re.M)  # bully N=3: worst 7
    assert re.search(r"^\s+4\s+12\s+6\s+10\.50", result.stdout, re.M)  # raft N=4: worst 12
    assert plot.read_text().lstrip().startswith("<?xml")


def test_the_ray_strategy_without_ray_says_which_extra_brings_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Ray is the `ray` extra (the light install has no Ray): one line before any work."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a)
    )
    result = verify("--protocol", "raft", "--strategy", "ray", "--out", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: --strategy ray needs Ray, which leadercheck's `ray` extra installs: "
        ".venv/bin/pip install -e '.[ray]'"
    ]
    assert not (tmp_path / "o").exists()

"""`verify bench`: the benchmark runner's output, on a small stand-in case (no timing asserts)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from leadercheck.checker.app.benchmarks.timed import CASES, BenchCase
from leadercheck.checker.app.main import main
from leadercheck.models.catalogue import PROTOCOLS


def test_every_benchmark_names_a_protocol_and_its_parameters() -> None:
    for case in CASES:
        protocol = PROTOCOLS[case.protocol]
        protocol.resolve(dict(case.params))  # raises on an unknown or out-of-range parameter


@pytest.mark.slow  # 5 s of timed runs; the benchmark's counts are checked in the default set
def test_bench_reports_counts_speed_and_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    small = BenchCase("lease-no-fencing", (("nodes", "2"), ("pauses", "0")))
    monkeypatch.setattr("leadercheck.checker.app.bench.CASES", (small,))
    result = CliRunner().invoke(main, ["bench", "--repeat", "1", "--search", "bfs", "--json"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["benchmarks"]
    assert row["model"] == "lease-no-fencing" and row["params"] == {"nodes": "2", "pauses": "0"}
    assert row["distinct_states"] > 0 and row["generated_states"] >= row["distinct_states"]
    for key in ("depth", "seconds", "states_per_second", "peak_memory_bytes", "bytes_per_state"):
        assert key in row
    text = CliRunner().invoke(main, ["bench", "--repeat", "1", "--search", "bfs"]).stdout
    assert text.splitlines()[0].split()[:4] == ["model", "and", "size", "search"]
    assert "lease-no-fencing nodes=2 pauses=0" in text


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_bench_reports_the_reduction_factor_of_symmetry(monkeypatch: pytest.MonkeyPatch) -> None:
    small = BenchCase("raft-election", (("N", "3"), ("NC", "3"), ("MaxTerm", "2")))
    monkeypatch.setattr("leadercheck.checker.app.bench.CASES", (small,))
    args = ["bench", "--repeat", "1", "--search", "bfs", "--search", "bfs+symmetry", "--json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    plain, symmetric = json.loads(result.stdout)["benchmarks"]
    assert (plain["search"], plain["distinct_states"], plain["reduction"]) == ("bfs", 1588, 1.0)
    assert (symmetric["search"], symmetric["distinct_states"]) == ("bfs+symmetry", 288)
    assert symmetric["reduction"] == round(1588 / 288, 2)


def test_bench_of_an_unknown_model_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["bench", "--only", "nothing"])
    assert result.exit_code == 2 and "no benchmark of model 'nothing'" in result.stderr


@pytest.mark.slow  # a dozen short runs in fresh processes; CI runs it
def test_bench_of_the_sampled_strategies_on_small_stand_ins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        "leadercheck.checker.app.benchmarks.sampled.FIND_AT", (("raft-no-quorum", 4),)
    )
    monkeypatch.setattr(
        "leadercheck.checker.app.benchmarks.sampled.SHORTEST_AT", (("raft-no-quorum", 3),)
    )
    small = (("N", "3"), ("NC", "3"), ("MaxTerm", "2"))
    monkeypatch.setattr("leadercheck.checker.app.benchmarks.sampled.BITSTATE_SIZES", {False: small})
    result = CliRunner().invoke(main, ["bench", "--sampled", "--seeds", "2", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    found = {(r["protocol"], r["search"]): r for r in doc["time_to_violation"]}
    assert set(found) == {("raft-no-quorum", "simulate"), ("raft-no-quorum", "swarm of 2")}
    assert all(len(r["seconds"]) + r["missed"] == 2 for r in found.values())
    for row in doc["shortening"]:  # within 2 steps of the shortest: the goal
        assert row["shortest"] <= row["shortened"] <= min(row["found"], row["shortest"] + 2)
    assert doc["bitstate"]["exhaustive_states"] == doc["bitstate"]["bitstate_states"] == 1588


def test_bench_sampled_runs_its_own_models() -> None:
    result = CliRunner().invoke(main, ["bench", "--sampled", "--only", "raft-election"])
    assert result.exit_code == 2
    assert "--sampled runs its own models and searches" in result.output

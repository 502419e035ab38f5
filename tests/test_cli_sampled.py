"""`verify --strategy simulate|bitstate` and `--swarm K`: reports, exit codes, files,
refusals, and gate cases judged by a sampled strategy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from leadercheck.checker import LeadercheckError
from leadercheck.checker.app.main import main
from leadercheck.checker.result import Verdict
from leadercheck.specs.expectations import expectations_from, load_expectations

NO_QUORUM_4 = ["--protocol", "raft-no-quorum", "--nodes", "4"]
RAFT_ELECTION_SMALL = ["--protocol", "raft-election", "-p", "N=3", "-p", "NC=3", "-p", "MaxTerm=2"]


def verify(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_simulation_reports_a_shortened_violation_and_its_coverage(tmp_path: Path) -> None:
    result = verify(*NO_QUORUM_4, "--strategy", "simulate", "--out", str(tmp_path))
    assert result.exit_code == 1, result.output
    out = result.stdout
    assert "simulation: seed 1; " in out and " walks of at most 100 steps" in out
    assert "(found with " in out and ", shortened)" in out
    assert "(stopped at the first violation)" in out
    assert "verdict: VIOLATED" in out
    written = sorted(p.name for p in tmp_path.iterdir())
    assert "raft-no-quorum.json" in written
    trace = json.loads((tmp_path / "raft-no-quorum.json").read_text())
    assert trace["found_by"]["strategy"] == "simulate" and trace["found_by"]["seed"] == 1
    assert trace["found_by"]["found_length"] >= trace["length"]  # how to find it again
    replayed = verify("replay", str(tmp_path / "raft-no-quorum.json"))
    assert replayed.exit_code == 1, replayed.stdout  # the violation reproduces


def test_json_carries_the_coverage_and_both_lengths(tmp_path: Path) -> None:
    args = [*NO_QUORUM_4, "--strategy", "simulate", "--seed", "4", "--json", "--out", str(tmp_path)]
    doc = json.loads(verify(*args).stdout)
    assert doc["coverage"]["strategy"] == "simulate" and doc["coverage"]["seed"] == 4
    violated = [p for p in doc["properties"] if p["verdict"] == "VIOLATED"]
    assert violated and all(p["found_length"] >= p["trace_length"] for p in violated)
    assert doc["search"] == "random walks"
    again = json.loads(verify(*args).stdout)
    assert again["properties"] == doc["properties"]  # the same seed, the same traces


def test_a_sampled_search_of_a_safe_protocol_is_incomplete_never_holds(tmp_path: Path) -> None:
    args = ["--protocol", "lease-fencing", "--strategy", "simulate", "--walks", "40"]
    result = verify(*args, "--json", "--out", str(tmp_path))
    assert result.exit_code == 3
    doc = json.loads(result.stdout)
    assert doc["verdict"] == "INCOMPLETE" and doc["end"] == "budget"
    kinds = {p["name"]: (p["kind"], p["verdict"]) for p in doc["properties"]}
    assert kinds["single-leader"] == ("always", "INCOMPLETE")
    assert kinds["no-stale-write"] == ("always", "INCOMPLETE")
    assert all(v != "HOLDS" for k, v in kinds.values() if k != "sometimes")
    assert not list(tmp_path.iterdir())  # no counterexample: nothing written
    text = verify(*args, "--out", str(tmp_path)).stdout
    assert "a sampled search never shows that a claim holds" in text
    assert "verdict: INCOMPLETE" in text


def test_bitstate_reports_its_bit_array_and_collision_estimate(tmp_path: Path) -> None:
    result = verify(*RAFT_ELECTION_SMALL, "--strategy", "bitstate", "--out", str(tmp_path))
    assert result.exit_code == 3
    out = result.stdout
    assert "1,588 distinct states, 9,769 generated" in out  # every state: the reference counts
    assert "bitstate: seed 1; a bit array of 64 MiB (2^29 bits, 3 per state)" in out
    assert "estimated share of states a collision may have skipped: at most " in out
    assert "(every state the bit array let through explored)" in out
    small = verify(*RAFT_ELECTION_SMALL, "--strategy", "bitstate", "--memory", "100", "--json")
    doc = json.loads(small.stdout)
    assert doc["coverage"]["bits"] == 512  # 100 bytes, down to a power of two: 64
    assert doc["coverage"]["estimated_omitted_share"] > 0.1  # a full array says so
    assert doc["stats"]["distinct_states"] < 1588


def test_a_swarm_writes_the_same_counterexample_every_time(tmp_path: Path) -> None:
    runs = []
    for k in range(2):
        out = tmp_path / str(k)
        result = verify(*NO_QUORUM_4, "--swarm", "2", "--out", str(out))
        assert result.exit_code == 1, result.output
        assert "a swarm of 2 diversified workers" in result.stdout
        assert "search: a swarm of 2 diversified random-walk searches" in result.stdout
        runs.append({p.name: p.read_bytes() for p in out.iterdir()})
    assert runs[0] == runs[1] and runs[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--walks", "5"], "--walks is an option of --strategy simulate"),
        (["--memory", "1M"], "--memory is an option of --strategy bitstate"),
        (
            ["--strategy", "simulate", "--memory", "1M"],
            "--memory is an option of --strategy bitstate, not simulate",
        ),
        (
            ["--strategy", "bitstate", "--depth", "5"],
            "--depth is an option of --strategy simulate, not bitstate",
        ),
        (["--strategy", "bitstate", "--walks", "5"], "--walks is an option of --strategy simulate"),
        (["--strategy", "simulate", "--max-depth", "5"], "a walk's length is --depth D"),
        (["--swarm", "2", "--strategy", "bfs"], "--swarm runs sampled searches"),
        (["--swarm", "2", "--workers", "3"], "--swarm 2 and --workers 3: give one"),
        (["--strategy", "simulate", "--symmetry"], "--symmetry applies to the exhaustive searches"),
        (["--strategy", "bitstate", "--exact"], "--exact applies to the exhaustive searches"),
        (
            ["--strategy", "simulate", "--checkpoint", "cp"],
            "a sampled one is run again from its --seed",
        ),
        (["--strategy", "bitstate", "--memory", "lots"], "memory size 'lots'"),
        (
            ["--strategy", "bitstate", "--memory", "1G", "--max-memory", "512M"],
            "do not fit under --max-memory",
        ),
        (
            ["--swarm", "4", "--strategy", "bitstate", "--memory", "256M", "--max-memory", "1G"],
            "4 x 268,435,456 bytes",
        ),
        (["--strategy", "simulate", "--walks", "0"], "--walks"),
        (["--strategy", "simulate", "--time", "0"], "--time"),
        (["--swarm", "0"], "--swarm"),
        (["--swarm", "65"], "--swarm"),
        (["--strategy", "simulate", "--workers", "65"], "runs at most 64 workers, not 65"),
    ],
)
def test_sampling_options_are_refused_where_they_mean_nothing(
    args: list[str], message: str, tmp_path: Path
) -> None:
    result = verify("--protocol", "raft-election", *args, "--out", str(tmp_path / "out"))
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1  # one line
    assert not (tmp_path / "out").exists() and not Path("cp").exists()


def test_the_gate_judges_each_case_with_its_own_strategy() -> None:
    result = verify("--all", "--strategy", "simulate")
    assert result.exit_code == 2
    assert "--all judges each protocol with the strategy specs/ names" in result.output


# -- gate cases in the expectations --------------------------------------------


def test_the_catalogue_gate_has_sampled_cases_at_five_nodes() -> None:
    cases = load_expectations().cases
    case = cases["raft-volatile-vote nodes=5"]
    assert case.protocol == "raft-volatile-vote" and case.params == (("nodes", "5"),)
    assert case.judged_by is not None and case.judged_by.strategy == "simulate"
    assert case.file_stem == "raft-volatile-vote@nodes=5"
    assert cases["raft-volatile-vote"].judged_by is None


SAMPLED = {"name": "simulate", "walks": 10}


def _table(**section: object) -> dict[str, object]:
    return {"raft nodes=5": {"leader-elected": "HOLDS", **section}}


@pytest.mark.parametrize(
    ("section", "message"),
    [
        (
            {"strategy": SAMPLED, "single-leader": "HOLDS"},
            "a sampled search never shows that a claim holds",
        ),
        ({"single-leader": "INCOMPLETE"}, "INCOMPLETE only with a sampled strategy"),
        ({"strategy": {"name": "simulate"}}, "give walks = N"),
        ({"strategy": {"name": "simulate", "walks": 5, "time": 3}}, "not time"),
        ({"strategy": {"name": "simulate", "walks": 5, "memory": "1M"}}, "unknown key 'memory'"),
        ({"strategy": {"name": "dfs"}}, 'name must be "simulate" or "bitstate"'),
        ({"strategy": {"name": "bitstate", "memory": "big"}}, "memory size 'big'"),
        ({"strategy": {"name": "simulate", "walks": 0}}, "walks must be an integer of at least 1"),
        ({"strategy": "simulate"}, "strategy must be a table"),
    ],
)
def test_bad_gate_cases_are_refused_in_one_line(section: dict[str, object], message: str) -> None:
    with pytest.raises(LeadercheckError, match=message.replace("(", r"\(")):
        expectations_from(_table(**section), "expected.toml")


def test_a_section_names_a_protocol_then_its_settings() -> None:
    with pytest.raises(LeadercheckError, match="'nodes' is not name=value"):
        expectations_from({"raft nodes": {"leader-elected": "HOLDS"}}, "expected.toml")
    found = expectations_from(_table(strategy=SAMPLED, **{"single-leader": "INCOMPLETE"}), "x")
    assert found.expected("raft nodes=5")["single-leader"] is Verdict.INCOMPLETE


def test_a_gate_case_at_other_parameters_runs_with_its_strategy(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("leadercheck.checker.app.gate.gate_names", lambda: ["raft-no-quorum"])
    result = verify("--all", "--out", str(tmp_path))
    assert result.exit_code == 0, result.stdout
    assert "raft-no-quorum nodes=5" in result.stdout
    assert "(judged by simulation, seed 1, 2,000 walks of at most 100 steps)" in result.stdout
    assert (tmp_path / "raft-no-quorum@nodes=5.json").exists()
    replayed = verify("replay", str(tmp_path / "raft-no-quorum@nodes=5.json"))
    assert replayed.exit_code == 1, replayed.stdout  # the violation reproduces


def test_an_exhaustive_search_that_does_not_fit_points_to_the_sampled_ones(tmp_path: Path) -> None:
    result = verify(
        "--protocol", "raft", "--nodes", "5", "--max-states", "500", "--out", str(tmp_path)
    )
    assert result.exit_code == 3
    assert "hint: the state space does not fit; --strategy simulate (or --swarm K)" in result.stdout
    assert result.stdout.rstrip().endswith("verdict: INCOMPLETE")

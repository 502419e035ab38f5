"""Every bound reaches every phase: protocols with a liveness claim under tight bounds end
INCOMPLETE (exit 3) with statistics for the search and the fair-cycle phase, or VIOLATED
(exit 1) only with a real lasso found inside the bound; never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from leadercheck.checker.app.main import main
from leadercheck.checker.engine.compiled import NOTE

LIVENESS = {
    "raft": "leader-recovers",
    "even-quorum": "leader-eventually",
    "bully": "leadership-settles",
    "bully-flapping": "leadership-settles",
}
BOUNDS = (("--max-states", "100"), ("--max-depth", "2"), ("--max-memory", "20M"))


@pytest.mark.parametrize("bound", BOUNDS, ids=lambda b: b[0])
@pytest.mark.parametrize("protocol", sorted(LIVENESS))
def test_a_bound_stops_every_phase(protocol: str, bound: tuple[str, str], tmp_path: Path) -> None:
    args = ["--protocol", protocol, *bound, "--json", "--out", str(tmp_path)]
    result = CliRunner().invoke(main, args)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    doc = json.loads(result.stdout)
    live = next(p for p in doc["properties"] if p["name"] == LIVENESS[protocol])
    phases = {ph["name"]: ph for ph in doc["stats"]["phases"]}
    assert set(phases) == {"search", "fair cycles"}
    assert phases["search"]["end"] == bound[0][2:].replace("-", "_")
    if bound[0] == "--max-states":
        assert phases["search"]["distinct_states"] <= 100
    if live["verdict"] == "VIOLATED":  # a lasso inside the bound is a real one
        assert protocol == "even-quorum" and bound[0] != "--max-memory"
        assert result.exit_code == 1 and live["trace_length"] == 2
    else:
        assert live["verdict"] == "INCOMPLETE"
        assert doc["verdict"] in ("INCOMPLETE", "VIOLATED")
        assert result.exit_code == (1 if doc["verdict"] == "VIOLATED" else 3)


def test_the_report_lists_each_phase(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["--protocol", "bully-flapping", "--max-depth", "3", "--out", str(tmp_path)]
    )
    assert result.exit_code == 3, result.stdout
    lines = result.stdout.splitlines()
    assert any(line.startswith("  search: ") and "(depth bound reached)" in line for line in lines)
    assert any(line.startswith("  fair cycles: ") and "(all judged)" in line for line in lines)
    assert "leadership-settles  INCOMPLETE  depth bound reached" in result.stdout


def test_reductions_judge_liveness_unreduced_and_say_why(tmp_path: Path) -> None:
    plain = CliRunner().invoke(
        main, ["--protocol", "even-quorum", "--json", "--out", str(tmp_path)]
    )
    reduced = CliRunner().invoke(
        main, ["--protocol", "even-quorum", "--symmetry", "--json", "--out", str(tmp_path)]
    )
    a, b = json.loads(plain.stdout), json.loads(reduced.stdout)
    assert [p["verdict"] for p in a["properties"]] == [p["verdict"] for p in b["properties"]]
    assert a["notes"] == []
    # the reduced search of the safety claims goes through even-quorum's compiled kernel
    # where numba is installed, and says so
    assert b["notes"][-1] == (
        "liveness judged by a second search, unreduced and in one process: "
        "symmetry and partial-order reduction do not keep fair cycles"
    )
    assert b["notes"][:-1] in ([], [NOTE])
    assert [ph["name"] for ph in b["stats"]["phases"]] == ["search", "search", "fair cycles"]


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_a_bound_cuts_the_measures_too_and_says_so(tmp_path: Path) -> None:
    """--stats runs a search per size: each obeys the state bound, and a cut one makes the
    run incomplete (exit 3) even where the verdicts hold."""
    args = ["--protocol", "lease-renewal", "--stats", "--json", "--out", str(tmp_path)]
    whole = CliRunner().invoke(main, args)
    doc = json.loads(whole.stdout)
    assert whole.exit_code == 0 and doc["verdict"] == "HOLDS" and doc["measures"]
    sizes = [row["distinct_states"] for t in doc["measures"] for row in t["rows"] if row]
    bound = max(sizes) - 1
    cut = CliRunner().invoke(main, [*args, "--max-states", str(bound)])
    assert cut.exit_code == 3, cut.output
    rows = [row for t in json.loads(cut.stdout)["measures"] for row in t["rows"]]
    assert all(row["distinct_states"] <= bound for row in rows if "distinct_states" in row)
    assert any(row.get("end") == "state bound reached" for row in rows)

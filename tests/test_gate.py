"""`verify --all`: the regression gate over the whole catalogue and its failure modes."""

from __future__ import annotations

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from leadercheck.checker import always, check, sometimes
from leadercheck.checker.app.main import main
from leadercheck.checker.gate.cases import GateCase, judge
from leadercheck.checker.result import Verdict
from leadercheck.models.catalogue import PROTOCOLS
from leadercheck.models.cluster import ClusterState, FaultBounds
from leadercheck.models.cluster.base import Successor
from leadercheck.models.lease import LEASE_PARAMS, LeaseModel, _builder
from leadercheck.models.params import ProtocolEntry
from leadercheck.specs.expectations import load_expectations
from tests.toys import Counter

ROOT = Path(__file__).resolve().parents[1]
PROTOCOLS_PAGE = ROOT / "docs" / "protocols.md"  # the verdict table, rewritten by --readme
TINY = str(ROOT / "tests" / "user_models" / "tiny_lock.py")


def verify(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def full_gate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Result, Path, Path]:
    """One run of the whole gate, checking the committed goldens and the manual's verdict table
    (docs/protocols.md, between its verdicts markers)."""
    tmp = tmp_path_factory.mktemp("gate")
    readme = tmp / "protocols.md"
    shutil.copyfile(PROTOCOLS_PAGE, readme)
    junit = tmp / "junit.xml"
    result = verify(
        "--all",
        "--check-golden",
        "--out",
        str(ROOT / "counterexamples"),
        "--junit",
        str(junit),
        "--readme",
        str(readme),
    )
    return result, junit, readme


@pytest.mark.slow  # the whole gate (about 30 s); CI also runs it as a step of its own
def test_every_protocol_matches_its_expectations(full_gate: tuple[Result, Path, Path]) -> None:
    result, _, _ = full_gate
    assert result.exit_code == 0, result.stdout
    assert "gate: PASS" in result.stdout
    listed = [line.split()[0] for line in result.stdout.splitlines()[2:] if line[:1].isalpha()]
    assert list(dict.fromkeys(listed))[: len(PROTOCOLS)] == list(PROTOCOLS)  # cases follow


@pytest.mark.slow  # the whole gate (about 30 s); CI also runs it as a step of its own
def test_junit_has_one_case_per_protocol_and_property(full_gate: tuple[Result, Path, Path]) -> None:
    _, junit, _ = full_gate
    suite = ET.parse(junit).getroot()
    cases = suite.findall("testcase")
    assert suite.get("failures") == "0"
    assert ("lease-no-fencing", "no-stale-write") in {
        (c.get("classname"), c.get("name")) for c in cases
    }
    assert len({c.get("classname") for c in cases}) == len(load_expectations().cases)


@pytest.mark.slow  # the whole gate (about 30 s); CI also runs it as a step of its own
def test_verdict_table_is_generated_by_the_tool(full_gate: tuple[Result, Path, Path]) -> None:
    """Rewrite it with `verify --all --readme docs/protocols.md` after a change to verdicts or
    counts."""
    _, _, regenerated = full_gate
    assert regenerated.read_text() == PROTOCOLS_PAGE.read_text()


# -- failure modes, on a small catalogue ----------------------------------------------


class _NeverWrites(LeaseModel):
    """A lease model whose leaders never write: no-stale-write would hold vacuously."""

    def node_steps(self, s: ClusterState, i: int) -> Iterator[Successor]:
        return (step for step in super().node_steps(s, i) if step[0].name != "write")


def _only(monkeypatch: pytest.MonkeyPatch, *names: str, **replaced: ProtocolEntry) -> None:
    """Run the gate on `names` alone, with some catalogue entries replaced."""
    monkeypatch.setattr("leadercheck.checker.app.gate.gate_names", lambda: list(names))
    for name, entry in replaced.items():
        monkeypatch.setitem(PROTOCOLS, name, entry)


def _unfenced_lease_fencing() -> ProtocolEntry:
    return ProtocolEntry("lease-fencing", "broken", LEASE_PARAMS, _builder(fencing=False))


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_a_broken_edit_fails_the_gate_with_a_clear_message(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Dropping the token check in lease-fencing flips no-stale-write: the gate names it."""
    _only(monkeypatch, "lease-fencing", **{"lease-fencing": _unfenced_lease_fencing()})
    result = verify("--all", "--out", str(tmp_path))
    assert result.exit_code == 1
    assert "gate: FAIL (1 difference)" in result.stdout
    assert (
        "lease-fencing no-stale-write: expected HOLDS, got VIOLATED (counterexample of 10 steps)"
        in result.stdout
    )


def test_a_model_where_nothing_is_written_does_not_pass_silently(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def build(nodes: int, ttl: int, tokens: int, check: int = 0, **faults: int) -> LeaseModel:
        return _NeverWrites(nodes, ttl, tokens, True, FaultBounds(**faults))

    entry = ProtocolEntry("lease-fencing", "never writes", LEASE_PARAMS, build)
    _only(monkeypatch, "lease-fencing", **{"lease-fencing": entry})
    result = verify("--all", "--json", "--out", str(tmp_path))
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc["gate"] == "FAIL"
    assert (
        "lease-fencing no-stale-write: HOLDS vacuously: witness write-accepted never reached"
        in doc["findings"]
    )
    assert "lease-fencing write-accepted: expected HOLDS, got VIOLATED" in doc["findings"]


def test_json_summary_lists_each_protocol_and_property(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _only(monkeypatch, "heartbeat-no-quorum")
    result = verify("--all", "--json", "--out", str(tmp_path))
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["gate"] == "PASS" and doc["findings"] == []
    (entry,) = doc["protocols"]
    assert entry["protocol"] == "heartbeat-no-quorum"
    first = entry["properties"][0]
    assert first == {
        "name": "single-leader",
        "kind": "always",
        "expected": "VIOLATED",
        "got": "VIOLATED",
        "max_steps": 6,
        "trace_length": 6,
        "ok": True,
        "findings": [],
    }
    assert not any(tmp_path.iterdir())  # --json writes no files


def test_golden_check_shows_the_difference(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _only(monkeypatch, "heartbeat-no-quorum")
    golden = tmp_path / "golden"
    assert verify("--all", "--update-golden", "--out", str(golden)).exit_code == 0
    assert verify("--all", "--check-golden", "--out", str(golden)).exit_code == 0
    edited = golden / "heartbeat-no-quorum.json"
    edited.write_text(edited.read_text().replace('"length": 6', '"length": 5'))
    (golden / "heartbeat-no-quorum.old.json").write_text("{}")
    result = verify("--all", "--check-golden", "--out", str(golden))
    assert result.exit_code == 1
    assert f"golden {edited} differs from a fresh run:" in result.stdout
    assert '-  "length": 5,' in result.stdout and '+  "length": 6,' in result.stdout
    assert "heartbeat-no-quorum.old.json is stale" in result.stdout
    result = verify("--all", "--update-golden", "--out", str(golden))
    assert "updated 2 file(s)" in result.stdout
    assert verify("--all", "--check-golden", "--out", str(golden)).exit_code == 0


def test_a_max_steps_bound_is_enforced(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    spec = tmp_path / "expected.toml"
    spec.write_text(
        '[heartbeat-no-quorum]\nsingle-leader = { verdict = "VIOLATED", max_steps = 5 }\n'
        'failover = "HOLDS"\n'
    )
    _only(monkeypatch, "heartbeat-no-quorum")
    monkeypatch.setattr(
        "leadercheck.checker.app.common.load_expectations", lambda: load_expectations(spec)
    )
    result = verify("--all", "--out", str(tmp_path / "out"))
    assert result.exit_code == 1
    assert (
        "heartbeat-no-quorum single-leader: counterexample of 6 steps, longer than the expected 5"
        in result.stdout
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--junit", "x.xml"], "--junit needs --all"),
        (["--all", "--protocol", "raft"], "--all runs every protocol at its defaults"),
        (["--all", "--check-golden", "--update-golden"], "exclude each other"),
    ],
)
def test_gate_usage_errors(args: list[str], message: str) -> None:
    result = verify(*args)
    assert result.exit_code == 2
    assert message in result.stderr


@dataclass(frozen=True)
class Expect:
    prop: str
    verdict: Verdict
    max_steps: int | None = None


def test_findings_say_one_step_and_a_witness_is_reached() -> None:
    props = [always("below-1", lambda x: x < 1), sometimes("two", lambda x: x == 2)]
    expected = [Expect("below-1", Verdict.HOLDS), Expect("two", Verdict.VIOLATED)]
    case = GateCase("counter", {}, lambda: Counter(4), props, expected)
    findings = [f for row in judge(case, check(Counter(4), props)) for f in row.findings]
    assert findings == [
        "counter below-1: expected HOLDS, got VIOLATED (counterexample of 1 step)",
        "counter two: expected VIOLATED, got HOLDS (reached in 1 step)",
    ]


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=gate", "-c", "user.email=gate@example.com",
         "-c", "commit.gpgsign=false", *args],
        capture_output=True, text=True, check=False,
    )  # fmt: skip


@pytest.mark.skipif(shutil.which("git") is None, reason="git tells committed files apart")
def test_a_golden_file_git_does_not_track_is_not_committed_rather_than_stale(
    tmp_path: Path,
) -> None:
    """A file another command left in --out (the tutorial run from the root once did) was
    never committed: the gate says so, and keeps `stale` for a committed one no run makes."""
    repo, golden = tmp_path / "repo", tmp_path / "repo" / "golden"
    assert _git(tmp_path, "init", "-q", str(repo)).returncode == 0
    golden.mkdir()
    (golden / "tiny-lock-old.json").write_text("{}")
    assert _git(repo, "add", "golden").returncode == 0
    assert _git(repo, "commit", "-q", "-m", "golden").returncode == 0
    verify("--all", "--model", TINY, "--update-golden", "--out", str(golden))
    (golden / "tiny-lock-old.json").write_text("{}")  # update-golden removed it: put it back
    (golden / "tiny-lock-racy.old.svg").write_text("<svg/>")  # never committed
    result = verify("--all", "--model", TINY, "--check-golden", "--out", str(golden))
    assert result.exit_code == 1, result.output
    assert "gate: FAIL (2 differences)" in result.stdout
    assert (
        f"golden {golden / 'tiny-lock-racy.old.svg'} is not committed: git does not track it "
        "and no run produces it" in result.stdout
    )
    assert f"golden {golden / 'tiny-lock-old.json'} is stale: no run produces it any more" in (
        result.stdout
    )
    assert "tiny-lock-racy.old.svg is stale" not in result.stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="git is asked, and must say no")
def test_outside_a_git_work_tree_a_file_no_run_produces_is_stale(tmp_path: Path) -> None:
    if _git(tmp_path, "rev-parse", "--is-inside-work-tree").returncode == 0:
        pytest.skip("the temporary directory is inside a git work tree here")
    golden = tmp_path / "golden"
    assert verify("--all", "--model", TINY, "--update-golden", "--out", str(golden)).exit_code == 0
    (golden / "tiny-lock-old.json").write_text("{}")  # no run produces it
    result = verify("--all", "--model", TINY, "--check-golden", "--out", str(golden))
    assert result.exit_code == 1
    assert f"golden {golden / 'tiny-lock-old.json'} is stale: no run produces it any more" in (
        result.stdout
    )
    assert "not committed" not in result.stdout

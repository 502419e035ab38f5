"""docs/ci.md's jobs, run as a user's pipeline runs them: the commands between its
`ci-commands` markers, in a fresh clone of this repository, against a small user module.

The install step is the one substitution (the page says so): the `verify` this test suite runs
under is put first on PATH instead. Each job must pass (exit 0) on the module as it is, with a
JUnit report of one test case per protocol and claim and the counterexamples in the artifact
directory; with one expected verdict changed it must fail (exit 1) with that one failure
reported and the counterexamples still kept for the artifact step.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "ci.md"
HOOKS = ROOT / ".pre-commit-hooks.yaml"
USER_MODEL = Path("tests") / "user_models" / "tiny_lock.py"  # in the clone
EXPECTED_CASES = {  # tiny_lock.py's EXPECTED: one test case per protocol and claim
    ("tiny-lock", "mutual-exclusion"),
    ("tiny-lock", "entered"),
    ("tiny-lock-racy", "mutual-exclusion"),
    ("tiny-lock-racy", "entered"),
}
COUNTEREXAMPLE = "tiny-lock-racy"  # the claim expected VIOLATED leaves its trace files
EXPECTED_VIOLATED = '"mutual-exclusion": {"verdict": "VIOLATED", "max_steps": 4}'

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="the jobs run in a git clone")


def _block(name: str) -> Any:
    """The YAML between `<!-- ci-commands:begin NAME -->` and its end marker, parsed."""
    text = PAGE.read_text()
    found = re.search(
        rf"<!-- ci-commands:begin {name} -->\n```yaml\n(.*?)```\n<!-- ci-commands:end {name} -->",
        text,
        flags=re.DOTALL,
    )
    assert found, f"docs/ci.md has no {name} block between ci-commands markers"
    return yaml.safe_load(found.group(1))


def _github() -> tuple[list[str], dict[str, str], dict[str, Any]]:
    """The GitHub job's commands (its install step left out), its env, and its steps by name."""
    job = _block("github")["jobs"]["gate"]
    steps = job["steps"]
    runs = [s for s in steps if "run" in s]
    assert [s["name"] for s in runs][0] == "Install leadercheck"
    assert "pip install" in runs[0]["run"]
    named = {s.get("name", s.get("uses", "")): s for s in steps}
    return [s["run"] for s in runs[1:]], job.get("env", {}), named


def _gitlab() -> tuple[list[str], dict[str, str], dict[str, Any]]:
    job = _block("gitlab")["leadercheck-gate"]
    assert any("pip install" in line for line in job["before_script"])  # the install step
    return list(job["script"]), job.get("variables", {}), job


def _gate_argv(commands: list[str]) -> list[str]:
    (gate,) = [c for c in commands if c.startswith("verify --all")]
    return shlex.split(gate)


def _option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def _clone(tmp_path: Path, expected_violated: str = EXPECTED_VIOLATED) -> Path:
    """A fresh clone of this repository with the user module where the page puts it."""
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "--quiet", str(ROOT), str(clone)],
        check=True, capture_output=True, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    module = (clone / USER_MODEL).read_text()
    assert EXPECTED_VIOLATED in module
    (clone / "leader_election.py").write_text(module.replace(EXPECTED_VIOLATED, expected_violated))
    return clone


def _run(commands: list[str], env: dict[str, str], cwd: Path) -> int:
    """Each command as the job's shell runs it (bash -e); the first failure's code, else 0."""
    installed = str(Path(sys.executable).parent)  # where this suite's `verify` is
    environ = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    environ.update({k: str(v) for k, v in env.items()})
    environ["PATH"] = installed + os.pathsep + environ.get("PATH", "")
    for command in commands:
        done = subprocess.run(
            ["bash", "-eo", "pipefail", "-c", command],
            cwd=cwd, env=environ, capture_output=True, text=True, stdin=subprocess.DEVNULL,
            timeout=300,
        )  # fmt: skip
        assert "Traceback" not in done.stderr, done.stderr
        if done.returncode != 0:
            return done.returncode
    return 0


def _junit(path: Path) -> tuple[set[tuple[str, str]], list[ET.Element]]:
    suite = ET.parse(path).getroot()
    cases = suite.findall("testcase")
    assert suite.get("tests") == str(len(cases))
    failures = [f for c in cases for f in c.findall("failure")]
    assert suite.get("failures") == str(len(failures))
    return {(c.get("classname", ""), c.get("name", "")) for c in cases}, failures


def _counterexamples(directory: Path) -> set[str]:
    wanted = {f"{COUNTEREXAMPLE}.json", f"{COUNTEREXAMPLE}.dot", f"{COUNTEREXAMPLE}.html"}
    if shutil.which("dot") is not None:
        wanted.add(f"{COUNTEREXAMPLE}.svg")
    present = {p.name for p in directory.iterdir()}
    assert "index.html" in present  # --html: the page that links every protocol
    return wanted - present


def test_the_report_and_artifact_steps_keep_what_the_gate_writes_whatever_it_exits() -> None:
    commands, _, steps = _github()
    argv = _gate_argv(commands)
    out, junit = _option(argv, "--out"), _option(argv, "--junit")
    assert _option(argv, "--html") == out  # pages beside the counterexamples, one artifact
    report, artifact = steps["Test report"], steps["Keep the counterexamples"]
    assert report["with"]["report_paths"] == junit and report["if"] == "always()"
    assert artifact["with"]["path"].rstrip("/") == out and artifact["if"] == "always()"
    script, _, job = _gitlab()
    assert _gate_argv(script) == argv  # one gate, two CI systems
    assert job["artifacts"]["when"] == "always"
    assert job["artifacts"]["reports"]["junit"] == junit
    assert [p.rstrip("/") for p in job["artifacts"]["paths"]] == [out]


@pytest.mark.parametrize("ci", ["github", "gitlab"])
def test_the_documented_job_gates_a_user_module(ci: str, tmp_path: Path) -> None:
    commands, env, _ = _github() if ci == "github" else _gitlab()
    argv = _gate_argv(commands)
    assert _option(argv, "--model") == "leader_election.py"
    out, junit = _option(argv, "--out"), _option(argv, "--junit")

    clone = _clone(tmp_path / "as-expected")
    assert _run(commands, env, clone) == 0
    cases, failures = _junit(clone / junit)
    assert cases == EXPECTED_CASES and failures == []
    assert _counterexamples(clone / out) == set()

    # A verdict other than the module expects: exit 1, one failure, the trace still kept.
    clone = _clone(tmp_path / "differs", '"mutual-exclusion": "HOLDS"')
    assert _run(commands, env, clone) == 1
    cases, failures = _junit(clone / junit)
    assert cases == EXPECTED_CASES
    assert [f.get("message") for f in failures] == [
        "tiny-lock-racy mutual-exclusion: expected HOLDS, got VIOLATED (counterexample of 4 steps)"
    ]
    assert _counterexamples(clone / out) == set()


def test_the_pre_commit_hook_runs_the_gate_with_the_documented_arguments(tmp_path: Path) -> None:
    (hook,) = yaml.safe_load(HOOKS.read_text())
    assert hook["id"] == "leadercheck-gate"
    assert hook["language"] == "python" and hook["pass_filenames"] is False
    (entry,) = [
        h
        for repo in _block("pre-commit")["repos"]
        for h in repo["hooks"]
        if h["id"] == "leadercheck-gate"
    ]
    assert re.search(entry["files"], "leader_election.py")
    command = shlex.join(shlex.split(hook["entry"]) + entry["args"])
    assert command.startswith("verify --all --model leader_election.py")
    out = _option(entry["args"], "--out")

    clone = _clone(tmp_path / "as-expected")
    assert _run([command], {}, clone) == 0
    assert {f"{COUNTEREXAMPLE}.json", f"{COUNTEREXAMPLE}.dot"} <= {
        p.name for p in (clone / out).iterdir()
    }
    clone = _clone(tmp_path / "differs", '"mutual-exclusion": "HOLDS"')
    assert _run([command], {}, clone) == 1
    # without its arguments the hook refuses to run rather than gating the built-in catalogue
    assert _run([hook["entry"]], {}, clone) == 2


def test_the_page_says_how_it_is_tested() -> None:
    text = " ".join(PAGE.read_text().split())
    assert "tests/test_ci_docs.py" in text
    assert "the install step (GitHub's `Install leadercheck`, GitLab's `before_script`)" in text

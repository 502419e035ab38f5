"""User code at the process boundary: whatever a model does at import or in a hook, the run
ends with a documented exit code and one line, stdout stays the report, and a real Ctrl-C,
twice, still ends in 3.

Each case is a real `verify` process on a generated model module (tests/user_models'
tiny lock with one hostile act planted at one place), so `sys.exit`, `os._exit` and
output on file descriptor 1 are what they would be for a user.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import run_interrupted

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "tests" / "user_models"
VERIFY = [sys.executable, "-m", "leadercheck.checker.app"]
TIMEOUT = 120

HOSTILE = """
import os, sys
sys.path.insert(0, {models!r})
import tiny_lock
from leadercheck.checker import always
from leadercheck.models.params import ProtocolEntry

WHERE, ACT = {where!r}, {act!r}


def hit():
    {act}


if WHERE == "import":
    hit()


class Hostile(tiny_lock.TinyLock):
    def __init__(self, procs, atomic):
        if WHERE == "builder":
            hit()
        super().__init__(procs, atomic)

    def initial_states(self):
        if WHERE == "initial_states":
            hit()
        return super().initial_states()

    def successors(self, s):
        if WHERE == "successors" and s.holder:
            hit()
        yield from super().successors(s)


def calm(s):
    if WHERE == "claim" and s.holder:
        hit()
    return len(tiny_lock._inside(s)) <= 1


PROTOCOLS = (
    ProtocolEntry("tiny-lock", "a lock", (tiny_lock.PROCS,), lambda procs: Hostile(procs, True)),
)
PROPERTIES = (always("calm", calm, "at most one inside"), tiny_lock.entered)
EXPECTED = {{"tiny-lock": {{"calm": "HOLDS", "entered": "HOLDS"}}}}
"""

EXITS = {
    "sys.exit(0)": "sys.exit(0)",
    "sys.exit(1)": "sys.exit(1)",
    "raise SystemExit(0)": "raise SystemExit(0)",
    "os._exit(0)": "os._exit(0)",
    # raised by the model's own code: `exec` of it would make CPython end the process by
    # SIGINT at exit whatever the exit code (an unhandled KeyboardInterrupt in exec'd code)
    "raise KeyboardInterrupt": "raise KeyboardInterrupt",
    "raise GeneratorExit": "raise GeneratorExit",
    "raise ValueError": "raise ValueError('the model is wrong')",
}
PRINTS = "print('model says hi'); os.write(1, b'raw bytes on fd 1\\n')"
WHERES = ("import", "builder", "initial_states", "successors", "claim")
COMMANDS = {
    "check --json": ["--protocol", "tiny-lock", "--json"],
    "check": ["--protocol", "tiny-lock"],
    "gate": ["--all"],
    "gate --json": ["--all", "--json"],
    "workers": ["--protocol", "tiny-lock", "--workers", "2", "--json"],
    "simulate": ["--protocol", "tiny-lock", "--strategy", "simulate", "--walks", "50"],
}


def _model(tmp: Path, where: str, act: str) -> Path:
    path = tmp / f"hostile_{abs(hash((where, act))) % 10**8}.py"
    path.write_text(HOSTILE.format(models=str(MODELS), where=where, act=act))
    return path


def _verify(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [*VERIFY, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT
    )


def _ends_as_a_model_error(done: subprocess.CompletedProcess[str], what: str) -> None:
    assert done.returncode == 2, (what, done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    lines = [line for line in done.stderr.splitlines() if not line.startswith("warning:")]
    assert len(lines) == 1, done.stderr
    if "--json" in done.args:  # nothing, or the report: never what the model printed
        assert done.stdout.strip() == "" or json.loads(done.stdout)


@pytest.mark.parametrize(
    "act",  # one exit and one raise in the default set; the rest in the slow one
    [
        a if a in ("sys.exit(1)", "raise ValueError") else pytest.param(a, marks=pytest.mark.slow)
        for a in EXITS
    ],
)
def test_a_model_that_exits_at_import_is_a_model_error(act: str, tmp_path: Path) -> None:
    model = _model(tmp_path, "import", EXITS[act])
    for command in ("check --json", "gate"):
        done = _verify(["--model", str(model), *COMMANDS[command]], tmp_path)
        _ends_as_a_model_error(done, f"{act} at import, {command}")
    listed = _verify(["--model", str(model), "--list", "--json"], tmp_path)
    _ends_as_a_model_error(listed, f"{act} at import, --list")


HOOKS = ["builder", "initial_states", "successors", "claim"]
HOOK_ACTS = ["sys.exit(0)", "os._exit(0)", "raise KeyboardInterrupt"]


@pytest.mark.parametrize(
    ("where", "act"),  # every hook and every act in the default set, each pair in the slow one
    [
        (w, a) if (i - j) % len(HOOK_ACTS) == 0 else pytest.param(w, a, marks=pytest.mark.slow)
        for i, w in enumerate(HOOKS)
        for j, a in enumerate(HOOK_ACTS)
    ],
)
def test_a_model_that_exits_in_a_hook_is_a_model_error(
    where: str, act: str, tmp_path: Path
) -> None:
    model = _model(tmp_path, where, EXITS[act])
    done = _verify(["--model", str(model), *COMMANDS["check --json"], "--out", "o"], tmp_path)
    _ends_as_a_model_error(done, f"{act} in {where}")
    named = {"sys.exit(0)": ("sys.exit", "SystemExit"), "os._exit(0)": ("os._exit",)}
    assert any(word in done.stderr for word in named.get(act, ("KeyboardInterrupt",)))
    gate = _verify(["--model", str(model), "--all"], tmp_path)
    _ends_as_a_model_error(gate, f"{act} in {where}, --all")


@pytest.mark.parametrize(
    "command",
    [
        "check --json",
        *(pytest.param(c, marks=pytest.mark.slow) for c in ("gate --json", "workers")),
    ],
)
def test_what_a_model_prints_never_reaches_stdout(command: str, tmp_path: Path) -> None:
    for where in WHERES:
        model = _model(tmp_path, where, PRINTS)
        done = _verify(["--model", str(model), *COMMANDS[command]], tmp_path)
        assert done.returncode == 0, (where, done.stdout, done.stderr)
        doc = json.loads(done.stdout)  # one JSON object and nothing else
        assert doc, done.stdout
        assert "model says hi" in done.stderr or where != "import"


@pytest.mark.slow
@settings(
    max_examples=40, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)  # fmt: skip
@given(
    where=st.sampled_from(WHERES),
    act=st.sampled_from([*EXITS.values(), PRINTS]),
    command=st.sampled_from(list(COMMANDS)),
)
def test_any_hostile_act_anywhere_keeps_the_exit_code_contract(
    where: str, act: str, command: str, tmp_path: Path
) -> None:
    """Only the verdict the model earns (0; 3 for a sampled search, which never proves a
    claim) or 2 with one line; never 1, never a traceback, and with --json stdout is one
    JSON object or nothing."""
    model = _model(tmp_path, where, act)
    done = _verify(["--model", str(model), *COMMANDS[command], "--out", "o"], tmp_path)
    if act == PRINTS:  # the verdict expected: HOLDS, or a sampled search's INCOMPLETE
        assert done.returncode == (3 if command == "simulate" else 0), done.stderr
    else:
        _ends_as_a_model_error(done, f"{act} in {where}, {command}")
    if "--json" in COMMANDS[command] and done.stdout.strip():
        json.loads(done.stdout)


def test_ctrl_c_twice_still_ends_in_3(tmp_path: Path) -> None:
    """A second Ctrl-C 0.2 s after the first is absorbed during the wind-down: the process
    ends with exit 3 and its statistics, never by the signal (exit 130 or -2)."""
    done = run_interrupted(
        [*VERIFY, "--protocol", "raft", "--nodes", "5", "--progress", "--out",
         str(tmp_path / "o")], tmp_path, ready="progress:", again=0.2,
    )  # fmt: skip
    assert done.returncode == 3, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    assert "INCOMPLETE" in done.stdout


@pytest.mark.parametrize(
    "where", ["successors", *(pytest.param(w, marks=pytest.mark.slow) for w in ("import", "claim"))]
)
def test_a_model_that_loops_is_stopped_by_ctrl_c_with_exit_3(where: str, tmp_path: Path) -> None:
    """A loop is no error `verify` can see; the user's Ctrl-C ends it in 3, one line."""
    looping = 'print("looping", file=sys.stderr, flush=True); sum(0 for _ in iter(int, 1))'
    model = _model(tmp_path, where, looping)
    done = run_interrupted(
        [*VERIFY, "--model", str(model), "--protocol", "tiny-lock", "--json", "--out", "o"],
        tmp_path, ready="looping",
    )  # fmt: skip
    assert done.returncode == 3, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stdout.strip() == "" or json.loads(done.stdout)["verdict"] == "INCOMPLETE"


@pytest.mark.parametrize("golden", [False, True])
def test_the_gate_writes_a_model_error_s_trace_and_names_it(golden: bool, tmp_path: Path) -> None:
    """Under --all too, a model error is one line and its trace goes to a file: --out, or,
    when --out holds the golden files it must not change, a new temporary directory."""
    model = _model(tmp_path, "successors", EXITS["raise ValueError"])
    extra = ["--check-golden"] if golden else []
    done = _verify(["--model", str(model), "--all", "--out", "o", *extra], tmp_path)
    _ends_as_a_model_error(done, "ValueError in successors, --all")
    line = done.stderr.strip()
    assert "ValueError in successors" in line and "; the trace that led there: " in line
    path = Path(line.rsplit("; the trace that led there: ", 1)[1])
    trace = json.loads((tmp_path / path if not path.is_absolute() else path).read_text())
    assert trace["protocol"] == "tiny-lock"
    assert (path.parent == Path("o")) is not golden

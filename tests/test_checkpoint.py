"""--checkpoint / --resume: a search stopped by a bound, Ctrl-C or a crash goes on from its
last checkpoint and ends with the same counts, verdicts and trace files as one never stopped."""

from __future__ import annotations

import errno
import json
import os
import pickle
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from leadercheck.checker.app.main import main
from leadercheck.checker.engine.checkpoint import FILE, HEADER

ROOT = Path(__file__).resolve().parents[1]
RAFT_ELECTION = ["--protocol", "raft-election", "-p", "N=3", "-p", "NC=3", "-p", "MaxTerm=2"]
VOLATILE_VOTE = ["--protocol", "raft-volatile-vote"]
COUNTS = ("distinct_states", "generated_states", "transitions", "depth")


def run(*args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(main, [*args, "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, json.loads(result.stdout) if result.stdout.strip() else {}


def same_search(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a["verdict"] == b["verdict"]
    assert [p["verdict"] for p in a["properties"]] == [p["verdict"] for p in b["properties"]]
    for key in COUNTS:
        assert a["stats"][key] == b["stats"][key], key


def traces(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.glob("*.json"))}


@pytest.mark.parametrize(
    "protocol",
    [
        RAFT_ELECTION,
        pytest.param(VOLATILE_VOTE, marks=pytest.mark.slow),
        ["--protocol", "even-quorum"],
    ],
    ids=lambda p: p[1],
)
def test_a_bound_then_resume_gives_the_uninterrupted_result(
    protocol: list[str], tmp_path: Path
) -> None:
    whole_code, whole = run(*protocol, "--out", str(tmp_path / "whole"))
    states = whole["stats"]["distinct_states"]
    cp = tmp_path / "cp"
    common = [*protocol, "--checkpoint-every", "0"]
    cut_args = ["--checkpoint", str(cp), "--max-states", str(states // 3)]
    code, cut = run(*common, *cut_args, "--out", str(tmp_path / "cut"))
    assert cut["end"] == "max_states" and code in (1, 3)  # 1: a violation within the bound
    assert (cp / FILE).exists()
    code, resumed = run(*common, "--resume", str(cp), "--out", str(tmp_path / "resumed"))
    assert code == whole_code
    same_search(whole, resumed)
    assert traces(tmp_path / "resumed") == traces(tmp_path / "whole")


def _verify(args: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-c", "from leadercheck.checker.app.main import main; main()", *args]
    return subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


@pytest.mark.slow  # 818,626 states, twice: about 30 s
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "crash"])
def test_ctrl_c_or_a_crash_then_resume(how: signal.Signals, tmp_path: Path) -> None:
    big = ["--protocol", "raft-election", "-p", "N=4", "-p", "NC=4", "-p", "MaxTerm=2"]
    cp = tmp_path / "cp"
    proc = _verify([*big, "--checkpoint", str(cp), "--checkpoint-every", "0", "--json"])
    try:
        deadline = time.monotonic() + 60
        while not (cp / FILE).exists() or (cp / FILE).stat().st_size < 2_000_000:
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr
            time.sleep(0.1)
        proc.send_signal(how)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == (3 if how == signal.SIGINT else -signal.SIGKILL)
    if how == signal.SIGINT:
        assert json.loads(out)["verdict"] == "INCOMPLETE"
    code, resumed = run(*big, "--resume", str(cp), "--out", str(tmp_path / "out"))
    assert code == 0
    stats = resumed["stats"]
    assert (stats["distinct_states"], stats["generated_states"], stats["depth"]) == (
        818_626,
        11_651_709,
        16,
    )


def test_a_full_disk_keeps_the_last_checkpoint_and_the_search_going(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cp = tmp_path / "cp"
    code, first = run(*RAFT_ELECTION, "--checkpoint", str(cp), "--checkpoint-every", "0")
    good = (cp / FILE).read_bytes()

    def full(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with monkeypatch.context() as patched:
        patched.setattr("leadercheck.checker.engine.checkpoint.write", full)
        code2, second = run(*RAFT_ELECTION, "--checkpoint", str(cp), "--checkpoint-every", "0")
    assert code == code2 == 0
    same_search(first, second)
    assert any("No space left on device" in n for n in second["notes"])
    assert (cp / FILE).read_bytes() == good  # the last good one, whole
    assert not list(cp.glob("*.partial"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--resume", "{tmp}/none"], "no checkpoint there"),
        (["--resume", "{tmp}/foreign"], "the checkpoint is of another search (params differ)"),
        (["--resume", "{tmp}/corrupt"], "not a readable checkpoint"),
        (["--checkpoint", "{tmp}/cp", "--workers", "2"], "save the one-process search"),
    ],
    ids=["missing", "foreign", "corrupt", "workers"],
)
def test_bad_checkpoints_are_one_line_and_exit_2(
    args: list[str], message: str, tmp_path: Path
) -> None:
    foreign = ["--checkpoint", str(tmp_path / "foreign"), "--checkpoint-every", "0"]
    run("--protocol", "raft-election", "-p", "N=3", "-p", "NC=2", "-p", "MaxTerm=2", *foreign)
    (tmp_path / "corrupt").mkdir()
    (tmp_path / "corrupt" / FILE).write_bytes(b"not a pickle at all")
    line = [a.replace("{tmp}", str(tmp_path)) for a in args]
    result = CliRunner().invoke(main, [*RAFT_ELECTION, *line, "--out", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and message in result.stderr
    assert not (tmp_path / "o").exists()


class RunsCode:
    """Unpickling it creates `marker`: what a crafted pickled checkpoint could do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (str(self.marker), "w"))


def refused(args: list[str], tmp_path: Path) -> str:
    """`verify args` ends with one line on stderr and exit 2, having written nothing."""
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1, result.stderr
    assert not (tmp_path / "o").exists()
    return result.stderr


def test_a_pickled_checkpoint_that_would_run_code_is_refused_before_it_runs(
    tmp_path: Path,
) -> None:
    """A checkpoint is data: a pickle (what leadercheck wrote before, or a crafted one) is
    never loaded, so the code it names never runs."""
    marker, cp = tmp_path / "ran", tmp_path / "cp"
    cp.mkdir()
    doc = {"format": "leadercheck.checkpoint/2", "identity": {}, "store": RunsCode(marker)}
    (cp / FILE).write_bytes(pickle.dumps(doc, protocol=pickle.HIGHEST_PROTOCOL))
    stderr = refused([*RAFT_ELECTION, "--resume", str(cp)], tmp_path)
    assert f"--resume {cp / FILE}: not a readable checkpoint (a pickle" in stderr
    assert not marker.exists()
    pickle.loads((cp / FILE).read_bytes())  # the file does run code when unpickled
    assert marker.exists()


def _rewritten(path: Path, change: Any) -> None:
    with zipfile.ZipFile(path) as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    header = json.loads(entries[HEADER])
    change(header)
    entries[HEADER] = json.dumps(header).encode()
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)


@pytest.mark.parametrize(
    ("how", "says"),
    [
        ("class-not-loaded", "not a readable checkpoint (it names this.State, whose module"),
        ("not-a-value-type", "not a readable checkpoint (it names subprocess.Popen, which is"),
        ("truncated", "not a readable checkpoint (File is not a zip file)"),
        ("another-format", "not a leadercheck.checkpoint/3 checkpoint"),
    ],
)
def test_a_crafted_or_broken_checkpoint_is_refused_in_one_line(
    how: str, says: str, tmp_path: Path
) -> None:
    cp = tmp_path / "cp"
    code, _ = run(*RAFT_ELECTION, "--checkpoint", str(cp), "--max-states", "300")
    assert code == 3 and (cp / FILE).exists()
    path = cp / FILE
    if how == "class-not-loaded":  # `this` prints when imported: it must not be
        _rewritten(path, lambda h: h.update(classes=[["this", "State"]] * len(h["classes"])))
    elif how == "not-a-value-type":
        _rewritten(path, lambda h: h.update(classes=[["subprocess", "Popen"]]))
    elif how == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    else:
        _rewritten(path, lambda h: h.update(format="leadercheck.checkpoint/9"))
    stderr = refused([*RAFT_ELECTION, "--resume", str(cp)], tmp_path)
    assert says in stderr, stderr
    assert "this" not in sys.modules


RECORDS = ["--model", "tests/user_models/records_lock.py", "--protocol", "records-lock"]


@pytest.mark.parametrize("exact", [True, False], ids=["exact", "fingerprints"])
def test_a_user_model_of_records_enums_and_frozensets_resumes_to_the_same_result(
    exact: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nested frozen dataclasses (slots or a __dict__), a NamedTuple, an Enum, frozensets of
    records and of strings, bytes, None: saved as data, rebuilt from the classes the user's
    module defines, and the resumed search ends as one never stopped (liveness included)."""
    monkeypatch.chdir(ROOT)  # the model is named by its path, as given
    args = [*RECORDS, *(["--exact"] if exact else [])]
    whole_code, whole = run(*args, "--out", str(tmp_path / "whole"))
    assert whole_code == 0 and whole["stats"]["distinct_states"] == 375
    for bound in (1, 150, 374):
        cp = tmp_path / f"cp{bound}"
        every = ["--checkpoint-every", "0", "--max-states", str(bound)]
        code, cut = run(*args, "--checkpoint", str(cp), *every, "--out", str(tmp_path / "cut"))
        assert code == 3 and cut["end"] == "max_states", cut
        with zipfile.ZipFile(cp / FILE) as archive:
            names = {name for _, name in json.loads(archive.read(HEADER))["classes"]}
        if bound == 150:
            assert names == {"World", "Proc", "Phase", "Lock", "Stamp"}
        code, resumed = run(*args, "--resume", str(cp), "--out", str(tmp_path / "resumed"))
        assert code == whole_code
        same_search(whole, resumed)
        assert resumed["properties"] == whole["properties"]


def test_checkpoints_go_with_one_protocol() -> None:
    result = CliRunner().invoke(main, ["--all", "--checkpoint", "x"])
    assert (
        result.exit_code == 2
        and "--checkpoint goes with --protocol, not with --all" in result.stderr
    )


def _cli(args: list[str], extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONHASHSEED", "LEADERCHECK_PINNED_HASH")
    }
    env.update(extra or {})
    env["PYTHONPATH"] = str(ROOT)
    command = [sys.executable, "-c", "from leadercheck.checker.app.main import main; main()", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # raft three times: about 20 s
def test_states_with_strings_and_none_resume_in_a_new_process(tmp_path: Path) -> None:
    """raft's states hold strings and None, whose hashes differ between interpreters unless
    pinned: `verify` pins them itself, so a new process resumes to the same counts."""
    args = ["--protocol", "raft", "--json", "--out", str(tmp_path / "o")]
    whole = json.loads(_cli(args).stdout)
    cp = str(tmp_path / "cp")
    cut = _cli([*args, "--max-states", "50000", "--checkpoint", cp, "--checkpoint-every", "0"])
    assert cut.returncode in (1, 3), cut.stderr
    resumed = _cli([*args, "--resume", cp])
    assert resumed.returncode == 1, resumed.stderr
    same_search(whole, json.loads(resumed.stdout))


@pytest.mark.slow  # 2.5 s; test_checkpoint_stops' hash refusals stay
def test_a_process_that_hashes_differently_is_refused(tmp_path: Path) -> None:
    """A checkpoint from a pinned process, resumed in one where strings hash otherwise (a
    process already marked pinned, so `verify` does not re-pin it, with another hash seed):
    one line, exit 2, never a count built on fingerprints that mean something else. raft's
    states hold strings, whose hashes follow the seed on every CPython build (None's hash
    need not: a non-PIE build gives it the same address in every process)."""
    cp = tmp_path / "cp"
    args = ["--protocol", "raft", "--max-states", "2000"]
    cut = _cli([*args, "--checkpoint", str(cp), "--checkpoint-every", "0", "--out", str(tmp_path)])
    assert cut.returncode in (1, 3) and (cp / FILE).exists(), cut.stderr
    seeded = {"PYTHONHASHSEED": "1", "LEADERCHECK_PINNED_HASH": "1"}
    result = _cli(["--protocol", "raft", "--resume", str(cp), "--out", str(tmp_path)], seeded)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "hashes states differently" in result.stderr


LAZY_STATES = '''
"""The state record, imported by the model only when it builds one."""
from dataclasses import dataclass


@dataclass(frozen=True)
class Count:
    value: int
'''
LAZY_MODEL = '''
"""A model that imports its state class inside its builder, not at the top."""
from leadercheck.checker import Action, Model, always, sometimes
from leadercheck.models.params import Param, ProtocolEntry


class Counter(Model):
    def __init__(self, top):
        from lazy_states import Count

        self.top, self.Count = top, Count

    def initial_states(self):
        return [self.Count(0)]

    def successors(self, s):
        for step in (1, 2):
            if s.value + step <= self.top:
                yield Action(f"add-{step}", "c", None), self.Count(s.value + step)

    def describe(self, s):
        return {"c": {"value": s.value}}


PROTOCOLS = (ProtocolEntry("lazy", "counts", (Param("top", 40, 1, 99, "top"),), Counter),)
PROPERTIES = (
    always("bounded", lambda s: s.value <= 40, "it stays within 40"),
    sometimes("top", lambda s: s.value == 40, "it reaches 40"),
)
EXPECTED = {"lazy": {"bounded": "HOLDS", "top": "HOLDS"}}
'''


def test_a_model_that_imports_its_state_classes_when_built_resumes(tmp_path: Path) -> None:
    """The checkpoint is read once the model is built, so the classes it names are those
    the model has loaded by then, wherever it imports them (here: inside its builder)."""
    (tmp_path / "lazy_states.py").write_text(LAZY_STATES)
    model = tmp_path / "lazy_model.py"
    model.write_text(LAZY_MODEL)
    args = ["--model", str(model), "--protocol", "lazy", "--exact", "--json"]
    whole = _cli([*args, "--out", str(tmp_path / "w")])
    assert whole.returncode == 0, whole.stderr
    cp = str(tmp_path / "cp")
    cut = _cli([*args, "--out", str(tmp_path / "c"), "--max-states", "10", "--checkpoint", cp,
                "--checkpoint-every", "0"])  # fmt: skip
    assert cut.returncode == 3, cut.stderr
    resumed = _cli([*args, "--out", str(tmp_path / "r"), "--resume", cp])
    assert resumed.returncode == 0, resumed.stderr
    same_search(json.loads(whole.stdout), json.loads(resumed.stdout))

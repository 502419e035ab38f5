"""`verify config` as a user runs it: verdicts, exit codes, charts in seconds, the gate,
and every bad input one line, exit 2, nothing written."""

from __future__ import annotations

import json
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from leadercheck.checker.app.main import main
from tests.config.test_document import LAUGHS
from tests.helpers import ROOT, run_interrupted, special_path

FILES = Path(__file__).parent / "files"


def verify(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def test_safe_configuration_exits_0_with_its_margin(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = verify("config", FILES / "zoo.cfg", "--out", out, "--partition", "10s")
    assert result.exit_code == 0, result.output
    assert "SAFE      stale-leader: a pause up to 12.562 s keeps a single leader" in result.output
    assert "worst failover: 43 s from the leader's crash to a new leader" in result.output
    assert result.output.rstrip().endswith("verdict: SAFE")
    assert not out.exists() or not list(out.iterdir())  # nothing to draw


def test_the_report_names_each_knob_s_origin(tmp_path: Path) -> None:
    result = verify("config", FILES / "zoo.cfg", "--out", tmp_path)
    lines = result.output.splitlines()
    assert any(ln.split() == ["tickTime", "2", "s", "tickTime", "(line", "2)"] for ln in lines)
    assert any("maxSessionTimeout" in ln and "ZooKeeper's default, 20 ticks" in ln for ln in lines)
    verdict_lines = [ln for ln in lines if ln.startswith(("SAFE ", "UNSAFE ", "UNDECIDED "))]
    assert verdict_lines and all("(by default: " in ln for ln in verdict_lines[:1])


def test_unsafe_configuration_draws_its_chart_in_seconds(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = verify("config", FILES / "kube-controller-manager.yaml", "--out", out)
    assert result.exit_code == 1, result.output
    assert "UNSAFE    stale-leader: a pause of 10 s lets a deposed leader act" in result.output
    assert "raise --leader-elect-lease-duration from 15 s to at least 23 s" in result.output
    assert "keep the pause to at most 2.375 s" in result.output
    dot = (out / "kube-controller-manager.stale-leader.dot").read_text()
    assert "time: real time so far (a tick is 1 s)" in dot
    assert "t=15" not in dot  # the time column is in seconds, not ticks
    doc = json.loads((out / "kube-controller-manager.stale-leader.json").read_text())
    assert doc["tick_seconds"] == 1.0 and doc["protocol"] == "lease-timing"


def test_output_is_byte_identical_run_to_run(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    texts = []
    for out in (first, second):
        result = verify("config", FILES / "postgres0.yml", "--out", out)
        assert result.exit_code == 1
        texts.append(result.stdout)
    assert texts[0].replace(str(first), "OUT") == texts[1].replace(str(second), "OUT")
    names = sorted(p.name for p in first.iterdir())
    assert names == sorted(p.name for p in second.iterdir()) and len(names) >= 4
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_json_is_one_object(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["config", str(FILES / "postgres0.yml"), "--out", str(tmp_path), "--json"]
    )
    doc = json.loads(result.stdout)
    assert result.exit_code == 1
    assert doc["system"] == "patroni" and doc["verdict"] == "UNSAFE"
    assert doc["origins"]["ttl"] == "bootstrap.dcs.ttl (line 15)"
    assert "failsafe_mode" in doc["defaulted"] and doc["unreadable"] == []
    claims = {c["claim"]: c for c in doc["claims"]}
    assert claims["lost-ack-write"]["verdict"] == "UNSAFE"
    assert claims["stale-leader"]["region"][0].startswith("safe region (z3)")
    assert claims["stale-leader"]["model"]["protocol"] == "lease-timing"
    assert claims["false-failover"]["defaults"] == ["failsafe_mode off (Patroni's default)"]


def test_a_file_with_several_elections_judges_each(tmp_path: Path) -> None:
    text = (
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\n"
        "controllerManager:\n  extraArgs:\n    leader-elect-lease-duration: 30s\n"
        "scheduler:\n  extraArgs:\n    leader-elect: 'false'\n"
    )
    config = tmp_path / "kubeadm.yaml"
    config.write_text(text)
    result = verify("config", config, "--out", tmp_path / "out", "--json")
    doc = json.loads(result.stdout)
    assert doc["program"] == "kube-controller-manager"  # the scheduler elects no leader
    assert any("elects no leader" in n for n in doc["notes"])
    both = text.replace("leader-elect: 'false'", "leader-elect-renew-deadline: 5s")
    config.write_text(both)
    result = verify("config", config, "--out", tmp_path / "out", "--json")
    doc = json.loads(result.stdout)
    assert [e["program"] for e in doc["elections"]] == ["kube-controller-manager", "kube-scheduler"]
    assert doc["verdict"] == "UNSAFE" and result.exit_code == 1


def test_environment_options_override_the_file(tmp_path: Path) -> None:
    config = FILES / "kube-controller-manager.yaml"
    for drift, margin in (("0", "3 s"), ("5%", "2.4 s")):
        options = ["--pause", "2s", "--clock-drift", drift, "--dcs-latency", "0"]
        result = verify("config", config, *options, "--out", tmp_path)
        assert f"a pause up to {margin} keeps a single leader" in result.output


def test_the_gate_compares_each_file_with_what_it_expects(tmp_path: Path) -> None:
    configs = tmp_path / "configs"
    configs.mkdir()
    shutil.copy(ROOT / "examples" / "configs" / "zoo.cfg", configs / "zoo.cfg")
    (configs / "k8s.yaml").write_text(
        (FILES / "kube-controller-manager.yaml").read_text()
        + "leadercheck:\n  expect:\n    stale-leader: UNSAFE\n    false-failover: UNSAFE\n"
    )
    junit = tmp_path / "config.xml"
    result = verify("config", "--all", configs, "--out", tmp_path / "out", "--junit", junit)
    assert result.exit_code == 0, result.output
    assert "6 of 6 verdicts as expected" in result.output
    assert "(by default: " not in result.output.split("k8s.yaml")[1].splitlines()[0]
    suite = ET.parse(junit).getroot()
    assert suite.get("tests") == "6" and suite.get("failures") == "0"
    (configs / "k8s.yaml").write_text((FILES / "kube-controller-manager.yaml").read_text())
    result = verify("config", "--all", configs, "--out", tmp_path / "out", "--junit", junit)
    assert result.exit_code == 1
    assert "DIFF" in result.output and "stale-leader: expected SAFE, got UNSAFE" in result.output
    assert ET.parse(junit).getroot().get("failures") == "2"


def test_the_gate_lists_the_files_it_cannot_judge_with_why(tmp_path: Path) -> None:
    configs = tmp_path / "configs"
    configs.mkdir()
    shutil.copy(ROOT / "examples" / "configs" / "zoo.cfg", configs / "zoo.cfg")
    (configs / "bomb.yml").write_text(LAUGHS)
    (configs / "notes.txt").write_text("colour: blue\n")
    (configs / "template.yml").write_text("bootstrap:\n{% if x %}\n  dcs: {}\n{% endif %}\n")
    junit = tmp_path / "config.xml"
    result = verify("config", "--all", configs, "--out", tmp_path / "out", "--junit", junit)
    assert result.exit_code == 3, result.output
    out = result.output
    assert "SKIP" in out and "bomb.yml: cannot judge: line 1: more than 200,000 values" in out
    assert "notes.txt: cannot judge: cannot tell which system this configures" in out
    assert "template.yml: cannot judge: line 2: a template" in out
    assert "3 of 3 verdicts as expected; 3 file(s) cannot be judged" in out
    assert "Traceback" not in out
    assert ET.parse(junit).getroot().get("failures") == "3"
    for name in ("zoo.cfg",):
        (configs / name).unlink()
    result = verify("config", "--all", configs, "--out", tmp_path / "out")
    assert result.exit_code == 2 and result.output.startswith("error: ")
    assert "nothing to judge" in result.output and result.output.count("\n") == 1


@pytest.mark.slow  # .ci/run gates examples/configs itself, with verify config --all
def test_the_examples_directory_gates_clean(tmp_path: Path) -> None:
    """examples/configs, as CI gates it: every system, each verdict as its file expects."""
    result = verify("config", "--all", ROOT / "examples" / "configs", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    assert "15 of 15 verdicts as expected" in result.output
    assert "stale-leader: expected UNSAFE, got UNSAFE" in result.output


HOSTILE = [
    (LAUGHS, "more than 200,000 values once its aliases are expanded"),
    ("ttl: " + "[" * 100_000, "nested deeper than 64 levels"),
    ("bootstrap:\n  dcs:\n    ttl: " + "9" * 5000 + "\n", "a number of 5000 digits"),
    ("bootstrap:\n  dcs:\n    ttl: 1.0e+300\n", "1e+300 s is past any timeout"),
    ("bootstrap:\n  dcs:\n    ttl: 12345678901234567890123\n", "is past any timeout"),
    (
        "bootstrap:\n  dcs:\n    ttl: 30\n    loop_wait: 10\n    ttl: 5\n",
        "bootstrap.dcs.ttl is set twice (line 3 and line 5)",
    ),
    ("bootstrap:\n  dcs:\n    ttl: '" + "x" * 900_000 + "'\n", "a value of 900,000 characters"),
    (
        LAUGHS.replace(
            "bootstrap:\n  dcs:\n    ttl: *i",
            "bootstrap: {}\nleadercheck:\n  environment:\n    pause: *i",
        ),
        "more than 200,000 values once its aliases are expanded",
    ),
    (
        LAUGHS.replace(
            "bootstrap:\n  dcs:\n    ttl: *i", "bootstrap: {}\nleadercheck:\n  expect: *i"
        ),
        "more than 200,000 values once its aliases are expanded",
    ),
    ("bootstrap: {}\nleadercheck:\n  expect: " + "[" * 5000, "nested deeper than 64 levels"),
]


@pytest.mark.parametrize(("text", "said"), HOSTILE)
def test_a_hostile_file_is_one_line_exit_2(tmp_path: Path, text: str, said: str) -> None:
    config = tmp_path / "hostile.yml"
    config.write_text(text)
    out = tmp_path / "out"
    result = verify("config", config, "--out", out)
    assert result.exit_code == 2, result.output[-500:]
    assert result.output.count("\n") == 1 and result.output.startswith("error: "), result.output[
        :300
    ]
    assert said in result.output and len(result.output) < 400
    assert not out.exists()


def test_a_gate_lists_every_hostile_file_and_judges_the_rest(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    gate.mkdir()
    for k, (text, _) in enumerate(HOSTILE):
        (gate / f"hostile{k}.yml").write_text(text)
    shutil.copy(ROOT / "examples" / "configs" / "zoo.cfg", gate / "zoo.cfg")
    result = verify("config", "--all", gate, "--out", tmp_path / "out")
    assert result.exit_code == 3, result.output[-500:]
    skipped = [ln for ln in result.output.splitlines() if ln.startswith("SKIP")]
    assert len(skipped) == len(HOSTILE) and all(len(ln) < 400 for ln in skipped)
    assert "Traceback" not in result.output and "zoo.cfg stale-leader" in result.output


BAD = [
    ("ttl: [30\nloop_wait: 10\n", ["--system", "patroni"], "line 2: does not parse as YAML"),
    ("bootstrap: {dcs: {ttl: -30}}\n", [], "-30 must not be negative"),
    ("bootstrap: {dcs: [1]}\n", [], "bootstrap.dcs (line 1) must be a mapping, not list"),
    ("ttl: 30\n", ["--system", "consul"], "--system 'consul' is not one of"),
    ("colour: blue\n", [], "cannot tell which system this configures"),
    (
        "loop_wait: 10\nleadercheck:\n  expect:\n    split-brain: SAFE\n",
        [],
        "leadercheck.expect names no claim 'split-brain'",
    ),
    ("ttl: 30\nloop_wait: 10\n", ["--pause", "ten"], "--pause: 'ten' is not a duration"),
    ("ttl: 30\nloop_wait: 10\n", ["--junit", "x.xml"], "--junit goes with --all"),
]


@pytest.mark.parametrize(("text", "extra", "said"), BAD)
def test_bad_input_is_one_line_exit_2_nothing_written(
    tmp_path: Path, text: str, extra: list[str], said: str
) -> None:
    config = tmp_path / "patroni.yml"
    config.write_text(text)
    out = tmp_path / "out"
    result = verify("config", config, "--out", out, *extra)
    assert result.exit_code == 2, result.output
    assert said in result.output
    assert len([ln for ln in result.output.splitlines() if ln.startswith("error")]) == 1
    assert not out.exists()


@pytest.mark.parametrize("kind", ["oversize", "fifo", "directory", "missing", "link-to-zero"])
def test_bad_paths_are_refused_before_any_work(tmp_path: Path, kind: str) -> None:
    path = special_path(tmp_path, kind, oversize=1 << 20)
    out = tmp_path / "out"
    result = verify("config", path, "--system", "patroni", "--out", out)
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1, result.output
    assert not out.exists()


def test_a_100_mb_file_is_refused_unread(tmp_path: Path) -> None:
    huge = tmp_path / "huge.yml"
    with huge.open("wb") as f:
        f.truncate(100 << 20)  # sparse: 100 MB on paper
    result = verify("config", huge, "--system", "patroni", "--out", tmp_path / "out")
    assert result.exit_code == 2 and "larger than 1 MiB" in result.output
    assert not (tmp_path / "out").exists()


def test_an_output_over_a_device_is_refused(tmp_path: Path) -> None:
    configs = tmp_path / "configs"
    configs.mkdir()
    shutil.copy(FILES / "zoo.cfg", configs / "zoo.cfg")
    result = verify("config", "--all", configs, "--junit", "/dev/full", "--out", tmp_path / "o")
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output


def test_ctrl_c_during_a_gate_exits_3(tmp_path: Path) -> None:
    configs = tmp_path / "configs"
    configs.mkdir()
    for k in range(40):
        shutil.copy(FILES / "postgres0.yml", configs / f"p{k:02}.yml")
    args = [sys.executable, "-m", "leadercheck.checker.app", "config", "--all", str(configs)]
    done = run_interrupted([*args, "--out", str(tmp_path / "out")], cwd=ROOT,
                           ready="p05.yml: Patroni")  # fmt: skip
    assert done.returncode == 3, (done.returncode, done.stderr[-300:])
    assert "interrupted after" in done.stdout

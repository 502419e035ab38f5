"""Every argument is checked before any work: one line on stderr, exit 2, nothing written."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from leadercheck.checker.app.main import main


def verify(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def refused(result: Result, message: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert message in lines[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-p", "nodes=4", "--nodes", "2"], "--nodes 2 and -p nodes=4 both set nodes"),
        (["-p", "ttl=2", "-p", "ttl=3"], "-p ttl given twice (2 and 3)"),
        (["-p", "nodes=\u0663"], "parameter nodes must be an integer, got '\u0663'"),
        (["-p", "ttl=1_0"], "parameter ttl must be an integer, got '1_0'"),
        (["-p", "ttl=" + "9" * 5000], "parameter ttl must be an integer"),
        (["--max-memory", "1" * 400], "(400 characters) is too large"),
        (["--max-memory", "99999999999T"], "is too large"),
        (["--nodes", "x"], "--nodes x: give a whole number in digits 0-9"),
        (["--bogus"], "No such option '--bogus'"),
        (["--protocol", "bully"], "--protocol given 2 times (lease-fencing and bully)"),
        (["--nodes", "\uff13"], "--nodes \uff13: give a whole number in digits 0-9"),
        (["--max-states", "1_000"], "--max-states 1_000: give a whole number in digits 0-9"),
        (["--max-states", "0"], "--max-states 0: give 1 or more"),
        (["--max-states", "9" * 23], "--max-states 99999999999999999999999: too large (at most"),
        (["--workers", "\u0662"], "--workers \u0662: give a whole number"),
        (["--checkpoint", "c", "--checkpoint-every", "nan"], "--checkpoint-every nan: give a"),
        (["--checkpoint-every", "5"], "--checkpoint-every goes with --checkpoint DIR"),
        (["--max-depth", "3", "--max-depth", "4"], "--max-depth given 2 times (3 and 4)"),
        (["--junit", "j.xml"], "--junit goes with --all, not with --protocol"),
        (["--bmc", "2", "--prove"], "--prove and --bmc exclude each other"),
        (["--list"], "--protocol goes with"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(
    args: list[str], message: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    refused(verify("--protocol", "lease-fencing", *args, "--out", str(out)), message)
    assert not out.exists()


@pytest.mark.parametrize("command", [["config", "--all"], ["explore"], ["replay"]])
def test_debug_is_taken_by_every_command_never_refused_as_unknown(
    command: list[str], tmp_path: Path
) -> None:
    """`--debug` shows the traceback of a failure on every command; it is never itself the
    failure (a subcommand once refused it and printed a traceback all the same)."""
    result = verify(*command, str(tmp_path / "missing"), "--debug")
    assert result.exit_code == 2
    assert "No such option" not in result.output


def test_a_junit_directory_is_refused_before_the_gate(tmp_path: Path) -> None:
    out = tmp_path / "out"
    refused(verify("--all", "--junit", str(tmp_path), "--out", str(out)), "is a directory")
    assert not out.exists()


def test_a_junit_under_a_file_is_refused_before_the_gate(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("a file, not a directory")
    refused(verify("--all", "--junit", str(plain / "x" / "j.xml")), "cannot write to")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        (b"\xff\xfe\x00binary", "is not UTF-8 text"),
        (b"# a README without the markers\n", "has no <!-- verdicts:begin -->"),
    ],
    ids=["missing", "binary", "no-markers"],
)
def test_a_bad_readme_is_refused_before_the_gate(
    content: bytes | None, message: str, tmp_path: Path
) -> None:
    readme = tmp_path / "README.md"
    if content is not None:
        readme.write_bytes(content)
    out = tmp_path / "out"
    refused(verify("--all", "--readme", str(readme), "--out", str(out)), message)
    assert not out.exists()
    assert readme.exists() == (content is not None)


def test_html_dir_writes_only_under_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        "leadercheck.checker.app.gate.gate_names", lambda: ["heartbeat-no-quorum", "lease-timing"]
    )
    monkeypatch.chdir(tmp_path)
    pages = tmp_path / "pages"
    result = verify("--all", "--html", str(pages))
    assert result.exit_code in (0, 1), result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pages"]
    assert (pages / "index.html").exists() and (pages / "heartbeat-no-quorum.html").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--all", "--max-states", "100"], "--max-states goes with --protocol, not with --all"),
        (["--all", "--max-depth", "3"], "--max-depth goes with --protocol, not with --all"),
        (["--all", "--list"], "--all and --list exclude each other"),
        (["--list", "--nodes", "3"], "--nodes goes with"),
        (["--max-states", "5"], "give --protocol NAME, --all, or --list"),
    ],
)
def test_a_mode_takes_only_its_own_options(args: list[str], message: str, tmp_path: Path) -> None:
    """The gate searches each case whole: a bound it would ignore is refused, not dropped."""
    out = tmp_path / "out"
    refused(verify(*args, "--out", str(out)) if "--all" in args else verify(*args), message)
    assert not out.exists()


def test_list_json_is_one_object_naming_every_protocol() -> None:
    result = verify("--list", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    names = [p["name"] for p in doc["protocols"]]
    assert "lease-no-fencing" in names and "raft" in names and doc["model"] is None
    raft = next(p for p in doc["protocols"] if p["name"] == "raft")
    nodes = next(p for p in raft["params"] if p["name"] == "nodes")
    assert nodes["default"] == 3 and nodes["low"] <= 3 <= nodes["high"]
    assert raft["expected"]["single-leader"] == "HOLDS"


def test_an_option_before_a_subcommand_says_where_it_goes() -> None:
    """`verify --model m.py replay t.json` would once have loaded m.py for the replay; the
    subcommand's own --model is the one place to name it."""
    refused(
        verify("--model", "m.py", "replay", "t.json"),
        "give --model after `replay`, not before it",
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["replay"], "error: missing TRACE.json: the trace file to replay (a .json that verify "
                     "wrote); usage: verify replay [OPTIONS] TRACE.json"),
        (["replay", "--protocol", "lease-fencing"], "error: missing TRACE.json: the trace file"),
        (["explain"], "error: missing TRACE.json: the trace file to explain; usage: verify "
                      "explain [OPTIONS] TRACE.json"),
        (["config"], "error: missing FILE|DIR: the configuration file to judge (with --all: "
                     "the directory of them); usage: verify config [OPTIONS] FILE|DIR"),
        (["config", "--all"], "error: missing FILE|DIR: the configuration file to judge"),
        (["history"], "error: missing FILE: the recorded history to judge; usage: verify "
                      "history [OPTIONS] FILE"),
        (["conform", "t.json"], "error: missing --against SYSTEM: the real system: etcd, "
                                "postgres, zookeeper or redis"),
    ],
)  # fmt: skip
def test_a_missing_argument_is_named_with_what_it_is_for(args: list[str], message: str) -> None:
    """One place for every command: what is missing, what it is for, and the usage; never
    the bare metavar (`error: TRACE.json`) nor a trailing blank."""
    result = CliRunner().invoke(main, args, prog_name="verify")
    refused(result, message)
    assert result.stderr.startswith(message)


def test_no_help_text_names_a_path_outside_the_repository() -> None:
    """`verify bench` once pointed at ../shared/benchmarks, a folder no user has."""
    names = main.list_commands(None)  # type: ignore[arg-type]
    texts = [verify("--help").stdout] + [verify(c, "--help").stdout for c in names]
    assert all(text.startswith("Usage: ") for text in texts)
    assert not [text for text in texts if "../" in text or "shared/benchmarks" in text]
    bench = " ".join(texts[1 + names.index("bench")].split())
    assert "Time the benchmark models, each run in a fresh process: raft-election and" in bench


def test_each_subcommand_loads_when_named_and_only_then() -> None:
    """The subcommands are imported by name (`verify --protocol` starts a third faster);
    each name is its command's own, and a check never loads config, history or explore."""
    for name in main.list_commands(None):  # type: ignore[arg-type]
        command = main.get_command(None, name)  # type: ignore[arg-type]
        assert command is not None and command.name == name
    code = (
        "import sys\n"
        "from leadercheck.checker.app.main import main\n"
        "try:\n"
        "    main(['--protocol', 'bully', '--max-states', '5', '--out', sys.argv[1]])\n"
        "except SystemExit:\n"
        "    pass\n"
        "names = ('config', 'history', 'explore', 'conform', 'traces', 'bench')\n"
        "print(sorted(n for n in names if 'leadercheck.checker.app.' + n in sys.modules))\n"
    )
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run(
            [sys.executable, "-c", code, out], capture_output=True, text=True, timeout=120
        )
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr

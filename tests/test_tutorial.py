"""docs/tutorial.md as a reader runs it: its code blocks are examples/redlock.py, every line in
order, and each command it shows prints what it shows (elided lines written `...`)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from leadercheck.checker.app.main import main

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "docs" / "tutorial.md"
EXAMPLE = ROOT / "examples" / "redlock.py"
OWN_FOLDER = "tutorial-out"  # the tutorial's output, never the committed counterexamples/


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", TUTORIAL.read_text(), flags=re.DOTALL)


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_the_code_blocks_are_the_example_file_line_by_line() -> None:
    printed = _lines("".join(_blocks("python")))
    assert printed == _lines(EXAMPLE.read_text())


def test_the_commands_write_into_a_folder_of_their_own() -> None:
    """Run from the repository's root as the tutorial says, no command writes into the
    committed counterexamples/ (the gate would find those files there, never committed):
    every check and gate names --out tutorial-out, every file shown is under it, and git
    ignores that folder."""
    commands = [s.splitlines()[0] for s in _blocks("console")]
    checks = [c for c in commands if "--protocol" in c or "--all" in c]
    assert len(checks) >= 4
    for command in checks:
        argv = shlex.split(command)
        assert argv[argv.index("--out") + 1] == OWN_FOLDER, command
    shown = "".join(_blocks("console"))
    assert "counterexamples/" not in shown
    assert f"wrote {OWN_FOLDER}/redlock.json" in shown
    assert f"$ verify replay {OWN_FOLDER}/redlock-gc-pause.json" in shown
    assert f"`{OWN_FOLDER}/`" in TUTORIAL.read_text()  # the text says where they go
    assert f"{OWN_FOLDER}/" in (ROOT / ".gitignore").read_text().splitlines()


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_the_tutorial_runs_as_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "redlock.py").write_text("\n".join(_blocks("python")))
    monkeypatch.chdir(tmp_path)  # the reader's checkout: tutorial-out/ is written here
    sessions = _blocks("console")
    assert len(sessions) >= 6
    for session in sessions:
        command, *shown = session.splitlines()
        assert command.startswith("$ verify "), command
        result = CliRunner().invoke(main, shlex.split(command)[2:], catch_exceptions=False)
        assert result.exit_code in (0, 1), f"{command}: {result.output}"
        printed = iter(result.stdout.splitlines())
        for line in shown:
            if line != "...":
                assert any(out == line for out in printed), f"{command}: missing {line!r}"
    assert not (tmp_path / "counterexamples").exists()  # the reader's checkout is untouched
    assert (tmp_path / OWN_FOLDER / "redlock-gc-pause.json").is_file()

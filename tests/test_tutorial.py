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


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", TUTORIAL.read_text(), flags=re.DOTALL)


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_the_code_blocks_are_the_example_file_line_by_line() -> None:
    printed = _lines("".join(_blocks("python")))
    assert printed == _lines(EXAMPLE.read_text())


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_the_tutorial_runs_as_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "redlock.py").write_text("\n".join(_blocks("python")))
    monkeypatch.chdir(tmp_path)  # the reader's checkout: counterexamples/ is written here
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

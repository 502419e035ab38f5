"""House rules as tests, so CI's one test command also enforces them: ruff, mypy, layer arrows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_ruff_finds_nothing() -> None:
    proc = _run("-m", "ruff", "check", "--no-cache", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_finds_nothing() -> None:
    proc = _run("-m", "mypy", "--no-incremental")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_layers_import_only_downwards() -> None:
    code = "from importlinter.cli import lint_imports as f; raise SystemExit(f(no_cache=True))"
    proc = _run("-c", code)
    assert proc.returncode == 0, proc.stdout + proc.stderr

"""House rules as tests, so CI enforces them: ruff and the layer arrows in the default run,
mypy (20 s) with the slow tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_ruff_finds_nothing() -> None:
    proc = _run("-m", "ruff", "check", "--no-cache", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr


PACKAGES = ("checker", "models", "specs")  # installed as leadercheck.checker, ...


@pytest.mark.slow  # the default suite stays under 3 minutes; CI runs it
def test_mypy_finds_nothing(tmp_path: Path) -> None:
    view = tmp_path / "leadercheck"  # the namespace as installed: the folders, linked
    view.mkdir()
    for name in PACKAGES:
        (view / name).symlink_to(ROOT / name, target_is_directory=True)
    (tmp_path / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    sources = [f"leadercheck/{name}" for name in PACKAGES] + ["examples/redlock.py"]
    config = str(ROOT / "pyproject.toml")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", config, "--no-incremental",
         "--explicit-package-bases", *sources],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    files = sum(len(list((ROOT / name).rglob("*.py"))) for name in PACKAGES) + 1
    assert f"no issues found in {files} source files" in proc.stdout  # every file was read


def test_the_installed_namespace_has_no_top_level_packages() -> None:
    """leadercheck installs under one namespace: no `checker`, `models` or `specs` of its own
    at the top of site-packages, where another project's modules of those names live."""
    code = (
        "import importlib.util as u, leadercheck.checker as c, leadercheck.models.cluster, "
        "leadercheck.specs.claims; print(c.__name__, [n for n in ('checker', 'models', "
        "'specs') if u.find_spec(n)])"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd="/", capture_output=True, text=True, check=False
    )
    assert proc.stdout.split() == ["leadercheck.checker", "[]"], proc.stdout + proc.stderr


def test_layers_import_only_downwards() -> None:
    code = "from importlinter.cli import lint_imports as f; raise SystemExit(f(no_cache=True))"
    proc = _run("-c", code)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_no_module_imports_itself_back() -> None:
    """No import cycle anywhere in the project, however indirect, lazy imports and
    type-only ones included: each room stands on the ones below it."""
    import grimp  # noqa: PLC0415 (import-linter's own graph library)
    import networkx as nx  # noqa: PLC0415

    graph = grimp.build_graph(
        "leadercheck.checker", "leadercheck.models", "leadercheck.specs", cache_dir=None
    )
    edges = nx.DiGraph(
        (module, imported)
        for module in graph.modules
        for imported in graph.find_modules_directly_imported_by(module)
    )
    cycles = [sorted(c) for c in nx.strongly_connected_components(edges) if len(c) > 1]
    assert cycles == [], cycles

"""The README's quick start stays light and whole: `verify` runs on pyproject's runtime
dependencies alone (command 1 installs only those), and the test tools come with the `test`
extra (command 2). Read from the source, so a new import cannot slip a test-only package
into the tool, nor a runtime one into an extra."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("checker", "models", "specs")  # installed as leadercheck.checker, ...
CONFORM = ROOT / "checker" / "conform"  # needs the `conform` extra, and says so when missing
# The compiled search and the kernels need the `fast` extra (numba); they are imported only
# once a model's kernel() has imported numba, and a model without numba has none.
COMPILED = (ROOT / "models" / "kernels", ROOT / "checker" / "engine" / "compiled")


def _name(requirement: str) -> str:
    """'psycopg[binary]>=3.1' -> 'psycopg' (normalized as pip does)."""
    match = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group()).lower()


def _project() -> dict[str, object]:
    project: dict[str, object] = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return project


def _runtime() -> set[str]:
    requirements: list[str] = _project()["dependencies"]  # type: ignore[assignment]
    return {_name(r) for r in requirements}


def _extra(name: str) -> set[str]:
    """An extra's distributions, the project's own extras it names resolved."""
    extras: dict[str, list[str]] = _project()["optional-dependencies"]  # type: ignore[assignment]
    out: set[str] = set()
    for requirement in extras[name]:
        if _name(requirement) == "leadercheck":
            inner = re.search(r"\[(.*)\]", requirement)
            assert inner, requirement
            for other in inner.group(1).split(","):
                out |= _extra(other.strip())
        else:
            out.add(_name(requirement))
    return out


def _imports(path: Path) -> list[tuple[str, bool]]:
    """Each absolute import's top-level name, and whether it runs when the module loads (at
    module level, not inside a function)."""
    tree = ast.parse(path.read_text(), str(path))
    lazy: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            lazy |= {id(n) for n in ast.walk(node) if n is not node}
    found: list[tuple[str, bool]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name.split(".")[0], id(node) not in lazy) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module.split(".")[0], id(node) not in lazy))
    return found


def _third_party() -> list[tuple[Path, str, bool]]:
    out = []
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for module, eager in _imports(path):
                if module in sys.stdlib_module_names or module == "leadercheck":
                    continue
                out.append((path, module, eager))
    return out


@cache
def _installed() -> dict[str, list[str]]:
    return dict(packages_distributions())


def _distributions(module: str) -> set[str]:
    dists = _installed().get(module)
    assert dists, f"{module} is imported but installed by no distribution in this environment"
    return {_name(d) for d in dists}


def test_verify_imports_only_its_runtime_dependencies_when_it_loads() -> None:
    """Every module-level import outside checker/conform is a runtime dependency: what
    `pip install -e .` brings is enough to load every module `verify` loads; the compiled
    search's modules may need the `fast` extra, and only it."""
    runtime = _runtime()
    fast = runtime | _extra("fast")

    def allowed(path: Path) -> set[str]:
        return fast if any(path.is_relative_to(c) for c in COMPILED) else runtime

    wrong = [
        f"{path.relative_to(ROOT)}: {module} ({', '.join(sorted(_distributions(module)))})"
        for path, module, eager in _third_party()
        if eager and not path.is_relative_to(CONFORM) and not _distributions(module) & allowed(path)
    ]
    assert wrong == [], "imported when verify loads, but not in [project] dependencies"


def test_the_tool_never_imports_a_test_only_package() -> None:
    """A package only the `test` extra brings (pytest, psutil, networkx, ...) is imported by
    no module of the tool, not even lazily: an extra of the tool's own (`conform`, `ray`)
    brings whatever a feature imports on demand."""
    extras: dict[str, list[str]] = _project()["optional-dependencies"]  # type: ignore[assignment]
    features = _runtime().union(*(_extra(name) for name in extras if name != "test"))
    test_only = _extra("test") - features
    wrong = [
        f"{path.relative_to(ROOT)}: {module}"
        for path, module, _eager in _third_party()
        if _distributions(module) & test_only
    ]
    assert wrong == [], f"the tool imports test-only packages {sorted(test_only)}"


def test_every_runtime_dependency_is_used() -> None:
    """No runtime dependency is there for the tests alone: each is imported by the tool (the
    light install of the quick start's first command carries nothing it does not need)."""
    used = set().union(*(_distributions(m) for _p, m, _e in _third_party()))
    assert _runtime() - used == set()


def test_the_quick_start_installs_light_then_the_test_tools() -> None:
    """The README's two commands: the first installs the project alone (no extra) and runs
    the default check; the second brings the test extra and runs the suite."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("<!-- quickstart:begin -->")[1].split("<!-- quickstart:end -->")[0]
    commands = [
        line
        for line in block.splitlines()
        if line.strip() and not line.lstrip().startswith(("#", "```"))
    ]
    assert len(commands) == 2, commands
    first, second = commands
    assert ".venv/bin/pip install -e . " in first and "[test]" not in first
    assert first.endswith(".venv/bin/verify --protocol lease-no-fencing")
    assert ".venv/bin/pip install -e '.[test]'" in second
    assert second.endswith(".venv/bin/python -m pytest")


def test_every_package_folder_is_installed() -> None:
    """pyproject lists its packages one by one: a folder left out (checker/engine was) is
    missing from a non-editable install, though an editable one finds it."""
    import tomllib

    root = Path(__file__).resolve().parents[1]
    listed = set(
        tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {
        "leadercheck." + ".".join(init.parent.relative_to(ROOT).parts)
        for top in ("checker", "models", "specs")
        for init in (ROOT / top).glob("**/__init__.py")
    }
    assert found - listed == set()

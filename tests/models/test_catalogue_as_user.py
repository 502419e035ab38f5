"""The catalogue through the user's door: every built-in protocol, and a trivial user subclass
of each catalogue model class, loaded as `verify --model` loads a user's module and checked
with every guard a user's model gets. What the catalogue does, a user may do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from leadercheck.checker.app.main import main
from leadercheck.models.catalogue import PROTOCOLS
from leadercheck.specs.expectations import load_expectations

ROOT = Path(__file__).resolve().parents[2]
AS_USER = str(ROOT / "tests" / "user_models" / "catalogue_as_user.py")
BOUND = "600"  # states: past the guard's first 256 expansions, every one fully checked


def run(tmp_path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(
        main, [*args, "--max-states", BOUND, "--json", "--out", str(tmp_path)]
    )
    assert result.exit_code in (0, 1, 3), result.output
    return result.exit_code, json.loads(result.stdout)


def comparable(doc: dict[str, Any]) -> dict[str, Any]:
    stats = doc["stats"]
    return {
        "verdict": doc["verdict"],
        "end": doc["end"],
        "properties": [(p["name"], p["verdict"]) for p in doc["properties"]],
        "counts": (stats["distinct_states"], stats["transitions"], stats["depth"]),
    }


@pytest.mark.parametrize("name", list(PROTOCOLS))
def test_each_protocol_and_a_user_subclass_of_its_model_pass_the_user_path(
    name: str, tmp_path: Path
) -> None:
    """The same search, three ways: built in (trusted), through `--model`, and a user
    subclass through `--model`: no guard refuses the catalogue's own records, and the
    counts and verdicts agree."""
    code, builtin = run(tmp_path / "builtin", "--protocol", name)
    user_code, user = run(tmp_path / "user", "--model", AS_USER, "--protocol", name)
    sub_code, sub = run(tmp_path / "sub", "--model", AS_USER, "--protocol", f"user-{name}")
    assert (user_code, sub_code) == (code, code)
    assert comparable(user) == comparable(sub) == comparable(builtin)
    assert sub["protocol"] == f"user-{name}" and sub["model"] == AS_USER


@pytest.mark.slow
def test_the_whole_catalogue_and_its_user_subclasses_pass_the_gate_through_the_user_path(
    tmp_path: Path,
) -> None:
    """`verify --all --model`: every case of specs/expected.toml, searched whole, twice (the
    catalogue's classes and a user subclass of each), every verdict as expected."""
    result = CliRunner().invoke(main, ["--all", "--model", AS_USER, "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    last = result.stdout.strip().splitlines()[-1]
    cases = 2 * len(load_expectations().table)  # the catalogue's, and its user subclasses'
    assert last.startswith(f"gate: PASS ({cases} cases"), last

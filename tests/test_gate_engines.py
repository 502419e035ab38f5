"""The whole gate under each reduction and engine: every verdict as in specs/expected.toml."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from leadercheck.checker.app.main import main


def gate(tmp: Path, *flags: str) -> tuple[int, dict[str, Any]]:
    args = ["--all", "--json", "--out", str(tmp), *flags]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout)


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    code, doc = gate(tmp_path_factory.mktemp("plain"))
    assert code == 0
    return doc


def _verdicts(doc: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {
        (p["protocol"], prop["name"]): prop["got"]
        for p in doc["protocols"]
        for prop in p["properties"]
    }


def _states(doc: dict[str, Any]) -> dict[str, int]:
    return {p["protocol"]: p["stats"]["distinct_states"] for p in doc["protocols"]}


@pytest.mark.slow  # the whole gate twice more: about 80 s
@pytest.mark.parametrize(
    "flags", [("--symmetry",), ("--workers", "2")], ids=["symmetry", "2-workers"]
)
def test_every_verdict_is_unchanged(
    plain: dict[str, Any], tmp_path: Path, flags: tuple[str, ...]
) -> None:
    code, doc = gate(tmp_path, *flags)
    assert code == 0, [f for p in doc["protocols"] for r in p["properties"] for f in r["findings"]]
    assert _verdicts(doc) == _verdicts(plain)
    reduced, full = _states(doc), _states(plain)
    if flags == ("--symmetry",):
        assert reduced["raft-election"] < full["raft-election"] / 1.9  # NC = 2: swap n1, n2
        assert reduced["lease-fencing"] < full["lease-fencing"] / 5  # 3 nodes: 6 renamings
        assert reduced["bully"] == full["bully"]  # declares no symmetry
        assert all(reduced[name] <= full[name] for name in full)

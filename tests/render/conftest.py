"""Real HTML pages written by `verify --html`; the browser that opens them is the shared
one of tests/conftest.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from leadercheck.checker.app.main import main

PAGES = ("lease-no-fencing", "bully-flapping")  # a plain counterexample; a lasso, the widest


@pytest.fixture(scope="session")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Each of PAGES' trace pages, as `verify --protocol NAME --html DIR --out DIR` writes
    them (both exit 1: a violation)."""
    out = tmp_path_factory.mktemp("pages")
    for name in PAGES:
        result = CliRunner().invoke(
            main, ["--protocol", name, "--html", str(out), "--out", str(out)]
        )
        assert result.exit_code == 1, result.output
    return out

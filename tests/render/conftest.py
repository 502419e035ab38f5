"""Real HTML pages written by `verify --html`, and headless Chromium to open them in.

The browser is skipped only where Chromium is missing outside CI; in CI (CI=true) a missing
browser fails the tests that need it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from leadercheck.checker.app.main import main

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"  # screenshots kept for review (git-ignored)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
BROWSER_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
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


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium is missing in CI: .ci/run must install it")
        pytest.skip("Chromium not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=CHROMIUM, args=BROWSER_FLAGS)
        try:
            yield launched
        finally:
            launched.close()

"""Fixtures every test directory shares: headless Chromium, one per test session.

The browser is skipped only where Chromium is missing outside CI; in CI (CI=true) a missing
browser fails the tests that need it. One session-wide instance serves the HTML report's
tests and `verify explore`'s, so two Playwright loops never meet in one worker.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
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


@pytest.fixture
def tab(browser: Any) -> Iterator[Any]:
    """A page of the shared browser at 1400 x 900 that fails the test on a script error."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    yield page
    page.close()
    assert not errors

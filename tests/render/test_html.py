"""The HTML report: its content, and stepping to the violation in real headless Chromium.

The browser test keeps a screenshot in tests/artifacts/ for review. It is skipped only
where Chromium is missing outside CI; in CI (CI=true) a missing browser fails it.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from leadercheck.checker.cli import main

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
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


@pytest.fixture(scope="module")
def page_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("html")
    result = CliRunner().invoke(
        main, ["--protocol", "lease-no-fencing", "--html", "--out", str(out)]
    )
    assert result.exit_code == 1
    return out / "lease-no-fencing.html"


def test_page_is_self_contained_and_carries_the_trace(page_path: Path) -> None:
    text = page_path.read_text()
    assert "http://" not in text.replace("http://www.w3.org", "")
    assert "https://" not in text and "<link" not in text and "src=" not in text
    start = text.index('<script type="application/json" id="trace-data">') + 48
    data = json.loads(text[start : text.index("</script>", start)])
    assert data["property"] == "no-stale-write" and len(data["steps"]) == 11
    storage = data["steps"][10]["participants"][-3]
    assert storage["name"] == "storage" and storage["fields"]["stale_write_accepted"] == "True"
    assert "78,245 distinct states" in text


def test_same_trace_gives_the_same_page(page_path: Path, tmp_path: Path) -> None:
    CliRunner().invoke(main, ["--protocol", "lease-no-fencing", "--html", "--out", str(tmp_path)])
    assert (tmp_path / "lease-no-fencing.html").read_bytes() == page_path.read_bytes()


def test_stepping_to_the_violation_in_chromium(page_path: Path) -> None:
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium is missing in CI: .ci/run must install it")
        pytest.skip("Chromium not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=BROWSER_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(page_path.as_uri())
            assert page.inner_text("#step-no") == "0"
            assert not page.is_visible("#verdict")
            page.keyboard.press("ArrowRight")
            assert page.inner_text("#step-no") == "1"
            page.keyboard.press("ArrowLeft")
            assert page.inner_text("#step-no") == "0"
            while page.inner_text("#step-no") != "10":
                page.click("#next")
            assert page.is_visible("#verdict")
            assert "no-stale-write" in page.inner_text("#verdict")
            changed = page.locator("tr.changed").evaluate_all(
                "rows => rows.map(r => r.dataset.participant)"
            )
            assert changed == ["n1", "storage"]
            highlighted = page.inner_text("tr[data-participant=storage] span.field.changed")
            assert highlighted == "stale_write_accepted: True"
            assert page.locator(".chart g.current").count() >= 1
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "lease-no-fencing-step-10.png"), full_page=True)
        finally:
            browser.close()
    assert (ARTIFACTS / "lease-no-fencing-step-10.png").stat().st_size > 10_000

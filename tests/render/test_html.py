"""The HTML trace page: its content, its chart's marks, and in real headless Chromium its
opening at the violation and a changed collection shown element by element (more browser
tests in test_html_browser.py, the element-wise change itself in test_html_diff.py).

The browser test keeps a screenshot in tests/artifacts/ for review.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from leadercheck.checker.app.main import main
from leadercheck.checker.engine.strategies.bfs import check
from leadercheck.checker.properties import always
from leadercheck.checker.render.context import TraceContext
from leadercheck.checker.render.html import _plain, trace_to_html
from tests.conftest import ARTIFACTS
from tests.toys import Counter


def _data(page: Path) -> dict[str, Any]:
    text = page.read_text()
    start = text.index('<script type="application/json" id="trace-data">') + 48
    data: dict[str, Any] = json.loads(text[start : text.index("</script>", start)])
    return data


def _svg(page: Path) -> str:
    text = page.read_text()
    return text[text.index("<svg") : text.index("</svg>")]


def test_page_is_self_contained_and_carries_the_trace(pages: Path) -> None:
    page = pages / "lease-no-fencing.html"
    text = page.read_text()
    assert "http://" not in text.replace("http://www.w3.org", "")
    assert "https://" not in text and "<link" not in text and "src=" not in text
    data = _data(page)
    assert data["property"] == "no-stale-write" and len(data["steps"]) == 11
    assert data["loop_from"] is None
    storage = data["steps"][10]["participants"][-3]
    assert storage["name"] == "storage" and storage["fields"]["stale_write_accepted"] == "yes"
    assert "78,245 distinct states" in text
    assert len(text) < 100_000


def test_same_trace_gives_the_same_page(pages: Path, tmp_path: Path) -> None:
    args = ["--protocol", "bully-flapping", "--html", str(tmp_path), "--out", str(tmp_path)]
    CliRunner().invoke(main, args)
    for name in ("bully-flapping.html", "bully-flapping.single-leader.html"):
        assert (tmp_path / name).read_bytes() == (pages / name).read_bytes()


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (True, "yes"),
        (False, "no"),
        (None, "-"),
        ([], "-"),
        (("n1", "n2"), "n1, n2"),
        ({"n1": 0, "n2": True}, "n1: 0, n2: yes"),
        ({"n1": {"owner": "n1", "seq": 1}}, "n1: (owner: n1, seq: 1)"),
        (frozenset({"b", "a"}), "a, b"),
        (3, "3"),
    ],
)
def test_a_field_reads_as_words(value: object, shown: str) -> None:
    assert _plain(value) == shown


def test_the_chart_marks_each_steps_elements_and_names_them_in_words(pages: Path) -> None:
    """render/dot.py writes class="step-<i>" on a step's nodes and edges (and "header",
    "loop", "verdict"), and tooltips; the page shows the tooltip, never a Graphviz id."""
    page = pages / "bully-flapping.html"
    svg = _svg(page)
    groups = re.findall(
        r'<g id="([^"]+)" class="((?:node|edge)\b[^"]*)">\s*<title>([^<]*)</title>', svg
    )
    classes = [c.replace("&#45;", "-").split() for _, c, _ in groups]
    for i in range(19):
        assert any(f"step-{i}" in c for c in classes), i
    assert any("header" in c for c in classes) and any("loop" in c for c in classes)
    assert any("verdict" in c for c in classes)
    titles = [t for _, _, t in groups]
    ids = {i for i, _, _ in groups}
    graphviz_names = r"[a-z]+\d*_\w+|[a-z]\d+"  # r3_n1, c3_2, s3: node names, not words
    assert not [t for t in titles if t in ids or re.fullmatch(graphviz_names, t)]
    assert any(t.startswith("step 12: n3 &#45;&gt; n2: COORDINATOR") for t in titles)
    assert "xlink:title" not in svg and "<!--" not in svg
    assert re.match(r'<svg id="diagram" style="max-width: [\d.]+pt" width=', svg)
    standalone = (pages / "bully-flapping.svg").read_text()  # the SVG file keeps the tooltips
    assert 'class="node step&#45;7 step&#45;18 loop"' in standalone  # the cycle, bracketed
    assert 'xlink:title="step 18: n3' in standalone


def test_a_lasso_page_says_where_the_loop_goes_back_to(pages: Path) -> None:
    page = pages / "bully-flapping.html"
    data = _data(page)
    assert data["loop_from"] == 7
    assert data["loop_text"] == (
        "loop: step 18 returns to the state of step 7, so steps 8 to 18 repeat forever"
    )
    rows = re.findall(r'<tr data-step="(\d+)"( class="[^"]*")?>', page.read_text())
    assert [int(i) for i, c in rows if "looped" in c] == list(range(8, 19))
    assert rows[-1][1] == ' class="deciding looped"'
    assert "the loop returns here" in page.read_text().split('data-step="7"')[1].split("</tr>")[0]


def test_the_page_opens_at_the_violation_in_chromium(pages: Path, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        page.goto((pages / "lease-no-fencing.html").as_uri())
        assert page.inner_text("#step-no") == "10"
        assert page.is_visible("#verdict")
        assert "no-stale-write" in page.inner_text("#verdict")
        changed = page.locator("tr.changed").evaluate_all(
            "rows => rows.map(r => r.dataset.participant)"
        )
        assert changed == ["n1", "storage"]
        storage = "tr[data-participant=storage]"
        assert page.inner_text(f"{storage} span.field.changed") == "stale_write_accepted: no → yes"
        assert page.inner_text(f"{storage} span.field.changed del") == "no"
        assert page.inner_text(f"{storage} .sum del") == "highest epoch 2"
        assert page.inner_text("tr[data-participant=n2] .sum") == "leader t2"  # unchanged
        assert page.locator(".chart g.current").count() >= 1
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "lease-no-fencing-step-10.png"), full_page=True)
        page.keyboard.press("Home")
        assert page.inner_text("#step-no") == "0"
        assert not page.is_visible("#verdict")
        page.keyboard.press("ArrowRight")
        assert page.inner_text("#step-no") == "1"
        page.keyboard.press("ArrowLeft")
        assert page.inner_text("#step-no") == "0"
        while page.inner_text("#step-no") != "10":
            page.click("#next")
        assert page.is_visible("#verdict")
    finally:
        page.close()
    assert (ARTIFACTS / "lease-no-fencing-step-10.png").stat().st_size > 10_000


def test_a_changed_collection_shows_what_was_added_and_removed_in_chromium(
    pages: Path, tab: Any
) -> None:
    """Step 12 of bully-flapping delivers one of two COORDINATOR messages in flight."""
    tab.goto((pages / "bully-flapping.html").as_uri() + "#step=12")
    network = "tr[data-participant=network] span.field.changed"
    assert tab.inner_text(network) == "in_flight: COORDINATOR(n3->n1), −COORDINATOR(n3->n2)"
    assert tab.inner_text(f"{network} del.gone") == "−COORDINATOR(n3->n2)"
    assert tab.inner_text(f"{network} .kept") == "COORDINATOR(n3->n1)"
    assert tab.locator(f"{network} ins").count() == 0
    n2 = "tr[data-participant=n2] span.field.changed"
    assert tab.locator(n2).all_inner_texts()[0] == "coordinator: - → n3"  # a scalar: old → new
    tab.keyboard.press("n")  # 13: the other one is lost, n3 cut off
    assert tab.locator(network).all_inner_texts() == [
        "in_flight: −COORDINATOR(n3->n1)",
        "island: +n3",
    ]
    assert tab.locator(f"{network} ins").all_inner_texts() == ["+n3"]
    color = tab.eval_on_selector(f"{network} ins", "e => getComputedStyle(e).color")
    assert color == "rgb(27, 94, 32)"  # green; a removed element red
    red = tab.eval_on_selector(f"{network} del.gone", "e => getComputedStyle(e).color")
    assert red == "rgb(183, 28, 28)"


def test_without_graphviz_the_page_has_the_table_and_no_chart() -> None:
    result = check(Counter(3), [always("small", lambda s: s < 3)])
    ctx = TraceContext("toy", {"limit": 3}, result.results[0])
    page = trace_to_html(ctx, None, result.stats, ctx.params)
    assert "No diagram: Graphviz `dot` was not available." in page and "<svg" not in page
    assert '<tr data-step="2" class="deciding">' in page

"""The trace page in headless Chromium at 1000 and 1400 px: the chart at a legible scale
above the state table, the page open at the deciding step, the current step highlighted and
in view, and every way of stepping works (keys, clicks, the address, a lasso going round);
in a window wide enough for the chart beside the table, the chart beside it and in view."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ARTIFACTS

LAST = {"bully-flapping": 18, "lease-no-fencing": 10}
MARKS = """n => [...document.querySelectorAll('.chart :is(g.node, g.edge).step-' + n)].map(e => {
  // each node or edge of step n (the paint under them is no mark): [highlighted, one of its
  // arrows (it belongs to no other step)
  // and inside both the window and the chart's box]
  const r = e.getBoundingClientRect(), box = document.getElementById('chart');
  const c = box.getBoundingClientRect();
  const arrow = e.classList.contains('edge')
    && [...e.classList].filter(k => k.startsWith('step-')).length === 1;
  return [e.classList.contains('current'), arrow
    && r.top >= Math.max(0, c.top) && r.left >= Math.max(0, c.left) - 1
    && r.bottom <= Math.min(innerHeight, c.top + box.clientHeight)
    && r.right <= Math.min(innerWidth, c.left + box.clientWidth) + 1];
})"""
IN_VIEW = """([sel, across]) => [...document.querySelectorAll('.chart ' + sel)].every(e => {
  // every such element of the chart lies inside the chart's box and the window (only
  // from top to bottom unless `across`)
  const r = e.getBoundingClientRect(), box = document.getElementById('chart');
  const c = box.getBoundingClientRect();
  return r.top >= Math.max(0, c.top) - 1
    && r.bottom <= Math.min(innerHeight, c.top + box.clientHeight) + 1
    && (!across || r.left >= Math.max(0, c.left) - 1
        && r.right <= Math.min(innerWidth, c.left + box.clientWidth) + 1);
})"""
STARTS_IN_VIEW = """n => [...document.querySelectorAll('.chart g.edge.step-' + n)].some(e => {
  // an arrow of step n alone whose left end is in view
  const own = [...e.classList].filter(k => k.startsWith('step-')).length === 1;
  const r = e.getBoundingClientRect(), c = document.getElementById('chart')
    .getBoundingClientRect();
  return own && r.width > 20 && r.left >= c.left && r.left < c.right - 20
    && r.top >= c.top && r.bottom <= Math.min(innerHeight, c.bottom);
})"""
SCALE = """() => {  // the chart as drawn / its natural size (the SVG's own width and height)
  const svg = document.getElementById('diagram'), drawn = svg.getBoundingClientRect();
  const w = svg.width.baseVal, h = svg.height.baseVal;
  w.convertToSpecifiedUnits(SVGLength.SVG_LENGTHTYPE_PX);
  h.convertToSpecifiedUnits(SVGLength.SVG_LENGTHTYPE_PX);
  return [drawn.width / w.valueInSpecifiedUnits, drawn.height / h.valueInSpecifiedUnits];
}"""

ARROW_OF = """() => {  // the middle of an arrow in view that belongs to one step only, and
  // where nothing of another step covers it: [step, x, y]
  const c = document.getElementById('chart').getBoundingClientRect();
  const steps = g => [...g.classList].filter(c => c.startsWith('step-'));
  const g = [...document.querySelectorAll('.chart g.edge')]
    .find(g => {
      const path = g.querySelector('path');
      if (steps(g).length !== 1 || !path) return false;
      const r = path.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2;
      if (!(x > c.left && x < c.right && y > c.top && y < c.bottom && y < innerHeight)) {
        return false;
      }
      const hit = document.elementFromPoint(x, y).closest('g.node, g.edge');
      return hit !== null && steps(hit).join() === steps(g).join();
    });
  const step = Number([...g.classList].find(c => c.startsWith('step-')).slice(5));
  const r = g.querySelector('path').getBoundingClientRect();
  return [step, r.left + r.width / 2, r.top + r.height / 2];
}"""
BLANK_IN_ROW = """i => {  // a point in step i's row (the middle of its own elements) on no element
  const own = [...document.querySelectorAll('.chart .step-' + i)]
    .filter(g => [...g.classList].filter(c => c.startsWith('step-')).length === 1)
    .map(g => g.getBoundingClientRect());
  const y = (Math.min(...own.map(r => r.top)) + Math.max(...own.map(r => r.bottom))) / 2;
  const chart = document.getElementById('diagram').getBoundingClientRect();
  for (let x = chart.left + 2; x < chart.right; x += 4) {
    if (!document.elementFromPoint(x, y).closest('g.node, g.edge')) return [x, y];
  }
  return null;
}"""


def _open(tab: Any, pages: Path, name: str, hash: str = "") -> None:
    tab.goto((pages / f"{name}.html").as_uri() + hash)


def _step(tab: Any) -> int:
    return int(tab.inner_text("#step-no"))


def _current(tab: Any) -> list[int]:
    """The step every highlighted chart element belongs to (an element that spans steps,
    such as a message sent at one and delivered at the next, carries both)."""
    per_element = tab.locator(".chart g.current").evaluate_all(
        "gs => gs.map(g => [...g.classList].filter(c => c.startsWith('step-'))"
        ".map(c => Number(c.slice(5))))"
    )
    common = set.intersection(*(set(steps) for steps in per_element)) if per_element else set()
    return sorted(common)


@pytest.mark.parametrize("width", [1000, 1400])
@pytest.mark.parametrize("name", ["bully-flapping", "lease-no-fencing"])
def test_opens_at_the_deciding_step_with_the_chart_legible_above_the_table(
    tab: Any, pages: Path, name: str, width: int
) -> None:
    """Beside the table the chart would be drawn at 0.3 to 0.5 of its size (labels 4 to
    6 px high); above it, at 0.7 or more, it scrolls where it is wider than its box."""
    tab.set_viewport_size({"width": width, "height": 900 if width == 1400 else 800})
    _open(tab, pages, name)
    last = LAST[name]
    assert _step(tab) == last and tab.is_visible("#verdict")
    assert _current(tab) == [last]
    assert tab.get_attribute("#steps tr.current", "data-step") == str(last)
    assert tab.evaluate("location.hash") == ""  # the address names no step until one steps
    wide, tall = tab.evaluate(SCALE)
    assert wide >= 0.7 and abs(wide - tall) < 0.01, (wide, tall)
    scrolls = tab.evaluate("(c => [c.scrollWidth > c.clientWidth, c.scrollHeight > c.clientHeight])"
                           "(document.getElementById('chart'))")  # fmt: skip
    drawn = tab.locator("#diagram").bounding_box()
    box = tab.locator("#chart").bounding_box()
    assert scrolls == [drawn["width"] > box["width"], drawn["height"] > box["height"]]
    assert tab.evaluate("document.documentElement.scrollWidth <= innerWidth")
    now = tab.locator(".state-col").bounding_box()
    assert box["y"] + box["height"] <= now["y"]  # above the table, the page's width
    assert box["width"] >= width - 40
    marks = tab.evaluate(MARKS, last)
    assert len(marks) >= 3 and all(lit for lit, _ in marks), marks
    # in view at once: the lane headers (pinned to the top of the chart's box), the deciding
    # step's words, time and arrow's start, and the verdict under it
    assert tab.evaluate(IN_VIEW, ["g.header", False])
    for selector in (f"#chart-r{last}_step", "#chart-verdict", "#chart-h_time"):
        assert tab.evaluate(IN_VIEW, [selector, True]), selector
    assert tab.evaluate(STARTS_IN_VIEW, last)
    # the highlight is the step's row only, not the bars that start there and run on
    band, cell = tab.evaluate(
        "n => [document.querySelector('.chart rect.band'), document.getElementById("
        "'chart-r' + n + '_n1')].map(e => e.getBoundingClientRect().height)",
        last,
    )
    assert 0 < band <= cell + 1, (band, cell)
    # current and deciding at once: its words stay red, not the current step's blue
    fill = tab.evaluate(
        "n => getComputedStyle(document.querySelector('#chart-r' + n + '_step text')).fill", last
    )
    # (a lasso has no deciding step: its last is blue as the current one)
    assert fill == ("rgb(192, 57, 43)" if name == "lease-no-fencing" else "rgb(11, 87, 208)"), fill
    ARTIFACTS.mkdir(exist_ok=True)
    tab.screenshot(path=str(ARTIFACTS / f"{name}-{width}-opened.png"))
    tab.keyboard.press("Home")
    assert _step(tab) == 0 and _current(tab) == [0] and not tab.is_visible("#verdict")
    assert tab.evaluate("location.hash") == "#step=0"
    tab.keyboard.press("End")
    assert _step(tab) == last and _current(tab) == [last]
    assert all(lit for lit, _ in tab.evaluate(MARKS, last))


def test_a_window_wide_enough_puts_the_chart_beside_the_table(tab: Any, pages: Path) -> None:
    """From the width at which the chart fits beside the table at 0.7 (the page's own
    breakpoint: 1,651 px for lease-no-fencing's chart), it stands there and stays in view."""
    tab.set_viewport_size({"width": 1680, "height": 700})
    _open(tab, pages, "lease-no-fencing")
    chart = tab.locator("#chart").bounding_box()
    assert chart["x"] + chart["width"] <= tab.locator(".state-col").bounding_box()["x"]
    assert tab.evaluate(SCALE)[0] >= 0.7
    assert tab.evaluate("document.documentElement.scrollWidth <= innerWidth")
    tab.evaluate("scrollTo(0, document.documentElement.scrollHeight)")  # the chart stays
    box = tab.locator(".chart-col").bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= tab.viewport_size["height"]


def test_the_address_opens_a_step_and_follows_the_stepping(tab: Any, pages: Path) -> None:
    _open(tab, pages, "lease-no-fencing", "#step=3")
    assert _step(tab) == 3 and _current(tab) == [3]
    assert tab.inner_text("#step-text") == "3: n1: pause (process pause begins)"
    tab.keyboard.press("n")
    assert _step(tab) == 4 and tab.evaluate("location.hash") == "#step=4"
    tab.keyboard.press("p")
    tab.keyboard.press("p")
    assert tab.evaluate("location.hash") == "#step=2"
    tab.evaluate("location.hash = '#step=8'")
    tab.wait_for_function("document.getElementById('step-no').textContent === '8'")
    _open(tab, pages, "lease-no-fencing", "#step=99")  # beyond the end: the last step
    assert _step(tab) == 10 and tab.evaluate("location.hash") == "#step=10"


def test_a_click_on_a_row_or_an_arrow_goes_to_its_step(tab: Any, pages: Path) -> None:
    _open(tab, pages, "bully-flapping")
    tab.click("#steps tr[data-step='12']")  # below the chart: the page scrolls to it
    assert _step(tab) == 12 and _current(tab) == [12]
    tab.evaluate("scrollTo(0, 0)")  # back up to the chart
    step, x, y = tab.evaluate(ARROW_OF)
    tab.mouse.click(x, y)
    assert _step(tab) == step != 12  # an arrow of that step
    tab.mouse.click(*tab.evaluate(BLANK_IN_ROW, 14))
    assert _step(tab) == 14  # a blank part of the row
    tab.locator("#slider").fill("5")
    assert _step(tab) == 5 and _current(tab) == [5]


def test_right_at_the_last_step_of_a_lasso_goes_back_to_where_the_loop_starts(
    tab: Any, pages: Path
) -> None:
    _open(tab, pages, "bully-flapping")
    tab.keyboard.press("End")
    assert tab.inner_text("#loop-note").startswith("loop: step 18 returns to the state of step 7")
    assert tab.evaluate("document.querySelector('.chart g.loop').classList.contains('current')")
    ARTIFACTS.mkdir(exist_ok=True)
    tab.screenshot(path=str(ARTIFACTS / "bully-flapping-1400-last-step.png"))
    tab.keyboard.press("ArrowRight")
    assert _step(tab) == 7 and not tab.is_visible("#loop-note")
    tab.keyboard.press("End")
    tab.click("#next")
    assert _step(tab) == 7
    tab.focus("#slider")  # a focused slider does not stop at its end either
    tab.keyboard.press("End")
    tab.keyboard.press("ArrowRight")
    assert _step(tab) == 7


def test_a_plain_counterexample_stops_at_its_last_step(tab: Any, pages: Path) -> None:
    _open(tab, pages, "lease-no-fencing", "#step=10")
    tab.keyboard.press("ArrowRight")
    assert _step(tab) == 10 and tab.is_disabled("#next")
    assert not tab.is_visible("#loop-note")

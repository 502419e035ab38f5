"""Self-contained HTML: a page to step through one trace offline, and the gate's index page.

A trace page is one file, no network: the SVG sequence chart, a small script and the trace
itself (as JSON) are inline. The chart is never drawn below LEGIBLE (0.7) of its natural
size and scrolls in its box where it is wider: it spans the page above the state table and
the step list, or, in a window wide enough for it beside the table (a breakpoint from the
chart's own width), stands beside them and stays in view (sticky). The page opens at the
deciding step (the last: where the property broke or was met, where a lasso's loop
closes) unless `#step=N` in the address names another; the address then follows the
stepping. The current step is highlighted in the chart (its label, cells and arrows: the
elements Graphviz writes with the class `step-<i>`, see render/dot.py) and the chart's box
scrolled to it when it is out of view; a click on a step's row or arrow in the chart, or
on a row of the step list, goes to that step. A slider, the buttons and the keys
(Left/Right or p/n, Home/End) step. In a lasso, the step after the last goes back to where
the loop starts. The state table shows every participant's full state at the current
step, each changed field as `old -> new`, or, for a collection (a list, a set, a string
that renders a flat one), element by element (`element_diff`: `+added`, `-removed`); the
deciding step shows the broken property and why. Only deterministic statistics are shown
(no timings), so the same trace gives the same bytes.

The index (`verify --all --html DIR`) has one pill per protocol coloured by the gate's
judgement (green as expected, red a finding, grey incomplete) and a table of every
property with a link to each page, the distinct states and the search time.
"""

from __future__ import annotations

import ast
import html
import json
import math
import re
from collections.abc import Mapping
from difflib import SequenceMatcher

from leadercheck.checker.gate.cases import CaseOutcome, GateReport
from leadercheck.checker.render.context import TraceContext
from leadercheck.checker.render.text import loop_text, step_count
from leadercheck.checker.result import Stats, Verdict


def _plain(value: object, nested: bool = False) -> str:
    """A field's value as a reviewer reads it: yes/no, `-` for none, lists comma-separated."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "-"
    if isinstance(value, Mapping):
        text = ", ".join(f"{k}: {_plain(v, True)}" for k, v in value.items())
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=str) if isinstance(value, (set, frozenset)) else value
        text = ", ".join(_plain(v, True) for v in items)
    else:
        return str(value)
    if not text:
        return "-"
    return f"({text})" if nested else text


_WRAPPED = re.compile(r"(?:frozenset|set)\((.*)\)", re.S)  # a set's repr: frozenset({1, 2})
_SCALAR = (str, int, float, bool, type(None))


def _read_collection(text: str) -> list[object] | set[object] | tuple[object, ...] | None:
    """A string that renders a flat collection, `{1, 2}`, `('a', 'b')`, `[3]`, `set()` or
    `frozenset({'n1'})` (as `repr` writes them), read back; None for any other string, a
    nested collection among them (its elements would not read alone)."""
    text = text.strip()
    wrapped = _WRAPPED.fullmatch(text)
    if wrapped:
        text = wrapped.group(1).strip() or "()"
    elif not text.startswith(("{", "(", "[")):
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if wrapped and isinstance(value, (list, tuple)):
        value = set(value)
    if not isinstance(value, (list, tuple, set)):
        return None
    return value if all(isinstance(v, _SCALAR) for v in value) else None


def _members(value: object) -> list[str] | None:
    """A collection's elements as the page shows each (a set's sorted, as `_plain` lists
    them); None for a value that is no collection."""
    if isinstance(value, str):
        value = _read_collection(value)
    if isinstance(value, (set, frozenset)):
        return [_plain(v, True) for v in sorted(value, key=str)]
    if isinstance(value, (list, tuple)):
        return [_plain(v, True) for v in value]
    return None


def element_diff(old: object, new: object) -> list[tuple[str, str]] | None:
    """How a collection field changed, element by element and in order: `("=", x)` kept,
    `("-", x)` removed, `("+", x)` added. A list (a JSON one, a tuple) is compared in its
    order, a set (or a string that renders one) as its sorted elements. None when either
    value is no collection (a scalar, a nested or unreadable string: the page shows
    `old -> new`) or no element was added or removed."""
    was, now = _members(old), _members(new)
    if was is None or now is None:
        return None
    marked: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, was, now, autojunk=False).get_opcodes():
        if op == "equal":
            marked += [("=", x) for x in now[j1:j2]]
        else:  # a replacement reads as its removed elements, then its added ones
            marked += [("-", x) for x in was[i1:i2]] + [("+", x) for x in now[j1:j2]]
    return marked if any(mark != "=" for mark, _ in marked) else None


def _participant(
    name: str,
    summary: str,
    fields: Mapping[str, object],
    before: Mapping[str, object] | None,
) -> dict[str, object]:
    """One participant at one step; `diffs` has each collection field changed since
    `before` (the same participant a step earlier), element by element."""
    shown = {k: _plain(v) for k, v in fields.items()}
    diffs: dict[str, list[tuple[str, str]]] = {}
    for key, value in fields.items():
        if before is None or key not in before or _plain(before[key]) == shown[key]:
            continue
        marked = element_diff(before[key], value)
        if marked is not None:
            diffs[key] = marked
    entry: dict[str, object] = {"name": name, "summary": summary, "fields": shown}
    if diffs:
        entry["diffs"] = diffs
    return entry


def _data(ctx: TraceContext) -> dict[str, object]:
    trace = ctx.trace
    steps = [
        {
            "index": step.index,
            "text": str(step.action) if step.action else "initial state",
            "participants": [
                _participant(
                    name,
                    step.summary.get(name, ""),
                    fields,
                    trace.steps[k - 1].view.get(name) if k > 0 else None,
                )
                for name, fields in step.view.items()
            ],
        }
        for k, step in enumerate(trace.steps)
    ]
    loop = trace.loop_from
    return {
        "protocol": ctx.protocol,
        "property": ctx.outcome.prop.name,
        "kind": ctx.kind,
        "reason": ctx.outcome.reason,
        "loop_from": loop,
        "loop_text": loop_text(loop, len(trace)) if loop is not None else "",
        "steps": steps,
    }


_WIDTH = re.compile(r'<svg width="([\d.]+)pt"')
_TITLED = re.compile(r'<title>[^<]*</title>(\s*<g id="a_[^"]*"><a) xlink:title="([^"]*)">')


def embedded_chart(svg: str) -> str:
    """Graphviz's SVG as the page embeds it: no prolog or comments; each element's <title>
    (the Graphviz id, such as `c3_2`) replaced by its tooltip in words; never wider than
    its natural size (the page's style sets how wide below that)."""
    svg = re.sub(r"<!--.*?-->\n?", "", svg[svg.find("<svg") :], flags=re.S)
    svg = _TITLED.sub(r"<title>\2</title>\1>", svg)
    svg = re.sub(r' xlink:title="[^"]*"', "", svg)  # the <title> of its element says it
    width = _WIDTH.search(svg)
    natural = f' style="max-width: {width.group(1)}pt"' if width else ""
    return svg.replace("<svg ", f'<svg id="diagram"{natural} ', 1)


def _natural_width(svg: str) -> float | None:
    """The chart's own width in points, as Graphviz writes it (`<svg width="1479pt"`)."""
    width = _WIDTH.search(svg)
    return float(width.group(1)) if width else None


_NO_CHART = "<p class='note'>No diagram: Graphviz `dot` was not available.</p>"


def _step_rows(ctx: TraceContext) -> str:
    trace = ctx.trace
    last, loop = len(trace), trace.loop_from
    rows = []
    for step in trace.steps:
        i = step.index
        classes = ["deciding"] if i == last else []
        mark = ""
        if loop is not None and i > loop:
            classes.append("looped")
        if loop is not None and i == loop:
            mark = ' <span class="loop-mark">&#8634; the loop returns here</span>'
        text = html.escape(str(step.action) if step.action else "initial state")
        cls = f' class="{" ".join(classes)}"' if classes else ""
        rows.append(f'<tr data-step="{i}"{cls}><td>{i}</td><td>{text}{mark}</td></tr>')
    return "\n".join(rows)


def trace_to_html(
    ctx: TraceContext,
    svg: str | None,
    stats: Stats | None,
    params: Mapping[str, object],
    appendix: str = "",
    appendix_css: str = "",
) -> str:
    """The trace's page; `stats` None for a trace read from a file (no search made it);
    `appendix` is HTML shown below the chart and table (a run against a real system)."""
    # "<" escaped, so no "</script>" or "<!--" in the data can end or bend the script
    data = json.dumps(_data(ctx), sort_keys=True, ensure_ascii=False).replace("<", "\\u003c")
    verdict = "broken" if ctx.kind == "counterexample" else "reached"
    setting = " ".join(f"{k}={v}" for k, v in params.items())
    facts = (
        f"{stats.distinct_states:,} distinct states, {stats.generated_states:,} generated, "
        f"depth {stats.depth}"
        if stats is not None
        else "read from a trace file"
    )
    c = ctx.coverage
    if c is not None:  # a sampled search: the trace is not the shortest, nor the search whole
        search = "random walks" if c.strategy == "simulate" else "a bitstate search"
        swarm = f", {c.workers} workers" if c.workers > 1 else ""
        facts += (
            f"; found by {search} (seed {c.seed}{swarm}) in {ctx.outcome.found_length} steps, "
            "shortened"
        )
    last = len(ctx.trace)
    prop = html.escape(ctx.outcome.prop.name)
    if ctx.trace.loop_from is not None:
        opens = f"step {last}, where the loop closes"
    else:
        opens = f"step {last}, where <b>{prop}</b> is {verdict}"
    return _fill(
        _PAGE,
        TITLE=html.escape(ctx.headline),
        PARAMS=html.escape(setting),
        FACTS=html.escape(facts),
        LAST=str(last),
        KIND="counterexample" if ctx.kind == "counterexample" else "witness",
        VERDICT=f"step {last}: <b>{prop}</b> {verdict}: {html.escape(ctx.outcome.reason)}",
        OPENS=opens,
        STEPS=_step_rows(ctx),
        CSS=_CSS + _layout_css(_natural_width(svg) if svg else None) + appendix_css,
        APPENDIX=appendix,
        SCRIPT=_SCRIPT,
        DATA=data,
        CHART=embedded_chart(svg) if svg else _NO_CHART,
    )


def _fill(template: str, **values: str) -> str:
    """`@NAME@` replaced by its value, in one pass (so no value is itself searched)."""
    return re.sub(r"@([A-Z]+)@", lambda m: values[m.group(1)], template)


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>@TITLE@</title>
<style>
@CSS@</style>
</head>
<body class="@KIND@">
<header>
<h1>@TITLE@</h1>
<div class="meta">parameters: @PARAMS@<br>@FACTS@</div>
</header>
<main class="trace-layout">
<section class="chart-col" aria-label="sequence chart">
<div class="chart-tools">
  <button id="zoom" type="button" title="the chart at its natural size (z)">actual size</button>
  <span class="hint">click a step's row or arrow to go to it</span>
</div>
<div class="chart" id="chart">@CHART@</div>
</section>
<section class="state-col" aria-label="the current step">
<div class="controls">
  <button id="prev" type="button" title="previous step (left arrow, p)">&larr; prev</button>
  <input id="slider" type="range" min="0" max="@LAST@" value="@LAST@" aria-label="step">
  <button id="next" type="button" title="next step (right arrow, n)">next &rarr;</button>
  <span class="where">step <b id="step-no">@LAST@</b> of @LAST@</span>
</div>
<div id="step-text"></div>
<div id="loop-note"></div>
<div id="verdict" class="shown">@VERDICT@</div>
<table class="state">
  <thead><tr><th class="who">participant</th>
  <th>state (changed: old &rarr; new, or <ins>+added</ins> <del class="gone">&minus;removed</del>)
  </th></tr>
  </thead>
  <tbody id="state"></tbody>
</table>
</section>
<section class="steps-col" aria-label="the steps">
<h2>Steps</h2>
<table class="steps"><tbody id="steps">
@STEPS@
</tbody></table>
<p class="note">The page opens at @OPENS@. Keys: &larr; &rarr; or p n step, Home and
End go to the first and the last step. The address (#step=N) opens the step shown.</p>
</section>
</main>
@APPENDIX@
<script type="application/json" id="trace-data">@DATA@</script>
<script>
@SCRIPT@</script>
</body>
</html>
"""

_BASE_CSS = """body { font-family: Helvetica, Arial, sans-serif; margin: 1em; color: #222; }
h1 { font-size: 1.25em; margin: 0 0 .3em; overflow-wrap: anywhere; }
h2 { font-size: 1em; margin: 1.2em 0 .4em; }
.meta { color: #555; font-size: .9em; margin-bottom: .8em; overflow-wrap: anywhere; }
"""

# `verify explore`'s frame: the chart, scaled to its column, beside a side column of
# controls and tables.
PAGE_CSS = (
    _BASE_CSS
    + """.layout { display: grid; grid-template-columns: minmax(0, 1fr) clamp(20em, 34vw, 36em);
  gap: 1.2em; align-items: start; }
.chart-col { position: sticky; top: 1em; max-height: calc(100vh - 2em); display: flex;
  flex-direction: column; min-width: 0; }
.chart svg { display: block; width: 100%; height: auto; }
.side { min-width: 0; }
"""
)

# The trace page's chart is never drawn below LEGIBLE of its natural size (its 11 and 12 pt
# labels stay 10 px or more); where its box is narrower it scrolls. At the window widths
# most pages are read at (1000 to 1900 px) no column beside the state table holds the
# chart at that scale, so the chart spans the page above two columns, the current step's
# state and the list of steps. Only a window wide enough for the chart at LEGIBLE beside
# a SIDE_EM-wide column (the page's own breakpoint, from its chart's width) puts the state
# table beside the chart, which then stays in view (sticky) as the page scrolls.
LEGIBLE = 0.7
SIDE_EM = 30
_BESIDE_EXTRA_PX = SIDE_EM * 16 + 20 + 32 + 24  # the side column, the gap, the page's margins,
# the chart's border and a scroll bar, in CSS px (1em = 16 px)


def _layout_css(natural_pt: float | None) -> str:
    """The trace page's layout: stacked, and side by side from the width at which the
    chart (`natural_pt` wide, None when there is no chart) fits beside the table."""
    stacked = """.trace-layout { display: grid; gap: .2em 1.2em; align-items: start;
  grid-template-columns: minmax(0, 3fr) minmax(0, 2fr);
  grid-template-areas: "chart chart" "state steps"; }
.chart-col { grid-area: chart; display: flex; flex-direction: column; min-width: 0; }
.state-col { grid-area: state; min-width: 0; }
.steps-col { grid-area: steps; min-width: 0; }
.chart { overflow: auto; border: 1px solid #e3e3e3; max-height: 58vh; min-height: 6em; }
.chart #diagram { display: block; height: auto; width: 100%; }
.chart.actual #diagram { width: auto; max-width: none !important; }
@media (max-width: 760px) {
  .trace-layout { grid-template-columns: minmax(0, 1fr);
    grid-template-areas: "chart" "state" "steps"; } }
"""
    if natural_pt is None:
        return stacked
    least = math.ceil(natural_pt * 4 / 3 * LEGIBLE) + 1  # CSS px (3 pt = 4 px), never below
    beside = least + _BESIDE_EXTRA_PX
    return (
        stacked
        + f""".chart #diagram {{ width: max(100%, {least}px); }}
@media (min-width: {beside}px) {{
  .trace-layout {{ grid-template-columns: minmax(0, 1fr) {SIDE_EM}em;
    grid-template-rows: auto 1fr; grid-template-areas: "chart state" "chart steps"; }}
  .chart-col {{ position: sticky; top: 1em; max-height: calc(100vh - 2em); }}
  .chart {{ max-height: none; min-height: 0; flex: 1 1 auto; }} }}
"""
    )


_CSS = (
    _BASE_CSS
    + """.chart-tools { display: flex; gap: .8em; align-items: center; padding: .3em 0;
  font-size: .85em; color: #777; }
.chart rect.band { fill: #dbe7fb; pointer-events: none; }
.chart rect.band.target { fill: #f1f5fd; stroke: #0b57d0; stroke-dasharray: 4 3;
  vector-effect: non-scaling-stroke; }
.chart g.node[class*="step-"], .chart g.edge[class*="step-"], .chart g.loop
  { cursor: pointer; }
.chart rect.header-strip { fill: #fff; }
.chart g.current text { fill: #0b57d0; font-weight: bold; }
/* the deciding step stays red as the current one: its own colour, boldly */
.chart g.current text[fill="#c0392b"] { fill: #c0392b; }
.chart g.current path[stroke="#c0392b"], .chart g.current polygon[stroke="#c0392b"]
  { stroke: #c0392b; }
.chart g.edge.current polygon[fill="#c0392b"], .chart g.node.current ellipse[fill="#c0392b"]
  { fill: #c0392b; }
.chart g.current path, .chart g.current polygon, .chart g.current ellipse
  { stroke: #0b57d0; stroke-width: 2.5px; vector-effect: non-scaling-stroke; }
.chart g.edge.current polygon, .chart g.node.current ellipse { fill: #0b57d0; }
.chart g.loop.current path, .chart g.loop.current polygon { stroke: #0b57d0; }
.chart g.loop.current polygon { fill: #0b57d0; }
.chart g.current polygon[fill="transparent"] { stroke: none; }  /* hit boxes stay unseen */
.controls { display: flex; gap: .5em; align-items: center; padding: .4em 0;
  position: sticky; top: 0; background: #fff; z-index: 1; }
.controls input[type=range] { flex: 1; min-width: 4em; }
.where { white-space: nowrap; }
#step-text { font-family: monospace; margin: .4em 0; overflow-wrap: anywhere; }
#loop-note { display: none; color: #0b57d0; margin: .4em 0; }
#loop-note.shown { display: block; }
#verdict { border: 2px solid #c0392b; color: #c0392b; padding: .5em .8em; margin: .6em 0;
  display: none; overflow-wrap: anywhere; }
body.witness #verdict { border-color: #1e7d32; color: #1e7d32; }
#verdict.shown { display: block; }
table { border-collapse: collapse; width: 100%; font-size: .85em; table-layout: fixed; }
th, td { border: 1px solid #ddd; padding: .25em .45em; text-align: left; vertical-align: top;
  overflow-wrap: break-word; }
th.who { width: 30%; }
.sum { color: #555; }
table.state tr.changed { background: #fff4d6; }
span.field { display: inline-block; margin: 0 .8em .15em 0; max-width: 100%;
  overflow-wrap: anywhere; }
span.field.changed { background: #ffd54f; font-weight: bold; }
del { color: #8a6d1f; font-weight: normal; }
span.field .kept { font-weight: normal; }
ins { color: #1b5e20; text-decoration: none; font-weight: bold; }
del.gone { color: #b71c1c; text-decoration: none; font-weight: bold; }
table.steps td:first-child { width: 2.5em; text-align: right; }
table.steps tr { cursor: pointer; }
table.steps tr:hover { background: #f3f6fb; }
table.steps tr.looped td:first-child { border-left: 3px solid #0b57d0; }
table.steps tr.deciding { color: #c0392b; }
table.steps tr.current { background: #dbe7fb; font-weight: bold; }
.loop-mark { color: #0b57d0; font-weight: normal; }
.note { color: #777; font-size: .85em; }
"""
)

_SCRIPT = """(function () {
  "use strict";
  var SVG_NS = "http://www.w3.org/2000/svg";
  var data = JSON.parse(document.getElementById("trace-data").textContent);
  var last = data.steps.length - 1;
  var loopFrom = data.loop_from;  // null unless a lasso: after the last step comes loopFrom
  var slider = document.getElementById("slider");
  var prev = document.getElementById("prev");
  var next = document.getElementById("next");
  var chart = document.getElementById("chart");
  var graph = chart.querySelector("svg g.graph");
  var stepRows = document.querySelectorAll("#steps tr[data-step]");
  var parts = [];  // step -> its elements in the chart
  var rows = [];   // step -> its row in chart coordinates: {top, bottom}
  var band = null, target = null;  // the current step's row; where a lasso goes back to
  var current = -1;
  var byName = data.steps.map(function (s) {
    var m = {};
    s.participants.forEach(function (p) { m[p.name] = p; });
    return m;
  });

  function stepsOf(g) {  // the steps an element belongs to (one that spans steps: several)
    var found = [];
    g.classList.forEach(function (c) {
      var m = /^step-(\\d+)$/.exec(c);
      if (m) found.push(Number(m[1]));
    });
    return found;
  }

  function stepOf(g) {  // the step a click on an element goes to
    var found = stepsOf(g);
    if (g.classList.contains("loop")) return loopFrom;
    if (found.length) return found[0];
    return g.classList.contains("verdict") ? last : null;
  }

  var own = [];  // step -> its elements that belong to no other step: they make its row
  if (graph) {
    graph.querySelectorAll("g.node, g.edge").forEach(function (g) {
      var found = stepsOf(g);
      found.forEach(function (i) { (parts[i] = parts[i] || []).push(g); });
      if (found.length === 1) (own[found[0]] = own[found[0]] || []).push(g);
    });
    var whole = graph.getBBox();
    var first = graph.querySelector(":scope > g.node, :scope > g.edge");
    [band, target] = ["band", "band target"].map(function (cls) {
      var r = document.createElementNS(SVG_NS, "rect");
      r.setAttribute("class", cls);
      r.setAttribute("x", whole.x);
      r.setAttribute("width", whole.width);
      r.setAttribute("height", 0);
      graph.insertBefore(r, first);
      return r;
    });
    own.forEach(function (els, i) {  // a row is its hover cells and its step's words: not
      // a bar or a line that starts there and runs on to the end
      var top = Infinity, bottom = -Infinity;
      els.forEach(function (g) {
        if (!["cell", "step", "time"].some(function (k) { return g.classList.contains(k); })) {
          return;
        }
        var b = g.getBBox();
        if (b.width === 0 && b.height === 0) return;
        top = Math.min(top, b.y);
        bottom = Math.max(bottom, b.y + b.height);
      });
      if (top < bottom) rows[i] = {top: top, bottom: bottom};
    });
    pinHeader();
  }

  function pinHeader() {  // the lane headers stay at the top of the chart's box as it
    // scrolls: moved last (drawn over the rest), on a white strip, shifted by the scroll
    var heads = Array.prototype.slice.call(graph.querySelectorAll("g.header"));
    if (!heads.length) return;
    var top = Infinity, bottom = -Infinity;
    heads.forEach(function (g) {
      var b = g.getBBox();
      top = Math.min(top, b.y);
      bottom = Math.max(bottom, b.y + b.height);
    });
    var strip = document.createElementNS(SVG_NS, "rect");
    strip.setAttribute("class", "header-strip");
    strip.setAttribute("x", whole.x);
    strip.setAttribute("width", whole.width);
    strip.setAttribute("y", top - 4);
    strip.setAttribute("height", bottom - top + 8);
    graph.appendChild(strip);
    heads.forEach(function (g) { graph.appendChild(g); });
    var moved = [strip].concat(heads);
    chart.addEventListener("scroll", function () {
      var svg = graph.ownerSVGElement, scale = svg.getBoundingClientRect().height /
        svg.viewBox.baseVal.height;
      var moved0 = graph.transform.baseVal.consolidate();  // the graph's own shift
      var shift = moved0 ? moved0.matrix.f : 0;
      var lift = Math.max(0, chart.scrollTop / scale - (top - 4 + shift));
      moved.forEach(function (g) {
        if (lift > 0) g.setAttribute("transform", "translate(0," + lift + ")");
        else g.removeAttribute("transform");
      });
    }, {passive: true});
  }

  function rowAt(x, y) {  // the step whose row holds the screen point (x, y), or null
    var pt = graph.ownerSVGElement.createSVGPoint();
    pt.x = x; pt.y = y;
    var p = pt.matrixTransform(graph.getScreenCTM().inverse());
    var best = null, dist = Infinity;
    rows.forEach(function (r, i) {
      if (p.y < r.top || p.y > r.bottom) return;
      var d = Math.abs(p.y - (r.top + r.bottom) / 2);
      if (d < dist) { best = i; dist = d; }
    });
    return best;
  }

  function seen() {  // the part of the chart's box inside the window, scroll bars left out
    // (all of the box when the page is scrolled away from it)
    var c = chart.getBoundingClientRect();
    var left = c.left + chart.clientLeft, top = c.top + chart.clientTop;
    var box = {left: left, top: top, right: left + chart.clientWidth,
      bottom: top + chart.clientHeight};
    var shown = {left: Math.max(0, box.left), top: Math.max(0, box.top),
      right: Math.min(innerWidth, box.right), bottom: Math.min(innerHeight, box.bottom)};
    return shown.right > shown.left && shown.bottom > shown.top ? shown : box;
  }

  function inView(el) {
    var r = el.getBoundingClientRect(), c = seen();
    return r.top >= c.top && r.bottom <= c.bottom &&
      r.left >= c.left - 1 && r.right <= c.right + 1;
  }

  function reveal(i) {  // scroll the chart (never the page) to the step's row, centred, and
    // its arrow (or first element) into view, only if they are not in view
    var els = own[i] || parts[i] || [];
    var main = els.filter(function (g) { return g.classList.contains("edge"); })[0] || els[0];
    if (!main) return;
    var rowOut = band && rows[i] && !inView(band);
    if (!rowOut && inView(main)) return;
    var r = main.getBoundingClientRect(), c = seen(), pad = 12;
    chart.scrollTop += (r.top + r.bottom - c.top - c.bottom) / 2;
    // sideways only as far as its start needs: the step and time columns (and the
    // verdict under the last row) stay in view wherever they can
    var start = r.left + chart.scrollLeft - c.left;  // where it starts, from the chart's left
    if (start > c.right - c.left - pad) {
      chart.scrollLeft = start - pad - (c.right - c.left) / 3;
    } else if (r.left < c.left + pad || start < c.right - c.left - pad) {
      chart.scrollLeft = Math.max(0, Math.min(chart.scrollLeft, start - pad));
    }
  }

  function cell(tag, text, cls) {
    var e = document.createElement(tag);
    e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }

  function changeOf(box, was, now) {  // "old -> new", the old struck through
    box.appendChild(cell("del", was));
    box.appendChild(document.createTextNode(" \\u2192 "));
    box.appendChild(cell("span", now, "now"));
  }

  function elementsOf(box, marked) {  // a collection's change: "a, +b, -c" (- a minus sign)
    marked.forEach(function (m, k) {
      if (k > 0) box.appendChild(document.createTextNode(", "));
      if (m[0] === "+") box.appendChild(cell("ins", "+" + m[1]));
      else if (m[0] === "-") box.appendChild(cell("del", "\\u2212" + m[1], "gone"));
      else box.appendChild(cell("span", m[1], "kept"));
    });
  }

  function table(i) {
    var body = document.getElementById("state");
    var before = i > 0 ? byName[i - 1] : null;
    body.textContent = "";
    data.steps[i].participants.forEach(function (p) {
      var old = before ? before[p.name] || null : null;
      var row = document.createElement("tr");
      row.dataset.participant = p.name;
      var state = document.createElement("td");
      var changed = false;
      Object.keys(p.fields).forEach(function (key) {
        var now = p.fields[key];
        var diff = old !== null && old.fields[key] !== undefined && old.fields[key] !== now;
        var span = cell("span", "", diff ? "field changed" : "field");
        key.split("_").forEach(function (part, k) {  // long names may break after a "_"
          if (k > 0) span.append("_", document.createElement("wbr"));
          span.append(part);
        });
        span.append(": ");
        var marked = diff && p.diffs ? p.diffs[key] : undefined;
        if (marked) elementsOf(span, marked);
        else if (diff) changeOf(span, old.fields[key], now);
        else span.appendChild(document.createTextNode(now));
        state.appendChild(span);
        changed = changed || diff;
      });
      var who = document.createElement("td");
      who.appendChild(cell("b", p.name));
      var summary = cell("div", "", "sum");
      if (old !== null && old.summary !== p.summary) changeOf(summary, old.summary, p.summary);
      else summary.textContent = p.summary;
      who.appendChild(summary);
      if (changed) row.className = "changed";
      row.append(who, state);
      body.appendChild(row);
    });
  }

  function writeHash(i) {
    var h = "#step=" + i;
    if (location.hash === h) return;
    try { history.replaceState(null, "", h); } catch (e) { location.replace(h); }
  }

  function show(i, scroll, quiet) {  // quiet: leave the address as it is
    i = Math.max(0, Math.min(last, Math.round(i) || 0));
    current = i;
    slider.value = i;
    document.getElementById("step-no").textContent = i;
    document.getElementById("step-text").textContent = i + ": " + data.steps[i].text;
    var looping = loopFrom !== null && i === last;
    var note = document.getElementById("loop-note");
    note.textContent = looping ? data.loop_text + "; next (\\u2192) goes to step " + loopFrom : "";
    note.className = looping ? "shown" : "";
    document.getElementById("verdict").className = i === last ? "shown" : "";
    prev.disabled = i === 0;
    next.disabled = i === last && loopFrom === null;
    next.innerHTML = looping ? "back to " + loopFrom + " &#8634;" : "next &rarr;";
    table(i);
    stepRows.forEach(function (r) {
      r.classList.toggle("current", Number(r.dataset.step) === i);
    });
    if (graph) {
      parts.forEach(function (els, k) {
        els.forEach(function (g) { g.classList.toggle("current", k === i); });
      });
      graph.querySelectorAll("g.loop").forEach(function (g) {
        g.classList.toggle("current", looping);
      });
      place(band, rows[i]);
      place(target, looping ? rows[loopFrom] : null);
      if (scroll) reveal(i);
    }
    if (!quiet) writeHash(i);
  }

  function place(rect, row) {
    rect.setAttribute("y", row ? row.top : 0);
    rect.setAttribute("height", row ? row.bottom - row.top : 0);
  }

  function after(i) { return i === last && loopFrom !== null ? loopFrom : i + 1; }
  function readHash() {
    var m = /^#step=(\\d+)$/.exec(location.hash);
    return m ? Number(m[1]) : null;
  }

  slider.addEventListener("input", function () { show(Number(slider.value), true); });
  prev.addEventListener("click", function () { show(current - 1, true); });
  next.addEventListener("click", function () { show(after(current), true); });
  document.getElementById("zoom").addEventListener("click", zoom);
  function zoom() {
    var actual = chart.classList.toggle("actual");
    document.getElementById("zoom").textContent = actual ? "fit to the page" : "actual size";
    reveal(current);
  }
  stepRows.forEach(function (r) {
    r.addEventListener("click", function () { show(Number(r.dataset.step), true); });
  });
  if (graph) {
    graph.ownerSVGElement.addEventListener("click", function (e) {
      var g = e.target.closest("g.node, g.edge");
      var i = g ? stepOf(g) : null;
      if (i === null) i = rowAt(e.clientX, e.clientY);
      if (i !== null) show(i, true);
    });
  }
  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    var to = {ArrowRight: after(current), n: after(current), ArrowLeft: current - 1,
      p: current - 1, Home: 0, End: last}[e.key];
    if (e.key === "z") { zoom(); return; }
    if (to === undefined) return;
    e.preventDefault();  // also keeps a focused slider from moving a second time
    show(to, true);
  });
  window.addEventListener("hashchange", function () {
    var i = readHash();
    if (i !== null && i !== current) show(i, true);
  });
  var start = readHash();  // none: the deciding step, where the property broke or was met
  show(start === null ? last : start, true, start === null);
})();
"""


# The index page: the gate's judgement per protocol.

_STATUS = {  # class -> what the pill says
    "finding": "differs from the specs",
    "incomplete": "incomplete",
    "expected": "violated as expected",
    "holds": "holds as expected",
}


def _status(outcome: CaseOutcome) -> str:
    if not all(r.ok for r in outcome.rows):
        return "finding"
    verdicts = {r.result.verdict for r in outcome.rows}
    if Verdict.INCOMPLETE in verdicts:
        return "incomplete"
    return "expected" if Verdict.VIOLATED in verdicts else "holds"


def _anchor(name: str) -> str:
    return "p-" + re.sub(r"[^A-Za-z0-9_-]", "-", name)


def _got(outcome: CaseOutcome, k: int, page: str | None) -> str:
    r = outcome.rows[k].result
    got = r.verdict.value
    trace = r.trace
    if trace is None:
        return got
    shape = "lasso" if trace.loop_from is not None else r.trace_kind
    if shape == "witness":  # as the report says it
        text = f"reached in {step_count(len(trace))}"
    else:
        text = f"{shape} of {step_count(len(trace))}"
    return f'{got}, <a href="{html.escape(page)}">{text}</a>' if page else f"{got}, {text}"


def overview_html(report: GateReport, pages: Mapping[str, Mapping[str, str]]) -> str:
    """An index of every protocol's result: one pill per protocol, then each verdict.

    `pages` maps protocol -> property -> the file name of that trace's page. A pill is
    green when the protocol is as the specs expect (a violation included), red for a gate
    finding and grey when a search was incomplete.
    """
    pills, rows = [], []
    for outcome in report.outcomes:
        name = outcome.case.name
        links = pages.get(name, {})
        status = _status(outcome)
        label = html.escape(name)
        stats = outcome.result.stats
        title = html.escape(f"{name}: {_STATUS[status]}, {stats.distinct_states:,} states")
        pills.append(
            f'<a class="pill {status}" href="#{_anchor(name)}" title="{title}">{label} '
            f'<span class="status">{_STATUS[status]}</span></a>'
        )
        span = len(outcome.rows)
        for k, r in enumerate(outcome.rows):
            prop = r.result.prop.name
            expected = r.expected.value if r.expected else "-"
            judged = "as expected" if r.ok else "<br>".join(html.escape(f) for f in r.findings)
            cells = ""
            if k == 0:
                cells = (
                    f'<td rowspan="{span}" id="{_anchor(name)}" class="name {status}">{label}</td>'
                )
            cells += (
                f"<td>{html.escape(prop)}</td><td>{expected}</td>"
                f"<td>{_got(outcome, k, links.get(prop))}</td><td>{judged}</td>"
            )
            if k == 0:
                cells += (
                    f'<td rowspan="{span}" class="num">{stats.distinct_states:,}</td>'
                    f'<td rowspan="{span}" class="num">{stats.seconds:.2f}</td>'
                )
            mark = "" if r.ok else ' class="finding"'
            rows.append(f"<tr{mark}>{cells}</tr>")
    cases = len(report.outcomes)
    props = sum(len(o.rows) for o in report.outcomes)
    if report.passed:
        verdict = f"PASS: {cases} cases, {props} verdicts as expected"
        findings = ""
    else:
        n = len(report.findings)
        verdict = f"FAIL: {n} finding{'s' if n != 1 else ''}"
        findings = (
            '<ul class="findings">'
            + "".join(f"<li>{html.escape(f)}</li>" for f in report.findings)
            + "</ul>"
        )
    total = sum(o.result.stats.seconds for o in report.outcomes)
    return _fill(
        _OVERVIEW,
        VERDICT=verdict,
        GATE="pass" if report.passed else "fail",
        FINDINGS=findings,
        PILLS="\n".join(pills),
        ROWS="\n".join(rows),
        TOTAL=f"{total:.1f}",
    )


_OVERVIEW = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>leadercheck: every protocol</title>
<style>
body { font-family: Helvetica, Arial, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.3em; }
h1 .pass { color: #1e7d32; }
h1 .fail { color: #c0392b; }
.pills { display: flex; flex-wrap: wrap; gap: .5em; margin: 1em 0; }
.pill { border-radius: 1em; padding: .3em .9em; text-decoration: none; color: #fff; }
.pill .status { font-size: .8em; opacity: .9; }
.pill.holds, .pill.expected { background: #2e7d32; }
.pill.finding { background: #c0392b; }
.pill.incomplete { background: #78828c; }
table { border-collapse: collapse; font-size: .9em; }
th, td { border: 1px solid #ddd; padding: .3em .6em; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.name { font-weight: bold; border-left: 6px solid #2e7d32; }
td.name.finding { border-left-color: #c0392b; }
td.name.incomplete { border-left-color: #78828c; }
tr.finding td { background: #fde3e0; }
.findings { color: #c0392b; }
.note { color: #555; }
</style>
</head>
<body>
<h1>leadercheck: every protocol (gate <span class="@GATE@">@VERDICT@</span>)</h1>
@FINDINGS@
<p class="note">Green: as the specs expect, a violation included (a deliberately broken
variant); follow a property's link to step through its shortest counterexample. Red: a gate
finding (a verdict that differs from the specs, a counterexample longer than its bound, or a
HOLDS that is vacuous). Grey: a search a bound cut short. States are distinct states at the
protocol's defaults; seconds, this run's search time (@TOTAL@ s in all).</p>
<div class="pills">
@PILLS@
</div>
<table>
<thead><tr><th>protocol</th><th>property</th><th>expected</th><th>got</th><th>gate</th>
<th>states</th><th>seconds</th></tr></thead>
<tbody>
@ROWS@
</tbody>
</table>
</body>
</html>
"""

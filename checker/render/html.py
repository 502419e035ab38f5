"""A self-contained HTML report of one trace: step through it offline, see every participant.

One file, no network: the SVG sequence chart and the little script are inline, and
the trace itself is embedded as JSON. A slider and the arrow keys (or p/n) move
between steps; a table shows every participant's full state at the current step,
with what changed since the previous step highlighted; the deciding step shows the
broken property and why. Only deterministic statistics are shown (no timings), so
the same trace gives the same page.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping

from leadercheck.checker.gate import GateReport
from leadercheck.checker.render.context import TraceContext
from leadercheck.checker.result import Stats


def _data(ctx: TraceContext) -> dict[str, object]:
    steps = []
    for step in ctx.trace.steps:
        steps.append(
            {
                "index": step.index,
                "text": str(step.action) if step.action else "initial state",
                "participants": [
                    {
                        "name": name,
                        "summary": step.summary.get(name, ""),
                        "fields": {k: _plain(v) for k, v in fields.items()},
                    }
                    for name, fields in step.view.items()
                ],
            }
        )
    return {
        "protocol": ctx.protocol,
        "property": ctx.outcome.prop.name,
        "kind": ctx.kind,
        "reason": ctx.outcome.reason,
        "steps": steps,
    }


def _plain(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "-"
    return "-" if value is None else str(value)


def trace_to_html(
    ctx: TraceContext, svg: str | None, stats: Stats, params: Mapping[str, object]
) -> str:
    data = json.dumps(_data(ctx), sort_keys=True).replace("</", "<\\/")
    verdict = "broken" if ctx.kind == "counterexample" else "reached"
    chart = (
        svg[svg.find("<svg") :]
        if svg
        else "<p class='note'>No diagram: Graphviz `dot` was not available.</p>"
    )
    setting = " ".join(f"{k}={v}" for k, v in params.items())
    facts = (
        f"{stats.distinct_states:,} distinct states, {stats.generated_states:,} generated, "
        f"depth {stats.depth}"
    )
    return _PAGE.format(
        title=html.escape(ctx.headline),
        headline=html.escape(ctx.headline),
        params=html.escape(setting),
        facts=html.escape(facts),
        prop=html.escape(ctx.outcome.prop.name),
        verdict=verdict,
        reason=html.escape(ctx.outcome.reason),
        last=len(ctx.trace),
        chart=chart,
        data=data,
    )


_NO_CHART = "<p class='note'>No diagram: Graphviz `dot` was not available.</p>"

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
body {{ font-family: Helvetica, Arial, sans-serif; margin: 1.5em; color: #222; }}
h1 {{ font-size: 1.3em; margin: 0 0 .3em; }}
.meta {{ color: #555; font-size: .9em; margin-bottom: 1em; }}
.controls {{ display: flex; gap: .6em; align-items: center; margin: .8em 0; }}
.controls input[type=range] {{ flex: 1; }}
#step-text {{ font-family: monospace; font-size: 1em; margin: .4em 0; }}
#verdict {{ border: 2px solid #c0392b; color: #c0392b; padding: .5em .8em; margin: .6em 0;
  display: none; }}
#verdict.shown {{ display: block; }}
table {{ border-collapse: collapse; width: 100%; font-size: .9em; }}
th, td {{ border: 1px solid #ddd; padding: .3em .5em; text-align: left; vertical-align: top; }}
tr.changed {{ background: #fff4d6; }}
span.field {{ display: inline-block; margin: 0 .8em .2em 0; }}
span.field.changed {{ background: #ffd54f; font-weight: bold; }}
.chart {{ overflow: auto; border: 1px solid #eee; margin-top: 1em; }}
.chart g.current text {{ font-weight: bold; fill: #0b57d0; }}
.chart g.current polygon, .chart g.current ellipse {{ stroke: #0b57d0; stroke-width: 2; }}
.note {{ color: #777; }}
</style>
</head>
<body>
<h1>{headline}</h1>
<div class="meta">parameters: {params}<br>{facts}</div>
<div class="controls">
  <button id="prev" title="previous step (left arrow)">&larr; prev</button>
  <input id="slider" type="range" min="0" max="{last}" value="0" aria-label="step">
  <button id="next" title="next step (right arrow)">next &rarr;</button>
  <span>step <b id="step-no">0</b> of {last}</span>
</div>
<div id="step-text"></div>
<div id="verdict">step {last}: <b>{prop}</b> {verdict}: {reason}</div>
<table>
  <thead><tr><th>participant</th><th>summary</th><th>state</th></tr></thead>
  <tbody id="state"></tbody>
</table>
<div class="chart">{chart}</div>
<script type="application/json" id="trace-data">{data}</script>
<script>
(function () {{
  const data = JSON.parse(document.getElementById("trace-data").textContent);
  const last = data.steps.length - 1;
  const slider = document.getElementById("slider");
  const body = document.getElementById("state");
  const titles = {{}};
  document.querySelectorAll(".chart g.node").forEach(function (g) {{
    const t = g.querySelector("title");
    if (t) titles[t.textContent] = g;
  }});
  function show(i) {{
    i = Math.max(0, Math.min(last, i));
    slider.value = i;
    document.getElementById("step-no").textContent = i;
    const step = data.steps[i];
    const before = i > 0 ? data.steps[i - 1] : null;
    document.getElementById("step-text").textContent = i + ": " + step.text;
    body.innerHTML = "";
    step.participants.forEach(function (p, k) {{
      const old = before ? before.participants[k] : null;
      const row = document.createElement("tr");
      row.dataset.participant = p.name;
      let changed = false;
      const cells = Object.keys(p.fields).map(function (key) {{
        const diff = old !== null && old.fields[key] !== p.fields[key];
        changed = changed || diff;
        const span = document.createElement("span");
        span.className = diff ? "field changed" : "field";
        span.textContent = key + ": " + p.fields[key];
        return span;
      }});
      if (changed) row.className = "changed";
      const name = document.createElement("td");
      name.textContent = p.name;
      const summary = document.createElement("td");
      summary.textContent = p.summary;
      const state = document.createElement("td");
      cells.forEach(function (c) {{ state.appendChild(c); }});
      row.append(name, summary, state);
      body.appendChild(row);
    }});
    document.getElementById("verdict").className = i === last ? "shown" : "";
    Object.keys(titles).forEach(function (t) {{
      const m = /^[sc](\\d+)(_\\d+)?$/.exec(t);
      titles[t].classList.toggle("current", m !== null && Number(m[1]) === i);
    }});
  }}
  slider.addEventListener("input", function () {{ show(Number(slider.value)); }});
  function step(by) {{ return function () {{ show(Number(slider.value) + by); }}; }}
  document.getElementById("prev").addEventListener("click", step(-1));
  document.getElementById("next").addEventListener("click", step(1));
  document.addEventListener("keydown", function (e) {{
    if (e.target === slider) return;  // the slider moves itself on arrow keys
    const by = {{ArrowRight: 1, n: 1, ArrowLeft: -1, p: -1}}[e.key];
    if (by) {{ show(Number(slider.value) + by); e.preventDefault(); }}
  }});
  show(0);
}})();
</script>
</body>
</html>
"""


def overview_html(report: GateReport, pages: Mapping[str, Mapping[str, str]]) -> str:
    """An index of every protocol's result: one pill per protocol, then each verdict.

    `pages` maps protocol -> property -> the file name of that trace's page.
    """
    pills, rows = [], []
    for outcome in report.outcomes:
        name = outcome.case.name
        links = pages.get(name, {})
        violated = outcome.result.verdict.value == "VIOLATED"
        ok = all(r.ok for r in outcome.rows)
        kind = "differs" if not ok else ("violated" if violated else "holds")
        first = next(iter(links.values()), None)
        label = html.escape(name)
        pill = (
            f'<a class="pill {kind}" href="{html.escape(first)}">{label}</a>'
            if first
            else (f'<span class="pill {kind}">{label}</span>')
        )
        pills.append(pill)
        for r in outcome.rows:
            prop = r.result.prop.name
            got = r.result.verdict.value
            page = links.get(prop)
            cell = f'<a href="{html.escape(page)}">{got}</a>' if page else got
            expected = r.expected.value if r.expected else "-"
            mark = "" if r.ok else " class='differs'"
            rows.append(
                f"<tr{mark}><td>{label}</td><td>{html.escape(prop)}</td>"
                f"<td>{expected}</td><td>{cell}</td></tr>"
            )
    verdict = "PASS" if report.passed else "FAIL"
    return _OVERVIEW.format(verdict=verdict, pills="\n".join(pills), rows="\n".join(rows))


_OVERVIEW = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>leadercheck: every protocol</title>
<style>
body {{ font-family: Helvetica, Arial, sans-serif; margin: 1.5em; color: #222; }}
.pills {{ display: flex; flex-wrap: wrap; gap: .5em; margin: 1em 0; }}
.pill {{ border-radius: 1em; padding: .3em .9em; text-decoration: none; color: #fff; }}
.pill.holds {{ background: #2e7d32; }}
.pill.violated {{ background: #c0392b; }}
.pill.differs {{ background: #e67e22; }}
table {{ border-collapse: collapse; font-size: .9em; }}
th, td {{ border: 1px solid #ddd; padding: .3em .6em; text-align: left; }}
tr.differs {{ background: #ffe0b2; }}
</style>
</head>
<body>
<h1>leadercheck: every protocol (gate {verdict})</h1>
<p>Green: every safety claim holds. Red: a violation, as the specs expect; click to step
through its shortest counterexample. Orange: a verdict differs from the specs.</p>
<div class="pills">
{pills}
</div>
<table>
<thead><tr><th>protocol</th><th>property</th><th>expected</th><th>got</th></tr></thead>
<tbody>
{rows}
</tbody>
</table>
</body>
</html>
"""

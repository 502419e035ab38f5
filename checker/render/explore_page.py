"""`verify explore`'s page and the JSON of one explored state: a model walked by hand.

The page is one HTML document, its script and style inline and nothing fetched from
anywhere but the server that served it: the sequence chart of the trace so far (the same
chart as a counterexample's, render/dot.py, growing a row per step), the steps, the enabled
actions as buttons in the model's words, Back, Restart (with a choice of initial state when
there are several), the claims in this state (a broken one in red), each participant's
summary, and a claim to jump to the shortest violation or witness of. The address always
names the state shown, `?init=K&path=3.0.2` (history.pushState), so a link or a reload
opens it again; the state itself comes from `GET /state` with the same query.

`state_data` is that JSON: the trace's steps, the enabled actions, the claims and the chart.
The chart of a state that breaks a claim is that claim's counterexample chart; of any
other state, a chart whose last step reads "current state reached: no claim is broken
here" (the chart always ends with a verdict box, so the plain state is a witness of itself).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from leadercheck.checker.model import Action
from leadercheck.checker.properties import Kind, Property, sometimes
from leadercheck.checker.render.context import TraceContext
from leadercheck.checker.render.dot import trace_to_dot
from leadercheck.checker.render.html import PAGE_CSS, embedded_chart
from leadercheck.checker.render.svg import SvgUnavailable, dot_to_svg
from leadercheck.checker.render.text import step_count
from leadercheck.checker.result import PropertyResult, Verdict
from leadercheck.checker.trace import Trace

ZOOM = 0.8  # the chart's default scale: its 11 pt labels near 12 px, whatever the column
CHART_STEPS = 300  # beyond this the chart is left out: Graphviz takes seconds per request
HERE = sometimes("current state", lambda state: True, "the state explored by hand")
NOTHING_BROKEN = "no claim is broken here"


@dataclass(frozen=True)
class ClaimState:
    """A claim judged on one state: `decided` means broken (always) or met (sometimes)."""

    prop: Property
    decided: bool
    why: str = ""

    @property
    def broken(self) -> bool:
        return self.decided and self.prop.kind is Kind.ALWAYS

    @property
    def status(self) -> str:
        if self.prop.kind is Kind.ALWAYS:
            return "broken" if self.decided else "holds"
        return "met" if self.decided else "not met"

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.prop.name,
            "kind": self.prop.kind.value,
            "status": self.status,
            "broken": self.broken,
            "why": self.why,
            "description": self.prop.description,
        }


@dataclass(frozen=True)
class Chart:
    """The chart of a state's trace as the page embeds it, or why there is none."""

    svg: str | None
    note: str | None = None


def trace_chart(
    protocol: str,
    params: Mapping[str, object],
    trace: Trace,
    claims: Sequence[ClaimState],
    model: str | None = None,
) -> Chart:
    """The sequence chart of `trace`: the first broken claim's counterexample chart, or a
    plain one ending in "current state reached". None with a note when Graphviz is missing,
    the trace is longer than CHART_STEPS, or the chart cannot be drawn from the model's
    views (the rest of the page works without it)."""
    if len(trace) > CHART_STEPS:
        return Chart(None, f"the chart is drawn up to {CHART_STEPS} steps; this state is "
                     f"{step_count(len(trace))} in")  # fmt: skip
    broken = next((c for c in claims if c.broken), None)
    if broken is not None:
        outcome = PropertyResult(broken.prop, Verdict.VIOLATED, trace, broken.why)
        ctx = TraceContext(protocol, params, outcome, model=model)
    else:
        outcome = PropertyResult(HERE, Verdict.HOLDS, trace, NOTHING_BROKEN)
        title = f"{protocol}: explored by hand, {step_count(len(trace))}"
        ctx = TraceContext(protocol, params, outcome, title=title, model=model)
    try:
        return Chart(embedded_chart(dot_to_svg(trace_to_dot(ctx))))
    except SvgUnavailable as exc:
        return Chart(None, str(exc))
    except Exception as exc:  # a user model's views the chart cannot read: the page goes on
        return Chart(None, f"the chart could not be drawn: {type(exc).__name__}: {exc}")


def state_data(
    init: int,
    moves: Sequence[int],
    trace: Trace,
    enabled: Sequence[Action],
    claims: Sequence[ClaimState],
    chart: Chart,
) -> dict[str, object]:
    """One state as `GET /state` answers it: the trace that reaches it (each step's action
    and participants' summaries), its enabled actions by position, its claims, its chart."""
    return {
        "init": init,
        "path": list(moves),
        "steps": [
            {
                "index": step.index,
                "text": "initial state" if step.action is None else str(step.action),
                "kind": None if step.action is None else step.action.kind,
                "summary": {str(k): str(v) for k, v in step.summary.items()},
            }
            for step in trace.steps
        ],
        "actions": [
            {"index": k, "text": str(action), "kind": action.kind}
            for k, action in enumerate(enabled)
        ],
        "claims": [c.to_json() for c in claims],
        "broken": [c.prop.name for c in claims if c.broken],
        "chart": chart.svg,
        "chart_note": chart.note,
    }


def explore_page(meta: Mapping[str, Any], keepalive: float = 10.0) -> str:
    """The page for `meta`: protocol, params, initial (each initial state's summary),
    claims (name, kind, description), max_steps; it calls in every `keepalive` seconds
    to keep its session. The state comes from the server."""
    meta = {**meta, "keepalive_ms": round(keepalive * 1000), "zoom": ZOOM}
    # "<" escaped, so no "</script>" or "<!--" in a name can end or bend the script
    data = json.dumps(meta, ensure_ascii=False, default=str).replace("<", "\\u003c")
    setting = " ".join(f"{k}={v}" for k, v in meta["params"].items())
    values = {
        "TITLE": html.escape(f"explore {meta['protocol']}"),
        "PARAMS": html.escape(setting or "none"),
        "CSS": _CSS,
        "SCRIPT": _SCRIPT,
        "ZOOM": str(round(ZOOM * 100)),
        "DATA": data,
    }
    return re.sub(r"@([A-Z]+)@", lambda m: values[m.group(1)], _PAGE)  # one pass


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>@TITLE@</title>
<style>
@CSS@</style>
</head>
<body>
<header>
<h1>@TITLE@</h1>
<div class="meta">parameters: @PARAMS@ &middot; <span id="where">step 0</span></div>
</header>
<div id="error" role="alert" hidden></div>
<main class="layout">
<section class="chart-col" aria-label="sequence chart">
<div class="chart-tools">
  <button id="zoom-out" type="button" title="smaller (-)">&minus;</button>
  <span id="zoom-level">@ZOOM@%</span>
  <button id="zoom-in" type="button" title="larger (+)">+</button>
  <span>of the chart's own size; it scrolls where it is larger than its box</span>
</div>
<div class="chart" id="chart"></div>
<p class="note" id="chart-note" hidden></p>
</section>
<section class="side">
<div class="controls">
  <button id="back" type="button" title="drop the last action (Backspace)">&larr; Back</button>
  <select id="init-select" aria-label="initial state"></select>
  <button id="restart" type="button" title="back to the initial state">Restart</button>
</div>
<div class="controls">
  <select id="claim-select" aria-label="claim"></select>
  <button id="jump" type="button">Jump to violation</button>
</div>
<div id="status" aria-live="polite"></div>
<h2>Enabled actions (<span id="action-count">0</span>)</h2>
<div id="actions"></div>
<h2>Claims in this state</h2>
<ul id="claims"></ul>
<h2>State after step <span id="step-no">0</span></h2>
<table class="state"><tbody id="state"></tbody></table>
<h2>Steps</h2>
<ol id="steps" start="0"></ol>
<p class="note">A step in the list goes back to it. The address names this state
(?init=K&amp;path=...): a link or a reload opens it again.</p>
</section>
</main>
<script type="application/json" id="meta">@DATA@</script>
<script>
@SCRIPT@</script>
</body>
</html>
"""

_CSS = (
    PAGE_CSS
    + """.chart { overflow: auto; border: 1px solid #e3e3e3; min-height: 4em; flex: 1 1 auto; }
.controls { display: flex; gap: .5em; align-items: center; padding: .3em 0; flex-wrap: wrap; }
.chart-tools { display: flex; gap: .5em; align-items: center; padding: .3em 0;
  font-size: .85em; color: #777; }
.chart-tools button { min-width: 2em; }
.controls select { max-width: 100%; min-width: 0; flex: 1 1 8em; }
#status { min-height: 1.2em; font-size: .9em; color: #555; }
#error { border: 2px solid #c0392b; color: #c0392b; padding: .5em .8em; margin: .6em 0;
  overflow-wrap: anywhere; }
#actions { display: flex; flex-direction: column; gap: .3em; }
#actions button { text-align: left; font-family: monospace; padding: .3em .5em;
  overflow-wrap: anywhere; cursor: pointer; }
#actions button.fault { border-left: 4px solid #d35400; }
#actions button.tick { border-left: 4px solid #5d6d7e; }
#actions .none { color: #777; font-style: italic; }
#claims { list-style: none; padding: 0; margin: 0; }
#claims li { padding: .2em .4em; margin: .15em 0; border-left: 4px solid #1e7d32; }
#claims li.broken { color: #c0392b; border-left-color: #c0392b; font-weight: bold;
  background: #fdecea; }
#claims li.met { border-left-color: #0b57d0; }
#claims li.unmet { border-left-color: #bbb; color: #555; }
#claims .why { font-weight: normal; display: block; font-size: .9em; }
table { border-collapse: collapse; width: 100%; font-size: .85em; table-layout: fixed; }
th, td { border: 1px solid #ddd; padding: .25em .45em; text-align: left; vertical-align: top;
  overflow-wrap: break-word; }
th { width: 30%; }
#steps { font-family: monospace; font-size: .85em; padding-left: 2.5em; }
#steps li { cursor: pointer; padding: .1em 0; overflow-wrap: anywhere; }
#steps li:hover { background: #f3f6fb; }
#steps li.current { background: #dbe7fb; font-weight: bold; }
button:disabled { cursor: default; }
.note { color: #777; font-size: .85em; }
"""
)

_SCRIPT = """(function () {
  "use strict";
  var META = JSON.parse(document.getElementById("meta").textContent);
  var $ = function (id) { return document.getElementById(id); };
  var shown = null;  // the state on the page, as /state answered it
  var busy = 0;
  var jumpable = META.claims.filter(function (c) {
    return c.kind === "always" || c.kind === "sometimes";
  });

  function linkOf(init, path) { return "?init=" + init + "&path=" + path.join("."); }

  function setBusy(delta) {
    busy += delta;
    var off = busy > 0;
    document.querySelectorAll("button, select").forEach(function (b) { b.disabled = off; });
    if (!off) {
      $("back").disabled = !shown || shown.path.length === 0;
      $("jump").disabled = jumpable.length === 0;
    }
  }

  function showError(text) { $("error").textContent = text; $("error").hidden = false; }

  function answer(response) {  // the body as JSON, or {error: its text} (a 409 is text)
    return response.text().then(function (body) {
      try { return JSON.parse(body); } catch (e) { return {error: body.trim()}; }
    });
  }

  function load(init, path, how) {  // how: "push", "replace" or "none" (the address)
    setBusy(1);
    var query = "?init=" + encodeURIComponent(init) + "&path=" + encodeURIComponent(path);
    return fetch("/state" + query, {credentials: "same-origin", cache: "no-store"})
      .then(function (response) {
        return answer(response).then(function (data) {
          if (!response.ok) {
            showError(data.error || ("HTTP " + response.status));
            return false;
          }
          $("error").hidden = true;
          var link = linkOf(data.init, data.path);
          if (how === "push" && location.search !== link) history.pushState(null, "", link);
          if (how === "replace") history.replaceState(null, "", link);
          render(data);
          return true;
        });
      })
      .catch(function () { showError("the explorer does not answer (stopped?)"); return false; })
      .finally(function () { setBusy(-1); });
  }

  function go(path) { return load(shown ? shown.init : 0, path.join("."), "push"); }

  function render(data) {
    shown = data;
    var last = data.steps[data.steps.length - 1];
    $("step-no").textContent = String(data.path.length);
    $("where").textContent = "initial state " + data.init + ", step " + data.path.length +
      (data.broken.length ? " \\u2014 broken: " + data.broken.join(", ") : "");
    $("init-select").value = String(data.init);
    var chart = $("chart");
    chart.innerHTML = data.chart || "";
    sizeChart();
    chart.scrollTop = chart.scrollHeight;
    $("chart-note").hidden = !data.chart_note;
    $("chart-note").textContent = data.chart_note || "";
    renderActions(data.actions);
    renderClaims(data.claims);
    renderState(last.summary);
    renderSteps(data.steps);
  }

  function renderActions(actions) {
    var box = $("actions");
    box.textContent = "";
    $("action-count").textContent = String(actions.length);
    if (!actions.length) {
      var none = document.createElement("div");
      none.className = "none";
      none.textContent = "no action is enabled in this state";
      box.appendChild(none);
    }
    actions.forEach(function (a) {
      var b = document.createElement("button");
      b.type = "button";
      b.className = "action " + a.kind;
      b.dataset.index = String(a.index);
      b.textContent = a.text;
      b.addEventListener("click", function () { go(shown.path.concat([a.index])); });
      box.appendChild(b);
    });
  }

  function renderClaims(claims) {
    var list = $("claims");
    list.textContent = "";
    if (!claims.length) {
      var li = document.createElement("li");
      li.textContent = "no claim is judged per state for this protocol";
      list.appendChild(li);
    }
    claims.forEach(function (c) {
      var li = document.createElement("li");
      li.className = c.status === "not met" ? "unmet" : c.status;
      li.dataset.claim = c.name;
      li.title = c.description;
      li.textContent = c.name + " (" + c.kind + "): " + c.status;
      if (c.why) {
        var why = document.createElement("span");
        why.className = "why";
        why.textContent = c.why;
        li.appendChild(why);
      }
      list.appendChild(li);
    });
  }

  function renderState(summary) {
    var body = $("state");
    body.textContent = "";
    Object.keys(summary).forEach(function (name) {
      var tr = document.createElement("tr");
      var th = document.createElement("th");
      var td = document.createElement("td");
      th.textContent = name;
      td.textContent = summary[name];
      tr.appendChild(th);
      tr.appendChild(td);
      body.appendChild(tr);
    });
  }

  function renderSteps(steps) {
    var list = $("steps");
    list.textContent = "";
    steps.forEach(function (s, i) {
      var li = document.createElement("li");
      li.textContent = s.text;
      li.title = Object.keys(s.summary).map(function (k) {
        return k + ": " + s.summary[k];
      }).join("\\n");
      if (i === steps.length - 1) li.className = "current";
      li.addEventListener("click", function () { go(shown.path.slice(0, i)); });
      list.appendChild(li);
    });
  }

  function jump() {
    var name = $("claim-select").value;
    var claim = jumpable.filter(function (c) { return c.name === name; })[0];
    $("status").textContent = "searching for the shortest " +
      (claim.kind === "always" ? "violation" : "witness") + " of " + name + "\\u2026";
    setBusy(1);
    fetch("/jump", {method: "POST", credentials: "same-origin",
                    headers: {"Content-Type": "application/json"},
                    body: JSON.stringify({claim: name})})
      .then(function (response) {
        return answer(response).then(function (data) {
          if (!response.ok) {
            $("status").textContent = "";
            showError(data.error || ("HTTP " + response.status));
            return null;
          }
          $("status").textContent = data.message;
          if (data.found) return load(data.init, data.path.join("."), "push");
          return null;
        });
      })
      .catch(function () { showError("the explorer does not answer (stopped?)"); })
      .finally(function () { setBusy(-1); });
  }

  function fromAddress(how) {
    var q = new URLSearchParams(location.search);
    return load(q.get("init") || "0", q.get("path") || "", how);
  }

  META.initial.forEach(function (text, k) {
    var o = document.createElement("option");
    o.value = String(k);
    o.textContent = "initial state " + k + ": " + text;
    $("init-select").appendChild(o);
  });
  $("init-select").hidden = META.initial.length < 2;
  jumpable.forEach(function (c) {
    var o = document.createElement("option");
    o.value = c.name;
    o.textContent = c.name + " (" + c.kind + ")";
    o.title = c.description;
    $("claim-select").appendChild(o);
  });
  function jumpLabel() {
    var name = $("claim-select").value;
    var claim = jumpable.filter(function (c) { return c.name === name; })[0];
    $("jump").textContent = !claim || claim.kind === "always" ?
      "Jump to violation" : "Jump to witness";
  }
  jumpLabel();
  $("claim-select").addEventListener("change", jumpLabel);
  $("back").addEventListener("click", function () {
    if (shown && shown.path.length) go(shown.path.slice(0, -1));
  });
  $("restart").addEventListener("click", function () {
    load($("init-select").value || "0", "", "push");
  });
  $("jump").addEventListener("click", jump);
  document.addEventListener("keydown", function (e) {
    var t = e.target.tagName;
    if (e.key === "Backspace" && t !== "INPUT" && t !== "SELECT" && busy === 0 && shown &&
        shown.path.length) {
      e.preventDefault();
      go(shown.path.slice(0, -1));
    }
  });
  window.addEventListener("popstate", function () { fromAddress("none"); });
  // the chart at a legible scale of its own size (never shrunk to fit its column), zoomable
  var ZOOMS = [0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 2];
  var zoom = ZOOMS.indexOf(META.zoom);
  function sizeChart() {
    var svg = $("chart").querySelector("svg");
    $("zoom-level").textContent = Math.round(ZOOMS[zoom] * 100) + "%";
    $("zoom-out").disabled = zoom === 0;
    $("zoom-in").disabled = zoom === ZOOMS.length - 1;
    if (!svg) return;
    var w = svg.width.baseVal;
    w.convertToSpecifiedUnits(SVGLength.SVG_LENGTHTYPE_PX);
    svg.style.maxWidth = "none";
    svg.style.width = Math.round(w.valueInSpecifiedUnits * ZOOMS[zoom]) + "px";
    svg.style.height = "auto";
  }
  function zoomBy(step) {
    zoom = Math.max(0, Math.min(ZOOMS.length - 1, zoom + step));
    sizeChart();
  }
  $("zoom-in").addEventListener("click", function () { zoomBy(1); });
  $("zoom-out").addEventListener("click", function () { zoomBy(-1); });
  document.addEventListener("keydown", function (e) {
    var t = e.target.tagName;
    if (t === "INPUT" || t === "SELECT") return;
    if (e.key === "+" || e.key === "=") zoomBy(1);
    if (e.key === "-") zoomBy(-1);
  });
  // the session: call in while open, let it go when the tab closes (else the server lets
  // it go after a while without a call), so the next browser is never locked out
  setInterval(function () {
    fetch("/alive", {method: "POST", credentials: "same-origin", cache: "no-store"})
      .then(function (response) {
        if (response.status === 409) answer(response).then(function (d) { showError(d.error); });
      })
      .catch(function () {});
  }, META.keepalive_ms);
  window.addEventListener("pagehide", function () { navigator.sendBeacon("/bye"); });
  fromAddress("replace");
})();
"""

"""The trace as a message sequence chart in Graphviz DOT.

Layout: a header row of participants (nodes, then store and storage), then one row
per step. Each participant is a column whose cells are joined by a dashed
lifeline. A step is an arrow between two columns in its row (node to store, node
to storage, node to node) or a boxed event on its actor's column (pause, crash);
steps of no participant (tick, partition) are written in the left step column, and so
is an arrow's note (the arrow itself carries only the action's name, so that its label
stays clear of the cells it connects).
When a participant's one-line summary (role, token) changes, the new summary is
written in its cell. The deciding step and its explanation are drawn in red.
Node ids are `h_<col>` and `c<step>_<col>`: stable, so output is byte-identical.
"""

from __future__ import annotations

from itertools import pairwise

import graphviz

from leadercheck.checker.render.context import TraceContext
from leadercheck.checker.render.text import loop_text
from leadercheck.checker.trace import Step

RED = "#c0392b"
GREEN = "#1e7d32"
INK = "#222222"
LIFELINE = "#9aa5b1"
FONT = "Helvetica"


def _wrap(text: str) -> str:
    """Break summaries at commas so columns stay narrow."""
    return text.replace(", ", ",\n")


def trace_to_dot(ctx: TraceContext) -> str:
    trace = ctx.trace
    cols = trace.participants
    col_of = {name: k for k, name in enumerate(cols)}
    last = len(trace)
    accent = RED if ctx.kind == "counterexample" else GREEN

    g = graphviz.Digraph(name="trace")
    g.attr(
        "graph",
        label=ctx.headline,
        labelloc="t",
        fontname=FONT,
        fontsize="14",
        newrank="true",
        nodesep="0.25",
        ranksep="0.32",
        splines="false",
    )
    g.attr("node", fontname=FONT, fontsize="10", shape="plaintext", height="0.2", margin="0.04")
    g.attr("edge", fontname=FONT, fontsize="9", color=INK, fontcolor=INK)

    with g.subgraph() as row:
        row.attr(rank="same")
        row.node("h_step", label="step", fontcolor=LIFELINE)
        for k, name in enumerate(cols):
            row.node(f"h_{k}", label=name, shape="box", style="rounded,filled", fillcolor="#e8eef7")
    _chain(g, ["h_step"] + [f"h_{k}" for k in range(len(cols))], style="invis")

    previous: Step | None = None
    for step in trace.steps:
        i = step.index
        act = step.action
        deciding = i == last
        color = accent if deciding else INK
        with g.subgraph() as row:
            row.attr(rank="same")
            label = str(i)
            if act is not None and act.actor not in col_of:
                label += f"  {act.name}" + (f"\n{act.note}" if act.note else "")
            elif act is not None and act.target in col_of and act.note:
                label += f"  {act.note}"  # an arrow carries only its name, to stay clear of cells
            row.node(f"s{i}", label=label, fontcolor=color, fontsize="9")
            for k, name in enumerate(cols):
                row.node(f"c{i}_{k}", **_cell(step, previous, name, color))
        _chain(g, [f"s{i}"] + [f"c{i}_{k}" for k in range(len(cols))], style="invis")
        if act is not None and act.actor in col_of and act.target in col_of:
            g.edge(
                f"c{i}_{col_of[act.actor]}",
                f"c{i}_{col_of[act.target]}",
                xlabel=act.name,
                color=color,
                fontcolor=color,
                penwidth="2" if deciding else "1",
                constraint="false",
            )
        previous = step

    _chain(g, ["h_step"] + [f"s{s.index}" for s in trace.steps], style="invis", weight="100")
    for k in range(len(cols)):
        lifeline = [f"h_{k}"] + [f"c{s.index}_{k}" for s in trace.steps]
        _chain(g, lifeline, arrowhead="none", style="dashed", color=LIFELINE, weight="100")

    if trace.loop_from is not None:  # a lasso: draw the way back, in the accent colour
        g.edge(
            f"s{last}",
            f"s{trace.loop_from}",
            label=loop_text(trace.loop_from, last),
            color=accent,
            fontcolor=accent,
            style="bold",
            constraint="false",
            dir="forward",
        )
    verdict = "broken" if ctx.kind == "counterexample" else "reached"
    g.node(
        "verdict",
        label=f"step {last}: {ctx.outcome.prop.name} {verdict}\n{ctx.outcome.reason}",
        shape="box",
        color=accent,
        fontcolor=accent,
        fontsize="11",
    )
    g.edge(f"s{last}", "verdict", style="invis")
    return g.source


def _cell(step: Step, previous: Step | None, name: str, color: str) -> dict[str, str]:
    """A participant's cell: its event if it acted alone, its new summary if that changed."""
    act = step.action
    parts = []
    event = act is not None and act.actor == name and act.target is None
    if event and act is not None:
        parts.append(act.name + (f": {act.note}" if act.note else ""))
    now = step.summary.get(name)
    if now is not None and (previous is None or previous.summary.get(name) != now):
        parts.append(f"[{_wrap(now)}]")
    if not parts:
        return {"label": "", "shape": "point", "width": "0.03", "color": LIFELINE}
    attrs = {"label": "\n".join(parts), "fontcolor": color if event else "#34495e"}
    if event:
        attrs.update(shape="box", style="rounded", color=color)
    return attrs


def _chain(g: graphviz.Digraph, ids: list[str], **attrs: str) -> None:
    """Edges between consecutive ids: a row's column order, a lifeline, the step column."""
    for a, b in pairwise(ids):
        g.edge(a, b, **attrs)

"""The explored state graph in DOT, with one trace's states and steps drawn in red."""

from __future__ import annotations

import graphviz

from leadercheck.checker.graph import StateGraph
from leadercheck.checker.render.context import TraceContext

RED = "#c0392b"
GREY = "#9aa5b1"


def state_graph_dot(graph: StateGraph, ctx: TraceContext) -> str:
    index = graph.index()
    path = [index[step.state] for step in ctx.trace.steps]
    on_path = set(zip(path, path[1:], strict=False))
    g = graphviz.Digraph(name="states")
    g.attr("graph", label=f"{ctx.headline}: state graph", labelloc="t", fontname="Helvetica")
    g.attr("node", shape="box", style="rounded", fontname="Helvetica", fontsize="8")
    g.attr("edge", fontname="Helvetica", fontsize="7", color=GREY, fontcolor=GREY)
    for k, label in enumerate(graph.labels):
        attrs = {"color": RED, "fontcolor": RED, "penwidth": "2"} if k in path else {}
        if k == path[-1]:
            attrs["style"] = "rounded,filled"
            attrs["fillcolor"] = "#fdecea"
        g.node(f"s{k}", label=f"#{k}\n{label}", **attrs)
    seen: set[tuple[int, int]] = set()
    for a, b, action in graph.edges:
        if a == b or (a, b) in seen:
            continue  # self-loops and parallel steps would only clutter the picture
        seen.add((a, b))
        if (a, b) in on_path:
            g.edge(f"s{a}", f"s{b}", label=str(action), color=RED, fontcolor=RED, penwidth="2")
        else:
            g.edge(f"s{a}", f"s{b}", label=action.name)
    return g.source

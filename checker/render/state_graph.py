"""The explored state graph in DOT: one trace's states and steps in red, each of its states
labelled with its step number, and every other state that breaks the same property outlined
in red (dashed), with a legend saying so."""

from __future__ import annotations

import graphviz

from leadercheck.checker.engine.graph import StateGraph
from leadercheck.checker.properties import Kind
from leadercheck.checker.render.context import TraceContext
from leadercheck.checker.render.text import count

RED = "#c0392b"
GREY = "#9aa5b1"
PALE_RED = "#fdecea"


def legend(graph: StateGraph, ctx: TraceContext, others: int) -> str:
    """What the colours mean, and how many states the graph has."""
    prop = ctx.outcome.prop
    kind = "witness" if prop.kind is Kind.SOMETIMES else "counterexample"
    lines = [
        f"{count(len(graph.states), 'state')}, {count(len(graph.edges), 'transition')}",
        f"red: the {kind}, each of its states labelled with its step",
    ]
    if prop.kind in (Kind.ALWAYS, Kind.SOMETIMES):
        does = "meet" if prop.kind is Kind.SOMETIMES else "break"
        if others:
            which = f"{count(others, 'other state')} that also {does}{'s' * (others == 1)}"
            lines.append(f"dashed red outline: {which} {prop.name}")
        else:
            lines.append(f"no other state {does}s {prop.name}")
    return "\n".join(lines)


def state_graph_dot(graph: StateGraph, ctx: TraceContext) -> str:
    index = graph.index()
    path = [index[step.state] for step in ctx.trace.steps]
    on_path = set(zip(path, path[1:], strict=False))
    at_steps: dict[int, list[int]] = {}
    for step, k in enumerate(path):
        at_steps.setdefault(k, []).append(step)
    others = graph.breaking(ctx.outcome.prop) - set(path)
    g = graphviz.Digraph(name="states")
    title = f"{ctx.headline}: state graph\n{legend(graph, ctx, len(others))}"
    g.attr("graph", label=title, labelloc="t", fontname="Helvetica")
    g.attr("node", shape="box", style="rounded", fontname="Helvetica", fontsize="8")
    g.attr("edge", fontname="Helvetica", fontsize="7", color=GREY, fontcolor=GREY)
    for k, label in enumerate(graph.labels):
        head = f"#{k}"
        attrs: dict[str, str] = {}
        if k in at_steps:
            steps = at_steps[k]
            head += (
                f"  step {steps[0]}" if len(steps) == 1 else "  steps " + ", ".join(map(str, steps))
            )
            attrs = {"color": RED, "fontcolor": RED, "penwidth": "2"}
            if k == path[-1]:
                attrs |= {"style": "rounded,filled", "fillcolor": PALE_RED}
        elif k in others:
            attrs = {"color": RED, "penwidth": "2", "style": "rounded,dashed"}
        g.node(f"s{k}", label=f"{head}\n{label}", **attrs)
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

"""Hypothesis strategies shared by the engine tests."""

from __future__ import annotations

from hypothesis import strategies as st


@st.composite
def graphs(draw: st.DrawFn, max_size: int = 12) -> tuple[list[int], dict[int, list[int]], int]:
    """A random directed graph (initial nodes, edges per node) and a target node."""
    size = draw(st.integers(min_value=1, max_value=max_size))
    nodes = st.integers(min_value=0, max_value=size - 1)
    edges = {n: draw(st.lists(nodes, max_size=4)) for n in range(size)}
    initial = draw(st.lists(nodes, min_size=1, max_size=3))
    target = draw(nodes)
    return initial, edges, target

"""Rendering: turns a `Trace` (and the result it belongs to) into text, JSON, DOT and SVG.

This layer reads results; it never searches and never decides a verdict. Every
identifier it emits comes from step indices and participant names, so the same
trace always renders to the same bytes.
"""

from leadercheck.checker.render.context import TraceContext
from leadercheck.checker.render.dot import trace_to_dot
from leadercheck.checker.render.svg import SvgUnavailable, dot_to_svg
from leadercheck.checker.render.text import trace_lines
from leadercheck.checker.render.trace_json import TRACE_SCHEMA, trace_to_json

__all__ = [
    "TRACE_SCHEMA",
    "SvgUnavailable",
    "TraceContext",
    "dot_to_svg",
    "trace_lines",
    "trace_to_dot",
    "trace_to_json",
]

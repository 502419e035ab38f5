"""DOT to SVG through Graphviz's `dot`; its absence is a reportable condition, not a crash."""

from __future__ import annotations

import subprocess

import graphviz


class SvgUnavailable(Exception):
    """`dot` is missing or failed; the message says how to get SVG."""


INSTALL_HINT = "install Graphviz for SVG diagrams (Debian/Ubuntu: apt-get install graphviz)"


def dot_to_svg(dot_source: str) -> str:
    try:
        out: bytes = graphviz.pipe("dot", "svg", dot_source.encode("utf-8"))
    except graphviz.ExecutableNotFound:
        raise SvgUnavailable(f"Graphviz `dot` not found: {INSTALL_HINT}") from None
    except subprocess.CalledProcessError as exc:
        detail = (exc.stderr or b"").decode("utf-8", "replace").strip()[:200]
        raise SvgUnavailable(f"`dot -Tsvg` failed: {detail}") from None
    return out.decode("utf-8")

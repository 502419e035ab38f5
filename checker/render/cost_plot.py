"""A measure taken for several protocols, drawn as one SVG chart: worst, mean and best vs size.

Made for the message cost of an election (`verify --stats` on bully and raft), but it draws
any `MeasureTable`s that share a size axis. The SVG is byte-identical run to run: matplotlib
draws it with a fixed hash salt for its element ids, text kept as text (no glyph paths that
depend on the fonts found), and no date or creator in the metadata. matplotlib is imported
only when a chart is drawn, so the CLI starts without it.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from leadercheck.checker.io import files
from leadercheck.checker.render.report import MeasureTable

# Line style per statistic, colour per protocol (in the order given).
_STATS = (("worst", "-", "o"), ("mean", "--", "s"), ("best", ":", "^"))
_COLOURS = ("#c0392b", "#2471a3", "#1e8449", "#7d3c98", "#b9770e")
_RC: dict[str, Any] = {"svg.hashsalt": "leadercheck", "svg.fonttype": "none", "font.size": 10}


def cost_plot_svg(tables: Mapping[str, MeasureTable], title: str = "") -> str:
    """The SVG text of one chart: per protocol (the keys, in order), worst, mean and best vs size.

    Sizes with nothing measured are left out. Each worst case is labelled with its value;
    the y axis starts at 0 and the x axis shows exactly the measured sizes.
    """
    from matplotlib import rc_context  # noqa: PLC0415 (kept out of the CLI's start-up)
    from matplotlib.figure import Figure  # noqa: PLC0415

    with rc_context(_RC):  # type: ignore[arg-type]  # its stubs list every key as a Literal
        fig = Figure(figsize=(7.0, 4.6))
        ax = fig.add_subplot()
        sizes: set[int] = set()
        size_name = ""
        top = 0
        for k, (protocol, table) in enumerate(tables.items()):
            size_name = size_name or table.size_name
            rows = [(size, m) for size, m in table.rows if m is not None]
            xs = [size for size, _ in rows if isinstance(size, int)]
            if len(xs) < len(rows):
                raise ValueError(f"{table.title}: a chart needs one number per size")
            sizes.update(xs)
            top = max([top, *(m.worst for _, m in rows)])
            colour = _COLOURS[k % len(_COLOURS)]
            for stat, style, marker in _STATS:
                ys = [getattr(m, stat) for _, m in rows]
                ax.plot(
                    xs, ys, linestyle=style, marker=marker, color=colour, label=f"{protocol} {stat}"
                )
            above = k % 2 == 0  # alternate sides, so close worst cases stay readable
            for x, (_, m) in zip(xs, rows, strict=True):
                ax.annotate(
                    str(m.worst),
                    (x, m.worst),
                    textcoords="offset points",
                    xytext=(-4, 5) if above else (5, -11),
                    ha="right" if above else "left",
                    color=colour,
                    fontsize=8,
                )
        ax.set_xticks(sorted(sizes))
        ax.set_xlabel(size_name or "size")
        ax.set_ylabel("messages")
        ax.set_ylim(0, max(top, 1) * 1.12)  # room for the worst case's label
        ax.grid(True, color="#dddddd", linewidth=0.6)
        ax.legend(loc="upper left", fontsize=8, ncol=max(1, len(tables)))
        if title:
            ax.set_title(title)
        fig.tight_layout()
        out = io.StringIO()
        fig.savefig(out, format="svg", metadata={"Date": None, "Creator": None})
    return out.getvalue()


def write_cost_plot(
    tables: Mapping[str, MeasureTable], path: Path, title: str = "", option: str = "--plot"
) -> Path:
    """Write `cost_plot_svg(tables, title)` to `path`, replaced whole or not at all; a device,
    FIFO or link there is refused (`files.write_text`), and its directory must exist."""
    return files.write_text(path, cost_plot_svg(tables, title), option)

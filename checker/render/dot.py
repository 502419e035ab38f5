"""The trace as a message sequence chart that shows who believes it leads: Graphviz DOT.

A column per participant (the nodes, then the store, the storage or a proxy when the trace
uses them), a time column (`t=N` where the clock ticks) and a step column. Read off
`lanes.py`'s facts, it draws:

- leadership as an activation bar on the node's lifeline, one colour per leadership,
  labelled with its epoch in the view's word (`leader (term 1)`, `leader (token 2)`): a
  split brain is two bars side by side;
- a pause as a striped stretch of the lifeline from pause to resume, labelled with what the
  node still believes; a crash as a cross that ends the lifeline until its restart;
- a node partition as a shaded band behind the cut-off side (from the top if it holds in
  the initial state) and a wall between the sides; a node cut from the store as a band too;
- messages sloped from the sender's lifeline at the step that sends them to the
  receiver's at the step that delivers them, one per recipient; a lost one ends in a cross;
  one still in flight at the end is a short dashed stub toward its receiver, turned away
  from the other lines at its sender (the stubs of one send to one side share a label);
- calls within one step (to the store, to the storage) as level arrows, ending in a cross
  at the wall when a partition, a crash or a cut from the store stops them; the deciding step
  in red with the verdict box beside it, and a lasso's cycle as a bracket in the right
  margin ("repeats forever", the reason, what holds all through the cycle);
- a legend at the top with only what the chart uses.

Labels are placed clear of the text and marks (arrowheads, crosses, actor dots) already
placed: `_Canvas.placed` holds their boxes.

Positions are computed here and pinned (`layout=neato`, `pos="x,y!"`, `splines=line`), so
the chart is the same on every run and every arrow ends exactly on a lifeline; `dot -Tsvg`
renders it like any other DOT. Every element of step i has `class="step-{i}"` (one that
spans steps: the step that begins it and the one that ends it), the header `header`, the
legend `legend`; every element has a tooltip in words. Names are stable (step index and
column), never memory addresses.
"""

from __future__ import annotations

import html
import math
import re
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import graphviz

from leadercheck.checker.model import FAULT, RECOVERY, Action
from leadercheck.checker.render.context import TraceContext
from leadercheck.checker.render.lanes import (
    DELIVERED,
    GHOST,
    IN_FLIGHT,
    LOST,
    UNREACHED,
    Datum,
    Facts,
    Fault,
    Lanes,
    Leadership,
    Message,
    data_changes,
    is_fault,
    is_recovery,
    lanes,
    ran_out,
)
from leadercheck.checker.render.text import loop_text
from leadercheck.checker.trace import Step, Trace

FONT = "Helvetica"
SIZE = 12  # body text
SMALL = 11  # labels on the lanes
TIME_SIZE = 10  # the time column in seconds ("0.125 s" fits beside the step column)
INK = "#222222"
MUTED = "#5d6d7e"
LIFELINE = "#9aa5b1"
RED = "#c0392b"
DATA = "#1f618d"  # a field the claim reads, where it changes
STALE = "#b9770e"  # a stale leader: amber, not the red of two leaders in one epoch
GREEN = "#1e7d32"
LOSS = "#d35400"
MESSAGE = "#34495e"
BAND = "#f5b041"  # a partitioned side
WALL = "#b9770e"
CUT = "#a569bd"  # cut from the store
PENDING = "#117a65"  # a write decided and not yet made
PENDING_X = 12.0  # how far left of the lifeline its line runs
# Leadership colours: (fill, ink), one per leadership in order of start.
PALETTE = (
    ("#5dade2", "#1a5276"),
    ("#f0b27a", "#935116"),
    ("#82e0aa", "#1d6f42"),
    ("#c39bd3", "#5b2c6f"),
    ("#f1948a", "#78281f"),
    ("#76d7c4", "#0e6655"),
)

_TIME_WORD = re.compile(r"\bat t=(\d+)")

# Layers, bottom to top (every edge is drawn below them all: outputorder=edgesfirst).
MARKS, BANDS, CELLS, BAR, SEGMENT, BOXES, TAGS, LABELS, DOTS, ANCHORS = range(10)
# A place a label may go: (x, y, align) and whatever its caller keeps with it.
Spot = TypeVar("Spot", bound=tuple[Any, ...])

# Geometry, in points (y grows downwards here; DOT's grows upwards).
TIME_X = 22.0
STEP_LEFT = 48.0
STEP_W = 260.0
LANE_W = 160.0
NARROW_LANE_W = 116.0  # with more than five lanes
ROW_H = 44.0
LINE_H = 15.0
BAR_W = 12.0
HEADER_H = 40.0
TAIL = 40.0
LEGEND_ROW = 20.0
# A message still in flight at the end: a dashed stub this long from its sender, at one of
# these angles below the level (degrees), kept this far from the other lines at that point.
STUB_LEN = 56.0
STUB_ANGLES = (35, 55, 20, 70, 45, 27, 62, 12)
STUB_CLEAR = 15.0
_STUB = {"style": "dashed", "penwidth": "1.3", "arrowhead": "open"}  # how a stub is drawn
STEP_CHARS = 38

EPOCH_MEANING = {
    "term": "term N: the election term the node is in",
    "token": "token N: the lease (fencing) token the store handed out",
    "znode": "znode N: the sequence number of its election znode",
    "epoch": "#N: the Nth leadership as the checker counts them (the protocol has no epoch)",
}


def _width(text: str, size: float = SIZE, fit: float = 0.6) -> float:
    """A generous estimate of the width of `text` in Helvetica at `size` points (text is
    aligned within a cell of this width, so too wide only leaves room to its side)."""
    return len(text) * size * fit


def _esc(text: str) -> str:
    return html.escape(text, quote=False)


def _classes(*steps: int | None, kind: str = "") -> str:
    names = dict.fromkeys(f"step-{i}" for i in steps if i is not None)
    return " ".join([*names, *([kind] if kind else [])])


@dataclass
class _Canvas:
    """Nodes in layers (drawn after every edge: `outputorder=edgesfirst`) and edges."""

    nodes: list[tuple[int, str, dict[str, str]]] = field(default_factory=list)
    edges: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    paints: list[tuple[str, float, float, float, float, dict[str, str]]] = field(
        default_factory=list
    )  # opaque areas under everything: (name, left, top, right, bottom, attributes)
    names: set[str] = field(default_factory=set)
    placed: list[tuple[float, float, float, float]] = field(default_factory=list)  # text boxes
    lines: list[tuple[float, float, float, float]] = field(default_factory=list)  # arrows
    marks: list[tuple[float, float, float, float]] = field(default_factory=list)  # heads, crosses

    def crowding(self, left: float, top: float, right: float, bottom: float) -> float:
        """How much of the text and marks placed so far this box overlaps, and how long a
        stretch of the arrows drawn it crosses (0: none)."""
        covered = sum(
            max(0.0, min(r, right) - max(x, left)) * max(0.0, min(b, bottom) - max(t, top))
            for x, t, r, b in self.placed
        )
        crossed = sum(_clipped(line, (left, top, right, bottom)) for line in self.lines)
        return covered * COVER_WEIGHT + crossed  # covering anything is worse than crossing

    def mark(self, left: float, top: float, right: float, bottom: float) -> None:
        """A mark no label may cover: an arrowhead, a cross, a dot."""
        self.placed.append((left, top, right, bottom))
        self.marks.append((left, top, right, bottom))

    def best(self, lines: Sequence[str], spots: Sequence[Spot], size: float = SMALL) -> Spot:
        """The first of `spots` (x, y, align, and whatever the caller keeps with them) where
        `lines` overlap nothing placed so far, else the least crowded one."""
        crowding = [
            self.crowding(*_text_box(lines, spot[0], spot[1], size, spot[2])) for spot in spots
        ]
        return spots[crowding.index(min(crowding))]

    def free(self, left: float, top: float, right: float, bottom: float) -> bool:
        """Whether no text placed so far overlaps this box."""
        return self.crowding(left, top, right, bottom) == 0

    def right_of(self, top: float, bottom: float, beyond: float) -> float:
        """The rightmost edge of the text placed between top and bottom, right of `beyond`."""
        return max(
            [r for x, t, r, b in self.placed if x > beyond and t < bottom and top < b],
            default=beyond,
        )

    def node(self, layer: int, name: str, x: float, y: float, **attrs: str) -> str:
        assert name not in self.names, name
        self.names.add(name)
        attrs = {"pos": f"{x:.1f},{-y:.1f}!", "id": f"chart-{name}", **attrs}
        self.nodes.append((layer, name, attrs))
        return name

    def point(self, name: str, x: float, y: float, css: str, tip: str) -> str:
        """An invisible anchor of zero size: where a line starts or ends."""
        return self.node(
            ANCHORS,
            name,
            x,
            y,
            shape="point",
            width="0",
            height="0",
            style="invis",
            label="",
            **{"class": css, "tooltip": tip},
        )

    def line(self, a: str, b: str, css: str, tip: str, **attrs: str) -> None:
        attrs = {"arrowhead": "none", "class": css, "tooltip": tip, **attrs}
        self.edges.append((a, b, attrs))

    def segment(
        self, name: str, x1: float, y1: float, x2: float, y2: float, css: str, tip: str, **a: str
    ) -> None:
        """A straight line from (x1, y1) to (x2, y2), between two anchors of its own."""
        self.line(
            self.point(f"{name}_a", x1, y1, css, tip),
            self.point(f"{name}_b", x2, y2, css, tip),
            css,
            tip,
            **a,
        )

    def paint(
        self, name: str, left: float, top: float, w: float, h: float, css: str, tip: str, fill: str
    ) -> None:
        """An opaque area under every line and mark: a filled cluster (Graphviz draws
        clusters first) around two invisible corners. A translucent box drawn over the
        lines instead renders solid in viewers that ignore fill-opacity (ImageMagick's)."""
        assert name not in self.names, name
        self.names.add(name)
        attrs = {"style": "filled", "fillcolor": fill, "color": fill, "penwidth": "0"}
        attrs |= {"margin": "0", "class": css, "tooltip": tip, "id": f"chart-{name}", "label": ""}
        self.paints.append((name, left, top, left + w, top + h, attrs))

    def box(
        self,
        layer: int,
        name: str,
        left: float,
        top: float,
        w: float,
        h: float,
        css: str,
        tip: str,
        **attrs: str,
    ) -> str:
        return self.node(
            layer,
            name,
            left + w / 2,
            top + h / 2,
            shape="box",
            fixedsize="true",
            width=f"{w / 72:.3f}",
            height=f"{h / 72:.3f}",
            label="",
            **{"class": css, "tooltip": tip},
            **attrs,
        )

    def text(
        self,
        layer: int,
        name: str,
        x: float,
        y: float,
        lines: Sequence[str],
        css: str,
        tip: str,
        *,
        size: float = SMALL,
        color: str = INK,
        align: str = "LEFT",
        bold_first: bool = False,
        bgcolor: str = "",
        width: float = 0.0,
    ) -> float:
        """Text whose left edge (LEFT), centre (CENTER) or right edge (RIGHT) is at x, in a
        cell `width` wide (0: as wide as the text looks); returns the cell's width."""
        # Graphviz draws a cell's text at the cell's left, and widens a cell narrower than
        # its own estimate on both sides: so text aligned LEFT gets a generous cell starting
        # at x, and text aligned RIGHT or CENTER its natural size, centred where its
        # measured width puts it
        tight = _text_box(lines, 0, 0, size, "LEFT", bold_first)[2]
        roomy = max(_width(line, size + (bold_first and k == 0)) for k, line in enumerate(lines))
        w = width or (roomy + 4 if align == "LEFT" else tight)
        body = "<BR/>".join(
            f"<B>{_esc(line)}</B>" if bold_first and k == 0 else _esc(line)
            for k, line in enumerate(lines)
        )
        text = f'<FONT POINT-SIZE="{size:g}" COLOR="{color}">{body}</FONT>'
        if bgcolor:  # behind the text, as wide as the cell
            text = (
                f'<TABLE BORDER="0" CELLPADDING="1" CELLSPACING="0" BGCOLOR="{bgcolor}">'
                f'<TR><TD ALIGN="{align}" BALIGN="{align}">{text}</TD></TR></TABLE>'
            )
        cell = f' WIDTH="{w:.0f}"' if width or align == "LEFT" else ""
        label = (
            '<<TABLE BORDER="0" CELLBORDER="0" CELLPADDING="1" CELLSPACING="0">'
            f'<TR><TD ALIGN="{align}" BALIGN="{align}"{cell}>{text}</TD></TR></TABLE>>'
        )
        cx = {"LEFT": x + w / 2 + 1, "RIGHT": x - w / 2 - 1}.get(align, x)
        self.placed.append(_text_box(lines, x, y, size, align, bold_first))
        self.node(
            layer,
            name,
            cx,
            y,
            shape="plaintext",
            margin="0",
            width="0",
            height="0",
            label=label,
            **{"class": css, "tooltip": tip},
        )
        return w

    def source(self, headline: str) -> str:
        g = graphviz.Digraph(name="chart")
        g.attr(
            "graph",
            layout="neato",
            inputscale="72",
            splines="line",
            overlap="true",
            outputorder="edgesfirst",
            label=headline,
            labelloc="t",
            fontname=FONT,
            fontsize="15",
            pad="0.25",
            tooltip=headline,
        )
        g.attr("node", fontname=FONT, fontsize=str(SIZE))
        g.attr("edge", fontname=FONT, fontsize=str(SMALL), color=INK, arrowsize="0.8")
        # the deciding row's paint last: it stays red across a partition's band
        for name, left, top, right, bottom, attrs in sorted(
            self.paints, key=lambda p: "row" in p[5]["class"].split()
        ):
            with g.subgraph(name=f"cluster_{name}") as area:
                area.attr(**attrs)
                for k, (x, y) in enumerate(((left, top), (right, bottom))):
                    area.node(f"{name}_{k}", pos=f"{x:.1f},{-y:.1f}!", shape="point", width="0",
                              height="0", style="invis", label="")  # fmt: skip
        for _, name, attrs in sorted(self.nodes, key=lambda n: n[0]):  # stable within a layer
            g.node(name, _attributes=attrs)
        for a, b, attrs in self.edges:
            g.edge(a, b, _attributes=attrs)
        return g.source


@dataclass(frozen=True)
class _Grid:
    """Where each row is: `tops[i]` and `heights[i]` of step i, in points downwards."""

    tops: tuple[float, ...]
    heights: tuple[float, ...]
    header_bottom: float

    def c(self, i: int) -> float:
        return self.tops[i] + self.heights[i] / 2

    @property
    def end(self) -> float:
        return self.tops[-1] + self.heights[-1] + TAIL

    def start(self, i: int) -> float:
        """Where a fact that holds from step i begins (step 0: under the header)."""
        return self.header_bottom if i == 0 else self.c(i)

    def stop(self, i: int) -> float:
        """Where a fact that holds until step i (exclusive) ends."""
        return self.c(i) if i < len(self.tops) else self.end


def _step_lines(step: Step) -> tuple[str, list[str]]:
    """A step's head (`6  n2 promote`) and its note wrapped to the step column."""
    act = step.action
    if act is None:
        return f"{step.index}  initial state", []
    note = act.shown().note
    who = f"{act.actor} \u2192 {act.target}" if act.target else act.actor
    return f"{step.index}  {who}: {act.name}", textwrap.wrap(str(note), STEP_CHARS)


def _action_words(step: Step) -> str:
    act = step.action
    return f"step {step.index}: initial state" if act is None else f"step {step.index}: {act}"


class _Chart:
    def __init__(self, ctx: TraceContext) -> None:
        self.ctx = ctx
        self.trace: Trace = ctx.trace
        self.lanes: Lanes = lanes(self.trace)
        self.last = len(self.trace)
        bad_news = ctx.kind == "counterexample" or ctx.outcome.prop.finding
        self.accent = RED if bad_news else GREEN
        self.cols = self.lanes.columns
        # narrower lanes when there are many, so a wide cluster stays legible when fitted
        self.lane_w = LANE_W if len(self.cols) <= 5 else NARROW_LANE_W
        self.first_lane = STEP_LEFT + STEP_W + 24 + self.lane_w / 2
        self.x = {name: self.first_lane + k * self.lane_w for k, name in enumerate(self.cols)}
        self.lanes_right = (
            self.first_lane + (len(self.cols) - 0.5) * self.lane_w
            if self.cols
            else (STEP_LEFT + STEP_W + 24)
        )
        self.canvas = _Canvas()
        self.arrows: list[tuple[float, float, float, float]] = []  # calls and messages drawn
        # the labels of sends that could not leave, placed with the other messages' labels
        self.unreached_tags: list[tuple[int, list[Message], float, float, float, float]] = []
        self.colour = {
            (lead.who, lead.start): PALETTE[k % len(PALETTE)]
            for k, lead in enumerate(self.lanes.leaderships)
        }
        # Rows: tall enough for the step text.
        heights = tuple(
            max(ROW_H, LINE_H * (1 + len(_step_lines(s)[1])) + 12) for s in self.trace.steps
        )
        self.fault_marks = [self._fault_mark(f) for f in self.lanes.faults]
        self.legend_entries = self._legend_entries()
        self.legend_rows, self.legend_widths = _legend_layout(
            [words for _, words in self.legend_entries], max(self.lanes_right, 1000.0)
        )
        self.legend_h = self.legend_rows * LEGEND_ROW + 16 if self.legend_entries else 0.0
        header_top = self.legend_h + 22
        self.header_y = header_top + HEADER_H / 2
        first_top = header_top + HEADER_H + 10
        tops, top = [], first_top
        for h in heights:
            tops.append(top)
            top += h
        self.grid = _Grid(tuple(tops), heights, header_top + HEADER_H)

    # -- helpers ---------------------------------------------------------------------------

    def facts(self, i: int, name: str) -> Facts:
        return self.lanes.facts[i][name]

    def leading(self, name: str, i: int) -> Leadership | None:
        for lead in self.lanes.leaderships:
            if lead.who == name and i in lead:
                return lead
        return None

    def edge_x(self, name: str, i: int, toward: float) -> float:
        """Where a line to or from lane `name` at step i meets it: the lifeline, or the edge
        of the bar or pause stripe drawn over it."""
        x = self.x[name]
        covered = self.leading(name, i) is not None or any(
            p.who == name and i in p for p in self.lanes.pauses
        )
        if not covered:
            return x
        return x + (BAR_W / 2 if toward > x else -BAR_W / 2)

    def deciding(self, i: int) -> bool:
        """The step that breaks the claim: the last one, except in a lasso, where no one
        step does (its cycle, bracketed, is what never ends)."""
        return i == self.last and self.trace.loop_from is None

    # -- the chart ---------------------------------------------------------------------------

    def build(self) -> str:
        """The chart in DOT."""
        self.draw()
        return self.canvas.source(self.ctx.headline)

    def draw(self) -> None:
        """Every element of the chart onto the canvas."""
        self._legend()
        self._header()
        self._rows()
        self._reserve_walls()
        self._lifelines()
        self._leaderships()
        self._pauses()
        self._pendings()
        self._roles()
        self._unreached()
        self._data()
        self._calls()
        self._fault_marks()
        self._expiries()
        self._messages()
        self._partitions()  # their tags find room among the labels above
        self._store_cuts()
        self._verdict()

    # legend --------------------------------------------------------------------------------

    def _legend_entries(self) -> list[tuple[str, str]]:
        """(swatch kind, text) for what this chart uses."""
        ln = self.lanes
        out: list[tuple[str, str]] = []
        if ln.leaderships:
            out.append(("bar", "leader: bar while the node believes it leads"))
        if ln.split_brains():
            out.append(("bars", "two bars at once: two nodes both believe they lead"))
        pairs = ln.split_brains()
        splits = [(a, b) for a, b in pairs if self._split(a, b)]
        if any(_same_epoch(a, b, ghost=False) for a, b in splits):
            out.append(("brain", "two leaders of one epoch (split brain)"))
        if any(not _same_epoch(a, b, ghost=False) for a, b in splits):
            out.append(
                (
                    "brain",
                    "two leaders at once (split brain): the protocol has no epoch to rank them",
                )
            )
        if any(not self._split(a, b) for a, b in pairs):
            out.append(("stale", "stale leader: one that has not yet learnt a newer epoch began"))
        words = dict.fromkeys(lead.word for lead in ln.leaderships if lead.word)
        words.update(
            dict.fromkeys(f.word for row in ln.facts for f in row.values() if f.word == "term")
        )
        for word in words:
            out.append(("word", EPOCH_MEANING.get(word, f"{word} N: its epoch")))
        roles = dict.fromkeys(
            f.role for row in ln.facts for f in row.values() if f.role is not None
        )
        if roles:
            out.append(("word", "roles as the nodes name them: " + ", ".join(roles)))
        if ln.pauses:
            out.append(("pause", "pause: stopped while time passes; the stripes end at its resume"))
        if ln.crashes:
            out.append(("crash", "crashed: the lifeline stops until the restart"))
        if ln.partitions:
            out.append(("band", "partition: this side is cut off from the other nodes"))
        if ln.store_cuts:
            out.append(("cut", "cut from the store: the node cannot reach it"))
        if any(m.fate != UNREACHED for m in ln.messages):
            out.append(("message", "message: sent at one step, received at a later one"))
        if any(m.fate == IN_FLIGHT for m in ln.messages):
            out.append(("stub", "dashed stub: a message still in flight when the trace ends"))
        blocked = any(
            s.action is not None
            and s.action.target in self.x
            and s.action.actor in self.x
            and s.action.actor != s.action.target
            and not is_fault(s.action)
            and self._blocked_at(s.action.actor, s.action.target, s.index) is not None
            for s in self.trace.steps[1:]
        )
        if (
            blocked
            or "call" in self.fault_marks
            or any(m.fate in (LOST, UNREACHED) for m in ln.messages)
        ):
            out.append(("lost", "lost, or cannot arrive: ends in a cross where it stops"))
        if any(
            s.action is not None
            and s.action.target in self.x
            and s.action.actor in self.x
            and not is_fault(s.action)
            and not self._delivers(s.index)
            and _refused(s.action)
            for s in self.trace.steps[1:]
        ):
            out.append(("refused", "dashed, ending in a bar: a call its target refused"))
        if "restart" in self.fault_marks:
            out.append(("restart", "restart: the lifeline starts again at the ring"))
        if "heal" in self.fault_marks:
            out.append(("word", "healed: the partition ends, every link restored"))
        diamonds = dict.fromkeys(
            f.name for f, mark in zip(ln.faults, self.fault_marks, strict=True) if mark == "diamond"
        )
        for name in diamonds:
            out.append(("diamond", f"{name}: a fault, at the lane it strikes"))
        if ln.pendings:
            out.append(("pending", "dashed line left of a lifeline: a write decided, not yet made"))
        if ln.expiries:
            out.append(("expiry", "bar across a lifeline: what it let go of by time"))
        if any(ln.ticks) and self.ctx.tick_seconds is not None:
            out.append(("word", f"time: real time so far (a tick is {self.ctx.time_text(1)})"))
        elif any(ln.ticks):
            out.append(("word", "t=N: clock ticks so far"))
        if self.trace.loop_from is not None:
            out.append(("loop", "bracket: the steps that repeat forever"))
        return out

    def _legend(self) -> None:
        cv, css = self.canvas, "legend"
        if not self.legend_entries:
            return
        rows, widths = self.legend_rows, self.legend_widths
        cv.box(
            MARKS,
            "legend",
            6,
            0,
            sum(widths) + 14,
            self.legend_h,
            css,
            "legend",
            color="#d5d8dc",
            style="rounded",
        )
        for k, (kind, words) in enumerate(self.legend_entries):
            col, row = divmod(k, rows)
            left = 16 + sum(widths[:col])
            y = 8 + LEGEND_ROW * row + LEGEND_ROW / 2
            self._swatch(f"legend_{k}", kind, left, y, words)
            cv.text(TAGS, f"legend_{k}_text", left + 34, y, [words], css, words, size=SMALL)

    def _in_time(self, words: str) -> str:
        """`at t=12` as the time column says it (`at 12 s` when a tick has a length)."""
        return _TIME_WORD.sub(lambda m: f"at {self.ctx.time_text(int(m.group(1)))}", words)

    def _swatch(self, name: str, kind: str, left: float, y: float, tip: str) -> None:
        cv, css = self.canvas, "legend"
        (fill, ink), (fill2, ink2) = PALETTE[0], PALETTE[1]
        boxes: dict[str, list[tuple[int, float, float, dict[str, str]]]] = {
            "bar": [(BAR, left + 8, BAR_W * 0.8, _filled(fill, ink))],
            "bars": [
                (BAR, left + 2, BAR_W * 0.8, _filled(fill, ink)),
                (BAR, left + 16, BAR_W * 0.8, _filled(fill2, ink2)),
            ],
            "pause": [(BAR, left + 8, BAR_W, {**_filled(_stripes(fill), ink), "style": "striped"})],
            "band": [(BANDS, left, 26, _filled(_blend(BAND, 0x40), _blend(BAND, 0x90)))],
            "cut": [(BANDS, left, 26, _filled(_blend(CUT, 0x30), _blend(CUT, 0x80)))],
        }
        for k, (layer, x, w, style) in enumerate(boxes.get(kind, [])):
            cv.box(layer, f"{name}_{k}", x, y - 8, w, 16, css, tip, **style)
        if kind in ("crash", "lost"):
            self._cross(name, left + 13, y, css, tip)
        elif kind == "message":
            cv.segment(name, left, y + 5, left + 26, y - 5, css, tip, arrowhead="normal")
        elif kind == "refused":
            cv.segment(name, left, y, left + 26, y, css, tip, arrowhead="tee", style="dashed")
        elif kind == "stub":
            cv.segment(name, left, y - 5, left + 22, y + 5, css, tip, **_STUB)
        elif kind == "loop":
            self._bracket(name, left + 6, y - 7, y + 7, css, tip, tick=6)
        elif kind == "restart":
            cv.node(
                DOTS, f"{name}_ring", left + 13, y, shape="circle", width="0.16", height="0.16",
                fixedsize="true", label="", color=GREEN, penwidth="2", style="filled",
                fillcolor="white", **{"class": css, "tooltip": tip},
            )  # fmt: skip
        elif kind == "diamond":
            cv.node(
                DOTS, f"{name}_diamond", left + 13, y, shape="diamond", width="0.2",
                height="0.2", fixedsize="true", label="", style="filled", fillcolor=LOSS,
                color=LOSS, **{"class": css, "tooltip": tip},
            )  # fmt: skip
        elif kind == "pending":
            cv.segment(name, left + 13, y - 8, left + 13, y + 8, css, tip, color=PENDING,
                       penwidth="2.5", style="dashed")  # fmt: skip
        elif kind == "expiry":
            cv.segment(name, left + 4, y, left + 22, y, css, tip, color=LOSS, penwidth="2.5")
        elif kind in ("brain", "stale"):
            color, dash = (RED, "dashed") if kind == "brain" else (STALE, "dotted")
            cv.segment(name, left, y, left + 26, y, css, tip, color=color, penwidth="2",
                       style=dash, dir="both", arrowsize="0.5")  # fmt: skip

    # header and rows -------------------------------------------------------------------------

    def _header(self) -> None:
        cv, css, y = self.canvas, "header", self.header_y
        cv.text(
            TAGS,
            "h_time",
            TIME_X,
            y,
            ["time"],
            css,
            "clock ticks so far",
            color=MUTED,
            align="CENTER",
        )
        cv.text(
            TAGS, "h_step", STEP_LEFT, y, ["step"], css, "the step and what happened", color=MUTED
        )
        first = self.trace.steps[0]
        for name in self.cols:
            f = self.facts(0, name)
            lines = [name]
            if name in self.lanes.nodes and not f.leads:
                lines.append(f.standing)
            elif name not in self.lanes.nodes:
                lines.append(first.summary.get(name, ""))
            tip = f"{name} at the start: {first.summary.get(name, '')}".rstrip(": ")
            cv.box(
                BOXES,
                f"h_{name}",
                self.x[name] - 55,
                y - HEADER_H / 2,
                110,
                HEADER_H,
                css,
                tip,
                style="rounded,filled",
                fillcolor="#e8eef7",
                color="#8ea3bf",
            )
            cv.text(
                TAGS,
                f"h_{name}_name",
                self.x[name],
                y,
                [x for x in lines if x],
                css,
                tip,
                size=SIZE,
                align="CENTER",
                bold_first=True,
            )

    def _rows(self) -> None:
        cv, g = self.canvas, self.grid
        left, right = 6.0, self.lanes_right + 10
        for step in self.trace.steps:
            i = step.index
            css = _classes(i, kind="row")
            words = _action_words(step)
            color = self.accent if self.deciding(i) else INK
            if self.deciding(i):
                cv.paint(f"r{i}_paint", left, g.tops[i], right - left, g.heights[i], css, words,
                         _blend(self.accent, 0x1C))  # fmt: skip
                cv.box(
                    MARKS,
                    f"r{i}_mark",
                    left,
                    g.tops[i],
                    right - left,
                    g.heights[i],
                    css,
                    words,
                    **_filled("#ffffff00", "#ffffff00"),
                )
            # the time column
            if i == 0 or self.lanes.ticks[i]:
                t = self.lanes.times[i]
                tip = f"step {i}: {t} tick{'s' * (t != 1)} so far"
                if self.ctx.tick_seconds is not None:
                    tip = f"step {i}: {self.ctx.time_text(t)} so far ({t} ticks)"
                cv.text(
                    TAGS,
                    f"r{i}_time",
                    TIME_X,
                    g.c(i),
                    [self.ctx.time_text(t)],
                    _classes(i, kind="time"),
                    tip,
                    size=SIZE if self.ctx.tick_seconds is None else TIME_SIZE,
                    color=INK if i else MUTED,
                    align="CENTER",
                    bold_first=bool(i),
                )
                if i:
                    cv.segment(
                        f"r{i}_tick",
                        self.first_lane - self.lane_w / 2 + 4,
                        g.c(i),
                        self.lanes_right - 4,
                        g.c(i),
                        _classes(i, kind="time"),
                        tip,
                        style="dotted",
                        color="#d5d8dc",
                    )
            # the step column
            head, note = _step_lines(step)
            cv.text(
                TAGS,
                f"r{i}_step",
                STEP_LEFT,
                g.c(i),
                [head, *note],
                _classes(i, kind="step"),
                words,
                size=SIZE,
                color=color,
                bold_first=True,
                width=STEP_W,
            )
            # a hover cell per lane, with the participant's summary
            for name in self.cols:
                tip = f"step {i}, {name}: {self._cell_words(step, name)}"
                cv.box(
                    CELLS,
                    f"r{i}_{name}",
                    self.x[name] - self.lane_w / 2,
                    g.tops[i],
                    self.lane_w,
                    g.heights[i],
                    _classes(i, kind="cell"),
                    tip,
                    **_filled("#ffffff00", "#ffffff00"),
                )
            # the actor's mark
            act = step.action
            marked = act is not None and not is_fault(act) and not is_recovery(act)
            if act is not None and marked and act.actor in self.x and not self._delivers(i):
                x = self.x[act.actor]
                cv.node(
                    DOTS,
                    f"r{i}_actor",
                    x,
                    g.c(i),
                    shape="circle",
                    width="0.09",
                    height="0.09",
                    fixedsize="true",
                    label="",
                    **_filled(color, "white"),
                    **{"class": _classes(i, kind="actor"), "tooltip": words},
                )
                cv.mark(x - 4, g.c(i) - 4, x + 4, g.c(i) + 4)  # no label over it

    def _cell_words(self, step: Step, name: str) -> str:
        f = self.facts(step.index, name)
        parts = [step.summary.get(name, "")]
        if f.paused:
            parts.append("paused")
        if f.island or f.rest:
            part = next(p for p in self.lanes.partitions if step.index in range(p.start, p.stop))
            parts.append(f"partition {part.title}")
        if f.cut_from_store:
            parts.append("cut from the store")
        return "; ".join(p for p in parts if p)

    # bands ---------------------------------------------------------------------------------

    def _partitions(self) -> None:
        cv, g = self.canvas, self.grid
        nodes = self.lanes.nodes
        for k, part in enumerate(self.lanes.partitions):
            css = _classes(
                part.start, part.stop if part.stop <= self.last else None, kind="partition"
            )
            top, bottom = g.start(part.start), g.stop(part.stop)
            since = "from the start" if part.start == 0 else f"from step {part.start}"
            until = f"until step {part.stop}" if part.stop <= self.last else "to the end"
            tip = f"partition {part.title}: {since} {until}"
            runs = _runs_of(nodes, set(part.island))
            for r, (a, b) in enumerate(runs):
                left = self.x[nodes[a]] - self.lane_w / 2 + 3
                width = (b - a + 1) * self.lane_w - 6
                cv.paint(f"part{k}_{r}_paint", left, top, width, bottom - top, css, tip,
                         _blend(BAND, 0x40))  # fmt: skip
                cv.box(
                    BANDS,
                    f"part{k}_{r}",
                    left,
                    top,
                    width,
                    bottom - top,
                    css,
                    tip,
                    **_filled("#ffffff00", _blend(BAND, 0x90)),
                )
                words = [f"partitioned {since}" if part.start == 0 else "partitioned"]
                x, y, align = self._tag_spot(words, left + 3, left + width - 3, top, bottom)
                cv.text(
                    TAGS,
                    f"part{k}_{r}_tag",
                    x,
                    y,
                    words,
                    css,
                    tip,
                    size=SMALL,
                    color="#7e5109",
                    bgcolor=_blend(BAND, 0xB0),
                    align=align,
                )
            for _, w, x, _, _ in (wall for wall in self._walls() if wall[0] == k):
                cv.segment(
                    f"part{k}_wall{w}",
                    x,
                    top,
                    x,
                    bottom,
                    css,
                    tip,
                    color=WALL,
                    style="dashed",
                    penwidth="3",
                )

    def _walls(self) -> list[tuple[int, int, float, float, float]]:
        """Each partition's walls: (partition, wall, x, top, bottom)."""
        g, nodes, out = self.grid, self.lanes.nodes, []
        for k, part in enumerate(self.lanes.partitions):
            top, bottom = g.start(part.start), g.stop(part.stop)
            for w, pos in enumerate(_walls(nodes, set(part.island))):
                x = (self.x[nodes[pos - 1]] + self.x[nodes[pos]]) / 2
                out.append((k, w, x, top, bottom))
        return out

    def _reserve_walls(self) -> None:
        """Keep every label placed from here on off the partitions' walls."""
        for _, _, x, top, bottom in self._walls():
            self.canvas.mark(x - 2.5, top, x + 2.5, bottom)

    def _tag_spot(
        self, words: Sequence[str], left: float, right: float, top: float, bottom: float
    ) -> tuple[float, float, str]:
        """A free spot for a band's tag inside the band: at its top, right or left, then
        lower down; else its top right."""
        spots = [
            (x, top + 9 + k * LINE_H, align)
            for k in range(max(1, int((bottom - top - 12) // LINE_H)))
            for x, align in ((right, "RIGHT"), (left, "LEFT"))
        ]
        for x, y, align in spots:
            if self.canvas.free(*_text_box(words, x, y, SMALL, align)):
                return x, y, align
        return spots[0]

    def _store_cuts(self) -> None:
        cv, g = self.canvas, self.grid
        for k, cut in enumerate(self.lanes.store_cuts):
            css = _classes(cut.start, cut.stop if cut.stop <= self.last else None, kind="cut")
            top, bottom = g.start(cut.start), g.stop(cut.stop)
            tip = f"{cut.who} cut from the store from step {cut.start}"
            left = self.x[cut.who] - self.lane_w / 2 + 8
            cv.paint(f"cut{k}_paint", left, top, self.lane_w - 16, bottom - top, css, tip,
                     _blend(CUT, 0x30))  # fmt: skip
            cv.box(
                BANDS,
                f"cut{k}",
                left,
                top,
                self.lane_w - 16,
                bottom - top,
                css,
                tip,
                **_filled("#ffffff00", _blend(CUT, 0x80)),
            )
            words = ["cut from", "the store"]
            x, y, align = self._tag_spot(words, left + 3, left + self.lane_w - 19, top, bottom)
            cv.text(
                TAGS,
                f"cut{k}_tag",
                x,
                y,
                words,
                css,
                tip,
                size=SMALL,
                color="#4a235a",
                bgcolor=_blend(CUT, 0x60),
                align=align,
            )

    # lifelines, bars, pauses, crashes ----------------------------------------------------------

    def _lifelines(self) -> None:
        cv, g = self.canvas, self.grid
        for name in self.cols:
            x = self.x[name]
            down = [c for c in self.lanes.crashes if c.who == name]
            alive, start = [], 0
            for c in down:
                alive.append((start, c.start))
                start = c.stop
            if start < len(self.trace.steps):
                alive.append((start, len(self.trace.steps)))
            for k, (a, b) in enumerate(alive):
                top = g.start(a) if a else self.header_y + HEADER_H / 2
                cv.segment(
                    f"life_{name}_{k}",
                    x,
                    top,
                    x,
                    g.stop(b),
                    "lifeline",
                    f"{name}'s lifeline",
                    style="dashed",
                    color=LIFELINE,
                )
            for k, c in enumerate(down):
                ended = c.stop <= self.last
                css = _classes(c.start, c.stop if ended else None, kind="crash")
                tip = f"{name} crashed at step {c.start}" + (
                    f", restarted at step {c.stop}" if ended else ""
                )
                self._cross(f"crash_{name}_{k}", x, g.c(c.start), css, tip, size=9)
                cv.text(
                    TAGS,
                    f"crash_{name}_{k}_tag",
                    x + 12,
                    g.c(c.start),
                    ["crashed"],
                    css,
                    tip,
                    color=LOSS,
                )
                cv.segment(
                    f"crash_{name}_{k}_gap",
                    x,
                    g.c(c.start) + 9,
                    x,
                    g.stop(c.stop),
                    css,
                    tip,
                    style="dotted",
                    color="#e5e7e9",
                )
                if ended:
                    now = self.facts(c.stop, name)
                    words = f"restarted: {now.standing}" if now.standing else "restarted"
                    y = g.c(c.stop)
                    spots = [(x + 9, y - 9, "LEFT"), (x - 9, y - 9, "RIGHT")]
                    spots += [(x + 9, y + 9, "LEFT"), (x - 9, y + 9, "RIGHT")]
                    tx, ty, align = cv.best([words], spots)
                    cv.text(
                        TAGS,
                        f"crash_{name}_{k}_up",
                        tx,
                        ty,
                        [words],
                        css,
                        tip,
                        color=MUTED,
                        align=align,
                    )

    def _leaderships(self) -> None:
        cv, g = self.canvas, self.grid
        for k, lead in enumerate(self.lanes.leaderships):
            fill, ink = self.colour[(lead.who, lead.start)]
            ended = lead.stop <= self.last
            css = _classes(lead.start, lead.stop if ended else None, kind="lead")
            top, bottom = g.start(lead.start), g.stop(lead.stop)
            if any(c.who == lead.who and c.start == lead.stop for c in self.lanes.crashes):
                bottom -= 10  # it ends in the crash's cross
            span = f"steps {lead.start}-{lead.stop - 1}" if ended else f"from step {lead.start}"
            tip = f"{lead.who} believes it leads, {lead.title}: {span}"
            x = self.x[lead.who]
            # the bar where it runs; a pause over it is drawn by _pauses
            cv.box(
                BAR,
                f"lead{k}",
                x - BAR_W / 2,
                top,
                BAR_W,
                bottom - top,
                css,
                tip,
                **_filled(fill, ink),
                penwidth="1.2",
            )
            cv.mark(x - BAR_W / 2, top, x + BAR_W / 2, bottom)
            crossed = any(  # a send to the right that could not leave ends in a cross there
                m.fate == UNREACHED
                and m.sender == lead.who
                and m.sent == lead.start
                and self.x.get(m.receiver, x) > x
                for m in self.lanes.messages
            )
            y = top + 9 + (LINE_H / 2 if crossed else 0)
            self._bar_title(f"lead{k}_tag", lead, x, y, css, tip, ink)
            if not ended and lead.start < self.last - 2:  # said again where it is decided
                css = _classes(self.last, kind="lead")
                self._bar_title(f"lead{k}_again", lead, x, g.c(self.last) + 12, css, tip, ink)
        self._split_brains()

    def _bar_title(
        self, name: str, lead: Leadership, x: float, y: float, css: str, tip: str, ink: str
    ) -> None:
        """A bar's title beside it: right of it, else left, else the epoch under the role
        (where a wall or another label leaves no room for one line)."""
        cv, title = self.canvas, [lead.title]
        right, left = (x + BAR_W / 2 + 4, "LEFT"), (x - BAR_W / 2 - 4, "RIGHT")
        spots = [(*right, y, title), (*left, y, title)]
        if " " in lead.title:
            two = lead.title.split(" ", 1)
            spots += [(*right, y + LINE_H / 2, two), (*left, y + LINE_H / 2, two)]
        tx, align, ty, words = next(
            (
                spot
                for spot in spots
                if cv.free(*_text_box(spot[3], spot[0], spot[2], SMALL, spot[1], bold=True))
            ),
            spots[0],
        )
        cv.text(TAGS, name, tx, ty, words, css, tip, size=SMALL, color=ink, bold_first=True,
                align=align)  # fmt: skip

    def _split_brains(self) -> None:
        """Where two nodes first both believe they lead, a double arrow between their bars:
        red, "two leaders", when they lead in one epoch (or the protocol has none), which is
        what single-leader forbids; amber and dotted, "stale leader", when one still
        believes an older epoch that another has replaced (single-leader per epoch holds;
        what such a leader may still do is what no-stale-write judges)."""
        cv, g = self.canvas, self.grid
        pairs: set[frozenset[str]] = set()
        for k, (a, b) in enumerate(self.lanes.split_brains()):
            if frozenset((a.who, b.who)) in pairs:
                continue  # marked where these two first both lead
            pairs.add(frozenset((a.who, b.who)))
            i = max(a.start, b.start)
            left, right = sorted((a, b), key=lambda lead: self.x[lead.who])
            x1, x2 = self.x[left.who] + BAR_W / 2, self.x[right.who] - BAR_W / 2
            y = g.c(i) + (self.grid.heights[i] / 2 - 6 if i < self.last else 26)
            split = self._split(a, b)
            kind, color, style, words = _MARKERS[split]
            css = _classes(i, kind=kind)
            if split:
                tip = (
                    f"from step {i}, {a.who} as {a.title} and {b.who} as {b.title}: "
                    "two nodes both believe they lead"
                )
            else:
                # the stale one first: no longer leading in its view, else the older epoch
                old, new = sorted(
                    (a, b), key=lambda lead: (self.facts(i, lead.who).leads, lead.epoch or 0)
                )
                tip = (
                    f"from step {i}, {old.who} still believes it is {old.title} while {new.who} "
                    f"is {new.title}: a stale belief, not two leaders of one epoch"
                )
            cv.segment(
                f"brain{k}",
                x1,
                y,
                x2,
                y,
                css,
                tip,
                color=color,
                penwidth="2",
                style=style,
                dir="both",
                arrowhead="normal",
                arrowtail="normal",
                arrowsize="0.7",
            )
            self._drawn((x1, y, x2, y))
            self._head(x1, y, x2, y)
            self._head(x2, y, x1, y)
            mid, quarter = (x1 + x2) / 2, (x2 - x1) / 4
            spots = [
                (x, y + dy, "CENTER")
                for dy in (10, -10, 10 + LINE_H, -10 - LINE_H, 10 + 2 * LINE_H)
                for x in (mid, mid - quarter, mid + quarter)
            ]
            tx, ty, _ = cv.best([words], spots)
            cv.text(
                LABELS,
                f"brain{k}_tag",
                tx,
                ty,
                [words],
                css,
                tip,
                size=SMALL,
                color=color,
                align="CENTER",
                bold_first=True,
                bgcolor="#ffffff",
            )

    def _split(self, a: Leadership, b: Leadership) -> bool:
        """Two leaders as the claims count them where both bars first stand: both lead in
        their views (not only in a belief a pause froze) and in one epoch, or in a protocol
        without epochs. Otherwise one of them is a stale leader."""
        i = max(a.start, b.start)
        both = self.facts(i, a.who).leads and self.facts(i, b.who).leads
        return both and _same_epoch(a, b)

    def _pauses(self) -> None:
        """A pause as a striped stretch of the lifeline, in the colour of the leadership
        under it where the view says the node leads, grey where it does not (a lease that
        runs out on the node's own clock ends its bar inside the pause)."""
        cv, g = self.canvas, self.grid
        for k, pause in enumerate(self.lanes.pauses):
            ended = pause.stop <= self.last
            css = _classes(pause.start, pause.stop if ended else None, kind="pause")
            span = f"resumed at step {pause.stop}" if ended else "never resumed"
            meanwhile = self._in_time(pause.meanwhile)
            tip = f"{pause.who} paused at step {pause.start} as {pause.belief}, {span}" + (
                f"; {meanwhile}" if meanwhile else ""
            )
            x = self.x[pause.who]
            for j, (a, b, lead) in enumerate(
                self._pause_pieces(pause.who, pause.start, pause.stop)
            ):
                fill, ink = self.colour[(lead.who, lead.start)] if lead else ("#aab7b8", "#566573")
                top = g.c(a)
                cv.box(
                    SEGMENT,
                    f"pause{k}" if j == 0 else f"pause{k}_p{j}",
                    x - BAR_W / 2 - 1,
                    top,
                    BAR_W + 2,
                    g.stop(b) - top,
                    css,
                    tip,
                    style="striped",
                    fillcolor=_stripes(fill),
                    color=ink,
                    penwidth="1.2",
                )
            top = g.c(pause.start)
            cv.text(
                TAGS,
                f"pause{k}_tag",
                x + BAR_W / 2 + 4,
                top + 9 + LINE_H,
                ["paused"],
                css,
                tip,
                size=SMALL,
                color="#566573",
                bold_first=True,
                bgcolor="#ffffff",
            )
            if ended:
                now = self.facts(pause.stop, pause.who)
                after = "resumed" if now.leads else f"resumed: {now.standing}"
                cv.text(
                    TAGS,
                    f"pause{k}_end",
                    x + BAR_W / 2 + 4,
                    g.c(pause.stop) - 9,
                    [after],
                    css,
                    tip,
                    color=MUTED,
                )

    def _pause_pieces(
        self, who: str, start: int, stop: int
    ) -> list[tuple[int, int, Leadership | None]]:
        """The pause from start to stop cut where the leadership under it changes."""
        pieces: list[tuple[int, int, Leadership | None]] = []
        for i in range(start, stop):
            lead = self.leading(who, i)
            if pieces and pieces[-1][2] == lead:
                pieces[-1] = (pieces[-1][0], i + 1, lead)
            else:
                pieces.append((i, i + 1, lead))
        return pieces

    def _data(self) -> None:
        """The fields the claim reads, on their lanes where they change, below the step's
        line (one under another when several change at once, or a line lower if the first
        is taken by a mark); at the deciding step in the accent colour: the data that
        carries the bug; in the crash's colour, a value set where a crash wiped another
        (a vote given twice in one term)."""
        cv, g = self.canvas, self.grid
        stacked: dict[tuple[int, str], int] = {}
        for k, d in enumerate(self._data_shown()):
            below = stacked.get((d.step, d.who), 0)
            spots = [
                (x, g.c(d.step) + 9 + LINE_H * (below + n + (len(d.words) - 1) / 2), align, n)
                for x, align in self._data_sides(d.who, d.step)
                for n in range(8)
            ]
            x, y, align, lower = cv.best(d.words, spots)
            stacked[(d.step, d.who)] = below + lower + len(d.words)
            deciding = self.deciding(d.step)
            cv.text(
                TAGS,
                f"datum{k}",
                x,
                y,
                d.words,
                _classes(d.step, kind="datum" if d.key else "authority"),
                f"step {d.step}, {d.who}: {d.key} {d.old!r} -> {d.new!r}"
                + (
                    f", and {d.before_crash!r} before its crash wiped it"
                    if d.before_crash is not None
                    else ""
                ),
                size=SMALL,
                color=self.accent if deciding else LOSS if d.before_crash is not None else DATA,
                align=align,
                bold_first=deciding or d.before_crash is not None,
                bgcolor="#ffffff",
            )

    def _data_shown(self) -> list[Datum]:
        """The data changes, and at the deciding step what the claim reads of the lanes the
        step names (its actor and target) even where it did not change: the value the
        verdict rests on (an empty WAL, the epoch the storage had accepted)."""
        reads = self.ctx.outcome.prop.reads
        shown = data_changes(self.trace, self.cols, reads)
        last = self.trace.steps[-1]
        if self.deciding(last.index) and last.action is not None:
            for who in dict.fromkeys((last.action.actor, last.action.target)):
                view = last.view.get(who or "", {})
                for key in reads:
                    changed = any(
                        d.step == last.index and d.who == who and d.key == key for d in shown
                    )
                    if who in self.x and key in view and not changed:
                        shown.append(Datum(last.index, who, key, view[key], view[key]))
        return shown + self._authority(shown)

    def _authority(self, shown: Sequence[Datum]) -> list[Datum]:
        """What the store, a lock's masters or another such lane now holds, in its own
        summary, where it changes and nothing else on its lane says so (no datum the claim
        reads, no expiry, no crash): who holds what, the authority a node's belief is
        measured against."""
        said = {(d.step, d.who) for d in shown} | {(e.step, e.who) for e in self.lanes.expiries}
        said |= {(c.start, c.who) for c in self.lanes.crashes}
        said |= {(c.stop, c.who) for c in self.lanes.crashes}
        found = []
        for before, step in zip(self.trace.steps, self.trace.steps[1:], strict=False):
            for who in self.lanes.others:
                now = step.summary.get(who, "")
                if now and now != before.summary.get(who, "") and (step.index, who) not in said:
                    found.append(Datum(step.index, who, "", before.summary.get(who), now))
        return found

    def _data_sides(self, name: str, i: int) -> tuple[tuple[float, str], tuple[float, str]]:
        """Where a datum on lane `name` at step i goes, first choice first: left of the
        lifeline (the right holds the tags of bars and crashes), unless a message meets
        the lane there from the left (one that could not leave runs level, above the
        datum: it may)."""
        x = self.x[name]
        from_left = any(
            (m.receiver == name and m.ended == i and self.x.get(m.sender, x) < x)
            or (
                m.sender == name
                and m.sent == i
                and m.fate != UNREACHED
                and self.x.get(m.receiver, x) < x
            )
            for m in self.lanes.messages
        )
        left, right = (x - 8, "RIGHT"), (x + BAR_W / 2 + 6, "LEFT")
        return (right, left) if from_left else (left, right)

    def _roles(self) -> None:
        """A node's role and epoch where they change, while it does not lead (paused too:
        what its view says), after what ran out on its own clock if that is why."""
        cv, g = self.canvas, self.grid
        for name in self.lanes.nodes:
            shown = None
            for i in range(len(self.trace.steps)):
                f = self.facts(i, name)
                title = f.standing
                if f.leads or f.crashed:
                    shown = None
                    continue
                if i == 0:
                    shown = title  # written in the header
                    continue
                resumed = any(p.who == name and p.stop == i for p in self.lanes.pauses) or any(
                    c.who == name and c.stop == i for c in self.lanes.crashes
                )
                if title != shown and not resumed:  # a resume or restart says the role itself
                    why = ran_out(
                        self.trace.steps[i - 1].view.get(name, {}),
                        self.trace.steps[i].view.get(name, {}),
                    )
                    why = f"{why} ran out" if why else ""
                    title = f"{why}: {title}" if why and shown is None else title
                    tip = f"step {i}: {name} is {f.standing}" + (f" ({why})" if why else "")
                    x, align = self._free_side(name, i)
                    other = (2 * self.x[name] - x, "LEFT" if align == "RIGHT" else "RIGHT")
                    spots = [
                        (sx, g.c(i) + dy, a) for dy in (-9, 9) for sx, a in ((x, align), other)
                    ]
                    x, y, align = cv.best([title], spots)
                    cv.text(
                        TAGS,
                        f"role_{name}_{i}",
                        x,
                        y,
                        [title],
                        _classes(i, kind="role"),
                        tip,
                        color=MUTED,
                        align=align,
                    )
                shown = f.standing

    def _free_side(self, name: str, i: int) -> tuple[float, str]:
        """Where a label beside lane `name` at step i goes: the right, unless a message
        arrives there from the right (then the left)."""
        x = self.x[name]
        from_right = any(
            m.receiver == name and m.ended == i and self.x.get(m.sender, x) > x
            for m in self.lanes.messages
        )
        return (x - 6, "RIGHT") if from_right else (x + 6, "LEFT")

    # what a node holds, what faults do, what runs out -------------------------------------------

    def _pendings(self) -> None:
        """What a node decided and has not yet done (a write under token 1), as a line left
        of its lifeline from the step it decided to the step it does it, labelled with what
        it carries: why a node that no longer leads may still write."""
        cv, g = self.canvas, self.grid
        for k, held in enumerate(self.lanes.pendings):
            ended = held.stop <= self.last
            css = _classes(held.start, held.stop if ended else None, kind="pending")
            x = self.x[held.who] - PENDING_X
            top = g.c(held.start)
            bottom = g.c(held.stop) if ended else g.end - TAIL / 2
            span = f"steps {held.start}-{held.stop - 1}" if ended else f"from step {held.start}"
            tip = f"{held.who}: {held.title}, {span}"
            cv.segment(
                f"pending{k}", x, top, x, bottom, css, tip, color=PENDING, penwidth="2.5",
                style="dashed",
            )  # fmt: skip
            cv.mark(x - 2, top, x + 2, bottom)
            words = [f"{held.what} pending"] + ([f"({held.carries})"] if held.carries else [])
            spots = [(x - 4, top + 9 + LINE_H * n, "RIGHT") for n in range(3)]
            spots += [(x - 4, top - 9, "RIGHT")]
            sx, sy, align = cv.best(words, spots)
            cv.text(
                TAGS, f"pending{k}_tag", sx, sy, words, css, tip, color=PENDING, align=align,
                bgcolor="#ffffff",
            )  # fmt: skip

    def _fault_mark(self, f: Fault) -> str:
        """How a fault or recovery is drawn: "drawn" where another mark says it (a crash's
        cross, a pause's stripes, a partition's band, a lost message's cross), "restart"
        (a ring), "heal" (its words where the band ends), "call" (a request lost on its
        way: a line that ends in a cross), else "diamond" (a diamond and its name)."""
        ln, i = self.lanes, f.step
        if f.name == "restart" and f.who in self.x:
            return "restart"
        if f.name == "heal" and any(b.stop == i for b in ln.partitions):
            return "heal"
        if any(c.who == f.who and c.start == i for c in ln.crashes) and f.name == "crash":
            return "drawn"
        if any(p.who == f.who and i in (p.start, p.stop) for p in ln.pauses):
            if f.name in ("pause", "resume"):
                return "drawn"
        ends = [(b.start, b.stop) for b in ln.partitions] + [
            (c.start, c.stop) for c in ln.store_cuts
        ]
        if any(i in end for end in ends) and f.name in ("partition", "heal"):
            return "drawn"
        if f.name == "lose" and any(m.ended == i and m.fate == LOST for m in ln.messages):
            return "drawn"
        if f.who in self.x and f.target in self.x and f.who != f.target:
            return "call"
        return "diamond"

    def _fault_marks(self) -> None:
        """Every fault and recovery gets a mark on its actor's lane where nothing else
        draws it: a restart a ring where the lifeline starts again, a heal its words where
        the band ends, a lost request a line toward its target that ends in a cross, any
        other fault (a clock jump, a kind the model declares) a diamond and its name."""
        cv, g = self.canvas, self.grid
        for k, f in enumerate(self.lanes.faults):
            i, css = f.step, _classes(f.step, kind="fault")
            tip = f"step {i}: {f.who} {f.name}" + (f" ({f.note})" if f.note else "")
            y, mark = g.c(i), self.fault_marks[k]
            if mark == "drawn":
                continue
            if mark == "restart":
                x = self.x[f.who]
                cv.node(
                    DOTS, f"fault{k}", x, y, shape="circle", width="0.16", height="0.16",
                    fixedsize="true", label="", color=GREEN, penwidth="2",
                    style="filled", fillcolor="white", **{"class": css, "tooltip": tip},
                )  # fmt: skip
                cv.mark(x - 6, y - 6, x + 6, y + 6)
                continue
            if mark == "heal":
                words = ["healed"]
                ended = [w for w in self._walls() if self.lanes.partitions[w[0]].stop == i]
                wx = ended[0][2] if ended else self.first_lane
                spots = [(wx + 5, y - 9, "LEFT"), (wx - 5, y - 9, "RIGHT")]
                spots += [(wx + 5, y + 9, "LEFT"), (wx - 5, y + 9, "RIGHT")]
                x, y2, align = cv.best(words, spots)
                cv.text(TAGS, f"fault{k}_tag", x, y2, words, css, tip, color="#7e5109",
                        align=align)  # fmt: skip
                continue
            if mark == "call":
                self._lost_call(k, f, css, tip)
                continue
            x = self.x.get(f.who, self.first_lane - self.lane_w / 2 + 10)
            cv.node(
                DOTS, f"fault{k}", x, y, shape="diamond", width="0.2", height="0.2",
                fixedsize="true", label="", style="filled", fillcolor=LOSS, color=LOSS,
                **{"class": css, "tooltip": tip},
            )  # fmt: skip
            cv.mark(x - 8, y - 8, x + 8, y + 8)
            words = [f.name]
            spots = [(x + 10, y, "LEFT"), (x - 10, y, "RIGHT"), (x + 8, y + 13, "LEFT")]
            sx, sy, align = cv.best(words, spots)
            cv.text(TAGS, f"fault{k}_tag", sx, sy, words, css, tip, color=LOSS, align=align,
                    bold_first=True, bgcolor="#ffffff")  # fmt: skip

    def _lost_call(self, k: int, f: Fault, css: str, tip: str) -> None:
        """A call that is itself the fault (a request the network loses): a line from the
        actor toward its target that ends in a cross short of it."""
        assert f.target is not None
        y, x2 = self.grid.c(f.step), self.x[f.target]
        start = self.edge_x(f.who, f.step, x2)
        stop = start + (x2 - start) * 0.55
        self.canvas.segment(f"fault{k}", start, y, stop, y, css, tip, color=INK, penwidth="1.2")
        self._cross(f"fault{k}_lost", stop, y, css, tip)
        self._drawn((start, y, stop, y))
        self.canvas.text(
            LABELS, f"fault{k}_tag", (start + stop) / 2, y - 9, [f"{f.name} (lost)"], css, tip,
            color=LOSS, align="CENTER", bgcolor="#ffffff",
        )  # fmt: skip

    def _expiries(self) -> None:
        """A countdown of the store or storage that ran out by time alone: a bar across its
        lifeline and what it is now (`lease t1 expired`): why another node may take over."""
        cv, g = self.canvas, self.grid
        for k, e in enumerate(self.lanes.expiries):
            if e.who not in self.x:
                continue
            x, y, css = self.x[e.who], g.c(e.step), _classes(e.step, kind="expiry")
            tip = f"step {e.step}: {e.who}: {e.words}"
            cv.segment(f"expiry{k}", x - 9, y, x + 9, y, css, tip, color=LOSS, penwidth="2.5")
            cv.mark(x - 9, y - 3, x + 9, y + 3)
            words = [e.words]
            spots = [(x - 12, y, "RIGHT"), (x + 12, y, "LEFT"), (x - 8, y + 13, "RIGHT")]
            sx, sy, align = cv.best(words, spots)
            cv.text(TAGS, f"expiry{k}_tag", sx, sy, words, css, tip, color=LOSS, align=align,
                    bgcolor="#ffffff")  # fmt: skip

    # arrows ------------------------------------------------------------------------------------

    def _delivers(self, i: int) -> bool:
        return any(m.ended == i and m.fate == DELIVERED for m in self.lanes.messages)

    def _calls(self) -> None:
        """Actions between two lanes within one step (not message deliveries): level arrows."""
        cv, g = self.canvas, self.grid
        for step in self.trace.steps[1:]:
            act, i = step.action, step.index
            if act is None or act.target is None or self._delivers(i):
                continue
            if act.actor not in self.x or act.target not in self.x or act.actor == act.target:
                continue
            if is_fault(act):  # a link cut or the like: its band or cross says it
                continue
            if any(  # it sends a message: the message's line says it
                m.sent == i and m.sender == act.actor and m.receiver == act.target
                for m in self.lanes.messages
                if m.fate != UNREACHED
            ):
                continue
            deciding = self.deciding(i)
            color = self.accent if deciding else INK
            x1, x2 = self.x[act.actor], self.x[act.target]
            y = g.c(i)
            css, words = _classes(i, kind="call"), _action_words(step)
            start = self.edge_x(act.actor, i, x2)
            stop = self._blocked_at(act.actor, act.target, i)
            width = "2.2" if deciding else "1.2"
            refused = _refused(act)
            if stop is None:
                end = self.edge_x(act.target, i, x1)
                cv.segment(
                    f"call{i}",
                    start,
                    y,
                    end,
                    y,
                    css,
                    words,
                    arrowhead="tee" if refused else "normal",
                    color=color,
                    penwidth=width,
                    **({"style": "dashed"} if refused else {}),
                )
                self._head(start, y, end, y)
            else:  # it cannot get there: across a partition, to a crashed or cut-off lane
                cv.segment(f"call{i}", start, y, stop, y, css, words, color=color, penwidth=width)
                self._cross(f"call{i}_lost", stop, y, css, words)
                x2 = end = stop
            self._drawn((start, y, end, y))
            label = _call_label(act) + (" (refused)" if refused else "")
            lx, ly = (x1 + x2) / 2, y - 9
            if not cv.free(*_text_box([label], lx, ly, SMALL, "CENTER")):
                lx, ly = self._label_spot(label, start, y, end, y)
            cv.text(
                LABELS,
                f"call{i}_tag",
                lx,
                ly,
                [label],
                css,
                words,
                color=color,
                align="CENTER",
                bgcolor="#ffffff",
            )

    def _blocked_at(self, actor: str, target: str, i: int) -> float | None:
        """Where a call from actor to target at step i stops, if it cannot arrive: at the
        wall of a partition between them, short of a crashed target, or short of the store
        for a node cut from it (all as they were before the step); None if it arrives."""
        before = self.lanes.facts[i - 1]
        a, t = before[actor], before[target]
        x1, x2 = self.x[actor], self.x[target]
        nodes = self.lanes.nodes
        if actor in nodes and target in nodes and (a.island or a.rest) and a.island != t.island:
            k, toward = nodes.index(actor), 1 if x2 > x1 else -1
            while before[nodes[k + toward]].island == a.island:
                k += toward
            return (self.x[nodes[k]] + self.x[nodes[k + toward]]) / 2
        if t.crashed or (a.cut_from_store and target == "store"):
            return x2 - (x2 - x1) * 0.3
        return None

    def _messages(self) -> None:
        """Every message as a line (the stubs of those still in flight last, each turned away
        from the lines already drawn where it starts), then every label, so that a label
        keeps clear of the arrowheads and crosses of all of them."""
        cv, g = self.canvas, self.grid
        drawn: list[tuple[int, Message, float, float, float, float, str]] = []
        shown = [
            (k, m)
            for k, m in enumerate(self.lanes.messages)
            if m.sender in self.x and m.receiver in self.x and m.fate != UNREACHED
        ]
        for k, m in sorted(shown, key=lambda km: km[1].fate == IN_FLIGHT):
            xs, xr = self.x[m.sender], self.x[m.receiver]
            y1 = g.c(m.sent) if m.sent else g.c(0)
            x1 = self.edge_x(m.sender, m.sent, xr)
            deciding = m.ended == self.last and m.fate == DELIVERED
            color = self.accent if deciding else MESSAGE
            css = _classes(m.sent, m.ended, kind="message")
            tip = self._message_words(m)
            if m.fate == DELIVERED and m.ended is not None:
                x2, y2 = self.edge_x(m.receiver, m.ended, xs), g.c(m.ended)
                cv.segment(
                    f"msg{k}",
                    x1,
                    y1,
                    x2,
                    y2,
                    css,
                    tip,
                    arrowhead="normal",
                    color=color,
                    penwidth="2.2" if deciding else "1.3",
                )
                self._head(x1, y1, x2, y2)
            elif m.fate == LOST and m.ended is not None:
                x2, y2 = x1 + (xr - x1) * 0.42, g.c(m.ended)
                cv.segment(f"msg{k}", x1, y1, x2, y2, css, tip, color=color, penwidth="1.3")
                self._cross(f"msg{k}_lost", x2, y2, css, tip)
            else:  # IN_FLIGHT at the end: a stub, on its way
                x2, y2 = self._stub_end(x1, y1, xr)
                cv.segment(f"msg{k}", x1, y1, x2, y2, css, tip, color=color, **_STUB)
                self._head(x1, y1, x2, y2)
            self._drawn((x1, y1, x2, y2))
            drawn.append((k, m, x1, y1, x2, y2, color))
        # One label per message; the stubs of one send that fan out to one side share one.
        labelled: dict[tuple[object, ...], list[tuple[int, Message, float, float]]] = {}
        for k, m, x1, _, x2, y2, color in sorted(drawn, key=lambda d: d[0]):
            fan = ("fan", m.sender, m.sent, x2 >= x1, m.kind, color)
            key = fan if m.fate == IN_FLIGHT else (k,)
            labelled.setdefault(key, []).append((k, m, x2, y2))
        places = {d[0]: d for d in drawn}
        for group in labelled.values():
            k, m, x1, y1, _, _, color = places[group[0][0]]
            x2, y2 = sum(d[2] for d in group) / len(group), max(d[3] for d in group)
            self._message_tag(k, [d[1] for d in group], x1, y1, x2, y2, color)
        for k, sends, x1, y1, x2, y2 in self.unreached_tags:  # drawn before the data
            self._message_tag(k, sends, x1, y1, x2, y2, MESSAGE)

    def _unreached(self) -> None:
        """Sends that could not leave: a level line from the sender to where each stops (a
        partition's wall, or short of a node that is down), ending in a cross; the sends of
        one step that stop at one place share a line and a label. Drawn before the data, so
        that the data's labels keep clear of the crosses; labelled with the other messages."""
        g = self.grid
        stops: dict[tuple[str, int, int], tuple[float, float, list[tuple[int, Message]]]] = {}
        for k, m in enumerate(self.lanes.messages):
            if m.fate != UNREACHED or m.sender not in self.x or m.receiver not in self.x:
                continue
            xr = self.x[m.receiver]
            x1 = self.edge_x(m.sender, m.sent, xr)
            stop = self._blocked_at(m.sender, m.receiver, m.sent)
            x2 = x1 + (xr - x1) * 0.42 if stop is None else stop
            stops.setdefault((m.sender, m.sent, round(x2)), (x1, x2, []))[2].append((k, m))
        for x1, x2, group in stops.values():
            k, m = group[0]
            y, css = g.c(m.sent), _classes(m.sent, kind="message")
            tip = "; ".join(self._message_words(m) for _, m in group)
            self.canvas.segment(f"msg{k}", x1, y, x2, y, css, tip, color=MESSAGE, penwidth="1.3")
            self._cross(f"msg{k}_lost", x2, y, css, tip)
            self._drawn((x1, y, x2, y))
            self.unreached_tags.append((k, [m for _, m in group], x1, y, x2, y))

    def _message_tag(
        self,
        k: int,
        group: list[Message],
        x1: float,
        y1: float,
        x2: float,
        y2: float,
        color: str,
    ) -> None:
        """The one label of message k's line (from (x1, y1) to (x2, y2)), or of the lines
        of one send that fan out or stop together: its kind, and where it goes unless it
        arrives."""
        m = group[0]
        to = ", ".join(d.receiver for d in sorted(group, key=lambda d: self.x[d.receiver]))
        label = m.kind if m.fate == DELIVERED else f"{m.kind} to {to}"
        x, y = self._label_spot(label, x1, y1, x2, y2, m.fate != DELIVERED)
        self.canvas.text(
            LABELS,
            f"msg{k}_tag",
            x,
            y,
            [label],
            _classes(*(step for d in group for step in (d.sent, d.ended)), kind="message"),
            "; ".join(self._message_words(d) for d in group),
            color=color,
            align="CENTER",
            bgcolor="#ffffff",
        )

    def _stub_end(self, x1: float, y1: float, toward: float) -> tuple[float, float]:
        """Where the stub of a message still in flight at the end stops: STUB_LEN from
        (x1, y1) down toward its receiver's side, at the first of STUB_ANGLES at least
        STUB_CLEAR degrees from every line already drawn from or to that point (else the
        one farthest from them): stubs of one broadcast fan out, none runs along a message."""
        side = 1.0 if toward >= x1 else -1.0
        taken = []
        for ax, ay, bx, by in self.arrows:
            if abs(ax - x1) <= BAR_W and abs(ay - y1) < 0.5:
                taken.append(math.atan2(by - y1, bx - x1))
            elif abs(bx - x1) <= BAR_W and abs(by - y1) < 0.5:
                taken.append(math.atan2(ay - y1, ax - x1))
        best, clearest = (x1, y1), -1.0
        for angle in STUB_ANGLES:
            dx, dy = side * math.cos(math.radians(angle)), math.sin(math.radians(angle))
            way = math.atan2(dy, dx)
            clear = min(
                (abs(math.degrees((way - t + math.pi) % (2 * math.pi) - math.pi)) for t in taken),
                default=180.0,
            )
            end = (x1 + STUB_LEN * dx, y1 + STUB_LEN * dy)
            if clear >= STUB_CLEAR:
                return end
            if clear > clearest:
                best, clearest = end, clear
        return best

    def _drawn(self, line: tuple[float, float, float, float]) -> None:
        """An arrow drawn: stubs turn away from it, labels keep off it."""
        self.arrows.append(line)
        self.canvas.lines.append(line)

    def _head(self, x1: float, y1: float, x2: float, y2: float) -> None:
        """Keep labels off the arrowhead at (x2, y2) of the line from (x1, y1)."""
        length = math.hypot(x2 - x1, y2 - y1) or 1.0
        bx, by = x2 - (x2 - x1) / length * 10, y2 - (y2 - y1) / length * 10
        self.canvas.mark(min(x2, bx) - 4, min(y2, by) - 4, max(x2, bx) + 4, max(y2, by) + 4)

    def _label_spot(
        self, label: str, x1: float, y1: float, x2: float, y2: float, short: bool = False
    ) -> tuple[float, float]:
        """The first spot where the label of the line from (x1, y1) to (x2, y2) overlaps no
        text or mark placed so far: along the line, just above or below it (a line that
        ends short of its lane, lost or still in flight: first around its end, clear of
        its cross or head). Else the least crowded spot."""
        w = _width(label, SMALL) / 2 + 8
        ahead = w if x2 >= x1 else -w
        spots: list[tuple[float, float]] = (
            [(x2, y2 + 14 + LINE_H * k) for k in range(3)]
            + [(x2 + ahead, y2), (x2, y2 - 14)]
            + [(x2 - f * ahead, y2 + 14 + LINE_H * k) for k in range(3) for f in (1, 1.5, 2)]
            + [(x2 + f * ahead, y2 + 14 + LINE_H * k) for k in range(3) for f in (1, 1.5, 2)]
            + [(x2 + f * ahead, y2 - 14 - LINE_H * k) for k in range(2) for f in (-1, 0, 1)]
            if short
            else []
        )
        spots += [
            (x1 + (x2 - x1) * at, y1 + (y2 - y1) * at + dy)
            for dy in (-8, 8, -17, 17)
            for at in (0.62, 0.42, 0.78, 0.3, 0.52, 0.88, 0.2)
        ]
        x, y, _ = self.canvas.best([label], [(x, y, "CENTER") for x, y in spots])
        return x, y

    @staticmethod
    def _message_words(m: Message) -> str:
        head = f"{m.kind} {m.sender} -> {m.receiver}: sent at step {m.sent}"
        if m.fate == DELIVERED:
            return f"{head}, delivered at step {m.ended}"
        if m.fate == LOST:
            return f"{head}, lost at step {m.ended} ({m.cause})"
        if m.fate == UNREACHED:
            return f"{head}, could not leave ({m.cause})"
        assert m.fate == IN_FLIGHT
        return f"{head}, still in flight at the end"

    def _cross(self, name: str, x: float, y: float, css: str, tip: str, size: float = 6) -> None:
        self.canvas.mark(x - size, y - size, x + size, y + size)
        for k, (dx, dy) in enumerate(((size, size), (size, -size))):
            self.canvas.segment(
                f"{name}_{k}", x - dx, y - dy, x + dx, y + dy, css, tip, color=LOSS, penwidth="2.5"
            )

    def _bracket(
        self, name: str, x: float, top: float, bottom: float, css: str, tip: str, tick: float = 10
    ) -> None:
        """A `]` from top to bottom at x, its arrow pointing back up to the top."""
        cv = self.canvas
        a = cv.point(f"{name}_a", x - tick, bottom, css, tip)
        b = cv.point(f"{name}_b", x, bottom, css, tip)
        c = cv.point(f"{name}_c", x, top, css, tip)
        d = cv.point(f"{name}_d", x - tick, top, css, tip)
        style = {"color": self.accent, "penwidth": "2"}
        cv.line(a, b, css, tip, **style)
        cv.line(b, c, css, tip, **style)
        cv.line(c, d, css, tip, arrowhead="normal", arrowsize="0.7", **style)

    # verdict ---------------------------------------------------------------------------------

    def _verdict(self) -> None:
        cv, g, ctx = self.canvas, self.grid, self.ctx
        last, css = self.last, _classes(self.last, kind="verdict")
        loop_from = self.trace.loop_from
        top = g.tops[last if loop_from is None else loop_from]
        left = cv.right_of(top, g.end, self.first_lane - self.lane_w / 2) + 14
        left = max(left, self.lanes_right + 18)
        if loop_from is not None:
            words = loop_text(loop_from, last)
            lcss = _classes(loop_from, last, kind="loop")
            top, bottom = g.c(loop_from) - 6, g.c(last) + 6
            self._bracket("loop", left, top, bottom, lcss, words)
            lines = ["repeats forever", *textwrap.wrap(words.removeprefix("loop: "), 36)]
            lines += [line for fact in self._cycle_facts() for line in textwrap.wrap(fact, 36)]
            text_h = len(lines) * LINE_H
            cv.text(
                TAGS,
                "loop_tag",
                left + 12,
                top + text_h / 2,
                lines,
                lcss,
                words,
                size=SIZE,
                color=self.accent,
                bold_first=True,
            )
        # the verdict under the last row, in the step column: in view wherever the deciding
        # step is, and no wider than the chart's own columns
        verdict = "broken" if ctx.kind == "counterexample" else "reached"
        head = f"step {last}: {ctx.outcome.prop.name} {verdict}"
        lines = [head, *textwrap.wrap(ctx.outcome.reason, STEP_CHARS)]
        left, w = 6.0, STEP_LEFT + STEP_W - 6
        h = LINE_H * len(lines) + 14
        tip = f"{head}: {ctx.outcome.reason}"
        y = g.tops[last] + g.heights[last] + 8 + h / 2
        cv.box(
            BOXES,
            "verdict",
            left,
            y - h / 2,
            w,
            h,
            css,
            tip,
            style="rounded,filled",
            fillcolor="#ffffff",
            color=self.accent,
            penwidth="2",
        )
        cv.text(
            TAGS,
            "verdict_text",
            left + 9,
            y,
            lines,
            css,
            tip,
            size=SIZE,
            color=self.accent,
            bold_first=True,
        )

    def _cycle_facts(self) -> list[str]:
        """What holds all through a lasso's cycle: its partitions, crashes, pauses, leaders."""
        ln, a, b = self.lanes, self.trace.loop_from, self.last
        assert a is not None
        out = []
        for part in ln.partitions:
            if part.start <= a and b < part.stop:
                since = " since the start" if part.start == 0 else ""
                out.append(f"all through: {part.title} partitioned{since}")
        for c in ln.crashes:
            if c.start <= a and b < c.stop:
                out.append(f"all through: {c.who} crashed")
        for p in ln.pauses:
            if p.start <= a and b < p.stop:
                out.append(f"all through: {p.who} paused")
        if not any(lead.start <= b and a < lead.stop for lead in ln.leaderships):
            out.append("no node leads")
        cycle = self.trace.steps[a + 1 : b + 1]
        if all(ln.ticks[s.index] for s in cycle):
            out.append("each time round only the clock ticks: no node acts (the verdict says why)")
        for name in ln.nodes:  # what never settles: a node's role, round and round
            seen = [self.facts(i, name).standing for i in range(a, b + 1)]
            turns = [w for k, w in enumerate(seen) if w and (k == 0 or w != seen[k - 1])]
            if len(set(turns)) > 1:
                out.append(f"never settles: {name} goes " + " \u2192 ".join(turns))
        recurring = [
            f"{s.action.actor} {s.action.name} (step {s.index})"
            + (f": {s.action.note}" if s.action.note else "")
            for s in self.trace.steps[a + 1 : b + 1]
            if s.action is not None and s.action.kind in (FAULT, RECOVERY)
        ]
        if recurring:
            out.append("each time round it needs " + "; then ".join(recurring))
        return out


COVER_WEIGHT = 100.0  # a square point of text or mark covered, against a point of arrow crossed


def _clipped(
    line: tuple[float, float, float, float], box: tuple[float, float, float, float]
) -> float:
    """How long a stretch of the line segment lies inside the box (Liang-Barsky)."""
    x1, y1, x2, y2 = line
    left, top, right, bottom = box
    dx, dy = x2 - x1, y2 - y1
    lo, hi = 0.0, 1.0
    for p, q in ((-dx, x1 - left), (dx, right - x1), (-dy, y1 - top), (dy, bottom - y1)):
        if p == 0:
            if q < 0:
                return 0.0
            continue
        t = q / p
        if p < 0:
            lo = max(lo, t)
        else:
            hi = min(hi, t)
        if lo >= hi:
            return 0.0
    return (hi - lo) * math.hypot(dx, dy)


def _em(text: str) -> float:
    """How wide `text` is in Helvetica, in ems, by the classes of its characters (capitals
    and wide letters about 0.72, lowercase and digits 0.556, narrow ones 0.28)."""
    return sum(
        0.28 if ch in " .,:;!|()[]'-ijlft/"
        else 0.85 if ch in "MWmw"
        else 0.72 if ch.isupper()
        else 0.556
        for ch in text
    )  # fmt: skip


def _text_box(
    lines: Sequence[str], x: float, y: float, size: float, align: str, bold: bool = False
) -> tuple[float, float, float, float]:
    """Where text drawn at (x, y) with `align` lies, as tightly as it looks."""
    w = max(_em(line) for line in lines) * size * (1.08 if bold else 1.0) + 6
    h = LINE_H * len(lines)
    # text aligned RIGHT is drawn in a cell Graphviz may widen to its left (`_Canvas.text`)
    left = {"LEFT": x, "RIGHT": x - w - 5}.get(align, x - w / 2)
    right = x if align == "RIGHT" else left + w
    return left, y - h / 2, right, y + h / 2


def _legend_layout(texts: Sequence[str], room: float) -> tuple[int, list[float]]:
    """Rows and column widths of the legend: as many columns (at most 3) as fit in `room`."""
    if not texts:
        return 0, []
    for columns in (3, 2, 1):
        rows = -(-len(texts) // columns)
        widths = [
            max(_width(t, SMALL) for t in texts[c * rows : (c + 1) * rows]) + 34 + 20
            for c in range(-(-len(texts) // rows))
        ]
        if sum(widths) <= room or columns == 1:
            return rows, widths
    raise AssertionError("unreachable")


# The marker between two bars at once: (css kind, colour, line style, words), by whether
# the two are leaders of one epoch (a split brain) or one of them is stale.
_MARKERS = {
    True: ("split-brain", RED, "dashed", "two leaders"),
    False: ("stale", STALE, "dotted", "stale leader"),
}

_REFUSED = re.compile(r"\b(refused|rejected)\b")


def _refused(action: Action) -> bool:
    """A call its target turned down, as its note says (`refused: taken by n1`, `token 1
    rejected`): drawn dashed, ending in a bar, so it does not look like one that took."""
    return bool(_REFUSED.search(str(action.shown().note)))


_CARRIED = re.compile(r"\b(token|term|epoch|znode) (\d+)\b|\bleadership (#\d+)")


def _call_label(action: Action) -> str:
    """A call's words on its arrow: a write to the storage says the epoch it carries,
    `write (token 1)`, as its note names it first, since that is what fencing compares."""
    found = _CARRIED.search(str(action.note)) if action.target == "storage" else None
    if found is None:
        return action.name
    carried = found.group(3) or f"{found.group(1)} {found.group(2)}"
    return f"{action.name} ({carried})"


def _same_epoch(a: Leadership, b: Leadership, ghost: bool = True) -> bool:
    """Two leaderships in one epoch, or (`ghost`) in a protocol without epochs (none, or
    only the checker's count, shown as #N): single-leader then forbids the pair."""
    if GHOST in (a.word, b.word) or a.epoch is None or b.epoch is None:
        return ghost
    return a.epoch == b.epoch


def _filled(fill: str, line: str = "") -> dict[str, str]:
    """The style of a filled box, its outline `line` (the fill's colour if none)."""
    return {"style": "filled", "fillcolor": fill, "color": line or fill}


def _blend(colour: str, alpha: int) -> str:
    """`colour` at opacity alpha/255 over white, as an opaque colour: every viewer draws it
    the same (ImageMagick's ignores fill-opacity)."""
    rgb = [int(colour[k : k + 2], 16) for k in (1, 3, 5)]
    return "#" + "".join(f"{round(255 - (255 - c) * alpha / 255):02x}" for c in rgb)


def _stripes(fill: str) -> str:
    """A fill of vertical stripes: the colour, then white, six times."""
    return ":".join([fill, "#ffffff"] * 3)


def _runs_of(nodes: Sequence[str], members: set[str]) -> list[tuple[int, int]]:
    """Runs of adjacent node columns in `members`, as (first, last) positions."""
    runs: list[tuple[int, int]] = []
    for k, name in enumerate(nodes):
        if name not in members:
            continue
        if runs and runs[-1][1] == k - 1:
            runs[-1] = (runs[-1][0], k)
        else:
            runs.append((k, k))
    return runs


def _walls(nodes: Sequence[str], island: set[str]) -> Iterable[int]:
    """Positions k where columns k-1 and k are on different sides."""
    return [k for k in range(1, len(nodes)) if (nodes[k - 1] in island) != (nodes[k] in island)]


def trace_to_dot(ctx: TraceContext) -> str:
    """The trace of `ctx` as a message sequence chart in DOT (render with `dot -Tsvg`).
    Drawn twice: the first time finds every arrow and mark (their places never depend on
    a label's), the second places each label knowing all of them, not only those before."""
    first = _Chart(ctx)
    first.draw()
    second = _Chart(ctx)
    second.canvas.lines.extend(first.canvas.lines)
    second.canvas.placed.extend(first.canvas.marks)
    return second.build()

"""No two texts of a chart overlap, and no text hides a mark: every committed chart, and a
few drawn fresh.

Each SVG is read as Graphviz wrote it: a `<text>` element has its baseline position (x, y),
its anchor, size and weight. Its box is as wide as its characters' advance widths in
Helvetica (the Adobe core metrics, which Liberation Sans and Arial, the faces a browser
puts in Helvetica's place, share to the unit) and as tall as the face's ascent and descent;
two boxes that share more than TOLERANCE in both directions overlap. The marks a text must
not sit on are the things that carry meaning: arrowheads (a message's or call's arrival, an
in-flight stub's head), crosses (a lost message, a blocked call, a crash: the thick short
strokes), the actor's dot, a fault's ring or diamond, a partition's wall (the thick dashed
line between the sides) and a leadership's bar or a pause's stripes.
"""

from __future__ import annotations

import html
import itertools
import math
import re
import shutil
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from leadercheck.checker import check
from leadercheck.checker.app.main import main
from leadercheck.checker.render.context import TraceContext
from leadercheck.checker.render.dot import BAR_W, LANE_W, trace_to_dot
from leadercheck.checker.render.lanes import IN_FLIGHT, lanes
from leadercheck.checker.render.svg import dot_to_svg
from leadercheck.models.catalogue import lookup
from leadercheck.specs import load_expectations
from tests.render.live_traces import context
from tests.render.test_chart import nodes

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = sorted(
    [*ROOT.glob("counterexamples/*.svg"), *ROOT.glob("examples/counterexamples/*.svg")]
)
SVG = "{http://www.w3.org/2000/svg}"
TOLERANCE = 1.0  # points: boxes that share less than this in either direction only touch

# Advance widths in 1/1000 em of the printable ASCII characters (32..126), Helvetica and
# Helvetica-Bold (Adobe's AFM files; Liberation Sans has the same).
_REGULAR = (
    (278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278)
    + (556,) * 10
    + (278, 278, 584, 584, 584, 556, 1015)
    + (667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833)
    + (722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611)
    + (278, 278, 278, 469, 556, 333)
    + (556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833)
    + (556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500)
    + (334, 260, 334, 584)
)
_BOLD = (
    (278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278, 278)
    + (556,) * 10
    + (333, 333, 584, 584, 584, 611, 975)
    + (722, 722, 722, 722, 667, 611, 778, 722, 278, 556, 722, 611, 833)
    + (722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611)
    + (333, 278, 333, 584, 556, 333)
    + (556, 611, 556, 611, 556, 333, 611, 611, 278, 278, 556, 278, 889)
    + (611, 611, 611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500)
    + (389, 280, 389, 584)
)
_OTHER = {"\u00a0": 278}  # a no-break space; anything else outside ASCII: a full em
ASCENT, DESCENT = 0.75, 0.22  # of the font size, above and below the baseline (ink, not leading)


def text_width(text: str, size: float, bold: bool = False) -> float:
    """How wide `text` is drawn in Helvetica at `size` points."""
    table = _BOLD if bold else _REGULAR
    units = sum(
        table[ord(ch) - 32] if 32 <= ord(ch) <= 126 else _OTHER.get(ch, 1000) for ch in text
    )
    return units * size / 1000


@dataclass(frozen=True)
class Box:
    """A text of a chart and the box its glyphs take, or a mark and its box: `what` it
    is, the point (x, y) it is drawn at, its edges (y downwards, as in SVG)."""

    what: str
    x: float
    y: float
    left: float
    top: float
    right: float
    bottom: float

    def overlap(self, other: Box) -> tuple[float, float]:
        """How far the two boxes share width and height (negative: a gap)."""
        return (
            min(self.right, other.right) - max(self.left, other.left),
            min(self.bottom, other.bottom) - max(self.top, other.top),
        )

    def __str__(self) -> str:
        return f"{self.what!r} at ({self.x:g}, {self.y:g})"


def texts(svg: str) -> list[Box]:
    """Every non-empty text of the SVG with its box."""
    found = []
    for el in ET.fromstring(svg).iter(f"{SVG}text"):
        words = html.unescape("".join(el.itertext()))
        if not words.strip():
            continue
        x, y, size = float(el.get("x", 0)), float(el.get("y", 0)), float(el.get("font-size", 14))
        w = text_width(words, size, el.get("font-weight") == "bold")
        left = {"middle": x - w / 2, "end": x - w}.get(el.get("text-anchor", "start"), x)
        found.append(Box(words, x, y, left, y - ASCENT * size, left + w, y + DESCENT * size))
    return found


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")


def _thick(path: ET.Element) -> bool:
    """A cross's stroke or a partition's wall (2.5 and 3 points; told apart by length)."""
    return float(path.get("stroke-width", "1")) >= 2.5


BAR = re.compile(r"(lead|pause)\d+(_p\d+)?")  # the DOT names of bars and pauses' stripes


def marks(svg: str) -> list[Box]:
    """The arrowheads, crosses and actor dots of the SVG, each as a box named by what it
    is and the DOT name of its edge or node."""
    found = []
    for group in ET.fromstring(svg).iter(f"{SVG}g"):
        kinds = group.get("class", "").split()
        title = group.findtext(f"{SVG}title", "")
        for el in group.iter():
            if "edge" in kinds and el.tag == f"{SVG}polygon":
                what, numbers = "arrowhead", el.get("points", "")
            elif "edge" in kinds and el.tag == f"{SVG}path" and _thick(el):
                what, numbers = "cross", el.get("d", "")
            elif {"actor", "fault"} & set(kinds) and el.tag == f"{SVG}ellipse":
                cx, cy, rx, ry = (float(el.get(k, 0)) for k in ("cx", "cy", "rx", "ry"))
                numbers, what = f"{cx - rx},{cy - ry} {cx + rx},{cy + ry}", "actor dot"
            elif re.fullmatch(r"fault\d+", title) and el.tag == f"{SVG}polygon":
                what, numbers = "fault diamond", el.get("points", "")
            elif BAR.fullmatch(title) and el.tag == f"{SVG}polygon":
                what, numbers = "bar", el.get("points", "")
            else:
                continue
            values = [float(v) for v in _NUMBER.findall(numbers)]
            xs, ys = values[0::2], values[1::2]
            box = (min(xs), min(ys), max(xs), max(ys))
            if what == "cross" and max(box[2] - box[0], box[3] - box[1]) >= 30:
                what = "wall"  # a partition's wall: long, and only its stroke counts
                box = (box[0] - 1.5, box[1], box[2] + 1.5, box[3])
            found.append(Box(f"{what} of {title}", xs[-1], ys[-1], *box))
    return found


def collisions(svg: str) -> list[tuple[Box, Box]]:
    """The pairs of texts whose boxes overlap by more than TOLERANCE both ways, then each
    text and a mark it covers so."""
    words = texts(svg)
    return [
        (a, b)
        for a, b in [*itertools.combinations(words, 2), *itertools.product(words, marks(svg))]
        if min(a.overlap(b)) > TOLERANCE
    ]


ARROW_KINDS = {"message", "call", "fault", "split-brain", "stale"}  # an edge's classes


def _tip(group: ET.Element) -> str:
    anchor = group.find(f".//{SVG}a")
    return "" if anchor is None else anchor.get("{http://www.w3.org/1999/xlink}title", "")


def crossings(svg: str) -> list[tuple[Box, Box]]:
    """Each text and an arrow it lies over by more than TOLERANCE of the arrow's length
    (a message's, a call's, the two-leaders marker's; not its own arrow, nor the arrows
    that share its label): the stretch inside the text's box, sampled along the line."""
    root = ET.fromstring(svg)
    arrows, words = [], []
    for group in root.iter(f"{SVG}g"):
        kinds, title = set(group.get("class", "").split()), group.findtext(f"{SVG}title", "")
        path = group.find(f".//{SVG}path")
        if "edge" in kinds and ARROW_KINDS & kinds and path is not None:
            values = [float(v) for v in _NUMBER.findall(path.get("d", ""))]
            x1, y1, x2, y2 = values[0], values[1], values[-2], values[-1]
            if math.hypot(x2 - x1, y2 - y1) > 20:  # a line, not a cross's stroke
                name = title.split("->")[0].rsplit("_", 1)[0]
                box = Box(f"arrow {name}", x2, y2, min(x1, x2), min(y1, y2), max(x1, x2),
                          max(y1, y2))  # fmt: skip
                arrows.append((name, (x1, y1, x2, y2), _tip(group), box))
        if "node" in kinds:
            words += [(title, _tip(group), t) for t in texts(ET.tostring(group, "unicode"))]
    found = []
    for owner, tip, text in words:
        for name, (x1, y1, x2, y2), arrow_tip, box in arrows:
            if owner.startswith(name + "_") or (arrow_tip and arrow_tip in tip):
                continue
            inside = sum(
                text.left < x1 + (x2 - x1) * k / 200 < text.right
                and text.top < y1 + (y2 - y1) * k / 200 < text.bottom
                for k in range(201)
            )
            if inside / 200 * math.hypot(x2 - x1, y2 - y1) > TOLERANCE:
                found.append((text, box))
    return found


def _report(chart: str, pairs: list[tuple[Box, Box]]) -> str:
    lines = [f"{chart}: {len(pairs)} overlap(s)"]
    for a, b in pairs:
        w, h = a.overlap(b)
        lines.append(f"  {a}  overlaps  {b}  by {w:.1f} x {h:.1f}")
    return "\n".join(lines)


def test_a_text_over_another_arrow_is_found_but_not_over_its_own() -> None:
    def svg(title: str) -> str:
        return (
            '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
            f'<g class="node"><title>{title}</title>'
            '<text text-anchor="start" x="10" y="0" font-size="10">label</text></g>'
            '<g class="edge step-1 message"><title>msg3_a-&gt;msg3_b</title>'
            '<path d="M0,-3C0,-3 100,-3 100,-3"/></g></svg>'
        )

    assert [b.what for _, b in crossings(svg("msg1_tag"))] == ["arrow msg3"]
    assert crossings(svg("msg3_tag")) == []


def test_the_width_estimate_matches_the_metrics() -> None:
    assert text_width("n1", 10) == pytest.approx(5.56 + 5.56)
    assert text_width("Wi", 1000, bold=True) == 944 + 278
    assert text_width("a\u2192b", 1) == pytest.approx(2.112)


def test_overlapping_texts_are_found_and_touching_ones_are_not() -> None:
    def svg(*items: tuple[float, float, str]) -> str:
        body = "".join(
            f'<text text-anchor="start" x="{x}" y="{y}" font-size="10">{t}</text>'
            for x, y, t in items
        )
        return f'<svg xmlns="http://www.w3.org/2000/svg">{body}</svg>'

    w = text_width("abc", 10)
    assert collisions(svg((0, 0, "abc"), (w, 0, "def"))) == []  # side by side
    assert collisions(svg((0, 0, "abc"), (0, 10, "def"))) == []  # one line under the other
    assert len(collisions(svg((0, 0, "abc"), (w - 3, 2, "def")))) == 1


def test_a_text_over_an_arrowhead_or_a_cross_is_found() -> None:
    def svg(x: float) -> str:
        return (
            '<svg xmlns="http://www.w3.org/2000/svg">'
            f'<text text-anchor="start" x="{x}" y="0" font-size="10">label</text>'
            '<g class="edge"><title>a-&gt;b</title>'
            '<polygon points="40,-6 50,-3 40,0 40,-6"/>'
            '<path stroke-width="2.5" d="M60,-8C60,-8 66,-2 66,-2"/></g></svg>'
        )

    assert collisions(svg(-40)) == []
    assert [b.what for _, b in collisions(svg(30))] == ["arrowhead of a->b"]
    assert [b.what for _, b in collisions(svg(55))] == ["cross of a->b"]


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_text_of_a_committed_chart_covers_another_a_mark_or_an_arrow(path: Path) -> None:
    svg = path.read_text(encoding="utf-8")
    pairs = collisions(svg) + crossings(svg)
    assert not pairs, _report(str(path.relative_to(ROOT)), pairs)


# Cheap counterexamples at parameters other than the committed ones: (protocol, property, -p).
FRESH = (
    ("bully", "single-leader", {"nodes": "4"}),
    ("bully", "no-stale-write", {"nodes": "4"}),
    ("heartbeat-no-quorum", "single-leader", {"nodes": "4"}),
    ("raft-no-quorum", "single-leader", {"nodes": "4"}),
    ("lease-no-fencing", "no-stale-write", {"nodes": "2"}),
)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed")
@pytest.mark.parametrize(
    ("protocol", "prop", "given"),
    FRESH,
    ids=[f"{p}@{','.join(f'{k}={v}' for k, v in g.items())}.{q}" for p, q, g in FRESH],
)
def test_no_text_of_a_fresh_chart_covers_another_or_a_mark(
    protocol: str, prop: str, given: dict[str, str]
) -> None:
    entry = lookup(protocol)
    params = entry.resolve(given)
    claims = [p for p in load_expectations().properties(protocol) if p.name == prop]
    outcome = check(entry.build(params), claims).result(prop)
    assert outcome.trace is not None, f"{protocol} {given}: {prop} {outcome.verdict.value}"
    svg = dot_to_svg(trace_to_dot(TraceContext(protocol, params, outcome)))
    pairs = collisions(svg) + crossings(svg)
    assert not pairs, _report(f"{protocol} {given} {prop}", pairs)


def test_in_flight_stubs_turn_away_from_the_other_lines_at_their_sender() -> None:
    """raft-volatile-vote: n1's RequestVote to n3 (step 1) and n3's to n1 (step 6) are still
    in flight at the end, each sent beside a RequestVote that is delivered."""
    ctx = context("raft-volatile-vote", "single-leader")
    dot = trace_to_dot(ctx)
    items = {i.name: i for i in nodes(dot)}
    messages = list(enumerate(lanes(ctx.trace).messages))
    lines = {k: (items[f"msg{k}_a"].xy, items[f"msg{k}_b"].xy) for k, _ in messages}
    stubs = [k for k, m in messages if m.fate == IN_FLIGHT]
    assert len(stubs) == 2
    for k in stubs:
        (x1, y1), (x2, y2) = lines[k]
        assert 0 < math.hypot(x2 - x1, y2 - y1) < LANE_W / 2  # short of any other lane
        assert y2 < y1  # DOT's y grows upwards: the stub goes down the chart
        for j, (a, b) in lines.items():
            if j == k or min(math.dist(a, (x1, y1)), math.dist(b, (x1, y1))) > BAR_W:
                continue  # another line from or to where this stub starts: not along it
            far = b if math.dist(a, (x1, y1)) <= BAR_W else a
            assert _degrees_between((x1, y1), (x2, y2), far) >= 15, (k, j)
    tags = [items[f"msg{k}_tag"].attrs["label"] for k in stubs]
    assert any("RequestVote to n3" in t for t in tags) and any(
        "RequestVote to n1" in t for t in tags
    )
    assert "dashed stub: a message still in flight when the trace ends" in dot


def _degrees_between(
    at: tuple[float, float], a: tuple[float, float], b: tuple[float, float]
) -> float:
    """The angle at `at` between the rays to a and to b, in degrees (0..180)."""
    turn = math.atan2(a[1] - at[1], a[0] - at[0]) - math.atan2(b[1] - at[1], b[0] - at[0])
    return abs(math.degrees((turn + math.pi) % math.tau - math.pi))


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_committed_chart_has_no_translucent_colour(path: Path) -> None:
    """Every colour is opaque: a translucent fill over the lines (the deciding row, a
    partition's band) renders solid over them where a viewer ignores opacity, as
    ImageMagick's does; the areas are painted under everything instead (clusters)."""
    svg = path.read_text(encoding="utf-8")
    assert not re.search(r'(fill|stroke)-opacity="(?!1")', svg)
    assert 'class="cluster' in svg  # the deciding row's paint, at least


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed")
def test_no_text_of_a_user_models_fresh_chart_covers_anything(tmp_path: Path) -> None:
    """The tutorial's Redlock (a model no catalogue chart is drawn from, with a fault kind
    of its own) at a TTL of its own, charted as a user's `verify --model` charts it."""
    result = CliRunner().invoke(
        main,
        ["--model", str(ROOT / "examples" / "redlock.py"), "--protocol", "redlock",
         "-p", "ttl=3", "--out", str(tmp_path)],
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    charts = sorted(tmp_path.glob("*.svg"))
    assert len(charts) == 2
    for chart in charts:
        svg = chart.read_text(encoding="utf-8")
        pairs = collisions(svg) + crossings(svg)
        assert not pairs, _report(chart.name, pairs)

"""The sequence chart's DOT (and its SVG, where Graphviz is installed): what a reader must see.

The geometry is read back from the DOT: every node is pinned (`pos="x,y!"`, in points, y
up), so bars, bands and arrows can be checked where they are drawn.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from leadercheck.checker.model import Action
from leadercheck.checker.properties import always
from leadercheck.checker.render.context import TraceContext
from leadercheck.checker.render.dot import BAR_W, trace_to_dot
from leadercheck.checker.render.lanes import IN_FLIGHT, UNREACHED, lanes
from leadercheck.checker.result import PropertyResult, Verdict
from leadercheck.checker.trace import Step, Trace
from tests.render.live_traces import context, violated

SPLIT_BRAIN = violated("single-leader")
DOT = shutil.which("dot")


@dataclass(frozen=True)
class Item:
    """One node or edge statement of the DOT: its name (a -> b for an edge), attributes."""

    name: str
    head: str | None
    attrs: dict[str, str]

    @property
    def xy(self) -> tuple[float, float]:
        x, y = self.attrs["pos"].rstrip("!").split(",")
        return float(x), float(y)

    @property
    def span(self) -> tuple[float, float]:
        """A box's vertical extent, top and bottom, in points (y up)."""
        y, h = self.xy[1], float(self.attrs["height"]) * 72
        return y + h / 2, y - h / 2

    @property
    def classes(self) -> list[str]:
        return self.attrs.get("class", "").split()


def _value(text: str, k: int) -> tuple[str, int]:
    """The attribute value starting at text[k]: quoted, an HTML label, or a bare word."""
    if text[k] == '"':
        end = k + 1
        while text[end] != '"':
            end += 2 if text[end] == "\\" else 1
        return text[k + 1 : end].replace('\\"', '"'), end + 1
    if text[k] == "<":
        depth, end = 0, k
        while True:
            depth += {"<": 1, ">": -1}.get(text[end], 0)
            end += 1
            if depth == 0:
                return text[k:end], end
    end = k
    while end < len(text) and text[end] not in " ]":
        end += 1
    return text[k:end], end


def parse(dot: str) -> list[Item]:
    items = []
    for line in dot.splitlines():
        match = re.match(r"\t(\w+)(?: -> (\w+))? \[(.*)\]$", line)
        if match is None or match[1] in ("graph", "node", "edge"):
            continue
        attrs, text, k = {}, match[3], 0
        while k < len(text):
            key = re.match(r"\s*(\w+)=", text[k:])
            assert key is not None, text[k:]
            attrs[key[1]], k = _value(text, k + key.end())
        items.append(Item(match[1], match[2], attrs))
    return items


def chart(protocol: str, prop: str) -> list[Item]:
    """The nodes of the chart of `prop` on `protocol` (edges join nodes named for them)."""
    return nodes(trace_to_dot(context(protocol, prop)))


def nodes(dot: str) -> list[Item]:
    return [i for i in parse(dot) if i.head is None]


def text(items: list[Item]) -> str:
    """The words of every label, as a reader sees them (lines joined by spaces)."""
    labels = " ".join(i.attrs.get("label", "") for i in items)
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]*>", " ", labels)))


def _bars(items: list[Item]) -> list[Item]:
    return [i for i in items if re.fullmatch(r"lead\d+", i.name)]


@pytest.mark.parametrize("protocol", SPLIT_BRAIN)
def test_every_split_brain_is_two_overlapping_bars_in_two_colours(protocol: str) -> None:
    items = chart(protocol, "single-leader")
    bars = _bars(items)
    overlapping = [
        (a, b)
        for k, a in enumerate(bars)
        for b in bars[k + 1 :]
        if a.xy[0] != b.xy[0] and a.span[1] < b.span[0] and b.span[1] < a.span[0]
    ]
    assert overlapping, f"{protocol}: no two leaders at once"
    a, b = overlapping[0]
    assert a.attrs["fillcolor"] != b.attrs["fillcolor"]
    tags = [text([i]).strip(" <>") for i in items if re.fullmatch(r"lead\d+_tag", i.name)]
    assert all(re.fullmatch(r"leader( #\d+)?( \((term|token|znode) \d+\))?", t) for t in tags)
    assert any(i.name.startswith("brain") and "two leaders" in i.attrs["label"] for i in items)
    # the legend says what overlaps: two leaders of one epoch, or (numbered by the checker,
    # #N) two leaders of a protocol that has no epoch to rank them
    ranked = any(re.search(r"\((term|token|znode) \d+\)", t) for t in tags)
    words = text(items)
    assert ("two leaders of one epoch" in words) is ranked
    assert ("the protocol has no epoch to rank them" in words) is not ranked


PARTITIONED = (
    ("heartbeat-no-quorum", "single-leader"),
    ("raft-no-quorum", "single-leader"),
    ("even-quorum", "leader-eventually"),
    ("bully-flapping", "leadership-settles"),
    ("gossip", "single-leader"),
)


@pytest.mark.parametrize(("protocol", "prop"), PARTITIONED)
def test_every_partition_is_a_band_behind_the_cut_off_side(protocol: str, prop: str) -> None:
    ln = lanes(context(protocol, prop).trace)
    items = chart(protocol, prop)
    bands = [i for i in items if re.fullmatch(r"part\d+_\d+", i.name)]
    assert ln.partitions and len(bands) == len(ln.partitions)  # here each island is one run
    x = {i.name[2:]: i.xy[0] for i in items if re.fullmatch(r"h_n\d+", i.name)}
    for band, part in zip(bands, ln.partitions, strict=True):
        left = band.xy[0] - float(band.attrs["width"]) * 36
        right = band.xy[0] + float(band.attrs["width"]) * 36
        assert all(left < x[n] < right for n in part.island)
        assert not any(left < x[n] < right for n in part.rest)


def test_a_partition_present_at_step_0_covers_the_first_row() -> None:
    items = chart("even-quorum", "leader-eventually")
    (band,) = [i for i in items if i.name == "part0_0"]
    first_row = next(i for i in items if i.name == "r0_step").xy[1]
    header = next(i for i in items if i.name == "h_n1")
    assert band.span[0] > first_row and band.span[0] <= header.span[1] + 0.5
    words = text(items)
    assert "partitioned from the start" in words
    assert "repeats forever" in words and "{n1, n2} | {n3, n4} partitioned" in words


PAUSED = (
    ("lease-no-fencing", "no-stale-write"),
    ("k8s-lease", "no-stale-write"),
    ("patroni-sync", "no-stale-write"),
)


@pytest.mark.parametrize(("protocol", "prop"), PAUSED)
def test_a_pause_is_striped_and_the_bars_follow_the_state_through_it(
    protocol: str, prop: str
) -> None:
    """The chart says what the state says at every step, paused or not: a bar stands on a
    node's lane exactly where its view says it leads (what the HTML table and `explain`
    read), and every pause is striped from its start to its resume."""
    ctx = context(protocol, prop)
    ln = lanes(ctx.trace)
    items = chart(protocol, prop)
    segments = [i for i in items if re.fullmatch(r"pause\d+(_p\d+)?", i.name)]
    firsts = {re.sub(r"_p\d+$", "", s.name) for s in segments}
    assert ln.pauses and firsts == {f"pause{k}" for k in range(len(ln.pauses))}
    assert all(s.attrs["style"] == "striped" for s in segments)
    for step in ctx.trace.steps:
        for name in ln.nodes:
            view = step.view[name]
            leads = bool(view.get("leads", view.get("role") == "leader")) and view["up"]
            drawn = any(lead.who == name and step.index in lead for lead in ln.leaderships)
            assert drawn == leads, (protocol, step.index, name)
    bars = [i for i in items if re.fullmatch(r"lead\d+", i.name)]
    assert len(bars) == len(ln.leaderships)


def test_a_write_decided_before_the_pause_is_drawn_until_it_is_made() -> None:
    """lease-no-fencing: n1 decides its write under token 1 (step 2), pauses (3), its
    lease runs out on its own clock (5: its bar ends, `follower`), and it still writes
    with token 1 at step 10: the pending write is a line from step 2 to step 10."""
    ln = lanes(context("lease-no-fencing", "no-stale-write").trace)
    (held,) = [p for p in ln.pendings if p.who == "n1"]
    assert (held.start, held.stop, held.title) == (2, 10, "write pending (token 1)")
    n1 = next(lead for lead in ln.leaderships if lead.who == "n1")
    assert (n1.start, n1.stop) == (1, 5)
    items = {i.name: i for i in chart("lease-no-fencing", "no-stale-write")}
    k = ln.pendings.index(held)
    assert "write pending" in items[f"pending{k}_tag"].attrs["label"]
    assert "(token 1)" in items[f"pending{k}_tag"].attrs["label"]
    assert items[f"pending{k}_a"].attrs["class"] == "step-2 step-10 pending"
    assert "lease ran out: follower" in items["role_n1_5"].attrs["label"]
    assert "write pending" in text(list(items.values()))


def test_lost_messages_end_in_crosses_and_replies_are_drawn() -> None:
    raft = chart("raft-no-quorum", "single-leader")
    crosses = {i.name for i in raft if re.fullmatch(r"msg\d+_lost_\d+_a", i.name)}
    # one lost RequestVote, and n3's two that cannot cross the partition share a cross:
    # each cross of two strokes
    assert len(crosses) == 4
    tags = [i.attrs["label"] for i in raft if re.fullmatch(r"msg\d+_tag", i.name)]
    assert sum("RequestVote to n3" in t for t in tags) == 1
    assert sum("RequestVote to n1, n2" in t for t in tags) == 1
    assert sum("VoteGranted" in t for t in tags) == 1
    heartbeat = chart("heartbeat-no-quorum", "single-leader")
    # two heartbeats lost to the partition, and the next two, which cannot leave, share one
    assert len([i for i in heartbeat if re.fullmatch(r"msg\d+_lost_0_a", i.name)]) == 3


def test_a_send_across_a_partition_stops_at_its_wall_in_a_cross() -> None:
    """raft-no-quorum's n3 times out alone behind the partition: its RequestVotes to n1
    and n2 run level from its lane to the wall, one line and one cross for both."""
    ctx = context("raft-no-quorum", "single-leader")
    items = {i.name: i for i in nodes(trace_to_dot(ctx))}
    blocked = [(k, m) for k, m in enumerate(lanes(ctx.trace).messages) if m.fate == UNREACHED]
    assert [(m.sender, m.receiver, m.sent) for _, m in blocked] == [
        ("n3", "n1", 5),
        ("n3", "n2", 5),
    ]
    k = blocked[0][0]
    start, end = items[f"msg{k}_a"].xy, items[f"msg{k}_b"].xy
    wall = items["part0_wall0_a"].xy[0]
    assert start[1] == end[1] and end[0] == wall < start[0]
    assert f"msg{blocked[1][0]}_a" not in items  # the second shares the first's line
    assert "could not leave (across the partition)" in items[f"msg{k}_tag"].attrs["tooltip"]


def test_messages_are_sloped_and_end_on_the_receivers_lifeline() -> None:
    ctx = context("raft-no-quorum", "single-leader")
    items = {i.name: i for i in nodes(trace_to_dot(ctx))}
    lane = {n: items[f"h_{n}"].xy[0] for n in ("n1", "n2", "n3")}
    for k, m in enumerate(lanes(ctx.trace).messages):
        if m.fate == UNREACHED:
            continue  # level: see the test below
        start, end = items[f"msg{k}_a"].xy, items[f"msg{k}_b"].xy
        assert start[1] > end[1], m  # it arrives (or is lost) rows later: a slope
        assert abs(start[0] - lane[m.sender]) <= BAR_W / 2
        if m.fate == "delivered":
            assert abs(end[0] - lane[m.receiver]) <= BAR_W / 2


def test_the_verdict_box_sits_under_the_deciding_row_in_the_step_column() -> None:
    """Under the last row, no wider than the step column: in view with the deciding step,
    and the chart no wider than its lanes (so it fits a 1,280 px window legibly)."""
    ctx = context("heartbeat-no-quorum", "single-leader")
    items = {i.name: i for i in nodes(trace_to_dot(ctx))}
    row = items[f"r{len(ctx.trace)}_mark"]
    verdict = items["verdict"]
    assert verdict.span[0] < row.span[1]  # DOT's y grows upwards: the verdict's top is lower
    half = float(verdict.attrs["width"]) * 36
    assert verdict.xy[0] + half < min(items[f"h_{n}"].xy[0] for n in ("n1", "n2", "n3")) - 40
    assert "h_storage" not in items  # an unused storage has no lifeline
    assert "h_storage" in {i.name for i in chart("lease-no-fencing", "no-stale-write")}


def test_every_item_has_a_class_and_a_tooltip_and_text_is_11_pt_or_more() -> None:
    dot = trace_to_dot(context("bully-flapping", "leadership-settles"))
    items = parse(dot)
    for item in items:
        assert item.attrs.get("tooltip"), item
        classes = item.classes
        assert classes and (
            any(re.fullmatch(r"step-\d+", c) for c in classes)
            or classes[0] in ("header", "legend", "lifeline")
        ), item
    assert {c for i in items for c in i.classes if c.startswith("step-")} == {
        f"step-{k}" for k in range(19)
    }
    sizes = [float(s) for s in re.findall(r'(?:POINT-SIZE|fontsize)="?([\d.]+)', dot)]
    assert sizes and min(sizes) >= 11
    assert "0x" not in dot  # no memory addresses


def test_the_same_trace_gives_the_same_dot() -> None:
    ctx = context("lease-no-fencing", "no-stale-write")
    assert trace_to_dot(ctx) == trace_to_dot(ctx)
    fresh = context.__wrapped__("lease-no-fencing", "no-stale-write")  # a search of its own
    assert fresh.trace is not ctx.trace
    assert trace_to_dot(fresh) == trace_to_dot(ctx)


@pytest.mark.skipif(DOT is None, reason="Graphviz `dot` is not installed")
@pytest.mark.parametrize(
    ("protocol", "prop"),
    [("heartbeat-no-quorum", "single-leader"), ("bully-flapping", "leadership-settles")],
)
def test_the_svg_renders_without_warnings_and_keeps_classes(protocol: str, prop: str) -> None:
    assert DOT is not None
    dot = trace_to_dot(context(protocol, prop))
    proc = subprocess.run([DOT, "-Tsvg"], input=dot, capture_output=True, text=True, check=True)
    assert proc.stderr == ""
    svg = proc.stdout
    assert 'class="node step&#45;1' in svg and 'class="node header"' in svg
    assert "xlink:title=" in svg  # the tooltips


def test_a_trace_without_the_vocabulary_still_charts_its_steps() -> None:
    """A user's model with the default describe(): no lanes' facts, only steps and calls."""
    view = {"state": {"value": "0"}}
    steps = (
        Step(0, None, view, {"a": "x"}, 0),
        Step(1, Action("go", "a", "b", "note <&>"), view, {"a": "y", "b": "z"}, 1),
    )
    outcome = PropertyResult(always("x", lambda s: True), Verdict.VIOLATED, Trace(steps), "bad")
    items = nodes(trace_to_dot(TraceContext("toy", {}, outcome)))
    names = {i.name for i in items}
    assert {"h_a", "h_b", "call1_a", "verdict"} <= names
    assert not any(re.fullmatch(r"(lead|pause|part|msg)\d+.*", n) for n in names)
    assert "note <&>" in text(items)


def _committed(name: str) -> list[Item]:
    root = Path(__file__).resolve().parents[2]
    return nodes((root / name).read_text(encoding="utf-8"))


def test_a_lost_request_ends_in_a_cross_and_the_store_lets_the_lease_go_by_time() -> None:
    """lease-no-confirmation: n1's renewal is lost at step 3 (a fault that is a call), and
    the store's lease runs out at step 4 with no call to it: both drawn, both in the legend."""
    items = {i.name: i for i in chart("lease-no-confirmation", "no-stale-write")}
    ln = lanes(context("lease-no-confirmation", "no-stale-write").trace)
    (lost,) = ln.faults
    k = ln.faults.index(lost)
    assert {f"fault{k}_a", f"fault{k}_lost_0_a", f"fault{k}_lost_1_a"} <= set(items)
    assert "renew (lost)" in text([items[f"fault{k}_tag"]])
    (expiry,) = ln.expiries
    assert "lease t1 expired" in text([items["expiry0_tag"]])
    assert items["expiry0_a"].attrs["class"] == f"step-{expiry.step} expiry"
    words = text(list(items.values()))
    assert "lost, or cannot arrive: ends in a cross where it stops" in words
    assert "bar across a lifeline: what it let go of by time" in words


def test_a_fault_the_model_declares_gets_a_diamond_and_a_legend_entry() -> None:
    """The tutorial's Redlock declares its own fault kind, a master's clock jump: a diamond
    on that master's lane, its name beside it and in the legend; refused SET NX are
    drawn as refused (dashed, a bar for a head), and their legend says so."""
    items = {i.name: i for i in _committed("examples/counterexamples/redlock.dot")}
    (diamond,) = [i for i in items.values() if i.attrs.get("shape") == "diamond" and
                  i.name.startswith("fault")]  # fmt: skip
    assert "clock jump" in text([items[f"{diamond.name}_tag"]])
    lane_x = items["h_C"].xy[0]
    assert diamond.xy[0] == pytest.approx(lane_x)
    words = text(list(items.values()))
    assert "clock jump: a fault, at the lane it strikes" in words
    assert "dashed, ending in a bar: a call its target refused" in words
    assert words.count("SET NX (refused)") == 4
    assert "holds the lock" in words and "no lock" in words  # the model's own words


def test_a_restart_is_a_ring_and_a_heal_says_healed() -> None:
    restarted = {i.name: i for i in _committed("counterexamples/raft-volatile-vote.dot")}
    rings = [i for i in restarted.values() if i.name.startswith("fault") and
             i.attrs.get("shape") == "circle"]  # fmt: skip
    assert rings and "restart: the lifeline starts again at the ring" in text(
        list(restarted.values())
    )
    store = {i.name: i for i in _committed("counterexamples/redis-lock.no-stale-write.dot")}
    # a store crash: a cross on the store's lane, and its restart a ring there
    assert "crash_store_0_0_a" in store and "crashed" in text([store["crash_store_0_tag"]])
    (ring,) = [i for i in store.values() if i.name.startswith("fault") and
               i.attrs.get("shape") == "circle"]  # fmt: skip
    assert ring.xy[0] == pytest.approx(store["h_store"].xy[0])
    healed = _committed("counterexamples/bully-flapping.dot")
    assert "healed" in text([i for i in healed if i.name.startswith("fault")])
    assert "never settles: n2 goes follower" in text(healed)


def test_a_request_still_on_its_way_is_drawn_in_flight() -> None:
    """too-short-timeout: n1's renewal (step 8) is still on its way when n2 takes the lease
    (step 12): a stub, not an arrow that arrived; its send is no call."""
    ln = lanes(context("too-short-timeout", "false-failover").trace)
    (renewal,) = [m for m in ln.messages if m.kind == "renew"]
    assert (renewal.sender, renewal.receiver, renewal.sent, renewal.fate) == (
        "n1",
        "store",
        8,
        IN_FLIGHT,
    )
    names = {i.name for i in chart("too-short-timeout", "false-failover")}
    assert "call8_a" not in names

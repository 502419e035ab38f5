"""The chart reads the leadership the claims judge, for user models too, and tells a stale
leader from two leaders of one epoch (read from the committed SVG files)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from click.testing import CliRunner

from leadercheck.checker.app.main import main
from leadercheck.checker.render.lanes import chart_gaps
from tests.conftest import ROOT

SVG = "{http://www.w3.org/2000/svg}"
COUNTEREXAMPLES = ROOT / "counterexamples"


def bars(svg: Path) -> dict[str, tuple[float, float]]:
    """Each leadership bar's tooltip and its vertical extent (top, bottom)."""
    found = {}
    for group in ET.parse(svg).getroot().iter(f"{SVG}g"):
        if "lead" not in (group.get("class") or "").split():
            continue
        link = group.find(f"{SVG}g/{SVG}a")
        polygon = group.find(f".//{SVG}polygon")
        if link is None or polygon is None:
            continue  # the bar's words, not the bar
        ys = [float(p.split(",")[1]) for p in (polygon.get("points") or "").split()]
        title = link.get("{http://www.w3.org/1999/xlink}title") or ""
        found[title] = (min(ys), max(ys))
    return found


def texts(svg: Path) -> list[str]:
    return [t.text or "" for t in ET.parse(svg).getroot().iter(f"{SVG}text")]


def test_the_tutorial_redlock_draws_two_overlapping_leadership_bars() -> None:
    """examples/redlock.py's nodes describe() no `role`: the cluster's vocabulary adds
    what the claims read, so the chart has both holders' bars, overlapping, and the marker."""
    found = bars(ROOT / "examples" / "counterexamples" / "redlock.svg")
    holders = {re.match(r"(n\d) believes it leads", t).group(1): span for t, span in found.items()}  # type: ignore[union-attr]
    assert set(holders) == {"n1", "n2"}
    (top1, bottom1), (top2, bottom2) = holders["n1"], holders["n2"]
    assert max(top1, top2) < min(bottom1, bottom2)  # both at once
    assert "two leaders" in texts(ROOT / "examples" / "counterexamples" / "redlock.svg")


def test_a_stale_leader_is_not_drawn_as_two_leaders() -> None:
    """lease-no-confirmation: n1, its renewal lost, still believes token 1 while n2 leads
    token 2. single-leader per epoch holds, so the chart says "stale leader", not "two
    leaders"; raft-no-quorum's two leaders of one term are "two leaders"."""
    stale = texts(COUNTEREXAMPLES / "lease-no-confirmation.svg")
    assert "stale leader" in stale and "two leaders" not in stale
    split = texts(COUNTEREXAMPLES / "raft-no-quorum.svg")
    assert "two leaders" in split and "stale leader" not in split


def test_a_write_arrow_says_the_token_it_carries() -> None:
    words = texts(COUNTEREXAMPLES / "lease-no-fencing.svg")
    assert "write (token 2)" in words and "write (token 1)" in words


def test_lint_says_what_a_models_chart_will_lack() -> None:
    bare = {"p1": {"at": "idle"}, "lock": {"held_by": 0}}
    assert chart_gaps([bare])[0].startswith("no participant's view has `up` or `role`")
    roleless = {"n1": {"up": True, "paused": False, "token": 1}}
    assert any("no leadership bars" in gap for gap in chart_gaps([roleless]))
    full = {"n1": {"up": True, "paused": False, "role": "leader", "term": 1}}
    assert chart_gaps([full]) == []
    result = CliRunner().invoke(
        main, ["--model", str(ROOT / "tests" / "user_models" / "tiny_lock.py"), "--lint"]
    )
    assert result.exit_code == 0
    assert "tiny-lock's chart: no participant's view has `up` or `role`" in result.output


def test_a_finding_is_written_and_drawn_like_a_counterexample(tmp_path: Path) -> None:
    """too-short-timeout's false failover holds as a claim (it is reachable: a finding),
    and its witness is written and drawn in red, as a problem found, not a green witness."""
    result = CliRunner().invoke(main, ["--protocol", "too-short-timeout", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output  # a finding is no violation
    svg = tmp_path / "too-short-timeout.false-failover.svg"
    assert f"wrote {tmp_path / 'too-short-timeout.false-failover.json'}" in result.output
    assert "too-short-timeout: false-failover found in 12 steps" in texts(svg)
    assert "#c0392b" in svg.read_text()  # the deciding step in red
    assert (COUNTEREXAMPLES / "too-short-timeout.false-failover.svg").exists()


def _lane_data(svg: Path) -> list[str]:
    """The data labels (class `datum`) of a chart, in drawing order."""
    found = []
    for group in ET.parse(svg).getroot().iter(f"{SVG}g"):
        if "datum" in (group.get("class") or "").split():
            found += [t.text or "" for t in group.iter(f"{SVG}text")]
    return found


def test_the_data_behind_the_bug_is_drawn() -> None:
    """Each claim names the fields it is about (`reads`), and the chart marks where they
    change: Patroni's acknowledged write and the WAL that has it, the vote a restarted
    Raft node casts twice, the row the blind UPDATE takes, each Redis master's owner."""
    patroni = COUNTEREXAMPLES / "patroni.svg"
    # and, at the deciding step, what the claim reads of the lanes that step names even
    # unchanged: the new primary's empty WAL
    assert _lane_data(patroni) == ["wal w1", "acked w1", "wal (empty)"]
    said = " ".join(texts(patroni))
    assert (
        "w1, acknowledged to the client, is" in said and "missing from the new primary n2" in said
    )
    assert "WAL: empty)" in said
    votes = _lane_data(COUNTEREXAMPLES / "raft-volatile-vote.svg")
    assert votes.count("voted_for n1") >= 1 and "voted_for none" in votes
    assert votes.index("voted_for none") < len(votes) - 4 and votes[-4:-2] == [
        "voted_for n3",
        "(n1 before the crash)",
    ]
    assert votes[-2:] == ["voted_for n3", "voted_for n3"]  # both lanes of the deciding vote
    assert _lane_data(COUNTEREXAMPLES / "lease-blind-write.svg") == ["holder n1", "holder n2"]
    owners = _lane_data(ROOT / "examples" / "counterexamples" / "redlock.svg")
    # each master's owner where it changes, and E's again where n1's SET NX to it decides
    assert owners.count("owner n1") == 3 and owners.count("owner n2") == 4


def test_a_lasso_says_which_faults_must_recur_and_no_one_step_is_red() -> None:
    """bully-flapping repeats forever only because the link heals and fails again with a
    COORDINATOR in flight: the bracket says so, and the write that closes the loop, harmless
    in itself, is not painted as the deciding step."""
    svg = COUNTEREXAMPLES / "bully-flapping.svg"
    said = " ".join(texts(svg))
    assert "each time round it needs network heal (step 10)" in said
    assert "network partition (step 13)" in said and "1 in flight lost" in said
    assert "step 18 returns to the state of step 7, so steps 8 to 18 repeat forever" in said
    assert 'class="node step&#45;18 row"' not in svg.read_text()


def test_a_vote_given_twice_across_a_crash_is_marked() -> None:
    """raft-volatile-vote with 5 nodes: n2 votes for n1, crashes (its vote was volatile),
    restarts and votes for n4 in the same term. The chart says what the crash wiped, in
    the crash's colour, where the second vote is given."""
    svg = COUNTEREXAMPLES / "raft-volatile-vote@nodes=5.svg"
    words = texts(svg)
    assert "(n1 before the crash)" in words
    assert words[words.index("(n1 before the crash)") - 1] == "voted_for n4"
    assert "(n1 before the crash)" not in texts(COUNTEREXAMPLES / "raft-no-quorum.svg")


def _lane_words(svg: Path, kind: str) -> list[str]:
    found = []
    for group in ET.parse(svg).getroot().iter(f"{SVG}g"):
        if kind in (group.get("class") or "").split():
            found += [t.text or "" for t in group.iter(f"{SVG}text")]
    return found


def test_who_holds_what_is_on_every_redlock_chart() -> None:
    """Each master's owner where it changes, on all three of the tutorial's charts: as the
    claim's datum where single-leader reads it, else as the master's own summary (the
    authority a client's belief is measured against); and the store's lease in Patroni's."""
    charts = ROOT / "examples" / "counterexamples"
    for name in ("redlock.svg", "redlock.no-stale-write.svg", "redlock-gc-pause.svg"):
        said = _lane_data(charts / name) + _lane_words(charts / name, "authority")
        assert any(w.startswith(("owner n1", "n1, ")) for w in said), name
        assert any(w.startswith(("owner n2", "n2, ")) for w in said), name
    assert "lease t1: n1" in _lane_words(COUNTEREXAMPLES / "patroni.svg", "authority")


def test_what_a_verdict_names_is_on_its_chart() -> None:
    """lease-blind-write's verdict names leadership #2 under token 1: its bar says so; the
    tutorial's no-stale-write verdict names epoch 2: the storage's hi_epoch 2 is on the
    deciding row; Patroni's roles are its own words; even-quorum's cycle says no node acts."""
    blind = " ".join(texts(COUNTEREXAMPLES / "lease-blind-write.no-stale-write.svg"))
    assert "#2, under token 1 handed out twice" in blind and "leader #2 (token 1)" in blind
    redlock = ROOT / "examples" / "counterexamples" / "redlock.no-stale-write.svg"
    assert "epoch below" in " ".join(texts(redlock)) or "below epoch 2" in " ".join(texts(redlock))
    assert _lane_data(redlock)[-1] == "hi_epoch 2"  # drawn last: at the deciding step
    patroni = " ".join(texts(COUNTEREXAMPLES / "patroni-sync.svg"))
    assert "primary (token 1)" in patroni and "replica" in patroni and "follower" not in patroni
    quorum = " ".join(texts(COUNTEREXAMPLES / "even-quorum.svg"))
    assert "only the clock ticks: no node acts" in quorum


def test_every_committed_chart_is_legible_fitted_to_1400_px() -> None:
    """No chart is so wide that, fitted to 1,400 px, its 11 pt labels fall below 11 px:
    at most 1,350 pt (a lane narrows past five of them, the verdict sits under the rows)."""
    for svg in [
        *COUNTEREXAMPLES.glob("*.svg"),
        *(ROOT / "examples" / "counterexamples").glob("*.svg"),
    ]:
        width = float(ET.parse(svg).getroot().get("width", "0pt").removesuffix("pt"))
        assert 0 < width <= 1350, (svg.name, width)
        assert 11 * 4 / 3 * min(1.0, 1400 / (width * 4 / 3)) >= 11, svg.name

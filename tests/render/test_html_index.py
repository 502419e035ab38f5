"""The gate's index page (`verify --all --html DIR`): a pill per protocol coloured by the
gate's judgement, a link to every page, and each protocol's states and search time."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from leadercheck.checker.app.main import main
from leadercheck.checker.engine.strategies.bfs import check
from leadercheck.checker.gate.cases import CaseOutcome, GateCase, GateReport, judge
from leadercheck.checker.properties import always
from leadercheck.checker.render.html import overview_html
from leadercheck.checker.result import Verdict
from leadercheck.specs.expectations import Expectation
from tests.toys import Counter


def _pills(page: str) -> dict[str, tuple[str, str]]:
    """protocol -> (the pill's class, what it says)."""
    found = re.findall(
        r'<a class="pill (\w+)" href="#p-[\w-]+" title="[^"]*">([\w-]+) '
        r'<span class="status">([^<]*)</span>',
        page,
    )
    return {name: (kind, said) for kind, name, said in found}


def _outcome(name: str, expected: Verdict, max_states: int | None = None) -> CaseOutcome:
    small = always("small", lambda s: s < 3)
    case = GateCase(name, {}, lambda: Counter(4), [small], [Expectation("small", expected)])
    result = check(Counter(4), [small], max_states=max_states)
    return CaseOutcome(case, result, judge(case, result))


def test_an_expected_violation_is_green_and_only_a_finding_is_red() -> None:
    report = GateReport(
        (
            _outcome("toy-broken", Verdict.VIOLATED),  # a deliberately broken variant
            _outcome("toy-differs", Verdict.HOLDS),  # the specs say HOLDS: a finding
            _outcome("toy-cut-short", Verdict.INCOMPLETE, max_states=2),
        )
    )
    assert [r.result.verdict for o in report.outcomes for r in o.rows] == [
        Verdict.VIOLATED,
        Verdict.VIOLATED,
        Verdict.INCOMPLETE,
    ]
    page = overview_html(report, {"toy-broken": {"small": "toy-broken.html"}})
    assert _pills(page) == {
        "toy-broken": ("expected", "violated as expected"),
        "toy-differs": ("finding", "differs from the specs"),
        "toy-cut-short": ("incomplete", "incomplete"),
    }
    assert 'gate <span class="fail">FAIL: 1 finding</span>' in page
    assert "<li>toy-differs small: expected HOLDS, got VIOLATED (counterexample of 2 steps)" in page
    assert '<a href="toy-broken.html">counterexample of 2 steps</a>' in page
    assert 'id="p-toy-differs"' in page and '<tr class="finding">' in page
    assert page.count('<tr class="finding">') == 1


def test_the_index_links_every_violated_property_and_shows_states(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        "leadercheck.checker.app.gate.gate_names", lambda: ["bully-flapping", "lease-timing"]
    )
    out = tmp_path / "pages"
    result = CliRunner().invoke(main, ["--all", "--html", str(out), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    page = (out / "index.html").read_text()
    assert _pills(page) == {
        "bully-flapping": ("expected", "violated as expected"),
        "lease-timing": ("holds", "holds as expected"),
    }
    assert 'gate <span class="pass">PASS: 2 cases, 5 verdicts as expected</span>' in page
    links = re.findall(r'<a href="([^"#]+)">([^<]*)</a>', page)
    assert links == [
        ("bully-flapping.html", "lasso of 18 steps"),
        ("bully-flapping.single-leader.html", "counterexample of 11 steps"),
    ]
    assert all((out / href).exists() for href, _ in links)
    assert '<td rowspan="3" class="num">3,898</td>' in page  # distinct states
    assert '<td rowspan="2" class="num">223</td>' in page
    assert re.search(r'<td rowspan="3" class="num">\d+\.\d\d</td>', page)  # seconds
    assert "HOLDS, reached in 6 steps" in page

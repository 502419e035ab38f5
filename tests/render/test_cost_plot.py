"""The message-cost chart: written, byte-identical run to run, a line per protocol and statistic."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from leadercheck.checker.errors import LeadercheckError
from leadercheck.checker.render.cost_plot import cost_plot_svg, write_cost_plot
from leadercheck.checker.render.report import MeasureTable
from leadercheck.checker.result import Measurement, Stats

STATS = Stats(10, 12, 11, 3, 0.5, 0)


def _table(rows: dict[int, tuple[int, int, float] | None]) -> MeasureTable:
    return MeasureTable(
        "messages per election",
        "nodes",
        tuple(
            (n, None if r is None else Measurement(r[0], r[1], r[2], 3, None, STATS))
            for n, r in rows.items()
        ),
    )


TABLES = {
    "bully": _table({3: (7, 2, 4.67), 4: (17, 3, 10.0), 5: (31, 4, 17.7)}),
    "raft": _table({3: (8, 4, 6.67), 4: (12, 6, 10.5), 5: (24, 8, 17.74), 6: None}),
}


def test_the_chart_is_written_and_byte_identical_twice(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = write_cost_plot(TABLES, tmp_path / "a" / "message-cost.svg", "Messages per election")
    b = write_cost_plot(TABLES, tmp_path / "b" / "message-cost.svg", "Messages per election")
    assert a.read_bytes() == b.read_bytes()
    text = a.read_text()
    assert text.startswith("<?xml") and text.rstrip().endswith("</svg>")
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["message-cost.svg"]  # no temp left


def test_the_chart_has_every_series_and_no_date() -> None:
    svg = cost_plot_svg(TABLES)
    for protocol in TABLES:
        for stat in ("worst", "mean", "best"):
            assert f"{protocol} {stat}" in svg
    for label in ("nodes", "messages", ">31<", ">24<"):  # axes, worst cases labelled
        assert label in svg
    assert "<dc:date>" not in svg


def test_a_device_or_link_given_as_the_chart_is_refused_untouched(tmp_path: Path) -> None:
    target = tmp_path / "kept.svg"
    target.write_text("mine")
    link = tmp_path / "link.svg"
    link.symlink_to(target)
    for path, kind in ((Path("/dev/full"), "a character device"), (link, "a symbolic link")):
        before = os.lstat(path)
        with pytest.raises(LeadercheckError, match=f"^--plot {path} is {kind}, not a regular"):
            write_cost_plot(TABLES, path)
        after = os.lstat(path)
        assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
    assert target.read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.svg", "link.svg"]

"""The trace page's element-wise change of a collection field (html.element_diff): what was
added and removed, in order; any value that is no flat collection falls back to old -> new
(None). How the page shows it in Chromium is in test_html.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from leadercheck.checker.render.html import element_diff


@pytest.mark.parametrize(
    ("old", "new", "marked"),
    [
        (["a", "b"], ["b", "c"], [("-", "a"), ("=", "b"), ("+", "c")]),
        ([], ["x", "y"], [("+", "x"), ("+", "y")]),  # from empty
        (["x"], [], [("-", "x")]),  # to empty
        (["x", "x"], ["x"], [("=", "x"), ("-", "x")]),  # a list may hold an element twice
        (["a", "b"], ["b", "a"], [("+", "b"), ("=", "a"), ("-", "b")]),  # a list's order counts
        (("n1",), ("n1", "n2"), [("=", "n1"), ("+", "n2")]),
        (frozenset({"b", "a"}), {"a", "c"}, [("=", "a"), ("-", "b"), ("+", "c")]),
        (  # a JSON list of records: each element as the page writes it
            [{"owner": "n1", "seq": 1}],
            [{"owner": "n1", "seq": 1}, {"owner": "n2", "seq": 2}],
            [("=", "(owner: n1, seq: 1)"), ("+", "(owner: n2, seq: 2)")],
        ),
        ([True, None], [True], [("=", "yes"), ("-", "-")]),
        # strings that render a set, a tuple or a list, as repr writes them
        ("{1, 2}", "{2, 3}", [("-", "1"), ("=", "2"), ("+", "3")]),
        ("{3, 1, 2}", "{1, 2}", [("=", "1"), ("=", "2"), ("-", "3")]),  # a set's sorted
        ("frozenset({'n1'})", "frozenset({'n2', 'n1'})", [("=", "n1"), ("+", "n2")]),
        ("frozenset()", "frozenset({'n1'})", [("+", "n1")]),
        ("set()", "{'a'}", [("+", "a")]),
        ("{'a'}", "set()", [("-", "a")]),
        ("('a', 'b')", "('a',)", [("=", "a"), ("-", "b")]),
        ("[1, 2]", "[]", [("-", "1"), ("-", "2")]),
        (" {1} ", "{1, 2}", [("=", "1"), ("+", "2")]),
        ("frozenset({1, 2})", [1], [("=", "1"), ("-", "2")]),  # a set string and a list
    ],
)
def test_a_collection_changes_element_by_element(
    old: object, new: object, marked: list[tuple[str, str]]
) -> None:
    assert element_diff(old, new) == marked


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (1, 2),  # scalars
        ("n1", "n2"),
        (None, ["a"]),  # a scalar and a collection
        (["a"], "n1"),
        ({"n1": 0}, {"n1": 1}),  # a mapping is no collection of elements
        ("{'a': 1}", "{'a': 2}"),
        ("{}", "{1}"),  # {} is a dict's rendering, not a set's
        ("{(1, 2)}", "{(1, 3)}"),  # nested
        ("[[1], [2]]", "[[1]]"),
        ("frozenset({frozenset({1})})", "frozenset()"),
        ("{n1, n2}", "{n1}"),  # unparseable: names, not literals
        ("frozenset({n1})", "frozenset({n1, n2})"),
        ("(1)", "(2)"),  # a parenthesised scalar
        ("{1, 2", "{1}"),
        ("(" * 300 + ")" * 300, "()"),  # too deep to read
        ("State(a=1)", "State(a=2)"),
        (["a"], ["a"]),  # nothing added or removed
        ("{1, 2}", "{2, 1}"),
        ([], []),
    ],
)
def test_anything_else_falls_back_to_old_and_new(old: object, new: object) -> None:
    assert element_diff(old, new) is None


def test_the_page_carries_the_change_of_each_collection_field(pages: Path) -> None:
    text = (pages / "bully-flapping.html").read_text()
    start = text.index('<script type="application/json" id="trace-data">') + 48
    data: dict[str, Any] = json.loads(text[start : text.index("</script>", start)])
    diffs = {
        (step["index"], p["name"]): p["diffs"]
        for step in data["steps"]
        for p in step["participants"]
        if "diffs" in p
    }
    assert diffs[(12, "network")] == {
        "in_flight": [["=", "COORDINATOR(n3->n1)"], ["-", "COORDINATOR(n3->n2)"]]
    }
    assert diffs[(13, "network")] == {
        "in_flight": [["-", "COORDINATOR(n3->n1)"]],
        "island": [["+", "n3"]],
    }
    assert {name for _, name in diffs} == {"network"}  # the nodes' changes are all scalars
    assert 0 not in {i for i, _ in diffs}  # the initial state changes nothing

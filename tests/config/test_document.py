"""A configuration file's text read within bounds: every hostile file is one line naming the
file and the problem, in bounded time and memory; every real format is read."""

from __future__ import annotations

import pytest

from leadercheck.checker.config.document import DEPTH, VALUES, parse, shown
from leadercheck.checker.errors import LeadercheckError

LAUGHS = "\n".join(
    [f"a: &a [{','.join(['lol'] * 9)}]"]
    + [
        f"{b}: &{b} [{','.join([f'*{a}'] * 9)}]"
        for a, b in zip("abcdefgh", "bcdefghi", strict=True)
    ]
    + ["bootstrap:", "  dcs:", "    ttl: *i"]
)


def refused(text: str) -> str:
    with pytest.raises(LeadercheckError) as caught:
        parse(text, "f.yml")
    message = str(caught.value)
    assert "\n" not in message and message.startswith("f.yml:"), message
    assert len(message) < 300, message  # nothing of the file is echoed whole
    return message


def test_a_billion_laughs_is_refused_by_its_expanded_size() -> None:
    assert len(LAUGHS) < 420  # the 398-byte bomb, 9**9 values once expanded
    assert f"more than {VALUES:,} values once its aliases are expanded" in refused(LAUGHS)


def test_deep_nesting_is_refused_before_python_recurses() -> None:
    assert f"nested deeper than {DEPTH} levels" in refused("ttl: " + "[" * 100_000)
    assert "nested too deeply" in refused("[" * 100_000)  # JSON's own parser, bounded too
    chain = "a0: &a0 [1]\n" + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, 80))
    assert "once its aliases are expanded" in refused(chain)


def test_a_recursive_alias_is_refused() -> None:
    assert "an alias that contains itself" in refused("a: &a [*a]\n")


@pytest.mark.parametrize(
    "text", ["ttl: " + "9" * 5000, '{"ttl": ' + "9" * 5000 + "}", "ttl: 1" + "0" * 41 + ".5"]
)
def test_a_number_of_thousands_of_digits_is_refused(text: str) -> None:
    assert "digits, more than any setting has" in refused(text)


def test_a_huge_value_is_never_echoed_whole() -> None:
    assert len(shown("x" * 900_000)) < 50
    assert len(shown([[["x" * 1000] * 1000] * 1000])) < 100


@pytest.mark.parametrize("text", ["ttl: .inf\n", '{"ttl": NaN}', '{"ttl": Infinity}'])
def test_infinite_numbers_are_read_or_refused_never_searched(text: str) -> None:
    try:
        doc = parse(text, "f.yml")
    except LeadercheckError as exc:
        assert "not a number a setting can have" in str(exc)
    else:
        assert doc.roots[0]["ttl"] == float("inf")  # the knob's reader refuses it


def test_a_key_set_twice_is_kept_last_and_recorded_with_its_lines() -> None:
    doc = parse("bootstrap:\n  dcs:\n    ttl: 30\n    loop_wait: 10\n    ttl: 5\n", "f.yml")
    assert doc.roots[0]["bootstrap"]["dcs"]["ttl"] == 5
    assert doc.duplicates == {(0, "bootstrap", "dcs", "ttl"): (3, 5)}
    props = parse("tickTime=2000\ndataDir=/a\ndataDir=/b\n", "zoo.cfg")
    assert props.duplicates == {(0, "dataDir"): (2, 3)} and props.roots[0]["dataDir"] == "/b"
    json_doc = parse('{"a": {"b": 1, "b": 2}}', "f.json")
    assert (0, "a", "b") in json_doc.duplicates and json_doc.roots[0]["a"]["b"] == 2


def test_json_indented_with_tabs_is_read() -> None:
    doc = parse('{\n\t"leaderElection": {\n\t\t"leaseDuration": "15s"\n\t}\n}\n', "c.json")
    assert doc.format == "json" and doc.roots[0]["leaderElection"]["leaseDuration"] == "15s"


def test_a_flags_file_with_inline_comments_and_continuations() -> None:
    text = (
        "# controller flags\n--leader-elect=true  # on\n"
        "--leader-elect-lease-duration=15s   # the TTL\n"
        "--leader-elect-retry-period 2s \\\n--leader-elect-renew-deadline='10s'\n"
    )
    doc = parse(text, "flags.txt")
    assert doc.format == "flags"
    assert doc.roots[0] == [
        "--leader-elect=true",
        "--leader-elect-lease-duration=15s",
        "--leader-elect-retry-period=2s",
        "--leader-elect-renew-deadline=10s",
    ]
    assert doc.where((0, 1)) == "[1] (line 3)"


def test_several_yaml_documents_merge_keys_and_lines() -> None:
    doc = parse(
        "a: 1\n---\nbase: &b {ttl: 30}\nbootstrap:\n  dcs:\n    <<: *b\n    loop_wait: 5\n", "f.yml"
    )
    assert len(doc.roots) == 2
    assert doc.roots[1]["bootstrap"]["dcs"] == {"ttl": 30, "loop_wait": 5}
    assert doc.where((1, "bootstrap", "dcs", "loop_wait")) == (
        "document 2: bootstrap.dcs.loop_wait (line 7)"
    )


def test_a_template_s_placeholders_are_values_and_its_control_blocks_refused() -> None:
    doc = parse("bootstrap:\n  dcs:\n    ttl: {{ pg_rto }}\n    loop_wait: 10\n", "t.yml.j2")
    assert doc.roots[0]["bootstrap"]["dcs"]["ttl"] == "{{ pg_rto }}"
    said = refused("bootstrap:\n{% if x %}\n  dcs:\n    ttl: 30\n{% endif %}\n")
    assert "line 2: a template" in said and "render it" in said
    assert "a template" in refused("hosts:\n%{ for e in es ~}\n  - ${e}\n%{ endfor ~}\n")


def test_unknown_tags_and_bad_yaml_name_the_line() -> None:
    assert "line 1: does not parse as YAML: could not determine a constructor" in refused(
        "ttl: !Ref x\n"
    )
    assert "line 2" in refused("ttl: [30\nloop_wait: 10\n")

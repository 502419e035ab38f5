"""A user's own protocol module through every `verify` command (`--model`), and every way a
module can be malformed: one line, exit 2, nothing written."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from leadercheck.checker.app.main import main

ROOT = Path(__file__).resolve().parents[1]
TINY = "tests/user_models/tiny_lock.py"


def verify(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the model path is recorded as given, relative to here


def test_a_user_protocol_is_violated_and_its_trace_records_the_model(tmp_path: Path) -> None:
    result = verify("--model", TINY, "--protocol", "tiny-lock-racy", "--out", str(tmp_path))
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith(f"tiny-lock-racy (from {TINY})  procs=2")
    assert re.search(r"mutual-exclusion\s+VIOLATED\s+counterexample of 4 steps", result.stdout)
    assert re.search(r"entered\s+HOLDS\s+reached in 2 steps", result.stdout)
    assert "p1 and p2 are both inside" in result.stdout
    doc = json.loads((tmp_path / "tiny-lock-racy.json").read_text())
    assert doc["model"] == TINY and doc["protocol"] == "tiny-lock-racy"
    assert doc["length"] == 4
    assert {p.suffix for p in tmp_path.iterdir()} >= {".json", ".dot"}


def test_a_user_protocol_holds_with_exact_counts() -> None:
    result = verify("--model", TINY, "--protocol", "tiny-lock", "--json", "-p", "procs=3")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["model"] == TINY and doc["params"] == {"procs": 3}
    assert doc["verdict"] == "HOLDS"
    # the lock free with everyone idle, or held by one of the three
    assert doc["stats"]["distinct_states"] == 4
    assert [p["name"] for p in doc["properties"]] == ["mutual-exclusion", "entered"]


@pytest.mark.parametrize(
    "options",
    [
        ["--symmetry"],
        ["--workers", "2"],
        ["--engine", "processes", "--workers", "2"],
        ["--por"],
        ["--exact"],
    ],
)
def test_every_engine_option_runs_a_user_protocol(options: list[str], tmp_path: Path) -> None:
    result = verify(
        "--model", TINY, "--protocol", "tiny-lock-racy", "--out", str(tmp_path), *options
    )
    assert result.exit_code == 1, result.output
    assert re.search(r"mutual-exclusion\s+VIOLATED", result.stdout)
    assert json.loads((tmp_path / "tiny-lock-racy.json").read_text())["model"] == TINY


def test_html_and_stats(tmp_path: Path) -> None:
    result = verify(
        "--model", TINY, "--protocol", "tiny-lock-racy", "--html", str(tmp_path / "pages")
    )
    assert result.exit_code == 1, result.output
    assert (tmp_path / "pages" / "tiny-lock-racy.html").exists()
    stats = verify("--model", TINY, "--protocol", "tiny-lock", "--stats")
    assert stats.exit_code == 0, stats.output
    assert "processes inside, over every reachable state" in stats.stdout


def test_replay_and_explain_take_the_model_the_user_names(tmp_path: Path) -> None:
    assert verify("--model", TINY, "--protocol", "tiny-lock-racy", "--out", str(tmp_path))
    trace = tmp_path / "tiny-lock-racy.json"
    replayed = verify("replay", str(trace), "--model", TINY)
    assert replayed.exit_code == 1, replayed.output  # the violation reproduces
    assert "reproduced: all 4 steps as recorded; mutual-exclusion is broken again" in (
        replayed.stdout
    )
    explained = verify("explain", str(trace), "--model", TINY)
    assert explained.exit_code == 0, explained.output
    assert "tiny-lock-racy" in explained.stdout and "mutual-exclusion" in explained.stdout
    # on the other variant, the same schedule parts at the step the atomic lock lacks
    other = verify("replay", str(trace), "--protocol", "tiny-lock", "--model", TINY)
    assert other.exit_code == 0, other.output  # the fix holds against this schedule
    assert "is not enabled" in other.stdout
    assert f"`verify --protocol tiny-lock --model {TINY}` checks every schedule" in other.stdout


def test_a_trace_file_never_imports_the_model_it_names(tmp_path: Path) -> None:
    """A trace is data people send each other: the model file it records (here a payload
    beside it that would leave a mark) runs only when the user names it with --model."""
    assert verify("--model", TINY, "--protocol", "tiny-lock-racy", "--out", str(tmp_path))
    trace = tmp_path / "tiny-lock-racy.json"
    mark = tmp_path / "ran"
    payload = tmp_path / "payload.py"
    payload.write_text(f"open({str(mark)!r}, 'w').close()\n")
    doc = json.loads(trace.read_text())
    doc["model"] = str(payload)
    trace.write_text(json.dumps(doc))
    for command in ("replay", "conform"):
        extra = ["--against", "etcd"] if command == "conform" else []
        refused = verify(command, str(trace), *extra)
        assert refused.exit_code == 2, refused.output
        assert f"give --model {payload}" in refused.stderr
        assert len(refused.stderr.splitlines()) == 1
    explained = verify("explain", str(trace))  # told from the file alone
    assert explained.exit_code == 0, explained.output
    assert "mutual-exclusion" in explained.stdout
    assert not mark.exists()


def test_the_gate_runs_a_user_module_with_junit_and_golden_files(tmp_path: Path) -> None:
    golden, junit = tmp_path / "golden", tmp_path / "junit.xml"
    updated = verify("--all", "--model", TINY, "--update-golden", "--out", str(golden))
    assert updated.exit_code == 0, updated.output
    assert sorted(p.name for p in golden.iterdir() if p.suffix == ".json") == [
        "tiny-lock-racy.json"
    ]
    gate = verify(
        "--all", "--model", TINY, "--check-golden", "--out", str(golden), "--junit", str(junit)
    )
    assert gate.exit_code == 0, gate.output
    assert "tiny-lock-racy" in gate.stdout and "lease-fencing" not in gate.stdout
    assert 'tests="4"' in junit.read_text()
    # an edit that changes the committed counterexample fails the gate
    trace = golden / "tiny-lock-racy.json"
    trace.write_text(trace.read_text().replace('"length": 4', '"length": 5'))
    changed = verify("--all", "--model", TINY, "--check-golden", "--out", str(golden))
    assert changed.exit_code == 1
    assert "tiny-lock-racy.json" in changed.stdout


def test_list_shows_the_user_protocols() -> None:
    listed = verify("--list", "--model", TINY)
    assert listed.exit_code == 0
    assert listed.stdout.splitlines()[:3] == [
        f"from {TINY}:",
        "tiny-lock: an atomic test-and-set lock",
        "    expected: mutual-exclusion HOLDS, entered HOLDS",
    ]


def test_the_module_may_be_named_as_a_dotted_module() -> None:
    result = verify("--model", "tests.user_models.tiny_lock", "--protocol", "tiny-lock")
    assert result.exit_code == 0, result.output


def test_lint_passes_a_sound_model() -> None:
    result = verify("--model", TINY, "--lint")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0].startswith("tiny-lock: ok: value semantics")
    assert "the same order under PYTHONHASHSEED 1 and 2" in result.stdout


LOCK_HEADER = """
from leadercheck.checker import Action, Model, always, sometimes
from leadercheck.models.params import ProtocolEntry
"""


def _module(tmp_path: Path, body: str, name: str = "user.py") -> str:
    path = tmp_path / name
    path.write_text(LOCK_HEADER + textwrap.dedent(body))
    return str(path)


SEED_ORDER = """
class Names(Model):
    '''Successors in the order of a set of strings: fixed in one process, not across.'''
    def initial_states(self):
        return [()]
    def successors(self, s):
        if len(s) < 2:
            for name in {"alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"}:
                yield Action("add", name), s + (name,)

PROTOCOLS = (ProtocolEntry("names", "set order", (), Names),)
PROPERTIES = (sometimes("two", lambda s: len(s) == 2),)
EXPECTED = {"names": {"two": "HOLDS"}}
"""


def test_lint_finds_an_order_that_depends_on_the_hash_seed(tmp_path: Path) -> None:
    result = verify("--model", _module(tmp_path, SEED_ORDER), "--lint")
    assert result.exit_code == 2
    assert "names: the successor order depends on the hash seed" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("PROTOCOLS = ()\n", "PROTOCOLS is empty"),
        ("X = 1\n", "defines no PROTOCOLS"),
        ("PROTOCOLS = [1]\n", "PROTOCOLS[0] is int, not a ProtocolEntry"),
        (
            "PROTOCOLS = (ProtocolEntry('a b', 's', (), object),)\n",
            "protocol name 'a b' must be letters, digits",
        ),
        ("PROTOCOLS = (ProtocolEntry('a', 's', (), object),)\n", "defines no EXPECTED"),
        (
            "PROTOCOLS = (ProtocolEntry('a', 's', (), object),)\n"
            "EXPECTED = {'a': {'zz': 'HOLDS'}}\n",
            "names unknown property 'zz'",
        ),
        (
            "PROTOCOLS = (ProtocolEntry('a', 's', (), object),)\n"
            "PROPERTIES = (always('single-leader', lambda s: True),)\nEXPECTED = {}\n",
            "property 'single-leader' has the name of a built-in claim",
        ),
        ("def broken(:\n", "syntax error (line 4)"),
        ("raise RuntimeError('no config')\n", "importing it raised RuntimeError: no config"),
    ],
)
def test_a_malformed_module_is_one_line(tmp_path: Path, body: str, message: str) -> None:
    out = tmp_path / "out"
    result = verify("--model", _module(tmp_path, body), "--protocol", "a", "--out", str(out))
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_a_builder_that_returns_no_model_is_refused(tmp_path: Path) -> None:
    body = """
    PROTOCOLS = (ProtocolEntry("a", "s", (), lambda: [1, 2]),)
    PROPERTIES = (sometimes("w", lambda s: True),)
    EXPECTED = {"a": {"w": "HOLDS"}}
    """
    result = verify("--model", _module(tmp_path, body), "--protocol", "a")
    assert result.exit_code == 2
    assert "a: its builder returned list, not a checker.Model" in result.stderr


def test_missing_files_and_unknown_protocols_are_one_line(tmp_path: Path) -> None:
    missing = verify("--model", str(tmp_path / "nope.py"), "--protocol", "a")
    assert missing.exit_code == 2 and "no such file" in missing.stderr
    dotted = verify("--model", "no_such_module_here", "--protocol", "a")
    assert dotted.exit_code == 2 and "no module named 'no_such_module_here'" in dotted.stderr
    unknown = verify("--model", TINY, "--protocol", "tiny-lok")
    assert unknown.exit_code == 2
    assert "unknown protocol 'tiny-lok' in tests/user_models/tiny_lock.py" in unknown.stderr
    assert "did you mean 'tiny-lock'?" in unknown.stderr
    assert verify("--model", TINY, "--protocol", "tiny-lock", "--prove").exit_code == 2
    assert verify("--lint").exit_code == 2


IDENTITY = """
class Box:
    def __init__(self, n):
        self.n = n

class Counting(Model):
    def initial_states(self):
        return [Box(0)]
    def successors(self, s):
        if s.n < 3:
            yield Action("inc", "c"), Box(s.n + 1)

PROTOCOLS = (ProtocolEntry("count", "identity-hashed states", (), Counting),)
PROPERTIES = (sometimes("three", lambda s: s.n == 3),)
EXPECTED = {"count": {"three": "HOLDS"}}
"""


def test_a_broken_user_model_is_a_model_error_not_a_verdict(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = verify(
        "--model", _module(tmp_path, IDENTITY), "--protocol", "count", "--out", str(out)
    )
    assert result.exit_code == 2, result.output
    assert "Box" in result.stderr and "identity" in result.stderr
    assert not out.exists()
    gate = verify("--all", "--model", _module(tmp_path, IDENTITY), "--out", str(out))
    assert gate.exit_code == 2


@pytest.mark.slow
def test_ray_actors_load_the_user_file_themselves(tmp_path: Path) -> None:
    result = verify(
        "--model", TINY, "--protocol", "tiny-lock-racy", "--engine", "ray", "--workers", "2",
        "--out", str(tmp_path),
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert re.search(r"mutual-exclusion\s+VIOLATED\s+counterexample of 4 steps", result.stdout)


def test_a_checkpointed_user_search_resumes(tmp_path: Path) -> None:
    args = ["--model", TINY, "--protocol", "tiny-lock-racy", "-p", "procs=3"]
    cp = str(tmp_path / "cp")
    cut = verify(*args, "--checkpoint", cp, "--checkpoint-every", "0", "--max-depth", "2")
    assert cut.exit_code == 3, cut.output
    done = verify(*args, "--resume", cp, "--out", str(tmp_path / "out"))
    assert done.exit_code == 1, done.output
    assert re.search(r"mutual-exclusion\s+VIOLATED\s+counterexample of 4 steps", done.stdout)
    whole = verify(*args, "--json", "--out", str(tmp_path / "again"))
    states = json.loads(whole.stdout)["stats"]["distinct_states"]
    assert f"{states:,} distinct states" in done.stdout


RAISING = """
class Steps(Model):
    def __init__(self, where):
        self.where = where
    def initial_states(self):
        return [0]
    def successors(self, s):
        if s < 3:
            yield Action("inc", "c"), s + 1
    def describe(self, s):
        if self.where == "describe" and s == 3:
            raise KeyError("no view")
        return {"c": {"value": s}}

def build(where):
    if where == "builder":
        raise ValueError("bad combination")
    return Steps(where)

def why(s):
    raise RuntimeError("cannot say")

PROTOCOLS = tuple(
    ProtocolEntry(w, "raises in " + w, (), lambda w=w: build(w))
    for w in ("describe", "builder", "explain")
)
PROPERTIES = (
    always("below-3", lambda s: s < 3, "", why),
    always("below-3-plain", lambda s: s < 3),
    sometimes("one", lambda s: s == 1),
)
EXPECTED = {
    "describe": {"below-3-plain": "VIOLATED", "one": "HOLDS"},
    "builder": {"one": "HOLDS"},
    "explain": {"below-3": "VIOLATED", "one": "HOLDS"},
}
"""


@pytest.mark.parametrize(
    ("protocol", "message"),
    [
        (
            "describe",
            "Steps: showing step 3 of a trace raised KeyError: 'no view' (in describe, summary "
            "or an action's note)",
        ),
        ("builder", "builder: building the model raised ValueError: bad combination"),
        ("explain", "Steps: the explanation of below-3 raised RuntimeError: cannot say"),
    ],
)
def test_what_a_user_model_raises_is_a_model_error(
    tmp_path: Path, protocol: str, message: str
) -> None:
    out = tmp_path / "out"
    module = _module(tmp_path, RAISING)
    result = verify("--model", module, "--protocol", protocol, "--out", str(out))
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"error: {message}")
    assert "internal error" not in result.stderr
    # nothing written but the trace that led to the error, when there is one
    written = sorted(p.name for p in out.iterdir()) if out.exists() else []
    assert written in ([], [f"{protocol}.model-error.json"])
    if written:
        assert result.stderr.endswith(f"; the trace that led there: {out / written[0]}\n")


def test_a_bound_on_a_user_model_is_incomplete() -> None:
    result = verify("--model", TINY, "--protocol", "tiny-lock-racy", "-p", "procs=4",
                    "--max-states", "5")  # fmt: skip
    assert result.exit_code == 3, result.output
    assert "INCOMPLETE" in result.stdout


PLANTED = "tests/user_models/planted_misuse.py"


@pytest.mark.parametrize(
    ("how", "says", "steps"),
    [
        ("identity", "compare by identity (the class Tag, at state.extra,", 31),
        ("mutate", "mutated the state it was given in place", 30),
        ("unhashable", "a state is unhashable (a list, at state.extra)", 31),
    ],
)
@pytest.mark.parametrize("search", [[], ["--workers", "2"], ["--strategy", "bitstate"]])
def test_a_user_model_is_checked_on_every_state(
    tmp_path: Path, how: str, says: str, steps: int, search: list[str]
) -> None:
    """A misuse first met at depth 30 of a 400-state grid: one line, exit 2, and the trace
    that led there in a file, under every strategy; nothing else is written."""
    out = tmp_path / "out"
    result = verify("--model", PLANTED, "--protocol", f"planted-{how}", "--out", str(out), *search)
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and says in result.stderr
    written = out / f"planted-{how}.model-error.json"
    assert sorted(out.iterdir()) == [written]
    doc = json.loads(written.read_text())
    assert doc["length"] in (steps - 1, steps)  # a worker may name the state it expanded
    assert f"reached in {doc['length']} steps" in result.stderr


def test_the_next_line_points_at_the_page_html_wrote_and_suggests_it_otherwise(
    tmp_path: Path,
) -> None:
    """With --html DIR the page exists: `next:` names it instead of suggesting --html."""
    args = ["--model", TINY, "--protocol", "tiny-lock-racy"]
    pages = tmp_path / "pages"
    with_html = verify(*args, "--html", str(pages))
    assert with_html.exit_code == 1, with_html.output
    (line,) = [s for s in with_html.stdout.splitlines() if s.startswith("next: ")]
    assert f"open {pages / 'tiny-lock-racy.html'} to step through it" in line
    assert "--html" not in line
    plain = verify(*args, "--out", str(tmp_path / "out"))
    (line,) = [s for s in plain.stdout.splitlines() if s.startswith("next: ")]
    assert "add --html for a page to step through it" in line


COUNTER = '''
"""A counter whose claims read the model they are checked on: one claim, every limit."""
from collections.abc import Iterator

from leadercheck.checker import Action, Model, always, sometimes
from leadercheck.models.params import Param, ProtocolEntry


class Counter(Model[int]):
    def __init__(self, top: int, limit: int) -> None:
        self.top, self.limit = top, limit

    def initial_states(self) -> list[int]:
        return [0]

    def successors(self, s: int) -> Iterator[tuple[Action, int]]:
        if s < self.top:
            yield Action("inc", "c", None), s + 1

    def describe(self, s: int) -> dict[str, dict[str, object]]:
        return {"c": {"value": s}}


within = always(
    "within-limit", lambda s, model: s <= model.limit, "the counter stays within its limit",
    lambda s, model: f"{s} is past the limit {model.limit}", with_model=True,
)
top = sometimes("top", lambda s, model: s == model.top, "it reaches its top", with_model=True)
TOP = Param("top", 3, 1, 9, "how far it counts")
PROTOCOLS = (
    ProtocolEntry("counter", "counts to its limit", (TOP,), lambda top: Counter(top, top)),
    ProtocolEntry("counter-over", "one past it", (TOP,), lambda top: Counter(top, top - 1)),
)
PROPERTIES = (within, top)
EXPECTED = {
    "counter": {"within-limit": "HOLDS", "top": "HOLDS"},
    "counter-over": {"within-limit": "VIOLATED", "top": "HOLDS"},
}
'''


@pytest.mark.parametrize("options", [[], ["--workers", "2"], ["--exact"]])
def test_a_claim_reads_the_model_it_is_checked_on(tmp_path: Path, options: list[str]) -> None:
    """One claim for every configuration: `within-limit` reads each model's own limit, so
    `counter` holds it, `counter-over` breaks it at the limit that model was built with,
    whatever the size, and the gate, the trace and its replay agree."""
    module = tmp_path / "counter.py"
    module.write_text(COUNTER)
    out = tmp_path / "out"
    over = verify("--model", str(module), "--protocol", "counter-over", "-p", "top=5",
                  "--out", str(out), *options)  # fmt: skip
    assert over.exit_code == 1, over.output
    assert "=> within-limit broken: 5 is past the limit 4" in over.stdout
    assert re.search(r"top\s+HOLDS\s+reached in 5 steps", over.stdout)
    gate = verify("--all", "--model", str(module), "--out", str(tmp_path / "gate"))
    assert gate.exit_code == 0, gate.output
    trace = str(out / "counter-over.json")
    replayed = verify("replay", trace, "--model", str(module))
    assert replayed.exit_code == 1 and "5 is past the limit 4" in replayed.stdout
    fixed = verify("replay", trace, "--model", str(module), "--protocol", "counter")
    assert fixed.exit_code == 0, fixed.output


def test_a_claim_that_reads_its_model_is_not_judged_without_one() -> None:
    from leadercheck.checker import ModelError, always

    claim = always("needs-model", lambda s, model: s <= model.limit, with_model=True)
    with pytest.raises(ModelError, match="reads its model .* judged without one"):
        claim.predicate(3)

"""The README is the door to the manual in docs/: every link from it, and between the manual's
pages, reaches a page that exists and an anchor that page has; every page is in mkdocs.yml's
nav; the install page's commands are the README's quick start; no internal issue numbers.

`mkdocs build --strict` (CI, .ci/run) checks the links between pages with MkDocs' own reader,
but never sees the README, which is not part of the site; this test does both in well under a
second, so a broken link fails the default suite, not only CI. Anchors are computed as
Python-Markdown's `toc` extension computes them (GitHub's differ only for punctuation the pages'
headings avoid).
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = sorted(DOCS.rglob("*.md"))

FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$", re.MULTILINE)
ATTR_ID = re.compile(r"\{[:\s]*#([\w-]+)[^}]*\}\s*$")
HTML_ID = re.compile(r"\bid=\"([^\"]+)\"")
ISSUE = re.compile(r"\b[Ii]ssues? \d+|(?<![\w&/])#\d+\b")


def _prose(text: str) -> str:
    """The text outside fenced code blocks."""
    return FENCE.sub("", text)


def _slug(heading: str) -> str:
    """Python-Markdown's toc slugify of a heading's text (its inline markup removed)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = text.replace("`", "")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


@cache
def _anchors(path: Path) -> frozenset[str]:
    prose = _prose(path.read_text())
    found: set[str] = set(HTML_ID.findall(prose))
    for _level, heading in HEADING.findall(prose):
        explicit = ATTR_ID.search(heading)
        if explicit:
            found.add(explicit.group(1))
            continue
        slug = base = _slug(heading)
        count = 0
        while slug in found or not slug:
            count += 1
            slug = f"{base}_{count}"
        found.add(slug)
    return frozenset(found)


def _links(path: Path) -> list[str]:
    prose = CODE_SPAN.sub("", _prose(path.read_text()))
    return LINK.findall(prose)


def _broken(path: Path, inside_docs: bool) -> list[str]:
    wrong = []
    for target in _links(path):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        where, _, anchor = target.partition("#")
        resolved = (path.parent / where).resolve() if where else path
        name = f"{path.relative_to(ROOT)}: {target}"
        if where.startswith("/"):
            wrong.append(f"{name}: an absolute path")
        elif inside_docs and not resolved.is_relative_to(DOCS):
            wrong.append(f"{name}: outside docs/, so not in the site (name the file in code)")
        elif not resolved.exists():
            wrong.append(f"{name}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            wrong.append(f"{name}: {resolved.relative_to(ROOT)} has no heading #{anchor}")
    return wrong


def test_every_readme_link_reaches_a_page_and_its_anchor() -> None:
    assert _broken(README, inside_docs=False) == []
    assert any(t.startswith("docs/") for t in _links(README)), "the README links into docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_every_link_between_pages_reaches_a_page_and_its_anchor(page: Path) -> None:
    assert _broken(page, inside_docs=True) == []


def _nav_files(nav: object) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [f for item in nav for f in _nav_files(item)]
    if isinstance(nav, dict):
        return [f for value in nav.values() for f in _nav_files(value)]
    return []


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    listed = _nav_files(config["nav"])
    pages = [str(p.relative_to(DOCS)) for p in PAGES]
    assert sorted(set(pages) - set(listed)) == [], "pages missing from mkdocs.yml's nav"
    assert sorted(set(listed) - set(pages)) == [], "nav entries with no page"
    assert len(listed) == len(set(listed)), "a page listed twice"


def _commands(block: str) -> list[str]:
    return [
        line
        for line in block.splitlines()
        if line.strip() and not line.lstrip().startswith(("#", "```", "<!--"))
    ]


def test_the_install_page_gives_the_readme_quick_start_verbatim() -> None:
    readme = README.read_text()
    quick = readme.split("<!-- quickstart:begin -->")[1].split("<!-- quickstart:end -->")[0]
    install = (DOCS / "install.md").read_text()
    first_block = re.search(r"```sh\n(.*?)```", install, re.DOTALL)
    assert first_block, "docs/install.md opens with the quick start's sh block"
    assert _commands(first_block.group(1)) == _commands(quick)
    assert len(_commands(quick)) == 2


def test_no_internal_issue_numbers_in_user_docs() -> None:
    """The reader has no issue tracker: say what changed, not which ticket."""
    found = [
        f"{path.relative_to(ROOT)}: {match.group()}"
        for path in [README, *PAGES]
        for match in ISSUE.finditer(CODE_SPAN.sub("", _prose(path.read_text())))
    ]  # in the prose: a trace may say "leadership #2"
    assert found == []


def test_the_anchors_are_computed_as_mkdocs_computes_them() -> None:
    """The slug rule this test relies on, on headings the pages use."""
    assert _slug("Symmetry: `--symmetry`") == "symmetry-symmetry"
    assert _slug("hi_epoch") == "hi_epoch"
    assert _slug("Verdicts: `specs/expected.toml`") == "verdicts-specsexpectedtoml"
    assert _slug("Model code runs in `verify`'s process") == "model-code-runs-in-verifys-process"

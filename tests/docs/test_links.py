"""Every relative link in README.md and docs/*.md leads somewhere: the file exists and, for a
link into a Markdown file, the heading its #anchor names exists (GitHub's anchors). Moving text
between files is how links break without anyone noticing."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.handlers import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def _prose(text: str) -> list[str]:
    """The lines outside fenced code blocks, with inline code removed."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(re.sub(r"`[^`]*`", "", line))
    return lines


def anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lowercased, punctuation dropped, spaces as hyphens, repeats -1, -2..."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if fenced or not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def links(page: Path) -> list[str]:
    return [target for line in _prose(page.read_text(encoding="utf-8")) for target in LINK.findall(line)]


def broken(page: Path) -> list[str]:
    bad = []
    for target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path_part, _, anchor = target.partition("#")
        resolved = (page.parent / path_part).resolve() if path_part else page
        if not resolved.exists():
            bad.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            bad.append(f"{target}: no heading #{anchor}")
    return bad


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_every_relative_link_resolves(page):
    assert not broken(page)


def test_the_checker_sees_a_broken_file_and_a_broken_anchor(tmp_path):
    (tmp_path / "other.md").write_text("# Other\n\n## Deploying to AWS\n\n```\n## not a heading\n```\n")
    page = tmp_path / "page.md"
    page.write_text("[ok](other.md#deploying-to-aws) [gone](missing.md) [moved](other.md#not-a-heading)\n"
                    "`[code](nowhere.md)` [web](https://example.com/x.md) [here](#page)\n\n# Page\n")
    assert broken(page) == ["missing.md: no such file", "other.md#not-a-heading: no heading #not-a-heading"]


def test_the_readme_stays_a_front_door():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode()) <= 8 * 1024
    assert "make run" in readme and "make test" in readme
    assert len(re.findall(r"!\[[^\]]*\]\(docs/screenshots/[^)]+\.png\)", readme)) >= 2

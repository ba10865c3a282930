"""The README and the user guide: one or two screens of README, no lab notebook, no broken link.

The README has at most 150 lines. The README and the guide pages (``docs/*.md`` but the experiments
log) carry no dated narrative: no measurement timestamps, no "tried" paragraphs, no "measured on
<date>" re-measurements; that history lives in ``docs/experiments.md`` and ``CHANGELOG.md``. Every
relative link of the README, the changelog and ``docs/*.md`` points to a file that exists, and a link
to a heading of a Markdown page (``page.md#heading``) to a heading that exists, by GitHub's rule for
heading anchors. Every section of ``docs/results.md`` that gives figures names the command behind them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
README = REPO_ROOT / "README.md"
HISTORY = {REPO_ROOT / "docs" / "experiments.md"}
GUIDE = sorted(path for path in (REPO_ROOT / "docs").glob("*.md") if path not in HISTORY)
LINKED = [README, REPO_ROOT / "CHANGELOG.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]

# Dated narrative: what belongs in the experiments log, not in a page that says how to use the tool.
NARRATIVE = {
    "a measurement timestamp": re.compile(r"\b20\d\d-\d\d-\d\d \d\d:\d\d\b"),
    '"tried"': re.compile(r"\btried\b", re.I),
    "a re-measurement": re.compile(r"\bre-?measured\b|\bre-?run (?:on|after)\b", re.I),
    "a dated measurement": re.compile(r"\b(?:measured|re-?run|trained)\b[^.\n]{0,40}\b20\d\d-\d\d-\d\d\b", re.I),
    "a before/after of a change": re.compile(r"\b(?:before|after) the (?:structure )?change\b", re.I),
}
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
COMMAND = re.compile(r"`[^`]*\b(?:hydroseq|python|make|pytest|bash|mlflow)\b[^`]*`|```(?:bash)?\n")


def _prose(text: str) -> str:
    """``text`` without fenced code blocks and inline code: what a link or a sentence is."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def narrative(text: str) -> list[str]:
    """The dated-narrative findings in the prose of ``text`` (code, such as a time stamp of a data file,
    is left out): ``"<kind>: <the words>"``."""
    prose = _prose(text)
    return [f"{kind}: {match.group(0)!r}" for kind, pattern in NARRATIVE.items() for match in pattern.finditer(prose)]


def github_anchors(text: str) -> set[str]:
    """The anchors GitHub gives the headings of a Markdown page (lower case, punctuation dropped,
    spaces to hyphens, ``-1``, ``-2``, ... for repeats)."""
    anchors: set[str] = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", FENCE.sub("", text), re.M):
        plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
        slug = re.sub(r"[^\w\- ]", "", plain.lower()).replace(" ", "-")
        candidate, count = slug, 0
        while candidate in anchors:
            count += 1
            candidate = f"{slug}-{count}"
        anchors.add(candidate)
    return anchors


def broken_links(page: Path) -> list[str]:
    """The relative links of ``page`` whose file, or heading, does not exist."""
    broken = []
    for target in LINK.findall(_prose(page.read_text())):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, ...
            continue
        path_part, _, anchor = target.partition("#")
        path = (page.parent / path_part).resolve() if path_part else page
        if not path.exists():
            broken.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in github_anchors(path.read_text()):
            broken.append(f"{target}: no such heading in {path.name}")
    return broken


def test_the_readme_fits_on_one_or_two_screens() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines; the limit is 150 (details go to docs/)"


@pytest.mark.parametrize("page", [README, *GUIDE], ids=lambda path: path.name)
def test_no_dated_narrative_in_the_readme_and_the_guide(page: Path) -> None:
    assert narrative(page.read_text()) == [], f"{page.name}: move history to docs/experiments.md or CHANGELOG.md"


def test_the_narrative_rules_find_what_they_are_for() -> None:
    """Each rule finds the kind of sentence it is meant for, taken from the README of before the
    guide, and passes a plain date of the data (an issue time, a period)."""
    for sentence in ("What the demo measured (2026-12-02 05:50, `make demo` in a fresh clone",
                     "Other changes tried the same way, none better than the recipe on validation",
                     "re-measured 2026-12-01 after the structure change, machine quiet",
                     "Re-run on a quiet machine after the readers' cache refactor (same command, 2026-11-29)"):
        assert narrative(sentence), sentence
    for sentence in ("hydroseq forecast --issue-time 2014-09-30 forecasts the end of that local day",
                     "train 1981-10-01..2001-09-30, validation 2001-10-01..2005-09-30",
                     "a stamp with its offset (`2015-03-07 01:00-05:00`) is converted by it"):
        assert narrative(sentence) == [], sentence


@pytest.mark.parametrize("page", LINKED, ids=lambda path: path.name)
def test_every_relative_link_points_to_a_file_and_heading_that_exist(page: Path) -> None:
    assert broken_links(page) == []


def test_the_link_check_finds_a_missing_file_and_a_missing_heading(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Title\n\n## The `daily` job: steps\n\n## Steps\n\n## Steps\n")
    page = tmp_path / "page.md"
    page.write_text("[a](other.md#the-daily-job-steps) [b](other.md#steps-1) [c](#here) `[d](nowhere.md)`\n"
                    "[e](missing.md) [f](other.md#nothing) [g](https://example.org/x.md)\n\n## Here\n")
    assert broken_links(page) == ["missing.md: no such file", "other.md#nothing: no such heading in other.md"]


def test_every_figure_section_of_the_results_page_names_its_command() -> None:
    text = (REPO_ROOT / "docs" / "results.md").read_text()
    sections = re.split(r"^#{2,3} ", text, flags=re.M)[1:]
    assert len(sections) >= 10
    for section in sections:
        title = section.splitlines()[0]
        if re.search(r"\d\.\d{2}|\d+ s\b|MiB", _prose(section)):  # it gives figures
            assert COMMAND.search(section), f"results.md, {title!r}: figures without the command behind them"


def test_the_readme_and_the_quickstart_give_make_demo_its_measured_time() -> None:
    """One figure for ``make demo``, the one docs/results.md measured (the quickstart said about 4 minutes)."""
    results = " ".join((REPO_ROOT / "docs" / "results.md").read_text().split())
    measured = re.search(r"then (\d+ min \d+ s) for the job", results)
    assert measured is not None
    for page in (README, REPO_ROOT / "docs" / "quickstart.md"):
        text = " ".join(page.read_text().split())
        assert f"{measured.group(1)} for `make demo`" in text, page.name
        assert not re.search(r"about \d+ minutes?", text), page.name


def test_the_container_page_says_once_where_the_forecast_image_resolves_models_uris() -> None:
    """The forecast image resolves ``models:/`` on a tracking server and stops on a local store (mlflow-skinny,
    ``hydroseq.serving.stores``): the page said it resolves them and that a ``models:/`` URI stops there."""
    text = " ".join((REPO_ROOT / "docs" / "container.md").read_text().split())
    assert "a `models:/` URI) stops" not in text
    assert "from a registered model (`HYDROSEQ_MODEL=models:/NAME@ALIAS`) on an MLflow tracking server" in text
    assert "a `models:/` URI against a local store, such as the image's default SQLite file" in text

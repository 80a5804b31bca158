"""The documentation site (docs/, `make docs`) builds without a warning, its internal links
resolve, and what it and the README say about the notebooks agrees with the notebooks.

The points are read here with nbgrader's own cell tests (`is_grade`, `is_solution`): an
autograded exercise is a graded cell that is not a solution (its test cell), a written
question a graded solution cell (graded by hand). The site computes its tables with its own
extension (docs/_ext/workbook_notebooks.py); these tests read the built pages back.
"""

import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import pytest
from nbgrader.utils import is_grade, is_solution

from tests.conftest import REPO

DOCS = REPO / "docs"
SOLUTIONS = REPO / "solutions"
# The numbered references to the lecture notes that the concordance must explain.
REFERENCE = re.compile(r"Key Equation \d+|Concept \d+|Notation \d+|Clarification \d+"
                       r"|\((?:9|11)\.\d+\)|Fig\. \d+\.\d+|[Ee]quation \(\d+\)")


def build(source: Path, out: Path) -> subprocess.CompletedProcess:
    """`make docs`' build of ``source`` into ``out``, reading the repository's notebooks."""
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q", "-b", "html",
         "-D", f"workbook_solutions={SOLUTIONS}", str(source), str(out)],
        capture_output=True, text=True)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    result = build(DOCS, out)
    assert result.returncode == 0 and "WARNING" not in result.stderr, result.stderr
    return out


class Links(HTMLParser):
    """The ids and the link targets (href, src) of one HTML page."""

    def __init__(self):
        super().__init__()
        self.ids, self.targets = set(), []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and "name" in attrs:
            self.ids.add(attrs["name"])
        for key in ("href", "src"):
            if attrs.get(key):
                self.targets.append(attrs[key])


def parse(page: Path) -> Links:
    links = Links()
    links.feed(page.read_text(encoding="utf-8"))
    return links


def broken_links(site: Path) -> list[str]:
    """'page: target' for each link between the site's own files whose file or anchor is
    missing (links with a scheme, such as https:, and the search page's query are not
    followed)."""
    pages = {page: parse(page) for page in site.rglob("*.html")}
    broken = []
    for page, links in pages.items():
        for target in links.targets:
            parts = urlsplit(target)
            if parts.scheme or parts.netloc or target.startswith("javascript:"):
                continue
            file = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if file.is_dir():
                file = file / "index.html"
            if not file.exists():
                broken.append(f"{page.relative_to(site)}: {target} (no such file)")
            elif parts.fragment and file.suffix == ".html":
                ids = pages[file].ids if file in pages else parse(file).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{page.relative_to(site)}: {target} (no such anchor)")
    return broken


def notebook_points(path: Path) -> tuple[float, float]:
    """(autograded, written) points of a solution notebook, from its nbgrader cells."""
    cells = nbformat.read(path, as_version=4).cells
    graded = [cell for cell in cells if is_grade(cell)]
    auto = sum(cell.metadata.nbgrader["points"] for cell in graded if not is_solution(cell))
    written = sum(cell.metadata.nbgrader["points"] for cell in graded if is_solution(cell))
    return auto, written


def solution_paths() -> dict[str, Path]:
    return {path.stem: path for path in sorted(SOLUTIONS.glob("*/*.ipynb"))
            if path.parent.name == path.stem}


def markdown_table(text: str, header_start: str) -> list[list[str]]:
    """The rows (cells stripped) of the Markdown table whose header line starts with
    ``header_start``, header included."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        if not re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", line):
            rows.append([cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]])
    return rows


def test_the_site_builds_without_a_warning_and_has_a_page_per_reader(site):
    for page in ("index", "students", "tas", "instructors", "course-server", "development",
                 "calendar", "concordance", "third-party", "licences"):
        assert (site / f"{page}.html").exists(), page


def test_every_internal_link_and_anchor_resolves(site):
    assert not broken_links(site), "\n".join(broken_links(site))


def test_a_broken_link_or_anchor_is_found(site, tmp_path):
    copy = shutil.copytree(site, tmp_path / "site")
    with open(copy / "index.html", "a", encoding="utf-8") as page:
        page.write('<a href="calendar.html#no-such-week">x</a><a href="nowhere.html">y</a>')
    assert broken_links(copy) == ["index.html: calendar.html#no-such-week (no such anchor)",
                                  "index.html: nowhere.html (no such file)"]


def test_a_broken_reference_or_a_notebook_left_off_the_calendar_fails_the_build(tmp_path):
    docs = shutil.copytree(DOCS, tmp_path / "docs", ignore=shutil.ignore_patterns("_build"))
    calendar = (docs / "calendar.md").read_text()
    left_off = next(iter(solution_paths()))
    facts = f"```{{notebook-facts}} {left_off}\n```\n"
    assert facts in calendar
    (docs / "calendar.md").write_text(calendar.replace(facts, ""))
    with open(docs / "index.md", "a") as page:
        page.write("\nSee [the missing page](missing.md) and [a week](calendar.md#no-such-week).\n")
    result = build(docs, tmp_path / "out")
    assert result.returncode != 0
    assert f"solutions/{left_off}: no page has a {{notebook-facts}}" in result.stderr
    assert "missing" in result.stderr and "no-such-week" in result.stderr


def test_the_readme_table_gives_each_notebook_its_points():
    rows = markdown_table((REPO / "README.md").read_text(), "| notebook |")
    header, rows = rows[0], rows[1:]
    column = next(i for i, name in enumerate(header) if name.startswith("points"))
    assert header[column] == "points (autograded + written)"
    stated = {row[0]: row[column] for row in rows}
    released = {path.name for path in (REPO / "notebooks").iterdir() if path.is_dir()}
    missing = released - stated.keys()
    assert not missing, f"released notebooks without a row in the README's table: {missing}"
    for notebook, path in solution_paths().items():
        if notebook in stated:
            auto, written = notebook_points(path)
            assert stated[notebook] == f"{auto:g} + {written:g}", (
                f"README says {stated[notebook]} for {notebook}; its cells carry "
                f"{auto:g} autograded + {written:g} written")


def test_the_calendar_shows_each_notebooks_points(site):
    text = re.sub(r"<[^>]+>", " ", (site / "calendar.html").read_text(encoding="utf-8"))
    for notebook, path in solution_paths().items():
        auto, written = notebook_points(path)
        row = re.search(rf"\b{notebook}\b[^|]*?\s{auto:g}\s+{written:g}\s+{auto + written:g}\s",
                        re.sub(r"\s+", " ", text))
        assert row, f"calendar: {notebook} does not show {auto:g} + {written:g} points"
        total = f"{auto:g} automatically + {written:g} written"
        assert total in text, f"calendar: {notebook}'s points table does not total {total}"


def test_the_concordance_explains_every_lecture_reference_the_notebooks_cite():
    cited: dict[str, set[str]] = {}
    for notebook, path in solution_paths().items():
        for cell in nbformat.read(path, as_version=4).cells:
            for reference in REFERENCE.findall(cell.source):
                cited.setdefault(reference.lower(), set()).add(notebook[:2])
    text = (DOCS / "concordance.md").read_text()
    explained: dict[str, set[str]] = {}
    for table in re.finditer(r"^\| reference \|", text, flags=re.M):
        for row in markdown_table(text[table.start():], "| reference |")[1:]:
            explained[row[0].lower()] = set(re.findall(r"\b\d\d\b", row[-1]))
    assert cited and explained
    assert cited.keys() == explained.keys(), (
        f"cited but not in the concordance: {sorted(cited.keys() - explained.keys())}; "
        f"in the concordance but cited nowhere: {sorted(explained.keys() - cited.keys())}")
    for reference, notebooks in cited.items():
        assert explained[reference] == notebooks, (reference, explained[reference], notebooks)

"""The documentation site (docs/, `make docs`) builds without a warning, its internal links
resolve, and what it and the README say about the notebooks agrees with the notebooks: the
README's working times, the calendar's points, and a rubric for every manually graded cell.

The points are read here with nbgrader's own cell tests (`is_grade`, `is_solution`): an
autograded exercise is a graded cell that is not a solution (its test cell), a written
question a graded solution cell (graded by hand). The site computes its tables with its own
extension (docs/_ext/workbook_notebooks.py); these tests read the built pages back.
"""

import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import pytest
from nbgrader.utils import is_grade, is_solution, is_task

from grader.outputs.rubrics import TAG, is_rubric
from grader.outputs.worked_answers import check_plain
from tests.conftest import REPO
from tools.rubrics_page import rubrics_page
from tools.student_edition import EDITION

DOCS = REPO / "docs"
SOLUTIONS = REPO / "solutions"
# The numbered references to the lecture notes that the concordance must explain.
REFERENCE = re.compile(r"Key Equation \d+|Concept \d+|Notation \d+|Clarification \d+"
                       r"|\((?:9|11)\.\d+\)|Fig\. \d+\.\d+|[Ee]quation \(\d+\)")


# The site's pages: one per reader, then what an adopting course needs.
DOC_PAGES = ("index", "students", "tas", "rubrics", "instructors", "course-server",
             "development", "calendar", "concordance", "third-party", "licences")


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


def manually_graded(path: Path) -> dict[str, float]:
    """{grade id: points} of the cells of a solution notebook that a TA grades by hand:
    nbgrader's graded answer cells (written questions) and its tasks."""
    cells = nbformat.read(path, as_version=4).cells
    return {cell.metadata.nbgrader["grade_id"]: cell.metadata.nbgrader["points"]
            for cell in cells if (is_grade(cell) and is_solution(cell)) or is_task(cell)}


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
    for page in DOC_PAGES:
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


def stated_working_time(path: Path) -> str:
    """The "about ..." of the notebook intro's "Estimated working time", up to its bracket."""
    for cell in nbformat.read(path, as_version=4).cells[:3]:
        found = re.search(r"Estimated working time:\**\s*(about [^(\n]+?)\s*\(", cell.source)
        if found:
            return found.group(1)
    raise AssertionError(f"{path.name} states no working time in its intro")


@dataclass
class Rubric:
    """One rubric of docs/rubrics.md: its points, its parts' points, and its text."""

    points: float
    parts: list[float]
    text: str


RUBRIC = re.compile(r"^### .*\(`(\w+)`, (\d+(?:\.\d+)?) points?\)\s*$", flags=re.M)
PART = re.compile(r"^\*\*Part \d+ — .*\((\d+(?:\.\d+)?) points?\)\.\*\*\s*$", flags=re.M)
RUBRIC_PARTS = ("*Full credit", "*No credit", "**Common wrong answers.**")


def rubrics(text: str) -> dict[tuple[str, str], Rubric]:
    """{(notebook, grade id): its rubric} of the rubrics page: a "## <notebook>" section per
    notebook, a "### <title> (`grade id`, n points)" per question, "**Part k — ... (n
    points).**" per part."""
    found = {}
    for section in re.split(r"^## ", text, flags=re.M)[1:]:
        notebook = section.split(maxsplit=1)[0]
        headings = list(RUBRIC.finditer(section))
        for heading, following in zip(headings, headings[1:] + [None], strict=True):
            body = section[heading.end():following.start() if following else len(section)]
            parts = [float(points) for points in PART.findall(body)]
            found[notebook, heading.group(1)] = Rubric(float(heading.group(2)), parts, body)
    return found


def test_every_manually_graded_cell_has_a_rubric_with_its_points():
    graded = {(notebook, grade_id): points for notebook, path in solution_paths().items()
              for grade_id, points in manually_graded(path).items()}
    written = rubrics((DOCS / "rubrics.md").read_text())
    assert len(graded) >= 9
    assert graded.keys() == written.keys(), (
        f"graded by hand without a rubric: {sorted(graded.keys() - written.keys())}; "
        f"a rubric for no such cell: {sorted(written.keys() - graded.keys())}")
    for key, points in graded.items():
        rubric = written[key]
        assert rubric.points == points, f"{key}: the rubric says {rubric.points}, the cell {points}"
        assert rubric.parts and sum(rubric.parts) == points, (
            f"{key}: its parts give {rubric.parts}, the cell {points} points")
        for label in RUBRIC_PARTS:
            assert label in rubric.text, f"{key}: the rubric has no {label!r}"


def test_each_rubric_is_a_plain_cell_right_under_the_written_answer_it_names():
    for notebook, path in solution_paths().items():
        cells = nbformat.read(path, as_version=4).cells
        for index, cell in enumerate(cells):
            if not is_rubric(cell):
                continue
            check_plain(cell, TAG)
            heading = RUBRIC.match(cell.source)
            assert cell.cell_type == "markdown" and heading, (
                f"{notebook} cell {index}: a rubric is markdown opening with "
                f"'### <title> (`<grade id>`, <n> points)', not {cell.source[:60]!r}")
            above = cells[index - 1]
            assert above.metadata.get("nbgrader", {}).get("grade_id") == heading.group(1), (
                f"{notebook} cell {index}: the rubric of {heading.group(1)} follows "
                f"{above.source[:60]!r}")
            assert heading.group(1) in manually_graded(path)


def test_the_rubrics_page_is_what_the_notebooks_give():
    page = (DOCS / "rubrics.md").read_text()
    assert page == rubrics_page(page, list(solution_paths().values())), (
        "docs/rubrics.md differs from the notebooks' rubric cells: run `make rubrics-page`")


def test_no_rubric_reaches_what_students_receive():
    assert not any(entry.startswith("docs") for entry in EDITION)
    lines = {line.strip() for line in (DOCS / "rubrics.md").read_text().splitlines()
             if line.startswith("- *Full credit")}
    assert lines
    for notebook in (REPO / "notebooks").glob("*/*.ipynb"):
        text = notebook.read_text(encoding="utf-8")
        assert not [line for line in lines if line in text], notebook


def test_the_readme_table_gives_each_notebook_its_working_time():
    rows = markdown_table((REPO / "README.md").read_text(), "| notebook |")
    column = rows[0].index("working time")
    stated = {row[0]: row[column] for row in rows[1:]}
    released = {path.name for path in (REPO / "notebooks").iterdir() if path.is_dir()}
    missing = released - stated.keys()
    assert not missing, f"released notebooks without a row in the README's table: {missing}"
    for notebook, path in solution_paths().items():
        assert stated.get(notebook) == stated_working_time(path), (
            f"README says {stated.get(notebook)!r} for {notebook}; its intro says "
            f"{stated_working_time(path)!r}")


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

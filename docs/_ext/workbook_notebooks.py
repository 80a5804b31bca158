"""Facts about the workbook's notebooks, read from the solution notebooks as the site builds.

The calendar's working times and points tables come from ``solutions/*/*.ipynb`` themselves,
so they never drift from what students receive and what nbgrader grades:

* the title: the notebook's first heading, without its number ("01 · ");
* the working time: its intro's "Estimated working time: about ...";
* the points: nbgrader's cell metadata. An autograded exercise is a graded code cell
  (``grade`` and not ``solution``: its test cell); a written question is a graded answer
  cell (``grade`` and ``solution``, graded by hand). Each is named by the exercise or
  question heading above it, whose "(k points)" must say the metadata's points.

Two directives write them: ``{notebook-overview}`` (one row per notebook) and
``{notebook-facts} <id>`` (one notebook's working time and points table). The build warns
(so ``make docs`` fails) when a notebook has no ``{notebook-facts}`` on any page, has no
working time, or has a heading whose points disagree with its cells.
"""

import re
from dataclasses import dataclass
from pathlib import Path

from nbformat import read
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

WORKING_TIME = re.compile(r"Estimated working time:?\**:?\s*(about [^(\n*]+?)\s*(?:\(|\*|\.|$)",
                          flags=re.M)
TITLE = re.compile(r"^#\s+(?:\d+\s*·\s*)?(.+)$", flags=re.M)
# "### Exercise 5 — the update of a sentence (build, 4 points)", "### Written question (2 points)"
HEADING = re.compile(r"^#{2,4}\s+((?:Exercise|Written question).*?)\s*"
                     r"\((?:[^()]*,\s*)?(\d+) points?\)\s*$", flags=re.M)

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Graded:
    """One graded cell: the heading it answers, its grade id, kind and points."""

    heading: str
    grade_id: str
    written: bool
    points: float


@dataclass(frozen=True)
class Notebook:
    """What the site says about one solution notebook."""

    id: str
    path: Path
    title: str
    working_time: str | None
    graded: tuple[Graded, ...]
    mismatches: tuple[str, ...]

    def points(self, written: bool) -> float:
        return sum(cell.points for cell in self.graded if cell.written == written)


def read_notebook(path: Path) -> Notebook:
    """The facts of the solution notebook at ``path`` (solutions/<id>/<id>.ipynb)."""
    cells = read(path, as_version=4).cells
    intro = "\n".join(cell.source for cell in cells[:3] if cell.cell_type == "markdown")
    title = TITLE.search(intro)
    time = WORKING_TIME.search(intro)
    graded, mismatches, heading, stated = [], [], "", None
    for cell in cells:
        if cell.cell_type == "markdown":
            for found in HEADING.finditer(cell.source):
                heading, stated = found.group(1).rstrip(" —-"), int(found.group(2))
        meta = cell.metadata.get("nbgrader", {})
        if not meta.get("grade"):
            continue
        points = meta.get("points", 0)
        graded.append(Graded(heading, meta["grade_id"], bool(meta.get("solution")), points))
        if stated is not None and stated != points:
            mismatches.append(f"{meta['grade_id']}: its heading {heading!r} says {stated} "
                              f"points, its cell {points}")
    return Notebook(path.stem, path, title.group(1).strip() if title else path.stem,
                    time.group(1).strip() if time else None, tuple(graded), tuple(mismatches))


def solution_notebooks(solutions: Path) -> list[Notebook]:
    """Every notebook of the folder ``solutions`` (<id>/<id>.ipynb), in the order of their ids."""
    return [read_notebook(path) for path in sorted(Path(solutions).glob("*/*.ipynb"))
            if path.parent.name == path.stem]


def number(points: float) -> str:
    return f"{points:g}"


def overview_table(notebooks: list[Notebook]) -> str:
    """A MyST table: one row per notebook, with its working time and points."""
    rows = ["| week | notebook | working time | autograded | written | total |",
            "|---|---|---|---|---|---|"]
    for week, notebook in enumerate(notebooks, start=1):
        auto, written = notebook.points(False), notebook.points(True)
        rows.append(f"| {week} | [{notebook.id}](#{notebook.id}) {notebook.title} | "
                    f"{notebook.working_time or '?'} | {number(auto)} | {number(written)} | "
                    f"{number(auto + written)} |")
    return "\n".join(rows)


def points_table(notebook: Notebook) -> str:
    """A MyST table of the notebook's graded cells, then its totals."""
    rows = ["| exercise or question | grade id | graded | points |", "|---|---|---|---|"]
    for cell in notebook.graded:
        kind = "by the TA (written)" if cell.written else "automatically"
        rows.append(f"| {cell.heading or '?'} | `{cell.grade_id}` | {kind} | "
                    f"{number(cell.points)} |")
    auto, written = notebook.points(False), notebook.points(True)
    rows.append(f"| **total** | | {number(auto)} automatically + {number(written)} written | "
                f"**{number(auto + written)}** |")
    return (f"Working time: {notebook.working_time or 'not stated'}.\n\n" + "\n".join(rows))


class NotebookDirective(SphinxDirective):
    """Shared by the two directives: the notebooks, each noted as a dependency of the page
    (a changed notebook rebuilds it)."""

    def notebooks(self) -> list[Notebook]:
        found = solution_notebooks(self.config.workbook_solutions)
        for notebook in found:
            self.env.note_dependency(str(notebook.path))
        return found


class NotebookOverview(NotebookDirective):
    """``{notebook-overview}``: every notebook's week, title, working time and points."""

    def run(self):
        return self.parse_text_to_nodes(overview_table(self.notebooks()))


class NotebookFacts(NotebookDirective):
    """``{notebook-facts} <id>``: one notebook's working time and points table."""

    required_arguments = 1

    def run(self):
        wanted = self.arguments[0]
        notebook = next((nb for nb in self.notebooks() if nb.id == wanted), None)
        if notebook is None:
            logger.warning(f"notebook-facts: no solution notebook {wanted!r} in "
                           f"{self.config.workbook_solutions}",
                           location=self.get_location())
            return []
        documented = documented_notebooks(self.env)
        documented.setdefault(self.env.docname, set()).add(wanted)
        for problem in notebook.mismatches:
            logger.warning(f"{wanted}: {problem}", location=self.get_location())
        if notebook.working_time is None:
            logger.warning(f"{wanted}: its intro states no 'Estimated working time: about ...'",
                           location=self.get_location())
        return self.parse_text_to_nodes(points_table(notebook))


def documented_notebooks(env) -> dict[str, set[str]]:
    """{page: the notebook ids its ``{notebook-facts}`` show}, kept in the build environment."""
    if not hasattr(env, "workbook_documented"):
        env.workbook_documented = {}
    return env.workbook_documented


def forget_page(app: Sphinx, env, docname: str) -> None:
    """A page read again notes its notebooks again."""
    documented_notebooks(env).pop(docname, None)


def check_every_notebook_documented(app: Sphinx, env) -> None:
    documented = set().union(*documented_notebooks(env).values())
    for notebook in solution_notebooks(app.config.workbook_solutions):
        if notebook.id not in documented:
            logger.warning(f"solutions/{notebook.id}: no page has a {{notebook-facts}} "
                           f"{notebook.id} (the calendar lists every notebook)")


def setup(app: Sphinx) -> dict:
    # The solution notebooks' folder: conf.py names the repository's solutions/.
    app.add_config_value("workbook_solutions", "", "env", types=frozenset({str}))
    app.add_directive("notebook-overview", NotebookOverview)
    app.add_directive("notebook-facts", NotebookFacts)
    app.connect("env-purge-doc", forget_page)
    app.connect("env-check-consistency", check_every_notebook_documented)
    return {"version": "1", "parallel_read_safe": False, "parallel_write_safe": True}

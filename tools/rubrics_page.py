"""The docs' rubrics page from the solution notebooks' rubric cells: `python -m tools.rubrics_page`.

A rubric is written once, in the cell tagged ``rubric`` right under its written answer
(grader.outputs.rubrics), where Formgrader shows it to the TA who grades that answer.
``docs/rubrics.md`` keeps its own opening (who the page is for, how to grade at scale) down
to MARKER; below it, this tool writes each notebook's rubrics, a section per notebook, in
the notebooks' order. Run it after editing a rubric (`make rubrics-page`);
tests/notebooks/test_docs.py fails when the page is not what the notebooks give.
"""

from pathlib import Path

import nbformat

from grader.outputs.rubrics import is_rubric
from tools.slide_metadata import REPO, solution_notebooks

PAGE = REPO / "docs" / "rubrics.md"
MARKER = ("<!-- Below: the rubric cells of the solution notebooks, copied by "
          "`make rubrics-page`. Edit them there, not here. -->")


def opening(page: str) -> str:
    """The page's own text, down to and with MARKER."""
    if MARKER not in page:
        raise ValueError(f"the rubrics page: expected the line {MARKER!r}, found none")
    return page[:page.index(MARKER) + len(MARKER)]


def rubrics_page(page: str, notebooks: list[Path]) -> str:
    """``page`` with everything below MARKER replaced by the rubrics of ``notebooks``."""
    sections = []
    for path in notebooks:
        rubrics = [cell.source.strip() for cell in nbformat.read(path, as_version=4).cells
                   if is_rubric(cell)]
        if rubrics:
            sections.append("\n\n".join([f"## {path.stem}", *rubrics]))
    return f"{opening(page)}\n\n" + "\n\n".join(sections) + "\n"


def main() -> None:
    page = PAGE.read_text()
    wanted = rubrics_page(page, solution_notebooks())
    PAGE.write_text(wanted)
    print(f"{'unchanged' if page == wanted else 'updated'}: {PAGE}")


if __name__ == "__main__":
    main()

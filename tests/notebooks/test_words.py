"""Each release notebook teaches in at most ``MOST_WORDS`` words (design.md §5).

The words counted are what a student reads in the markdown cells of ``notebooks/``, the
release (no rubric, no worked answer), split at white space as a reader would count them:
a formula or a piece of code between spaces counts as words too, so a page cannot hide its
length in them.
"""

import nbformat
import pytest

from tests.conftest import ASSIGNMENTS, REPO

MOST_WORDS = 4500


def words_of(assignment: str) -> int:
    """The words of the markdown cells of ``assignment``'s release notebook."""
    release = nbformat.read(REPO / "notebooks" / assignment / f"{assignment}.ipynb", as_version=4)
    return sum(len(cell.source.split()) for cell in release.cells if cell.cell_type == "markdown")


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_each_notebook_teaches_in_at_most_4500_words(assignment):
    words = words_of(assignment)
    assert words <= MOST_WORDS, (
        f"{assignment} has {words} words in its markdown cells, over {MOST_WORDS}: cut what no "
        "printed number needs, and what another notebook or the students' docs already say")

"""Every figure the notebooks draw says what it shows, in the notebook and in its deck.

A figure's text alternative is its cell's "alt" metadata: nbconvert's classic template
(and so every feedback page) writes it as the image's alt, and so does the decks' template
(tools/slides_template). Without it nbconvert writes "No description has been provided
for this image", which is what a screen reader would read instead of the figure.
"""

from html.parser import HTMLParser

import nbformat
import pytest

from grader.outputs.worked_answers import is_worked_answer
from tests.conftest import REPO
from tools import slides

SOLUTIONS = sorted((REPO / "solutions").glob("*/*.ipynb"))
NAMES = [path.stem for path in SOLUTIONS]
FALLBACK = "No description has been provided for this image"
SHORTEST = 80  # characters: what is plotted, along which axes, and what it shows


def figure_cells(notebook) -> list:
    """The code cells whose outputs hold a picture."""
    return [cell for cell in notebook.cells if cell.cell_type == "code" and any(
        "image/png" in output.get("data", {}) for output in cell.get("outputs", []))]


class ImageAlts(HTMLParser):
    """The alt attribute of every <img> of a page (None where it has none)."""

    def __init__(self):
        super().__init__()
        self.alts: list[str | None] = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.alts.append(dict(attrs).get("alt"))


def image_alts(html: str) -> list[str | None]:
    parser = ImageAlts()
    parser.feed(html)
    return parser.alts


@pytest.mark.parametrize("path", SOLUTIONS, ids=NAMES)
def test_every_figure_cell_describes_its_figure(path):
    alts = [cell.metadata.get("alt") for cell in figure_cells(nbformat.read(path, as_version=4))]
    assert alts, "a notebook of this course draws figures"
    short = [alt for alt in alts if not isinstance(alt, str) or len(alt.strip()) < SHORTEST]
    assert not short, f"figure cells without a description of {SHORTEST}+ characters: {short}"
    assert len(set(alts)) == len(alts), "two figures share one description"


@pytest.mark.parametrize("path", SOLUTIONS, ids=NAMES)
def test_the_release_keeps_the_descriptions(path):
    released = nbformat.read(REPO / "notebooks" / path.parent.name / path.name, as_version=4)
    kept = {cell.id: cell.metadata.get("alt") for cell in released.cells}
    for cell in figure_cells(nbformat.read(path, as_version=4)):
        if not is_worked_answer(cell):  # the release leaves worked answers out
            assert kept.get(cell.id) == cell.metadata["alt"], f"run `make release` ({cell.id})"


@pytest.mark.parametrize("path", SOLUTIONS, ids=NAMES)
def test_a_deck_gives_every_figure_its_description(path, tmp_path):
    notebook = nbformat.read(path, as_version=4)
    alts = image_alts(slides.write_deck(path, tmp_path, assets_dir=tmp_path).read_text())
    assert sorted(alts, key=str) == sorted((c.metadata["alt"] for c in figure_cells(notebook)),
                                           key=str)
    assert FALLBACK not in alts


def test_the_deck_template_writes_an_outputs_alt_and_falls_back_without_one(tmp_path):
    """The oracle is nbconvert's classic template: an output's own alt first, then its
    cell's; with neither, nbconvert's fallback sentence."""
    notebook = nbformat.read(SOLUTIONS[0], as_version=4)
    first, second, *others = figure_cells(notebook)
    picture = next(out for out in first.outputs if "image/png" in out.get("data", {}))
    picture.metadata["image/png"] = {"alt": "the output's own text"}
    del second.metadata["alt"]
    changed = tmp_path / "changed.ipynb"
    nbformat.write(notebook, changed)
    alts = image_alts(slides.write_deck(changed, tmp_path, assets_dir=tmp_path).read_text())
    assert alts.count("the output's own text") == 1 and alts.count(FALLBACK) == 1
    assert len(alts) == 2 + len(others)

"""Slide metadata for the solution notebooks, from a few rules: `python -m tools.slide_metadata`.

Each cell's ``metadata.slideshow.slide_type`` tells nbconvert's reveal.js exporter
(`make slides`) and RISE (the live slideshow in JupyterLab) where a slide starts. The
first rule that fits a cell gives its type:

==========  ==========================================================================
skip        a rubric (a cell tagged ``rubric``, grader.outputs.rubrics): for the course
            staff, not the room; the rules below pass over it
slide       the title cell, and every section heading (a markdown cell opening with
            ``# `` or ``## ``): one slide per section, from left to right
fragment    an answer cell (nbgrader's solution cells): the question first, the answer
            and its test on the next click
subslide    a ``### `` heading
fragment    a markdown cell right after another markdown cell: the argument goes on
subslide    any other markdown cell: a step of the section (a paragraph with its code and
            pictures), from top to bottom
skip        the setup cell: the first code cell, when all it does is import and call
            SETUP_CALLS (run it before presenting: RISE hides it too)
fragment    a code cell right after a displayed formula: the formula, then what it computes
-           any other cell: it continues the slide, or the fragment, above it
==========  ==========================================================================

A cell of type ``-`` carries no slide type at all: that is what nbconvert and RISE read as
``-``, and the live slideshow of JupyterLab (jupyterlab-slideshow) hides a cell whose type
is the string "-".

HAND_TUNED then overrides single cells (by notebook and cell id) where a rule cannot see
how an argument unfolds. Only the slideshow metadata changes: sources, outputs and
nbgrader's metadata stay as they are. The tool is idempotent: rerun it after editing a
solution notebook (`make slide-metadata`), then regenerate the release (`make release`).
`--check` changes nothing and fails when a notebook's metadata is not what the rules give.
"""

import argparse
import ast
import sys
from pathlib import Path

import nbformat

from grader.outputs.rubrics import is_rubric

REPO = Path(__file__).resolve().parent.parent
SOLUTIONS = REPO / "solutions"

SLIDE_TYPES = ("slide", "subslide", "fragment", "skip", "notes", "-")
CONTINUES = "-"  # the type of a cell without slide metadata

# What the setup cell may call besides importing: the device, the seed, print options.
SETUP_CALLS = {"get_device", "set_seed", "set_printoptions", "print"}

# (notebook name, cell id) -> slide type, where the rules do not see the argument: a claim
# made in words (no displayed formula), then the cell that measures it, on the next click.
HAND_TUNED: dict[tuple[str, str], str] = {
    ("04_alpha3_by_hand", "cell-017"): "fragment",      # a_3 = sum of alpha_3j v_j, computed
    ("04_alpha3_by_hand", "cell-039"): "fragment",      # q·k has variance d_k, measured
    ("05_masked_attention", "cell-013"): "fragment",    # the same for n_Q, and the saturation
    ("06_transformer_blocks", "cell-009"): "fragment",  # without positions order is lost
    ("06_transformer_blocks", "cell-017"): "fragment",  # layer norm ignores the batch
}


def solution_notebooks(root: Path = SOLUTIONS) -> list[Path]:
    """The instructor's notebooks, ``<root>/<assignment>/<assignment>.ipynb``."""
    return sorted(p for p in root.glob("*/*.ipynb") if p.stem == p.parent.name)


def is_heading(cell, *levels: str) -> bool:
    """Whether a markdown cell opens with a heading of one of ``levels`` ("#", "##", ...)."""
    return cell.cell_type == "markdown" and cell.source.lstrip().startswith(
        tuple(level + " " for level in levels)
    )


def is_answer(cell) -> bool:
    """Whether nbgrader marks the cell as a student's answer (a solution cell)."""
    return bool(cell.metadata.get("nbgrader", {}).get("solution", False))


def only_sets_up(source: str) -> bool:
    """Whether code only imports and calls SETUP_CALLS (assigning their results or not)."""
    try:
        statements = ast.parse(source).body
    except SyntaxError:
        return False

    def is_setup_call(node) -> bool:
        if not isinstance(node, ast.Call):
            return False
        function = node.func
        name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
        return name in SETUP_CALLS

    return bool(statements) and all(
        isinstance(statement, ast.Import | ast.ImportFrom)
        or (isinstance(statement, ast.Expr | ast.Assign) and is_setup_call(statement.value))
        for statement in statements
    )


def shows_formula(cell) -> bool:
    """Whether a markdown cell holds a displayed formula ($$ ... $$ or an environment)."""
    return cell.cell_type == "markdown" and ("$$" in cell.source or "\\begin{" in cell.source)


def slide_types(nb) -> list[str]:
    """The slide type of every cell of ``nb``, by the rules of the module's docstring."""
    code_indices = [i for i, cell in enumerate(nb.cells) if cell.cell_type == "code"]
    setup_index = code_indices[0] if code_indices else None
    types = []
    previous = None  # the cell above, rubrics passed over (they are not on the slides)
    for index, cell in enumerate(nb.cells):
        if is_rubric(cell):
            types.append("skip")
            continue
        if index == 0 or is_heading(cell, "#", "##"):
            types.append("slide")
        elif is_answer(cell):
            types.append("fragment")
        elif is_heading(cell, "###"):
            types.append("subslide")
        elif cell.cell_type == "markdown":
            types.append("fragment" if previous.cell_type == "markdown" else "subslide")
        elif index == setup_index and only_sets_up(cell.source):
            types.append("skip")
        elif shows_formula(previous):
            types.append("fragment")
        else:
            types.append(CONTINUES)
        previous = cell
    return types


def tuned_slide_types(nb, name: str) -> list[str]:
    """The rules' slide types of notebook ``name``, with its HAND_TUNED cells applied."""
    return [
        HAND_TUNED.get((name, cell.get("id", "")), rule)
        for cell, rule in zip(nb.cells, slide_types(nb), strict=True)
    ]


def stored_slide_types(nb) -> list[str | None]:
    """The slide types the cells carry, as written (None where a cell has none)."""
    return [cell.metadata.get("slideshow", {}).get("slide_type") for cell in nb.cells]


def wanted_stored_slide_types(nb, name: str) -> list[str | None]:
    """The slide types the cells of notebook ``name`` should carry, as written."""
    return [None if t == CONTINUES else t for t in tuned_slide_types(nb, name)]


def set_slide_type(cell, slide_type: str | None) -> None:
    """Write ``slide_type`` into the cell's metadata, or remove it (None)."""
    if slide_type is not None:
        cell.metadata.setdefault("slideshow", {})["slide_type"] = slide_type
        return
    slideshow = cell.metadata.get("slideshow", {})
    slideshow.pop("slide_type", None)
    if not slideshow:
        cell.metadata.pop("slideshow", None)


def apply(path: Path) -> bool:
    """Write the slide types into the notebook at ``path``; True when it changed."""
    nb = nbformat.read(path, as_version=4)
    wanted = wanted_stored_slide_types(nb, path.stem)
    if stored_slide_types(nb) == wanted:
        return False
    for cell, slide_type in zip(nb.cells, wanted, strict=True):
        set_slide_type(cell, slide_type)
    nbformat.write(nb, path)
    return True


def is_current(path: Path) -> bool:
    """Whether the notebook at ``path`` carries the slide types the rules give."""
    nb = nbformat.read(path, as_version=4)
    return stored_slide_types(nb) == wanted_stored_slide_types(nb, path.stem)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebooks to mark (default: every solution notebook)")
    parser.add_argument("--check", action="store_true",
                        help="change nothing; fail if a notebook's slide metadata is stale")
    args = parser.parse_args(argv)
    paths = args.notebooks or solution_notebooks()
    if args.check:
        stale = [path for path in paths if not is_current(path)]
        for path in stale:
            print(f"stale slide metadata: {path} (run `make slide-metadata`)")
        return 1 if stale else 0
    for path in paths:
        print(f"{'updated' if apply(path) else 'unchanged'}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

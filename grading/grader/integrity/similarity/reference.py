"""Answers pasted from the course's own code: a student's code compared with the references.

The references are the code a student could paste instead of writing it:

* every function of the installed ``course_utils``, its checks included (methods and nested
  functions too, each on its own, read with ``ast``), named as it is imported
  (``course_utils.checks.bpe._merged_by_library``, ``course_utils.checks.skipgram._context``), its
  docstring left out: a pasted function matches its code whatever became of its docstring;
* the instructor's answer of the very cell (``solution of merge_chunk``), from solutions/.

They are fingerprinted as the class's answers are (:mod:`.fingerprint`: the syntax tree
normalised, docstrings and statements that do nothing left out; comments, layout and names
set aside, the release's own code removed as copydetect's boilerplate),
once per assignment (:func:`references`). An answer and a reference are alike by how much
of the one is found in the other: the larger of copydetect's two shares, so that a pasted
function padded with code of one's own, and a formula pasted out of a longer helper, both
match. A side with fewer than ``MIN_SIZE`` characters of fingerprinted text is not judged
by its own share: a one-line reference (``return scores.softmax(dim=-1)``) is what every
right answer writes, and a one-line answer is found in many a helper. Such short pastes are
not named.

The similarity step (:mod:`.matches`) names every match in similarity.csv and the report;
``make autograde`` flags the cells that match a function of ``course_utils``
(:func:`flags`), the code every student has installed: the answer cells, and the code cells
the student added or edited (:mod:`.student_code`), each named by its answer cell. (The
solutions are not in the students' edition; a pasted solution is named by the similarity
step.)
"""

import ast
import copy
import importlib.util
import json
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import nbformat
from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions

from grader.cells import is_answer, marks
from grader.integrity.similarity.fingerprint import CODE, NOISE, Answer, answer, boilerplate, share
from grader.integrity.similarity.student_code import student_code

PACKAGE = "course_utils"
MIN_SIZE = 50  # characters of fingerprinted text a side needs for its share to count
THRESHOLD = 0.75  # independent right answers reach 0.34 of course_utils, 0.46 of a solution (TAs)
SOLUTION = "solution of "


@dataclass(frozen=True)
class Pasted:
    """An answer cell found alike a reference of the course."""

    cell: str  # the answer cell's grade_id
    source: str  # the reference's name: course_utils.checks.bpe._merged_by_library, solution of …
    similarity: float
    answer: Answer
    reference: Answer
    place: str = ""  # where, if not the answer cell: "merge_pair (cell #12, added after it)"

    def flag(self) -> str:
        return (f"cell {self.place or self.cell} matches {self.source} "
                f"(similarity {self.similarity:.2f})")


@dataclass(frozen=True)
class References:
    """An assignment's references, fingerprinted with its release's code as boilerplate."""

    functions: dict[str, Answer]  # course_utils.<module>.<function>: its fingerprint
    solutions: dict[str, Answer]  # answer cell grade_id: the instructor's answer
    given: object  # the release's code fingerprints (similarity_fingerprint.boilerplate)
    released: dict[str, str]  # answer cell grade_id: its source in the release
    holding: dict[int, list[str]]  # a fingerprint hash: the functions that have it


def _without_docstring(node, lines: list[str]) -> str:
    """The source of function ``node`` (decorators included), its docstring's lines cut."""
    start = (node.decorator_list[0] if node.decorator_list else node).lineno - 1
    first = node.body[0]
    if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)):
        kept = lines[start:first.lineno - 1] + lines[first.end_lineno:node.end_lineno]
    else:
        kept = lines[start:node.end_lineno]
    return "".join(kept)


def _functions_of(tree, lines: list[str], prefix: str):
    """(qualified name, source) of every function in ``tree``, nested and methods too."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield f"{prefix}.{child.name}", _without_docstring(child, lines)
            yield from _functions_of(child, lines, f"{prefix}.{child.name}")
        elif isinstance(child, ast.ClassDef):
            yield from _functions_of(child, lines, f"{prefix}.{child.name}")


@lru_cache(maxsize=1)
def course_functions() -> dict[str, str]:
    """{course_utils.<module>.<function>: its source without docstring}, read from the files
    of the installed package (nothing is imported)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"{PACKAGE} is not installed: run make .venv")
    root = Path(spec.submodule_search_locations[0])
    functions = {}
    for path in sorted(root.rglob("*.py")):
        module = ".".join((PACKAGE, *path.relative_to(root).with_suffix("").parts))
        text = path.read_text(encoding="utf-8")
        functions.update(_functions_of(ast.parse(text), text.splitlines(keepends=True),
                                       module.removesuffix(".__init__")))
    return functions


def references(source: nbformat.NotebookNode) -> References:
    """The references of the assignment whose instructor notebook is ``source``: computed
    once per run and assignment (cached on the source's code cells)."""
    cells = [{"source": cell.source, "metadata": {"nbgrader": marks(cell)}}
             for cell in source.cells if cell.cell_type == CODE]
    return _references(json.dumps(cells, sort_keys=True))


@lru_cache(maxsize=8)
def _references(cells: str) -> References:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(**cell)
                                               for cell in json.loads(cells)])
    release, _ = ClearSolutions().preprocess(copy.deepcopy(notebook), {})
    release, _ = ClearHiddenTests().preprocess(release, {})
    given = boilerplate([cell.source for cell in release.cells], CODE)
    released = {grade_id: cell.source for grade_id, cell in _answer_cells(release)}
    functions = {name: answer(code, CODE, "", given)
                 for name, code in course_functions().items()}
    solutions = {grade_id: answer(cell.source, CODE, released[grade_id], given)
                 for grade_id, cell in _answer_cells(notebook)}
    holding = {}
    for name, function in functions.items():
        for value in function.fingerprint.hash_idx:
            holding.setdefault(value, []).append(name)
    return References(functions, solutions, given, released, holding)


def _answer_cells(notebook):
    """(grade_id, cell) of the code answer cells of ``notebook``."""
    for cell in notebook.cells:
        if cell.cell_type == CODE and is_answer(cell):
            yield marks(cell).get("grade_id", ""), cell


def alike(answer_: Answer, reference: Answer) -> float:
    """How much of the one is found in the other (copydetect's shares), each side judged
    only when it has ``MIN_SIZE`` characters of fingerprinted text."""
    shares = [share(reference, answer_) if _sized(reference) else 0.0,
              share(answer_, reference) if _sized(answer_) else 0.0]
    return max(shares)


def _sized(fingerprinted: Answer) -> bool:
    return fingerprinted.fingerprint.token_coverage >= MIN_SIZE


def _bound(answer_: Answer, reference: Answer, shared: set) -> float:
    """An upper bound on :func:`alike` from the hashes the two share: a share counts at most
    NOISE characters for each place of a shared hash (grader.integrity.similarity.fingerprint's
    candidates() bounds the class's pairs the same way)."""
    def most(side: Answer) -> float:
        places = sum(len(side.fingerprint.hash_idx[h]) for h in shared)
        return NOISE * places / side.fingerprint.token_coverage if _sized(side) else 0.0
    return max(most(answer_), most(reference))


def pasted(cell: str, text: str, refs: References, threshold: float,
           solution: bool = True) -> list[Pasted]:
    """The references that answer ``text`` of code cell ``cell`` reaches ``threshold`` with,
    most alike first; the instructor's answer of the cell too, if ``solution``."""
    if cell not in refs.released:
        raise ValueError(f"{cell!r} is not a code answer cell of this assignment; "
                         f"expected one of {sorted(refs.released)}")
    mine = answer(text, CODE, refs.released[cell], refs.given)
    hashes = set(mine.fingerprint.hash_idx)
    candidates = {name: refs.functions[name]
                  for value in hashes for name in refs.holding.get(value, ())}
    if solution and cell in refs.solutions:
        candidates[SOLUTION + cell] = refs.solutions[cell]
    found = []
    for name, reference in candidates.items():
        shared = hashes.intersection(reference.fingerprint.hash_idx)
        if not shared or _bound(mine, reference, shared) < threshold:
            continue
        similarity = alike(mine, reference)
        if similarity >= threshold:
            found.append(Pasted(cell, name, similarity, mine, reference))
    return sorted(found, key=lambda p: (-p.similarity, p.source))


def flags(source: nbformat.NotebookNode, notebook: nbformat.NotebookNode,
          threshold: float = THRESHOLD) -> list[str]:
    """"cell merge_pair matches course_utils.checks.bpe._merged_by_library (similarity 0.89)" for
    each code cell of a submitted ``notebook`` that runs as the student left it (an answer cell,
    or one the student added or edited, :mod:`.student_code`) alike a function of
    course_utils. An added or edited cell is named by the answer cell it is read with:
    "cell merge_pair (cell #12, added after it) matches ..."."""
    refs = references(source)
    found = []
    for cell in student_code(source, notebook):
        if cell.grade_id in refs.released:
            found += [replace(match, place=cell.place).flag() for match in
                      pasted(cell.grade_id, cell.source, refs, threshold, solution=False)]
    return found

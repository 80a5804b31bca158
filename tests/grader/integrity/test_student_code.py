"""Every cell a student's code runs from is compared with the course's own code: the answer
cells, the cells the student added, and the instructor's cells the student edited.

Hand-built on 03_bpe's release (the answers of the solution typed in, as in
test_similarity.py): ``course_utils.checks.bpe._merged_by_library`` retyped with other names into a
cell of its own (added after the answer that calls it, or at the top of the notebook's first
code cell), and an honest helper in an added cell that is another algorithm.
"""

import nbformat
import pytest

from grader.course import Course
from grader.intake.submissions import Submission
from grader.integrity.flags import flags
from grader.integrity.similarity import matches as similarity
from grader.integrity.similarity import reference
from grader.integrity.similarity.student_code import ADDED, ANSWER, EDITED, student_code
from grader.integrity.tamper import read_scan_context
from tests.conftest import REPO
from tests.grader.integrity.test_similarity import make_class
from tests.support.nbgrader_cells import by_grade_id
from tests.support.nbgrader_course import solution_cells

A03 = "03_bpe"
# the merge_pair answer cell's place in 03's release, from 1
MERGE_PAIR_AT = 1 + by_grade_id(nbformat.read(REPO / "notebooks" / A03 / f"{A03}.ipynb",
                                              as_version=4), "merge_pair")
MERGED = "course_utils.checks.bpe._merged_by_library"

# course_utils.checks.bpe's _merged_by_library, every name changed
HELPER = '''
def fuse_all(corpus, bigram):
    code = {}
    for symbol in (*bigram, *(symbol for symbols in corpus for symbol in symbols)):
        code.setdefault(symbol, chr(0xE000 + len(code)))
    back = {c: symbol for symbol, c in code.items()}
    left, right = bigram
    back[code[left] + code[right]] = left + right
    rule = [(code[left], code[right])]
    out = {}
    for symbols, n in corpus.items():
        cut = split("".join(code[symbol] for symbol in symbols), rule)
        joined = tuple(back[piece] for piece in cut)
        out[joined] = out.get(joined, 0) + n
    return out
'''
CALLS_THE_HELPER = '''def merge_pair(corpus, pair):
    return fuse_all(corpus, pair)
'''
# another algorithm: the word as a string with the tokens apart, the pair replaced in it
HONEST_HELPER = '''
SEP = "\\u241f"


def rejoin(word, pair):
    text = SEP + SEP.join(word) + SEP
    text = text.replace(SEP + pair[0] + SEP + pair[1] + SEP, SEP + pair[0] + pair[1] + SEP)
    text = text.replace(SEP + pair[0] + SEP + pair[1] + SEP, SEP + pair[0] + pair[1] + SEP)
    return tuple(piece for piece in text.split(SEP) if piece)


def fuse_all(corpus, pair):
    totals = {}
    for word in corpus:
        key = rejoin(word, pair)
        totals[key] = totals.get(key, 0) + corpus[word]
    return totals
'''


def handed_in(answers: dict[str, str], added: dict[str, str] | None = None,
              first_cell: str = "") -> nbformat.NotebookNode:
    """03's release with the solution's answers and ``answers`` typed in, a new code cell
    after each answer cell ``added`` names, ``first_cell`` put at the top of the first code
    cell (the instructor's)."""
    notebook = nbformat.read(REPO / "notebooks" / A03 / f"{A03}.ipynb", as_version=4)
    typed = {**solution_cells(A03), **answers}
    cells = []
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in typed:
            cell.source = typed[grade_id]
        cells.append(cell)
        if grade_id in (added or {}):
            cells.append(nbformat.v4.new_code_cell(added[grade_id]))
    if first_cell:
        first = next(cell for cell in cells if cell.cell_type == "code")
        first.source = first_cell + "\n" + first.source
    notebook.cells = cells
    return notebook


@pytest.fixture(scope="module")
def source():
    return nbformat.read(REPO / "solutions" / A03 / f"{A03}.ipynb", as_version=4)


def flags_of(source, notebook) -> list[str]:
    return flags(source, read_scan_context(source), Submission("dee", A03, notebook=notebook))


def test_the_cells_that_run_as_the_student_left_them(source):
    """Answer cells, an added cell (read with the answer before it), the instructor's first
    cell edited (read with the first answer, after it); a test cell rewritten is left out
    (nbgrader restores it), and so are the instructor's cells as they were."""
    notebook = handed_in({}, {"merge_pair": HELPER}, first_cell="x = 1")
    test = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade"))
    test.source = "pass"
    found = [(cell.how, cell.grade_id, cell.number, cell.place)
             for cell in student_code(source, notebook) if cell.how != ANSWER]
    assert found == [
        (EDITED, "count_pairs", 2, "count_pairs (cell #2, edited before it)"),
        (ADDED, "merge_pair", MERGE_PAIR_AT + 1,
         f"merge_pair (cell #{MERGE_PAIR_AT + 1}, added after it)")]
    answers = [cell.grade_id for cell in student_code(source, notebook) if cell.how == ANSWER]
    assert answers == ["count_pairs", "merge_counterexample", "merge_pair", "owner_by_hand",
                       "train_bytes", "abc_by_hand", "merge_chunk", "encode"]
    assert not [c for c in student_code(source, handed_in({})) if c.how != ANSWER]


def test_a_paste_into_an_added_cell_is_flagged_there(source):
    notebook = handed_in({"merge_pair": CALLS_THE_HELPER}, {"merge_pair": HELPER})
    found = [flag for flag in flags_of(source, notebook) if MERGED in flag]
    assert [flag.split(" (similarity")[0] for flag in found] == [
        f"cell merge_pair (cell #{MERGE_PAIR_AT + 1}, added after it) matches {MERGED}"]
    assert float(found[0].split("similarity ")[1].rstrip(")")) >= reference.THRESHOLD


def test_a_paste_into_an_edited_instructor_cell_is_flagged_there(source):
    notebook = handed_in({"merge_pair": CALLS_THE_HELPER}, first_cell=HELPER)
    found = [flag for flag in flags_of(source, notebook) if MERGED in flag]
    assert [flag.split(" (similarity")[0] for flag in found] == [
        f"cell count_pairs (cell #2, edited before it) matches {MERGED}"]


def test_an_honest_helper_in_an_added_cell_is_not_flagged(source):
    notebook = handed_in({"merge_pair": CALLS_THE_HELPER}, {"merge_pair": HONEST_HELPER})
    assert flags_of(source, notebook) == []


def submit_notebook(course: Course, student: str, notebook) -> None:
    folder = course.folder("submitted", student, A03)
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, folder / f"{A03}.ipynb")


def test_the_similarity_step_reads_the_added_cells_with_their_answer(tmp_path):
    """The paste is named beside merge_pair, the added cell shown under the answer; two
    students who hand in the same added cell match there; the honest helper matches no
    one."""
    course = make_class(tmp_path, [A03])
    submit_notebook(course, "dee", handed_in({"merge_pair": CALLS_THE_HELPER},
                                             {"merge_pair": HELPER}))
    renamed = HELPER.replace("symbols", "parts").replace("out", "done")
    submit_notebook(course, "eve", handed_in({"merge_pair": CALLS_THE_HELPER},
                                             {"merge_pair": renamed}))
    submit_notebook(course, "fay", handed_in({"merge_pair": CALLS_THE_HELPER},
                                             {"merge_pair": HONEST_HELPER}))
    found = similarity.similar_answers(course, workers=1)
    named = {(m.student_a, m.cell, m.student_b) for m in found if m.reference}
    assert {("dee", "merge_pair", MERGED), ("eve", "merge_pair", MERGED)} <= named
    assert not [m for m in found if "fay" in (m.student_a, m.student_b)
                and m.cell == "merge_pair"]
    pair = next(m for m in found if not m.reference and m.cell == "merge_pair")
    assert (pair.student_a, pair.student_b) == ("dee", "eve")
    assert f"# cell #{MERGE_PAIR_AT + 1}, added after merge_pair\n" in pair.text_a
    marked = "".join(pair.text_a[start:end] for start, end in pair.spans_a)
    assert "back[code[left] + code[right]] = left + right" in marked

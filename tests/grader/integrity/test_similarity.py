"""Similar answers: disguised copies are found at the right cells, honest answers are not.

The class is generated without kernels: the committed release of each notebook with answers
typed into its cells (similarity needs no grading). Two students, ada and bea, hand in the
same answers with renamed variables, re-ordered helper functions, other comments and other
line breaks; their answer of one exercise (02's sgd_step) is cai's. The honest students are
the solutions and the CORRECT and WRONG cases of tests/grading_cases.

The oracle of "independently written" is the standard library's: difflib's ratio of two
answers' token strings (tokenize, comments and docstrings dropped). Several WRONG cases are
one template or the solution with one mistake put in (the ratio is then 0.84 and more):
those are one text, and a detector must see them as such.
"""

import csv
import difflib
import io
import itertools
import re
import shutil
import tokenize

import nbformat
import pytest
from copydetect import compare_files

from grader.__main__ import main
from grader.course import Course
from grader.intake.submissions import Submission
from grader.integrity.flags import flags
from grader.integrity.similarity import matches as similarity
from grader.integrity.similarity import reference
from grader.integrity.similarity.baseline import load
from grader.integrity.similarity.fingerprint import answer, candidates, compare
from grader.integrity.tamper import read_scan_context
from grader.outputs.report import render_report
from tests.conftest import REPO
from tests.grading_cases import all_cases
from tests.support.nbgrader_course import solution_cells, submit
from tools.similarity_baseline import DERIVED, course_answers, measure

A02, A04 = "02_skipgram", "04_alpha3_by_hand"
ONE_TEXT = 0.8  # difflib's ratio from which two answers are one text edited

# --- the copying students --------------------------------------------------------------------

ADA = {
    "causal_attention": '''
def future_mask(n, device):
    # True above the diagonal: the keys a query must not see
    return torch.ones(n, n, dtype=torch.bool, device=device).triu(diagonal=1)


def attention_weights(queries, keys):
    scaled = queries @ keys.T / math.sqrt(queries.shape[-1])
    hidden = future_mask(len(queries), queries.device)
    return torch.softmax(scaled.masked_fill(hidden, float("-inf")), dim=-1)


def causal_attention(X, W_Q, W_K, W_V):
    queries, keys, values = X @ W_Q, X @ W_K, X @ W_V
    weights = attention_weights(queries, keys)
    return weights @ values, weights
''',
    "alpha_3_by_hand": "alpha_3_by_hand = [0.21, 0.05, 0.74]   # three decimals\n",
    "written_diagonal": "Row 1 keeps only its own key, so its weight is 1. A mask written j >= i "
                        "would hide the diagonal too, and the first row would have no key left: "
                        "its softmax divides zero by zero.",
}
BEA = {  # ada's answers: names changed, the helpers in the other order, other comments,
         # the same numbers written otherwise
    "causal_attention": '''
def causal_attention(X, W_Q, W_K, W_V):
    """Masked self-attention."""
    q_all, k_all, v_all = X @ W_Q, X @ W_K, X @ W_V   # projections
    alpha = softmax_weights(q_all, k_all)
    return alpha @ v_all, alpha


def softmax_weights(qs, ks):
    s = qs @ ks.T / math.sqrt(qs.shape[-1])   # scaled scores
    blocked = upper_mask(len(qs), qs.device)
    return torch.softmax(s.masked_fill(blocked, float("-inf")), dim=-1)


def upper_mask(size, where):
    return torch.ones(size, size, dtype=torch.bool, device=where).triu(diagonal=1)
''',
    "alpha_3_by_hand": "# worked on paper\nalpha_3_by_hand = [0.210, 0.05, .74]",
    "written_diagonal": "Row 1 keeps only its own key,  so its weight is 1.\nA mask written "
                        "j >= i would hide the diagonal too, and the first row would have no "
                        "key left:\nits softmax divides zero by zero.",
}
CAI_SGD_STEP = '''
def sgd_step(W, ids, t, c, lr):
    window = [p for p in range(max(0, t - c), min(len(ids), t + c + 1)) if p != t]
    center = W[ids[t]]
    probabilities = torch.softmax(W @ center, dim=0)
    loss = -torch.log(probabilities[ids[window]]).sum()
    counts = torch.zeros(W.shape[0], dtype=W.dtype)
    for p in window:
        counts[ids[p]] += 1
    delta = len(window) * probabilities - counts
    gradient = torch.outer(delta, center)
    gradient[ids[t]] = gradient[ids[t]] + delta @ W
    return loss, gradient, W - lr * gradient
'''
BEA_SGD_STEP = '''
def sgd_step(W, ids, t, c, lr):
    # the window around t, t itself left out
    near = [q for q in range(max(0, t - c), min(len(ids), t + c + 1)) if q != t]
    v = W[ids[t]]
    p_all = torch.softmax(W @ v, dim=0)
    L = -torch.log(p_all[ids[near]]).sum()
    n = torch.zeros(W.shape[0], dtype=W.dtype)
    for q in near:
        n[ids[q]] += 1
    err = len(near) * p_all - n
    g = torch.outer(err, v)
    g[ids[t]] = g[ids[t]] + err @ W
    return L, g, W - lr * g
'''
COPIED = {("ada", "bea"): [(A04, "causal_attention"), (A04, "alpha_3_by_hand"),
                           (A04, "written_diagonal"), (A02, "sgd_step")],
          ("ada", "cai"): [(A02, "sgd_step")], ("bea", "cai"): [(A02, "sgd_step")]}


def make_class(root, assignments) -> Course:
    """A course in ``root`` over ``assignments``, their committed release as its release (the
    release test keeps it equal to nbgrader's), with no submission yet."""
    (root / "grading").mkdir(parents=True)
    (root / "grading" / "nbgrader_config.py").symlink_to(REPO / "grading" / "nbgrader_config.py")
    for folder in ("solutions", "notebooks"):
        (root / folder).mkdir()
        for assignment in assignments:
            (root / folder / assignment).symlink_to(REPO / folder / assignment)
    return Course(root / "grading")


def honest_students(assignment: str) -> dict[str, dict[str, str]]:
    cases = all_cases()[assignment]
    return {"solution": solution_cells(assignment), **cases.CORRECT, **cases.WRONG}


def tokens(code: str) -> str:
    """``code``'s tokens without comments, layout and docstrings (a string alone on its line:
    the release gives every student the same ones, kept or not), by the standard library's
    tokenizer."""
    layout = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
              tokenize.DEDENT, tokenize.ENDMARKER}
    found = [t for t in tokenize.generate_tokens(io.StringIO(code).readline)
             if t.type not in {tokenize.COMMENT, tokenize.NL}]
    def docstring(n: int) -> bool:
        return (found[n].type == tokenize.STRING and found[n + 1].type == tokenize.NEWLINE
                and (n == 0 or found[n - 1].type in layout))
    return " ".join(token.string for n, token in enumerate(found)
                    if token.type not in layout and not docstring(n))


def one_text(a: str, b: str) -> bool:
    return difflib.SequenceMatcher(None, tokens(a), tokens(b), autojunk=False).ratio() >= ONE_TEXT


@pytest.fixture(scope="module")
def copying_class(tmp_path_factory) -> Course:
    course = make_class(tmp_path_factory.mktemp("similarity"), [A02, A04])
    for assignment in (A02, A04):
        for student, answers in honest_students(assignment).items():
            submit(course, assignment, student, answers)
    submit(course, A04, "ada", ADA)
    submit(course, A04, "bea", BEA)
    submit(course, A02, "ada", {"sgd_step": CAI_SGD_STEP.replace("    center =",
                                                                 "    # the center word\n"
                                                                 "    center =")})
    submit(course, A02, "bea", {"sgd_step": BEA_SGD_STEP})
    submit(course, A02, "cai", {"sgd_step": CAI_SGD_STEP})
    submit(course, A02, "blank", {})
    submit(course, A02, "also_blank", {"window_pairs": "def window_pairs(words, c):\n    pass"})
    submit(course, A02, "blank_too", {"window_pairs": "def window_pairs(words, c):\n    pass"})
    return course


@pytest.fixture(scope="module")
def matches(copying_class) -> list[similarity.Match]:
    return similarity.similar_answers(copying_class)


def test_copies_are_found_at_the_right_cells(matches):
    copiers = {"ada", "bea", "cai"}
    found = {}
    for m in matches:
        if {m.student_a, m.student_b} & copiers and not m.reference:
            found.setdefault((m.student_a, m.student_b), []).append((m.assignment, m.cell))
    assert {pair: sorted(cells) for pair, cells in found.items()} == {
        pair: sorted(cells) for pair, cells in COPIED.items()}


def test_a_copied_value_matches_exactly_and_its_own_lines_are_shown(matches):
    value = next(m for m in matches if m.cell == "alpha_3_by_hand" and m.student_a == "ada")
    assert value.similarity == 1.0 and not value.note
    for text, spans in ((value.text_a, value.spans_a), (value.text_b, value.spans_b)):
        assert [text[start:end] for start, end in spans] == [
            line for line in text.splitlines() if line.startswith("alpha_3_by_hand = [0.21")]
    assert value.text_a != value.text_b


def test_the_matching_parts_are_the_copied_code(matches):
    """Every highlighted part is code of both answers (names aside), never the release's."""
    pair = next(m for m in matches if m.cell == "causal_attention" and m.student_a == "ada")
    marked = "".join(pair.text_a[start:end] for start, end in pair.spans_a)
    assert "triu(diagonal=1)" in marked and "masked_fill" in marked
    assert '"""' not in marked, "the release's docstring is not a match"
    assert sum(end - start for start, end in pair.spans_b) > 0.6 * len(tokens(pair.text_b))
    for text, spans in ((pair.text_a, pair.spans_a), (pair.text_b, pair.spans_b)):
        cuts = [text[i - 1:i + 1] for span in spans for i in span if 0 < i < len(text)]
        assert not [cut for cut in cuts if re.fullmatch(r"\w\w", cut)], "a part ends in a word"


def test_blank_and_empty_answers_match_no_one(matches):
    blanks = {"blank", "also_blank", "blank_too"}
    assert not [m for m in matches if {m.student_a, m.student_b} & blanks]


@pytest.fixture(scope="module")
def honest_class(tmp_path_factory) -> list[similarity.Match]:
    """The matches of the honest students of every notebook."""
    assignments = sorted(all_cases())
    course = make_class(tmp_path_factory.mktemp("honest"), assignments)
    for assignment in assignments:
        for student, answers in honest_students(assignment).items():
            submit(course, assignment, student, answers)
    return similarity.similar_answers(course)


def test_independent_answers_are_below_the_threshold(honest_class):
    """Every pair the detector finds among the honest students of every notebook is one text
    edited (the oracle above); none is found among the independent right answers."""
    assignments = sorted(all_cases())
    found = [m for m in honest_class if not m.reference]
    honest = {assignment: honest_students(assignment) for assignment in assignments}
    for m in found:
        texts = honest[m.assignment]
        assert one_text(texts[m.student_a][m.cell], texts[m.student_b][m.cell]), m.row()
    correct = {student for a in assignments for student in all_cases()[a].CORRECT}
    independent = {"solution", *correct} - {DERIVED}
    assert not [m.row() for m in found if {m.student_a, m.student_b} <= independent]
    assert found, "the WRONG cases made from one template are one text edited"


def test_the_committed_baseline_is_measured_from_the_cases():
    """On the cells it has (a cell added since has none yet, and no note), within 0.05."""
    course = Course(REPO / "grading")
    measured = measure(course, course_answers())
    committed = load()
    assert measured.keys() == committed.keys()
    for assignment, cells in measured.items():
        common = cells.keys() & committed[assignment].keys()
        assert len(common) >= len(cells) / 2, f"{assignment}: python -m tools.similarity_baseline"
        for cell in common:
            value = cells[cell]
            assert value == pytest.approx(committed[assignment][cell], abs=0.05), (
                f"{assignment}/{cell}: measured {value}, committed "
                f"{committed[assignment][cell]}: run python -m tools.similarity_baseline")
    assert max(v for cells in measured.values() for v in cells.values()) < similarity.THRESHOLD


def test_a_cell_most_of_the_class_answers_alike_is_marked_and_ranked_last(tmp_path):
    course = make_class(tmp_path, [A04])
    natural = "scores_3_by_hand = [-0.5, -2.0, 1.0]"
    for n in range(similarity.CLASS_MIN):
        submit(course, A04, f"student{n:02d}", {"scores_3_by_hand": natural})
    submit(course, A04, "ada", ADA)
    submit(course, A04, "bea", BEA)
    found = similarity.similar_answers(course)
    marked = [m for m in found if m.cell == "scores_3_by_hand"]
    assert len(marked) == similarity.CLASS_MIN * (similarity.CLASS_MIN - 1) // 2
    assert all(m.note.startswith("one natural answer?") for m in marked)
    assert [m.student_a + m.student_b for m in found[:3]] == ["adabea"] * 3
    assert found[3:] == marked


def test_the_csv_and_the_command(copying_class, matches, monkeypatch):
    monkeypatch.setenv("SIMILARITY", "0.9")
    assert main(["similarity", "--course-root", str(copying_class.root)]) == 0
    with open(copying_class.root / "similarity.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0]) == similarity.CSV_COLUMNS
    # the course's own code is named at the flags' threshold when SIMILARITY is higher
    expected = [m for m in matches if m.reference or m.similarity >= 0.9]
    assert [(r["cell"], r["student_a"], r["student_b"]) for r in rows] == [
        (m.cell, m.student_a, m.student_b) for m in expected]
    # then unmarked cells before marked ones ("one natural answer?"), each most similar first
    pairs = [(bool(r["note"]), -float(r["similarity"])) for r in rows
             if r["note"] != similarity.REFERENCE_NOTE]
    assert pairs == sorted(pairs) and max(minus for _, minus in pairs) <= -0.9


@pytest.mark.parametrize("value", ["1.5", "0", "most", ""])
def test_a_threshold_outside_0_1_is_refused(value):
    with pytest.raises(ValueError, match=r"SIMILARITY must be a number in \(0, 1\], got"):
        similarity.check_threshold(value)


def test_the_report_shows_the_pairs_side_by_side(matches):
    page = render_report([], [], matches)
    section = page[page.index('<section id="similarity">'):]
    value = next(m for m in matches if m.cell == "alpha_3_by_hand")
    assert section.count("<mark>alpha_3_by_hand = [0.21, 0.05, 0.74]") == 1
    assert section.count("<mark>alpha_3_by_hand = [0.210, 0.05, .74]</mark>") == 1
    assert f"{value.student_a}" in section and "<th scope=\"col\">" in section
    assert "&gt;=" in section, "answers are escaped"


def honest_cells():
    """(assignment, cell, [Answer of each honest student who answers it]) of three notebooks."""
    course = Course(REPO / "grading")
    for assignment in (A02, "03_bpe", A04):
        release = similarity.read_release(course, assignment)
        students = list(honest_students(assignment).values())
        for cell, (kind, released) in release.cells.items():
            yield assignment, cell, [answer(s[cell], kind, released, release.given[kind])
                                     for s in students if cell in s]


def test_the_similarity_is_copydetects():
    """compare(): the smaller of copydetect's two shares (compare_files), or 1 for the same
    own tokens."""
    for assignment, cell, answers in honest_cells():
        for a, b in itertools.combinations(answers, 2):
            _, shares, _ = compare_files(a.fingerprint, b.fingerprint)
            expected = 1.0 if a.own and a.own == b.own else min(shares)
            assert compare(a, b) == pytest.approx(expected, abs=1e-12), (assignment, cell)


@pytest.mark.parametrize("threshold", [0.2, 0.5, similarity.THRESHOLD])
def test_the_pairs_the_bound_leaves_out_cannot_reach_the_threshold(threshold):
    """candidates() against comparing every pair: nothing reaching ``threshold`` is missed."""
    left_out = 0
    for assignment, cell, answers in honest_cells():
        everyone = set(itertools.combinations(range(len(answers)), 2))
        reaching = {(i, j) for i, j in everyone if compare(answers[i], answers[j]) >= threshold}
        kept = set(candidates(answers, threshold))
        assert reaching <= kept, (assignment, cell)
        left_out += len(everyone - kept)
    assert left_out > 0, "the bound left no pair out"


def test_a_submission_that_is_not_a_notebook_is_named_and_the_others_compared(tmp_path, capsys):
    course = make_class(tmp_path, [A04])
    submit(course, A04, "ada", ADA)
    submit(course, A04, "bea", BEA)
    broken = course.folder("submitted", "cy", A04)
    broken.mkdir(parents=True)
    (broken / f"{A04}.ipynb").write_text("{not json")
    found = similarity.similar_answers(course)
    assert {(m.student_a, m.student_b) for m in found} == {("ada", "bea")}
    error = capsys.readouterr().err
    assert f"similarity: not compared, cy/{A04}: the notebook is not JSON" in error


# --- answers pasted from the course's own code -----------------------------------------------

A03 = "03_bpe"
MARGIN = 0.25  # how far below the threshold independent right answers stay (README, TAs)
# ... and from the instructor's answer of the cell (the similarity step's alone): 03's
# own_steps_for_the_learner writes the solution's first lines, 0.55 once docstrings are set
# aside (0.56 before, for a student who kept the release's docstring)
SOLUTION_MARGIN = 0.15
PASTED = {  # the CHEAT cases that paste the course's code (renamed, re-commented, re-ordered)
    (A03, "merge_pair"): ("pasted_from_course_utils", "course_utils.checks.bpe._merged_by_library"),
}


def instructor_notebook(assignment: str):
    return nbformat.read(REPO / "solutions" / assignment / f"{assignment}.ipynb", as_version=4)


# 02's sgd_step pasted from the instructor's answer (names changed, comments of its own): the
# similarity step names it beside its source; course_utils holds no version of it to flag
PASTED_SOLUTION = """
def sgd_step(W, ids, t, c, lr):
    near = [t + o for o in range(-c, c + 1) if o != 0 and 0 <= t + o < len(ids)]
    centre, seen = ids[t], ids[near]
    v_centre = W[centre]
    log_probs = torch.log_softmax(W @ v_centre, dim=0)    # every word's log-probability
    loss = -log_probs[seen].sum()
    counts = torch.bincount(seen, minlength=W.shape[0]).to(W.dtype)
    diff = len(near) * log_probs.exp() - counts
    g = diff[:, None] * v_centre[None, :]                 # the rows as outputs
    g[centre] += diff @ W                                 # and the centre's own row
    return loss, g, W - lr * g
"""


def pasted_code(assignment: str, cell: str) -> str:
    case, _ = PASTED[assignment, cell]
    return all_cases()[assignment].CHEAT[case][cell].code


def handed_in(assignment: str, answers: dict[str, str]):
    """The release of ``assignment`` with the solution's answers, and ``answers`` over them."""
    notebook = nbformat.read(REPO / "notebooks" / assignment / f"{assignment}.ipynb",
                             as_version=4)
    typed = {**solution_cells(assignment), **answers}
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in typed:
            cell.source = typed[grade_id]
    return notebook


@pytest.mark.parametrize(("assignment", "cell"), sorted(PASTED))
def test_a_pasted_reference_is_named_with_its_source(assignment, cell):
    references = reference.references(instructor_notebook(assignment))
    found = reference.pasted(cell, pasted_code(assignment, cell), references,
                                        reference.THRESHOLD)
    assert [match.source for match in found] == [PASTED[assignment, cell][1]]


def test_autograde_flags_a_pasted_reference_beside_its_cell():
    """Among the flags of ``make autograde``; the solution's answers in the other cells (the
    instructor's, who also wrote course_utils) are not flagged."""
    source = instructor_notebook(A03)
    notebook = handed_in(A03, {"merge_pair": pasted_code(A03, "merge_pair")})
    found = flags(source, read_scan_context(source), Submission("dee", A03, notebook=notebook))
    assert len(found) == 1, found
    flag = re.fullmatch(r"cell merge_pair matches course_utils\.checks\.bpe\._merged_by_library "
                        r"\(similarity (0\.\d\d|1\.00)\)", found[0])
    assert flag and float(flag[1]) >= reference.THRESHOLD, found
    solution = handed_in(A03, {})
    assert flags(source, read_scan_context(source), Submission("s", A03, notebook=solution)) == []


def test_independent_answers_name_no_reference(honest_class):
    """No CORRECT case comes within MARGIN of the threshold of a function of course_utils
    (the flags), nor within SOLUTION_MARGIN of the instructor's answer; the solution student
    is named only as the instructor's answer of each cell, which it is."""
    for assignment, cases in sorted(all_cases().items()):
        references = reference.references(instructor_notebook(assignment))
        for student, answers in cases.CORRECT.items():
            if student == DERIVED:
                continue
            for cell, code in answers.items():
                if cell in references.released:
                    near = reference.pasted(cell, code, references,
                                            reference.THRESHOLD - MARGIN, solution=False)
                    near += reference.pasted(cell, code, references,
                                             reference.THRESHOLD - SOLUTION_MARGIN)
                    assert not near, (assignment, student, [(m.source, m.similarity)
                                                           for m in near])
    named = {(m.assignment, m.student_a, m.cell, m.student_b)
             for m in honest_class if m.reference and m.student_a == "solution"}
    assert named and all(source == f"solution of {cell}" for _, _, cell, source in named)


def test_the_similarity_step_names_a_pasted_reference_side_by_side(copying_class, tmp_path):
    submit(copying_class, A02, "dee", {"sgd_step": PASTED_SOLUTION})
    try:
        found = similarity.similar_answers(copying_class, [A02])
    finally:
        shutil.rmtree(copying_class.folder("submitted", "dee", A02).parent)
    source = "solution of sgd_step"
    match = next(m for m in found if m.student_a == "dee")
    assert (match.cell, match.student_b, match.reference) == ("sgd_step", source, True)
    assert found[0].reference, "the course's own answers are ranked first"
    similarity.write_csv(found, tmp_path / "similarity.csv")
    with open(tmp_path / "similarity.csv", newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["student_a"] == "dee"]
    # first the instructor's answer; then the students who hand in that answer too
    assert [(r["cell"], r["student_b"], r["note"]) for r in rows][0] == (
        "sgd_step", source, similarity.REFERENCE_NOTE)
    page = render_report([], [], found)
    shown = page[page.index(f'<th scope="col">{source}</th>'):]
    assert "<mark>" in shown[:shown.index("</table>")]
    assert "torch.bincount" in shown[:shown.index("</table>")]

"""grader.integrity.own_numbers: by-hand numbers worked for another id are flagged with both
ids, and by-hand answers that reach the course's code are flagged; honest answers are not."""

import nbformat
import pytest

from course_utils.by_hand import sentence_of
from grader.intake.submissions import Submission
from grader.integrity.own_numbers import assigned_numbers, flags, recorded_ids
from tests.grading_cases.alpha3_by_hand import BY_HAND, by_hand_answers, written

ASSIGNMENT = "04_alpha3_by_hand"


ID_CELL = 'from course_utils import student\n\n# student.use_id("<your id>")\nstudent.show_id()'


def submission(student: str, answers: dict[str, str], printed: str = "",
               id_cell: str = ID_CELL) -> Submission:
    """``student``'s notebook: the id cell, a cell that printed ``printed``, then the
    answer cells."""
    shown = nbformat.v4.new_code_cell("print(yours)", outputs=[
        nbformat.v4.new_output("stream", name="stdout", text=printed)])
    marks = {"solution": True, "grade": False, "locked": False}
    cells = [nbformat.v4.new_code_cell(id_cell), shown] + [nbformat.v4.new_code_cell(
        code, metadata={"nbgrader": {"grade_id": grade_id, **marks}})
        for grade_id, code in answers.items()]
    return Submission(student, ASSIGNMENT, notebook=nbformat.v4.new_notebook(cells=cells))


def numbers_of(student: str | None) -> dict[str, str]:
    return written(by_hand_answers(sentence_of(student)), *BY_HAND)


def test_numbers_worked_for_another_printed_id_are_flagged_with_both_ids():
    found = flags(submission("ada", numbers_of("Ada"), printed=str(sentence_of("Ada"))))
    assert found == [f"cell {grade_id}: numbers worked for id Ada, submitted as ada"
                     for grade_id in BY_HAND]


def test_the_demonstrations_numbers_are_flagged_as_worked_for_no_id():
    found = flags(submission("ada", numbers_of(None), printed=str(sentence_of(None))))
    assert found == [f"cell {grade_id}: numbers worked for no id (the demonstration's), "
                     "submitted as ada" for grade_id in BY_HAND]


def sets_id(student: str) -> str:
    """The id cell as a student edits it: the call uncommented, their id written in."""
    return ID_CELL.replace('# student.use_id("<your id>")', f'student.use_id("{student}")')


def test_the_grader_reads_the_id_the_notebook_sets():
    notebook = submission("ada", {}, id_cell=sets_id("Ada") + "\nuse_id('x')\nuse_id(name)"
                          ).notebook
    assert recorded_ids(notebook) == ["Ada", "x"]
    assert recorded_ids(submission("ada", {}).notebook) == []  # the call left commented out


def test_numbers_worked_for_the_id_the_notebook_sets_are_flagged_with_both_ids():
    """No printout needed: the id cell is the record of whose numbers they are."""
    found = flags(submission("ada", numbers_of("Ada"), id_cell=sets_id("Ada")))
    assert found == ["the notebook sets id Ada (student.use_id), submitted as ada"] + [
        f"cell {grade_id}: numbers worked for id Ada, submitted as ada" for grade_id in BY_HAND]


def test_a_student_who_sets_their_own_id_in_the_notebook_is_not_flagged():
    assert flags(submission("ada", numbers_of("ada"), id_cell=sets_id("ada"))) == []
    assert flags(submission("ada", numbers_of("ada"), "Student id: ada\n",
                            id_cell=sets_id(" ada "))) == []


@pytest.mark.parametrize("answers, printed", [
    (numbers_of("ada"), "Student id: ada\n"),  # her own numbers
    (numbers_of("ada"), "Student id: bob\n"),  # her own numbers, whatever was printed
    (numbers_of("bob"), "Student id: carol\n"),  # bob's numbers: the printout is carol's
    (numbers_of("bob"), ""),  # no record of whose they are: nothing proved
    (written({grade_id: [0.5] * len(numbers) for grade_id, numbers in  # wrong arithmetic
              by_hand_answers(sentence_of("bob")).items()}, *BY_HAND), "Student id: bob\n"),
])
def test_nothing_is_flagged_unless_the_numbers_prove_another_id(answers, printed):
    assert flags(submission("ada", answers, printed)) == []


def test_numbers_are_read_as_written_in_lists_tuples_and_arrays():
    assert assigned_numbers("x", "x = [1, 2.5]\ny = 3") == [1, 2.5]
    assert assigned_numbers("x", "import numpy as np\nx = np.array((0.1, -2))") == [0.1, -2]
    assert assigned_numbers("x", "x = [..., 1]\nx = (3, 4)") == [3, 4]  # the last one
    for computed in ("x = [a, 2]", "x = f()", "y = [1, 2]", "x = [1, 2", "x = 3"):
        assert assigned_numbers("x", computed) is None, computed
    theirs = by_hand_answers(sentence_of("Ada"))["a_3_by_hand"]
    code = f"import numpy as np\na_3_by_hand = np.array({theirs}, dtype=np.float32)"
    assert flags(submission("ada", {"a_3_by_hand": code}, "Student id: Ada\n")) == [
        "cell a_3_by_hand: numbers worked for id Ada, submitted as ada"]


REACHING = {
    "from course_utils.checks.by_hand import _alpha\nalpha_3_by_hand = _alpha(yours).tolist()": [1],
    "alpha_3_by_hand = checks.by_hand._alpha(yours)": [1],
    "import course_utils.checks.by_hand as b\nalpha_3_by_hand = b._alpha(yours)": [1],
    "m = __import__('course_utils.checks', fromlist=['x'])\n"
    "alpha_3_by_hand = getattr(m.by_hand, '_al' + 'pha')(yours)": [2],
    # the grader's own code, which works the numbers out (no kernel can import it)
    "from grader.scoring.by_hand_answers import answer\n"
    "alpha_3_by_hand = answer('alpha_3_by_hand', 'ada')": [1],
    "import grader.scoring.by_hand_answers\nalpha_3_by_hand = 1": [1],
}
HONEST = (
    "alpha_3_by_hand = [0.2, 0.1, 0.7]",
    "import math\ne = [math.exp(s) for s in scores_3_by_hand]\n"
    "alpha_3_by_hand = [round(x / sum(e), 3) for x in e]",
    "alpha_3_by_hand = [round(sum(q * k for q, k in zip(yours.q_3, key)) / 2, 2) "
    "for key in yours.keys]",
    "alpha_3_by_hand = getattr(yours, 'q_3')",
)


@pytest.mark.parametrize("code, lines", REACHING.items())
def test_a_by_hand_answer_that_reaches_the_courses_code_is_flagged(code, lines):
    found = flags(submission("ada", {"alpha_3_by_hand": code}))
    assert [flag.split(":")[0] for flag in found] == [
        f"cell alpha_3_by_hand line {line}" for line in lines]
    assert all("reaches the course's code that computes its numbers" in f for f in found)


@pytest.mark.parametrize("code", HONEST)
def test_honest_by_hand_answers_are_not_flagged(code):
    assert flags(submission("ada", {"alpha_3_by_hand": code})) == []

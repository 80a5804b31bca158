"""The grading cases cover every exercise: checked in `make test`, before the class round trip
(`make test-grading`, tests/notebooks/test_grading.py) grades them."""

from tests.grading_cases import all_cases
from tests.support.nbgrader_course import autograded_answers


def test_every_answer_cell_has_a_wrong_and_a_correct_alternative_case(assignments):
    cases = all_cases()
    assert set(assignments) <= set(cases)
    for assignment in assignments:
        module = cases[assignment]
        students = [*module.WRONG, *module.CORRECT, *module.CHEAT]
        assert len(students) == len(set(students)), f"{assignment}: a student in two kinds"
        assert module.CHEAT, f"{assignment} has no CHEAT case"
        for kind, students in (("wrong", module.WRONG), ("correct", module.CORRECT)):
            covered = {grade_id for answers in students.values() for grade_id in answers}
            missing = autograded_answers(assignment) - covered
            assert not missing, f"{assignment}: no {kind} case for {sorted(missing)}"

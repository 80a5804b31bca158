"""A number worked by hand and copied from the classmate whose sentence it belongs to is named
in the similarity report (the grading gives it 0: tests/grading_cases/alpha3_by_hand.py's
``copies_the_numbers_of_solution``). Each student's own numbers match no one's."""

from course_utils.by_hand import sentence_of
from grader.integrity.similarity import matches
from tests.grader.integrity.test_similarity import A04, make_class
from tests.grading_cases.alpha3_by_hand import BY_HAND, by_hand_answers, written
from tests.support.nbgrader_course import submit

CLASS = ("dee", "eve", "fay", "gus")


def test_a_copied_by_hand_number_is_named_and_own_numbers_are_not(tmp_path):
    course = make_class(tmp_path, [A04])
    own = {student: written(by_hand_answers(sentence_of(student)), *BY_HAND)
           for student in CLASS}
    for student in ("dee", "eve", "gus"):
        submit(course, A04, student, own[student])
    # fay's own scores and a_3, and dee's α₃ with a comment of her own
    submit(course, A04, "fay", {**own["fay"], "alpha_3_by_hand":
                                "# from my notes\n" + own["dee"]["alpha_3_by_hand"]})
    found = {(m.cell, m.student_a, m.student_b) for m in matches.similar_answers(course)}
    assert found == {("alpha_3_by_hand", "dee", "fay")}

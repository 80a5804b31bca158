"""Measure how alike independently written right answers are, cell by cell, and write
grading/grader/integrity/similarity/baseline.json (:mod:`grader.integrity.similarity.baseline`).

Measured on the course's own independent answers: the solution and the ``CORRECT`` cases of
tests/grading_cases (each a right answer written another way; not ``works_in_place``, the
solution changed), every pair of them on each answer cell, with the similarity the class is
compared with (grader.integrity.similarity.fingerprint). Run again after editing a
notebook's answers or the cases, from the repository root:
``.venv/bin/python -m tools.similarity_baseline`` (tests/grader/integrity/test_similarity.py
checks the committed file).
"""

import json
from itertools import combinations

from grader.course import COURSE_ROOT, Course
from grader.integrity.similarity import baseline
from grader.integrity.similarity.fingerprint import answer, compare
from grader.integrity.similarity.matches import read_release
from tests.grading_cases import all_cases
from tests.support.nbgrader_course import solution_cells

DERIVED = "works_in_place"  # CORRECT cases that are the solution changed, not independent


def highest(texts: list[str], kind: str, released: str, given) -> float:
    """The highest similarity of two of ``texts``, answers of one cell (0 for fewer than 2)."""
    answers = [answer(text, kind, released, given) for text in texts]
    return max((compare(a, b) for a, b in combinations(answers, 2)), default=0.0)


def measure(course, independent: dict[str, list[dict[str, str]]]) -> dict[str, dict[str, float]]:
    """{assignment: {cell: highest similarity}} of ``independent`` ({assignment: a list of
    {answer cell: code}, one per independent student}) against ``course``'s releases; cells
    that fewer than two of them answer are left out."""
    measured = {}
    for assignment, students in sorted(independent.items()):
        release = read_release(course, assignment)
        measured[assignment] = {}
        for cell, (kind, released) in release.cells.items():
            texts = [answers[cell] for answers in students if cell in answers]
            if len(texts) >= 2:
                value = highest(texts, kind, released, release.given[kind])
                measured[assignment][cell] = round(value, 2)
    return measured


def course_answers() -> dict[str, list[dict[str, str]]]:
    """The solution and the CORRECT cases of each assignment (run from the repository root),
    but ``works_in_place``: those are the solution with an in-place update added, written
    to test the grading, not independently (they reach 0.79 with the solution)."""
    return {assignment: [solution_cells(assignment),
                         *(answers for student, answers in cases.CORRECT.items()
                           if student != DERIVED)]
            for assignment, cases in all_cases().items()}


def main() -> None:
    measured = measure(Course(COURSE_ROOT), course_answers())
    text = json.dumps(measured, indent=1, sort_keys=True) + "\n"
    baseline.PATH.write_text(text, encoding="utf-8")
    print(f"wrote {baseline.PATH}")


if __name__ == "__main__":
    main()

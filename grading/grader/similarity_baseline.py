"""How alike independently written right answers are, cell by cell.

Measured on the course's own independent answers: the solution and the ``CORRECT`` cases of
tests/grading_cases (each a right answer written another way; not ``works_in_place``, the
solution changed), every pair of them on each
answer cell, with the similarity the class is compared with (grader.similarity_fingerprint).
The highest value of each cell is kept in similarity_baseline.json beside this file; a cell
whose independent answers reach grader.similarity.NATURAL has one natural answer, and its
matches are marked and ranked lower.

Measure again after editing a notebook's answers or the cases, from the repository root:
``python -m grader.similarity_baseline`` (tests/grader/test_similarity.py checks the file).
"""

import json
from functools import lru_cache
from itertools import combinations
from pathlib import Path

from grader.similarity_fingerprint import answer, compare

PATH = Path(__file__).with_name("similarity_baseline.json")
DERIVED = "works_in_place"  # CORRECT cases that are the solution changed, not independent


@lru_cache(maxsize=1)
def load() -> dict[str, dict[str, float]]:
    """{assignment: {answer cell: the highest similarity of independent right answers}}."""
    if not PATH.exists():
        return {}
    return json.loads(PATH.read_text(encoding="utf-8"))


def highest(texts: list[str], kind: str, released: str, given) -> float:
    """The highest similarity of two of ``texts``, answers of one cell (0 for fewer than 2)."""
    answers = [answer(text, kind, released, given) for text in texts]
    return max((compare(a, b) for a, b in combinations(answers, 2)), default=0.0)


def measure(course, independent: dict[str, list[dict[str, str]]]) -> dict[str, dict[str, float]]:
    """{assignment: {cell: highest similarity}} of ``independent`` ({assignment: a list of
    {answer cell: code}, one per independent student}) against ``course``'s releases; cells
    that fewer than two of them answer are left out."""
    from grader.similarity import read_release

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
    from tests.grading_cases import all_cases
    from tests.nbgrader_course import solution_cells

    return {assignment: [solution_cells(assignment),
                         *(answers for student, answers in cases.CORRECT.items()
                           if student != DERIVED)]
            for assignment, cases in all_cases().items()}


def main() -> None:
    from grader.__main__ import COURSE_ROOT
    from grader.course import Course

    measured = measure(Course(COURSE_ROOT), course_answers())
    PATH.write_text(json.dumps(measured, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {PATH}")


if __name__ == "__main__":
    main()

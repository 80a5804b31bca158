"""Similar answers in a class: per assignment and per answer cell, every pair of submissions.

``similar_answers(course)`` reads each submission of grading/submitted/ (as the grader
does, grader.intake.submissions), takes the answer cells of the release (nbgrader's solution
cells, code and written, by ``grade_id``; a code answer with the cells the student added or
edited after it, :mod:`.student_code`) and compares every pair of students on each
(grader.integrity.similarity.fingerprint: copydetect's winnowing, the release excluded, short value
answers compared exactly). A pair whose similarity reaches the threshold (``SIMILARITY``,
0.8 by default) is a :class:`Match`: a reason for a TA to look, not a verdict.

Some cells have one natural answer, which independent students write alike. Two measures
say so, and such a cell's matches are marked and ranked after the others:

* how similar independently written right answers are on the cell (:mod:`.baseline`,
  measured on the solutions and the CORRECT cases of tests/grading_cases), when that reaches
  ``NATURAL``;
* in the class itself, when at least ``CLASS_SHARE`` of a cell's (at least ``CLASS_MIN``)
  answers match another one: copying is rarely that common, a natural answer is.

Every code answer is also compared with the course's own code (:mod:`.reference`:
the functions of course_utils and its checks, and the instructor's answer of the cell): a
match is a :class:`Match` whose ``student_b`` is the source
(``course_utils.checks.bpe._merged_by_library``, ``solution of merge_pair``), ranked before
the pairs of students.

``write_csv(matches, path)`` writes grading/similarity.csv, one row per match, references
first, then unmarked cells, most similar first.
"""

import csv
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import nbformat

from grader.cells import is_answer, marks
from grader.course import Course
from grader.intake.submissions import inspect
from grader.integrity.similarity import baseline, reference
from grader.integrity.similarity.fingerprint import (
    CODE,
    MARKDOWN,
    Answer,
    answer,
    boilerplate,
    candidates,
    compare,
    matching_spans,
)
from grader.integrity.similarity.student_code import by_answer
from grader.running.machine import default_workers

THRESHOLD = 0.8
NATURAL = 0.5
CLASS_SHARE = 0.25
CLASS_MIN = 20
CSV_COLUMNS = ("assignment", "cell", "student_a", "student_b", "similarity", "note")
REFERENCE_NOTE = "student_b is the course's own code"


@dataclass(frozen=True)
class Match:
    """Two students' answers of one cell that are alike, or a student's answer and the
    course's own code (``reference``: student_b is then the code's name)."""

    assignment: str
    cell: str  # the answer cell's grade_id
    student_a: str
    student_b: str
    similarity: float
    note: str  # why the cell may have one natural answer; "" when nothing says so
    answer_a: Answer = field(repr=False, compare=False)
    answer_b: Answer = field(repr=False, compare=False)
    reference: bool = False

    @property
    def text_a(self) -> str:
        """Student a's answer as compared (a written one with whitespace collapsed)."""
        return self.answer_a.shown

    @property
    def text_b(self) -> str:
        return self.answer_b.shown

    @cached_property
    def spans(self) -> tuple[list, list]:
        """The matching parts of text_a and text_b, (start, end) offsets (computed when
        first asked for: the report shows a few pairs, the CSV needs none)."""
        return matching_spans(self.answer_a, self.answer_b)

    @property
    def spans_a(self) -> list[tuple[int, int]]:
        return self.spans[0]

    @property
    def spans_b(self) -> list[tuple[int, int]]:
        return self.spans[1]

    def row(self) -> list:
        return [self.assignment, self.cell, self.student_a, self.student_b,
                f"{self.similarity:.2f}", self.note]


@dataclass(frozen=True)
class Release:
    """The answer cells of an assignment's release, and what it gives every student."""

    cells: dict[str, tuple[str, str]]  # grade_id: (CODE or MARKDOWN, the released source)
    given: dict[str, object]  # CODE / MARKDOWN: the fingerprints of the release's cells


def check_threshold(value) -> float:
    """``value`` as a similarity threshold in (0, 1], or a ValueError saying so."""
    try:
        threshold = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"SIMILARITY must be a number in (0, 1], got {value!r}") from None
    if not 0 < threshold <= 1:
        raise ValueError(f"SIMILARITY must be a number in (0, 1], got {value!r}")
    return threshold


def answer_cells(notebook) -> dict[str, tuple[str, str]]:
    """{grade_id: (kind, source)} of the answer cells (nbgrader's solution cells)."""
    cells = {}
    for cell in notebook.cells:
        if is_answer(cell) and cell.get("cell_type") in (CODE, MARKDOWN):
            cells[marks(cell).get("grade_id", "")] = (cell["cell_type"], cell.get("source", ""))
    return cells


def read_release(course: Course, assignment: str) -> Release:
    """The answer cells of ``assignment``'s release, and the fingerprints of all its cells."""
    path = course.notebook("release", ".", assignment)
    if not path.exists():
        raise FileNotFoundError(f"no release of {assignment} at {path}: run `make release`")
    notebook = nbformat.read(path, as_version=4)
    given = {kind: boilerplate([c.source for c in notebook.cells if c.cell_type == kind], kind)
             for kind in (CODE, MARKDOWN)}
    return Release(answer_cells(notebook), given)


def source_notebook(course: Course, assignment: str) -> nbformat.NotebookNode:
    """The instructor's notebook of ``assignment`` (the source)."""
    return nbformat.read(course.source / assignment / f"{assignment}.ipynb", as_version=4)


def class_answers(course: Course, assignment: str) -> tuple[dict[str, dict], list[str]]:
    """({student: {grade_id: source}}, the reasons of the submissions that could not be read).

    A code answer's source is followed by the code cells the student added or edited that
    are read with it (:func:`.student_code.by_answer`)."""
    answers, unread = {}, []
    source = source_notebook(course, assignment)
    for student in course.submissions(assignment):
        submission = inspect(course, student, assignment)
        if submission.problem:
            unread.append(f"{submission.name}: {submission.problem}")
            continue
        answers[student] = {grade_id: text for grade_id, (_, text)
                            in answer_cells(submission.notebook).items()}
        answers[student].update(by_answer(source, submission.notebook))
    return answers, unread


def cell_matches(texts: dict[str, str], kind: str, released: str, given,
                 threshold: float) -> list[tuple[str, str, float, Answer, Answer]]:
    """Every pair of ``texts`` ({student: answer}) of one cell reaching ``threshold``:
    (student_a, student_b, similarity, answer a, answer b). Alike texts (blank answers,
    often) are fingerprinted once."""
    students = sorted(texts)
    prepared = {text: answer(text, kind, released, given) for text in set(texts.values())}
    answers = [prepared[texts[student]] for student in students]
    found = []
    for i, j in candidates(answers, threshold):
        similarity = compare(answers[i], answers[j])
        if similarity >= threshold:
            found.append((students[i], students[j], similarity, answers[i], answers[j]))
    return found


def _class_note(found: list, answered: int) -> str:
    matched = {student for pair in found for student in pair[:2]}
    if answered >= CLASS_MIN and len(matched) >= CLASS_SHARE * answered:
        return f"one natural answer? {len(matched)} of {answered} answers match another"
    return ""


def _baseline_note(baseline: float | None) -> str:
    if baseline is not None and baseline >= NATURAL:
        return f"one natural answer: independent right answers reach {baseline:.2f}"
    return ""


def assignment_matches(course: Course, assignment: str, threshold: float) -> list[Match]:
    """The matches of one assignment (see :func:`similar_answers`)."""
    answers, unread = class_answers(course, assignment)
    for reason in unread:
        print(f"similarity: not compared, {reason}", file=sys.stderr)
    matches = reference_matches(course, assignment, answers, threshold)
    if len(answers) < 2:
        return matches
    release = read_release(course, assignment)
    baselines = baseline.load().get(assignment, {})
    for grade_id, (kind, released) in release.cells.items():
        texts = {student: cells[grade_id] for student, cells in answers.items()
                 if grade_id in cells}
        found = cell_matches(texts, kind, released, release.given[kind], threshold)
        note = "; ".join(filter(None, [_baseline_note(baselines.get(grade_id)),
                                       _class_note(found, len(texts))]))
        matches += [Match(assignment, grade_id, *pair[:3], note, *pair[3:]) for pair in found]
    return matches


def reference_matches(course: Course, assignment: str, answers: dict[str, dict],
                       threshold: float) -> list[Match]:
    """Each student's code answers alike the course's own code (:mod:`.reference`),
    at ``threshold`` or at the threshold of autograde's flags, whichever is lower: the
    report names at least what the flags name."""
    threshold = min(threshold, reference.THRESHOLD)
    references = reference.references(source_notebook(course, assignment))
    found = {}  # (cell, text): its matches, for alike texts (blank answers, often) once
    matches = []
    for student, cells in sorted(answers.items()):
        for cell, text in cells.items():
            if cell not in references.released:
                continue
            if (cell, text) not in found:
                found[cell, text] = reference.pasted(cell, text, references, threshold)
            matches += [Match(assignment, cell, student, pasted.source, pasted.similarity,
                              REFERENCE_NOTE, pasted.answer, pasted.reference, reference=True)
                        for pasted in found[cell, text]]
    return matches


def ranked(matches: list[Match]) -> list[Match]:
    """The course's own code first, then unmarked cells, then the most similar first (then
    by name, for a stable order)."""
    return sorted(matches, key=lambda m: (not m.reference, bool(m.note), -m.similarity,
                                          m.assignment, m.cell, m.student_a, m.student_b))


def _matches_at(root: Path, assignment: str, threshold: float) -> list[Match]:
    """:func:`assignment_matches` in a worker process (a Course is rebuilt from its root)."""
    return assignment_matches(Course(root), assignment, threshold)


def similar_answers(course: Course, assignments: list[str] | None = None,
                    threshold: float = THRESHOLD, workers: int = 0) -> list[Match]:
    """Every pair of submissions, per assignment and answer cell, whose answers reach
    ``threshold``, ranked (:func:`ranked`). The assignments are compared side by side in
    ``workers`` processes (default: one per core; 1: in this one)."""
    threshold = check_threshold(threshold)
    assignments = assignments or course.assignments()
    workers = min(workers or default_workers(), len(assignments))
    if workers <= 1:
        found = [assignment_matches(course, a, threshold) for a in assignments]
    else:
        with ProcessPoolExecutor(workers) as pool:
            found = list(pool.map(_matches_at, [course.root] * len(assignments), assignments,
                                  [threshold] * len(assignments)))
    return ranked([match for matches in found for match in matches])


def write_csv(matches: list[Match], path: Path) -> Path:
    """grading/similarity.csv: the columns CSV_COLUMNS, one row per match, in order."""
    path = Path(path)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_COLUMNS)
        writer.writerows(match.row() for match in matches)
    return path

"""The class report's numbers, from the grade rows and the results of the test cells:
how many submissions have each status, the scores as fractions, each exercise's pass rate
and its most frequent diagnoses. The cells are checked on the way in (:func:`check_cells`),
so that a bad one is named, not a wrong figure drawn; a :class:`GradeRow` is checked when it
is made, and :func:`check_rows` makes sure the rows are ones.
"""

from collections import Counter, defaultdict
from collections.abc import Mapping

from grader.outputs.report.diagnosis import diagnosis
from grader.scoring.grades import GradeRow
from grader.state import Status

CELL_KEYS = ("student_id", "assignment", "cell", "score", "max_score", "message")
STATUSES = (Status.GRADED, Status.NEEDS_MANUAL_GRADING, Status.NOT_GRADED, Status.MISSING)


def _number(value, what: str) -> float | None:
    """``value`` as a float; None for "" (no score). Strings of numbers (a CSV) are accepted."""
    if value == "" or value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TypeError(f"{what} must be a number or \"\", got {type(value).__name__}")
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"{what} must be a number or \"\", got {value!r}") from None


def _checked(records: list, keys: tuple, what: str) -> list[Mapping]:
    if not isinstance(records, list):
        raise TypeError(f"{what} must be a list of dicts, got {type(records).__name__}")
    for index, record in enumerate(records):
        if not isinstance(record, Mapping):
            raise TypeError(f"{what}[{index}] must be a dict, got {type(record).__name__}")
        missing = [key for key in keys if key not in record]
        if missing:
            raise ValueError(f"{what}[{index}] lacks {missing}; expected the keys {list(keys)}")
    return records


def check_rows(rows: list) -> list[GradeRow]:
    if not isinstance(rows, list):
        raise TypeError(f"rows must be a list of GradeRow, got {type(rows).__name__}")
    for index, row in enumerate(rows):
        if not isinstance(row, GradeRow):
            raise TypeError(f"rows[{index}] must be a GradeRow (grader.scoring.grades), "
                            f"got {type(row).__name__}")
    return rows


def check_cells(cells: list) -> list[Mapping]:
    for index, cell in enumerate(_checked(cells, CELL_KEYS, "cells")):
        for key in ("score", "max_score"):
            if _number(cell[key], f"cells[{index}]['{key}']") is None:
                raise ValueError(f"cells[{index}]['{key}'] must be a number, got \"\"")
        if not isinstance(cell["message"], str):
            raise TypeError(f"cells[{index}]['message'] must be a str, "
                            f"got {type(cell['message']).__name__}")
    return cells


def status_counts(rows: list[GradeRow]) -> dict[str, Counter]:
    """Per assignment, how many rows have each status (and how many are flagged)."""
    counts = defaultdict(Counter)
    for row in rows:
        counts[row.assignment][row.status] += 1
        counts[row.assignment]["flagged"] += bool(row.flags)
    return {assignment: counts[assignment] for assignment in sorted(counts)}


def score_fractions(rows: list[GradeRow]) -> dict[str, list[float]]:
    """Per assignment, score / max_score of each graded row."""
    fractions = {assignment: [] for assignment in sorted({row.assignment for row in rows})}
    for row in rows:
        if row.status == Status.GRADED:
            fractions[row.assignment].append(row.score / row.max_score)
    return fractions


def exercises(cells: list[Mapping]) -> dict[str, list[str]]:
    """Per assignment (sorted), its test cells in the order they first appear in ``cells``."""
    order = defaultdict(dict)
    for cell in cells:
        order[cell["assignment"]][cell["cell"]] = None
    return {assignment: list(order[assignment]) for assignment in sorted(order)}


def pass_rates(cells: list[Mapping]) -> dict[tuple[str, str], tuple[int, int]]:
    """Per (assignment, test cell): (submissions with its full points, graded submissions)."""
    full, graded = Counter(), Counter()
    for cell in cells:
        exercise = (cell["assignment"], cell["cell"])
        graded[exercise] += 1
        full[exercise] += _number(cell["score"], "score") >= _number(cell["max_score"], "max")
    return {exercise: (full[exercise], graded[exercise]) for exercise in graded}


def frequent_mistakes(cells: list[Mapping]) -> dict[tuple[str, str], list[tuple[str, int]]]:
    """Per (assignment, test cell): each diagnosis of its failing messages and how many
    submissions got it, most frequent first (ties in alphabetical order)."""
    counts = defaultdict(Counter)
    for cell in cells:
        if cell["message"].strip():
            counts[(cell["assignment"], cell["cell"])][diagnosis(cell["message"])] += 1
    return {
        exercise: sorted(counter.items(), key=lambda item: (-item[1], item[0]))
        for exercise, counter in counts.items()
    }

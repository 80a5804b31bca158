"""The class report's numbers, from the rows of grades.csv and the results of the test cells:
how many submissions have each status, the scores as fractions, each exercise's pass rate
and its most frequent diagnoses. The rows and cells are checked on the way in
(:func:`check_rows`, :func:`check_cells`), so that a bad one is named, not a wrong figure drawn.
"""

from collections import Counter, defaultdict
from collections.abc import Mapping

from grader.outputs.report.diagnosis import diagnosis
from grader.state import Status

ROW_KEYS = ("student_id", "assignment", "score", "max_score", "status", "reason", "flags")
CELL_KEYS = ("student_id", "assignment", "cell", "score", "max_score", "message")
STATUSES = (Status.GRADED, Status.NEEDS_MANUAL_GRADING, Status.NOT_GRADED, Status.MISSING)
FLAG_SEPARATOR = "; "


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


def check_rows(rows: list) -> list[Mapping]:
    for index, row in enumerate(_checked(rows, ROW_KEYS, "rows")):
        if row["status"] not in STATUSES:
            raise ValueError(f"rows[{index}]: status must be one of {STATUSES}, "
                             f"got {row['status']!r}")
        score = _number(row["score"], f"rows[{index}]['score']")
        maximum = _number(row["max_score"], f"rows[{index}]['max_score']")
        if row["status"] == Status.GRADED and (score is None or not maximum):
            raise ValueError(f"rows[{index}] is graded but has score {row['score']!r} "
                             f"of max_score {row['max_score']!r}; expected numbers, max > 0")
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


def flags_of(row: Mapping) -> list[str]:
    """The flags of a row of grades.csv: its ``flags`` split at "; "."""
    return [flag.strip() for flag in str(row["flags"]).split(FLAG_SEPARATOR) if flag.strip()]


def status_counts(rows: list[Mapping]) -> dict[str, Counter]:
    """Per assignment, how many rows have each status (and how many are flagged)."""
    counts = defaultdict(Counter)
    for row in rows:
        counts[row["assignment"]][row["status"]] += 1
        counts[row["assignment"]]["flagged"] += bool(flags_of(row))
    return {assignment: counts[assignment] for assignment in sorted(counts)}


def score_fractions(rows: list[Mapping]) -> dict[str, list[float]]:
    """Per assignment, score / max_score of each graded row."""
    fractions = {assignment: [] for assignment in sorted({row["assignment"] for row in rows})}
    for row in rows:
        if row["status"] == Status.GRADED:
            fractions[row["assignment"]].append(
                _number(row["score"], "score") / _number(row["max_score"], "max_score")
            )
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

"""The class report: one self-contained HTML page that tells a TA how the class did.

``write_report(rows, cells, path)`` takes the grade rows (one :class:`GradeRow` per student
and assignment, as grades.csv lists them) and the results of the test cells of the graded
submissions, and writes:

* a summary: students, submissions per notebook, how many are graded, not graded, missing
  or waiting for manual grading, why some were not graded, and the tamper flags;
* the score distribution of each notebook, as a fraction of its maximum;
* the pass rate of each exercise (test cell): the share of graded submissions with full
  points, as a bar chart and a table;
* the most frequent diagnoses of ``course_utils.checks`` per exercise, most frequent
  first ("you did not divide by √d_k: 37 submissions");
* when given the matches of grader.integrity.similarity, the similar answers: each pair's
  two answers side by side, the matching parts highlighted.

The plots are PNG images drawn by matplotlib's Agg renderer and embedded in base64: the
page runs no JavaScript and fetches nothing. Every text that comes from a submission
(student ids, reasons, flags, error messages) is escaped.

The results of the test cells come from :func:`grader.cells.test_cell_results`; the numbers
from :mod:`.numbers`, the messages reduced by :mod:`.diagnosis`, the plots from :mod:`.figures`.
"""

import html
import statistics
from collections.abc import Mapping
from pathlib import Path

from grader.outputs.report.figures import pass_rate_figure, png, score_figure
from grader.outputs.report.numbers import (
    STATUSES,
    check_cells,
    check_rows,
    exercises,
    frequent_mistakes,
    pass_rates,
    score_fractions,
    status_counts,
)
from grader.scoring.grades import GradeRow
from grader.state import Status

MISTAKES_PER_EXERCISE = 5
SIMILAR_SHOWN = 100  # pairs shown side by side; similarity.csv lists them all


STYLE = """
body { font-family: sans-serif; max-width: 70em; margin: 2em auto; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #bbb; padding: 0.2em 0.6em; text-align: left; vertical-align: top; }
th { background: #eee; }
img { max-width: 100%; }
table.pair { table-layout: fixed; width: 100%; }
table.pair pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; font-size: 0.85em; }
mark { background: #ffe066; color: #000; }
"""


def _escape(value) -> str:
    return html.escape(str(value))


def _table(table_id: str, headers: list[str], body: list[list]) -> str:
    """An HTML table, every header and value escaped."""
    head = "".join(f"<th>{_escape(header)}</th>" for header in headers)
    lines = ["<tr>" + "".join(f"<td>{_escape(v)}</td>" for v in row) + "</tr>" for row in body]
    return f'<table id="{table_id}">\n<tr>{head}</tr>\n' + "\n".join(lines) + "\n</table>"


def _image(uri: str, description: str) -> str:
    return f'<img src="{uri}" alt="{_escape(description)}">'


def _percent(fraction: float | None) -> str:
    return "–" if fraction is None else f"{fraction:.0%}"


def _summary(rows: list[GradeRow]) -> str:
    counts = status_counts(rows)
    fractions = score_fractions(rows)
    columns = (*STATUSES, "flagged")
    body = []
    for assignment, count in counts.items():
        submitted = sum(count[status] for status in STATUSES if status != Status.MISSING)
        median = statistics.median(fractions[assignment]) if fractions[assignment] else None
        body.append([assignment, submitted, *(count[c] for c in columns), _percent(median)])
    total = [sum(line[i] for line in body) for i in range(1, len(columns) + 2)]
    body.append(["all notebooks", *total, ""])
    students = len({row.student_id for row in rows})
    reasons = [[r.student_id, r.assignment, r.status, r.reason] for r in rows if r.reason.strip()]
    flags = [[r.student_id, r.assignment, flag] for r in rows for flag in r.flags]
    return "\n".join([
        '<section id="summary">\n<h2>Summary</h2>',
        f"<p>{students} students, {len(counts)} notebooks, {total[0]} submissions.</p>",
        _table("status", ["notebook", "submitted", *columns, "median score"], body),
        "<h3>Reasons</h3>",
        "<p>Why a submission was not graded, or what went wrong while grading it.</p>",
        _table("reasons", ["student", "notebook", "status", "reason"], reasons)
        if reasons else "<p>None.</p>",
        "<h3>Flagged submissions</h3>",
        "<p>Answers that touch what the tests rely on: review them by hand.</p>",
        _table("flags", ["student", "notebook", "flag"], flags) if flags else "<p>None.</p>",
        "</section>",
    ])


def _scores(rows: list[GradeRow]) -> str:
    fractions = score_fractions(rows)
    if not any(fractions.values()):
        return '<section id="scores">\n<h2>Scores</h2>\n<p>No graded submissions.</p>\n</section>'
    return "\n".join([
        '<section id="scores">\n<h2>Scores</h2>',
        "<p>Score of each graded submission as a fraction of the notebook's maximum.</p>",
        _image(png(score_figure(fractions)), "histograms of the scores per notebook"),
        "</section>",
    ])


def _pass_rates(cells: list[Mapping]) -> str:
    order, rates = exercises(cells), pass_rates(cells)
    if not rates:
        return '<section id="exercises">\n<h2>Exercises</h2>\n<p>No test results.</p>\n</section>'
    body = [
        [assignment, cell, *rates[(assignment, cell)],
         _percent(rates[(assignment, cell)][0] / rates[(assignment, cell)][1])]
        for assignment, names in order.items() for cell in names
    ]
    return "\n".join([
        '<section id="exercises">\n<h2>Exercises</h2>',
        "<p>Share of the graded submissions that got each test cell's full points.</p>",
        _image(png(pass_rate_figure(order, rates)), "bar chart of the pass rate per exercise"),
        _table("pass-rates", ["notebook", "exercise", "full points", "graded", "pass rate"], body),
        "</section>",
    ])


def _mistakes(cells: list[Mapping]) -> str:
    mistakes = frequent_mistakes(cells)
    body = []
    for assignment, names in exercises(cells).items():
        for cell in names:
            found = mistakes.get((assignment, cell), [])
            shown, others = found[:MISTAKES_PER_EXERCISE], found[MISTAKES_PER_EXERCISE:]
            body += [[assignment, cell, text, count] for text, count in shown]
            if others:
                body.append([assignment, cell, f"{len(others)} other messages",
                             sum(count for _, count in others)])
    return "\n".join([
        '<section id="mistakes">\n<h2>Most frequent mistakes</h2>',
        "<p>What the failing test cells said, reduced to the mistake that "
        "<code>course_utils.checks</code> diagnosed, most frequent first per exercise.</p>",
        _table("mistakes", ["notebook", "exercise", "mistake", "submissions"], body)
        if body else "<p>No test cell failed.</p>",
        "</section>",
    ])


def _highlighted(text: str, spans) -> str:
    """``text`` escaped, its ``spans`` ((start, end) offsets, may overlap) in <mark>."""
    parts, done = [], 0
    for start, end in sorted(spans):
        start = max(start, done)
        if end > start:
            parts += [_escape(text[done:start]), f"<mark>{_escape(text[start:end])}</mark>"]
            done = end
    return "".join(parts) + _escape(text[done:])


def _pair(number: int, match) -> str:
    """One match: its heading, its note, and the two answers side by side."""
    heading = (f"{match.assignment}, {match.cell}: {match.student_a} and {match.student_b}, "
               f"similarity {match.similarity:.2f}")
    note = f"<p>{_escape(match.note)}</p>\n" if match.note else ""
    return "\n".join([
        f'<h3 id="pair-{number}">{_escape(heading)}</h3>',
        f'{note}<table class="pair" aria-labelledby="pair-{number}">',
        f'<tr><th scope="col">{_escape(match.student_a)}</th>'
        f'<th scope="col">{_escape(match.student_b)}</th></tr>',
        f"<tr><td><pre>{_highlighted(match.text_a, match.spans_a)}</pre></td>"
        f"<td><pre>{_highlighted(match.text_b, match.spans_b)}</pre></td></tr>",
        "</table>",
    ])


def _similarity(matches: list) -> str:
    shown = matches[:SIMILAR_SHOWN]
    more = (f"<p>The first {len(shown)} of {len(matches)} pairs; all are in similarity.csv.</p>"
            if len(matches) > len(shown) else "")
    return "\n".join([
        '<section id="similarity">\n<h2>Similar answers</h2>',
        "<p>Pairs of students whose answers of one cell are alike after comments, layout and "
        "names are set aside and the release's own code is left out (grading/similarity.csv). "
        "A match is a reason to look, not a verdict. The highlighted parts are those found in "
        "both answers. Cells marked as having one natural answer are ones that independent "
        "students write alike: they come last. An answer alike the course's own code "
        "(a function of course_utils, or the instructor's answer of the cell) comes first, "
        "beside the code it matches, named in the second column.</p>",
        more,
        *(_pair(number, match) for number, match in enumerate(shown, 1)),
        "" if matches else "<p>No pair of answers reaches the threshold.</p>",
        "</section>",
    ])


def render_report(rows: list[GradeRow], cells: list[dict], similar: list | None = None) -> str:
    """The report's HTML page (see :func:`write_report` for the arguments)."""
    rows, cells = check_rows(rows), check_cells(cells)
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Class report</title>',
        f"<style>{STYLE}</style>\n</head>\n<body>\n<h1>Class report</h1>",
        _summary(rows),
        _scores(rows),
        _pass_rates(cells),
        _mistakes(cells),
        "" if similar is None else _similarity(similar),
        "</body>\n</html>\n",
    ])


def write_report(rows: list[GradeRow], cells: list[dict], path: Path,
                 similar: list | None = None) -> Path:
    """Write the class report to ``path`` (an .html file) and return ``path``.

    ``rows``: one :class:`grader.scoring.grades.GradeRow` per (student, assignment), as
    :func:`grader.scoring.grades.grade_rows` gives them.
    ``cells``: one per (student, assignment, test cell) of the graded submissions, with the
    keys student_id, assignment, cell (the test cell's grade id), score, max_score and
    message (what :func:`grader.cells.test_cell_results` gives: "" when the cell passed).
    ``similar``: the matches of grader.integrity.similarity.matches.similar_answers, in the
    order to show them (None: no section).
    """
    page = render_report(rows, cells, similar)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path

"""The class report: one self-contained HTML page that tells a TA how the class did.

``write_report(rows, cells, path)`` takes the rows of ``grades.csv`` (one per student and
assignment) and the results of the test cells of the graded submissions, and writes:

* a summary: students, submissions per notebook, how many are graded, not graded, missing
  or waiting for manual grading, why some were not graded, and the tamper flags;
* the score distribution of each notebook, as a fraction of its maximum;
* the pass rate of each exercise (test cell): the share of graded submissions with full
  points, as a bar chart and a table;
* the most frequent diagnoses of ``course_utils.checks`` per exercise, most frequent
  first ("you did not divide by √d_k: 37 submissions");
* when given the matches of grader.similarity, the similar answers: each pair's two
  answers side by side, the matching parts highlighted.

The plots are PNG images drawn by matplotlib's Agg renderer and embedded in base64: the
page runs no JavaScript and fetches nothing. Every text that comes from a submission
(student ids, reasons, flags, error messages) is escaped.

``test_cell_results(notebook)`` reads those results from an autograded notebook, and
``diagnosis(message)`` reduces a test cell's message to the mistake it names, so that
messages differing only in the values they quote are counted together.
"""

import base64
import builtins
import html
import importlib
import io
import pkgutil
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, PercentFormatter

ROW_KEYS = ("student_id", "assignment", "score", "max_score", "status", "reason", "flags")
CELL_KEYS = ("student_id", "assignment", "cell", "score", "max_score", "message")
STATUSES = ("graded", "needs manual grading", "not graded", "missing")
FLAG_SEPARATOR = "; "
STDERR = "stderr"
MISTAKES_PER_EXERCISE = 5
SHORT_TEXT = 160
SIMILAR_SHOWN = 100  # pairs shown side by side; similarity.csv lists them all

ERROR_LINE = re.compile(r"(?P<name>[A-Za-z_]\w*)(?::\s?(?P<text>.*))?", re.DOTALL)
NOT_RIGHT = " is not right: "
LEADING_NAME = re.compile(r"^[^\s:]+: ")
WARNING = re.compile(r"\b\w+Warning: .*")


# --- test cells of an autograded notebook -------------------------------------------------


def test_cell_results(notebook) -> dict[str, str]:
    """The message of each test cell of an autograded ``notebook`` (an nbformat NotebookNode).

    Test cells are the code cells with ``metadata.nbgrader`` grade true and solution false,
    keyed by their ``grade_id``. The message is the last line of the traceback Python
    prints, ``"<ExceptionName>: <evalue>"`` (just the name when evalue is empty, as for the
    ``NotImplementedError`` of a blank answer); "" when the cell shows no error. A cell whose
    only failure is output on stderr (nbgrader scores that 0 too) gives ``"stderr: <its
    first line>"``.
    """
    if not hasattr(notebook, "cells"):
        raise TypeError(f"expected an nbformat notebook, got {type(notebook).__name__}")
    results = {}
    for cell in notebook.cells:
        grading = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") != "code" or not grading.get("grade") or grading.get("solution"):
            continue
        results[grading["grade_id"]] = _failure_message(cell.get("outputs", []))
    return results


def _failure_message(outputs: list) -> str:
    errors = [o for o in outputs if o.get("output_type") == "error"]
    if errors:
        name, value = errors[-1].get("ename", "Error"), errors[-1].get("evalue", "")
        return f"{name}: {value}" if value else name
    for output in outputs:
        if output.get("output_type") == "stream" and output.get("name") == "stderr":
            lines = [line.strip() for line in _text(output.get("text", "")).splitlines()]
            return f"{STDERR}: " + next((line for line in lines if line), "")
    return ""


def _text(text) -> str:
    return "".join(text) if isinstance(text, list) else text


# --- diagnoses -------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def known_mistakes() -> tuple[str, ...]:
    """The texts of every ``*MISTAKES`` dict of the ``course_utils.checks`` modules,
    longest first (so that a text containing another one is found first)."""
    from course_utils import checks

    texts = set()
    for module_info in pkgutil.iter_modules(checks.__path__):
        module = importlib.import_module(f"{checks.__name__}.{module_info.name}")
        for name, value in vars(module).items():
            if name.endswith("MISTAKES") and isinstance(value, dict):
                texts.update(text for text in value.values() if isinstance(text, str))
    return tuple(sorted(texts, key=lambda text: (-len(text), text)))


def diagnosis(message: str) -> str:
    """The mistake a failing test cell's ``message`` names, for counting alike failures.

    ``message`` is what :func:`test_cell_results` gives (an ``evalue`` alone is read as an
    assertion's). An assertion yields the text of the ``course_utils.checks`` MISTAKES it
    contains; else its first line without the leading ``"<name> is not right: "`` or
    ``"<name>: "``. Another exception yields ``"<ExceptionName>: <short text>"``
    (``"NotImplementedError: answer left blank"`` for nbgrader's placeholder), and output
    on stderr the warning it shows (``"UserWarning: <text>"``).
    """
    if not isinstance(message, str):
        raise TypeError(f"message must be a str, got {type(message).__name__}")
    if not message.strip():
        raise ValueError("diagnosis needs the message of a failing test cell, got an empty one")
    error = ERROR_LINE.fullmatch(message.strip())
    if error and error["name"] == STDERR:
        warning = WARNING.search(error["text"] or "")
        return _short(warning[0] if warning else message)
    if error and _is_exception(error["name"]):
        text = (error["text"] or "").strip()
        if error["name"] != "AssertionError" or not text:
            return _exception_diagnosis(error["name"], text)
        message = text
    for mistake in known_mistakes():
        if mistake in message:
            return mistake
    first_line = message.strip().splitlines()[0].rstrip(".")
    if NOT_RIGHT in first_line:
        return _short(first_line.split(NOT_RIGHT, 1)[1])
    return _short(LEADING_NAME.sub("", first_line, count=1))


def _is_exception(name: str) -> bool:
    builtin = getattr(builtins, name, None)
    if isinstance(builtin, type) and issubclass(builtin, BaseException):
        return True
    return name.endswith(("Error", "Exception"))


def _exception_diagnosis(name: str, text: str) -> str:
    if not text:
        return f"{name}: answer left blank" if name == "NotImplementedError" else name
    return _short(f"{name}: {text.splitlines()[0]}")


def _short(text: str) -> str:
    text = text.strip()
    return text if len(text) <= SHORT_TEXT else text[: SHORT_TEXT - 1].rstrip() + "…"


# --- the numbers of the report ---------------------------------------------------------------


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


def _check_rows(rows: list) -> list[Mapping]:
    for index, row in enumerate(_checked(rows, ROW_KEYS, "rows")):
        if row["status"] not in STATUSES:
            raise ValueError(f"rows[{index}]: status must be one of {STATUSES}, "
                             f"got {row['status']!r}")
        score = _number(row["score"], f"rows[{index}]['score']")
        maximum = _number(row["max_score"], f"rows[{index}]['max_score']")
        if row["status"] == "graded" and (score is None or not maximum):
            raise ValueError(f"rows[{index}] is graded but has score {row['score']!r} "
                             f"of max_score {row['max_score']!r}; expected numbers, max > 0")
    return rows


def _check_cells(cells: list) -> list[Mapping]:
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
        if row["status"] == "graded":
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


# --- plots -------------------------------------------------------------------------------------


def _png(figure: Figure) -> str:
    """``figure`` as a data: URI of a PNG drawn by Agg."""
    buffer = io.BytesIO()
    FigureCanvasAgg(figure).print_png(buffer)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def score_figure(fractions: dict[str, list[float]]) -> Figure:
    """One histogram per assignment of the graded scores, as fractions of the maximum."""
    columns = min(4, len(fractions))
    rows = -(-len(fractions) // columns)
    figure = Figure(figsize=(3.4 * columns, 2.6 * rows), layout="constrained")
    axes = figure.subplots(rows, columns, squeeze=False).ravel()
    bins = [i / 10 for i in range(11)]
    for ax, (assignment, values) in zip(axes, fractions.items(), strict=False):
        ax.hist(values, bins=bins, color="tab:blue", edgecolor="white")
        ax.set_title(f"{assignment}\n{len(values)} graded", fontsize=9)
        ax.set_xlim(0, 1)
        ax.xaxis.set_major_formatter(PercentFormatter(1.0))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("score", fontsize=8)
        ax.tick_params(labelsize=8)
    for ax in axes[len(fractions):]:
        ax.set_axis_off()
    axes[0].set_ylabel("submissions", fontsize=8)
    return figure


def pass_rate_figure(order: dict[str, list[str]], rates: dict) -> Figure:
    """Horizontal bars of each exercise's pass rate, one panel per assignment."""
    sizes = [len(cells) for cells in order.values()]
    figure = Figure(figsize=(8, 0.9 * len(order) + 0.3 * sum(sizes)), layout="constrained")
    axes = figure.subplots(len(order), 1, squeeze=False, height_ratios=sizes).ravel()
    for ax, (assignment, cells) in zip(axes, order.items(), strict=True):
        shares = [rates[(assignment, cell)][0] / rates[(assignment, cell)][1] for cell in cells]
        bars = ax.barh(cells, shares, color="tab:green")
        ax.bar_label(bars, labels=[f"{share:.0%}" for share in shares], fontsize=8, padding=2)
        ax.set_xlim(0, 1.1)
        ax.invert_yaxis()
        ax.xaxis.set_major_formatter(PercentFormatter(1.0))
        ax.set_title(assignment, fontsize=9, loc="left")
        ax.tick_params(labelsize=8)
    axes[-1].set_xlabel("graded submissions with full points", fontsize=8)
    return figure


# --- the page ------------------------------------------------------------------------------------

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


def _summary(rows: list[Mapping]) -> str:
    counts = status_counts(rows)
    fractions = score_fractions(rows)
    columns = ("graded", "needs manual grading", "not graded", "missing", "flagged")
    body = []
    for assignment, count in counts.items():
        submitted = sum(count[status] for status in STATUSES if status != "missing")
        median = statistics.median(fractions[assignment]) if fractions[assignment] else None
        body.append([assignment, submitted, *(count[c] for c in columns), _percent(median)])
    total = [sum(line[i] for line in body) for i in range(1, len(columns) + 2)]
    body.append(["all notebooks", *total, ""])
    students = len({row["student_id"] for row in rows})
    reasons = [[r["student_id"], r["assignment"], r["status"], r["reason"]]
               for r in rows if str(r["reason"]).strip()]
    flags = [[r["student_id"], r["assignment"], flag] for r in rows for flag in flags_of(r)]
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


def _scores(rows: list[Mapping]) -> str:
    fractions = score_fractions(rows)
    if not any(fractions.values()):
        return '<section id="scores">\n<h2>Scores</h2>\n<p>No graded submissions.</p>\n</section>'
    return "\n".join([
        '<section id="scores">\n<h2>Scores</h2>',
        "<p>Score of each graded submission as a fraction of the notebook's maximum.</p>",
        _image(_png(score_figure(fractions)), "histograms of the scores per notebook"),
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
        _image(_png(pass_rate_figure(order, rates)), "bar chart of the pass rate per exercise"),
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


def render_report(rows: list[dict], cells: list[dict], similar: list | None = None) -> str:
    """The report's HTML page (see :func:`write_report` for the arguments)."""
    rows, cells = _check_rows(rows), _check_cells(cells)
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


def write_report(rows: list[dict], cells: list[dict], path: Path,
                 similar: list | None = None) -> Path:
    """Write the class report to ``path`` (an .html file) and return ``path``.

    ``rows``: one per (student, assignment) as in grades.csv, with the keys student_id,
    assignment, score (float or ""), max_score (float or ""), status ("graded", "not
    graded", "missing", "needs manual grading"), reason (str) and flags (str, "; "-separated).
    ``cells``: one per (student, assignment, test cell) of the graded submissions, with the
    keys student_id, assignment, cell (the test cell's grade id), score, max_score and
    message (what :func:`test_cell_results` gives: "" when the cell passed).
    ``similar``: the matches of grader.similarity.similar_answers, in the order to show
    them (None: no section).
    """
    page = render_report(rows, cells, similar)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path

"""The class report: its tables hold the right counts, it is self-contained and escaped."""

import base64
import re
from html.parser import HTMLParser

import nbformat
import pytest
import torch

from course_utils import checks
from grader import cells  # (its test_cell_results is not a test: not imported by name)
from grader.outputs.report import diagnosis, write_report
from grader.scoring.grades import GradeRow
from grader.state import Status

EVIL = '<script>alert("x")</script>'
A04, A05 = "04_alpha3_by_hand", "05_masked_attention"
NO_SCALE = "AssertionError: {} is not right: you did not divide by √d_k."
NO_MASK = (
    "AssertionError: causal_softmax(S) is not right: you did not apply the causal mask: "
    "position i must not see any j > i."
)


def row(student, assignment, status, score=None, max_score=None, reason="", flags=()):
    return GradeRow(student, assignment, Status(status), reason, tuple(flags), score, max_score)


def cell(student, assignment, name, score, max_score, message=""):
    return dict(student_id=student, assignment=assignment, cell=name, score=score,
                max_score=max_score, message=message)


ROWS = [
    row("alice", A04, "graded", 10.0, 10.0),
    row("bob", A04, "graded", 4.0, 10.0),
    row("erin", A04, "graded", 7.0, 10.0),
    row(EVIL, A04, "graded", 5.0, 10.0,
        flags=["replaces checks.check_close (line 3: checks.check_close = print)",
               "<img src=http://evil.example/x.png>"]),
    row("carol", A04, "not graded", reason="the notebook is not valid JSON"),
    row("dave", A04, "missing"),
    row("alice", A05, "graded", 4.0, 4.0),
    row("carol", A05, "graded", 3.0, 4.0, reason="cell test_padding_mask timed out after 120 s"),
    row("bob", A05, "needs manual grading", 2.0, 6.0),
    row("erin", A05, "missing"),
    row(EVIL, A05, "missing"),
    row("dave", A05, "missing"),
]

CELLS = [
    cell("alice", A04, "test_scores", 2.0, 2.0),
    cell("alice", A04, "test_causal_softmax", 3.0, 3.0),
    cell("alice", A04, "test_alpha_3_by_hand", 2.0, 2.0),
    cell("bob", A04, "test_scores", 0.0, 2.0, NO_SCALE.format("scores(Q, K)")),
    cell("bob", A04, "test_causal_softmax", 0.0, 3.0, NO_MASK),
    cell("bob", A04, "test_alpha_3_by_hand", 2.0, 2.0),
    cell("erin", A04, "test_scores", 0.0, 2.0,
         NO_SCALE.format("scores for 5 queries, 7 keys, d_k = 9")),
    cell("erin", A04, "test_causal_softmax", 3.0, 3.0),
    cell("erin", A04, "test_alpha_3_by_hand", 2.0, 2.0),
    cell(EVIL, A04, "test_scores", 0.0, 2.0,
         "AssertionError: scores(Q, K) is not right (tolerance 0.0001).\n"
         "  expected: [[1.0]]\n  got:      [[2.0]]."),
    cell(EVIL, A04, "test_causal_softmax", 0.0, 3.0, "ValueError: <script>alert('x')</script>"),
    cell(EVIL, A04, "test_alpha_3_by_hand", 2.0, 2.0),
    cell("alice", A05, "test_padding_mask", 2.0, 2.0),
    cell("alice", A05, "test_split_heads", 2.0, 2.0),
    cell("carol", A05, "test_padding_mask", 0.0, 2.0,
         "NameError: name 'padding_mask' is not defined"),
    cell("carol", A05, "test_split_heads", 0.0, 2.0, "NotImplementedError"),
]


class Page(HTMLParser):
    """The tables (by id, rows of cell texts, unescaped) and the tags of an HTML page."""

    def __init__(self, text):
        super().__init__()
        self.tables, self.tags, self.text = {}, [], []
        self._table = self._row = None
        self._in_cell = False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "table":
            self._table = self.tables.setdefault(dict(attrs)["id"], [])
        elif tag == "tr":
            self._row = []
            self._table.append(self._row)
        elif tag in ("td", "th"):
            self._row.append("")
            self._in_cell = True

    def handle_endtag(self, tag):
        self._in_cell = self._in_cell and tag not in ("td", "th")

    def handle_data(self, data):
        self.text.append(data)
        if self._in_cell:
            self._row[-1] += data


@pytest.fixture(scope="module")
def html(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "out" / "report.html"
    assert write_report(ROWS, CELLS, path) == path
    return path.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def page(html):
    return Page(html)


def test_summary_counts_each_status_per_notebook(page):
    assert page.tables["status"] == [
        ["notebook", "submitted", "graded", "needs manual grading", "not graded", "missing",
         "flagged", "median score"],
        [A04, "5", "4", "0", "1", "1", "1", "60%"],
        [A05, "3", "2", "1", "0", "3", "0", "88%"],
        ["all notebooks", "8", "6", "1", "1", "4", "1", ""],
    ]
    assert "6 students, 2 notebooks, 8 submissions." in "".join(page.text)


def test_reasons_and_flags_are_listed_one_per_line(page):
    assert page.tables["reasons"][1:] == [
        ["carol", A04, "not graded", "the notebook is not valid JSON"],
        ["carol", A05, "graded", "cell test_padding_mask timed out after 120 s"],
    ]
    assert page.tables["flags"] == [
        ["student", "notebook", "flag"],
        [EVIL, A04, "replaces checks.check_close (line 3: checks.check_close = print)"],
        [EVIL, A04, "<img src=http://evil.example/x.png>"],
    ]


def test_pass_rate_is_the_share_of_graded_submissions_with_full_points(page):
    assert page.tables["pass-rates"] == [
        ["notebook", "exercise", "full points", "graded", "pass rate"],
        [A04, "test_scores", "1", "4", "25%"],
        [A04, "test_causal_softmax", "2", "4", "50%"],
        [A04, "test_alpha_3_by_hand", "4", "4", "100%"],
        [A05, "test_padding_mask", "1", "2", "50%"],
        [A05, "test_split_heads", "1", "2", "50%"],
    ]


def test_mistakes_are_counted_per_exercise_most_frequent_first(page):
    assert page.tables["mistakes"] == [
        ["notebook", "exercise", "mistake", "submissions"],
        [A04, "test_scores", "you did not divide by √d_k", "2"],
        [A04, "test_scores", "scores(Q, K) is not right (tolerance 0.0001)", "1"],
        [A04, "test_causal_softmax", "ValueError: <script>alert('x')</script>", "1"],
        [A04, "test_causal_softmax",
         "you did not apply the causal mask: position i must not see any j > i", "1"],
        [A05, "test_padding_mask", "NameError: name 'padding_mask' is not defined", "1"],
        [A05, "test_split_heads", "NotImplementedError: answer left blank", "1"],
    ]


def test_rare_mistakes_beyond_the_fifth_are_summed(tmp_path):
    cells = [
        cell(f"s{n}_{i}", A04, "test_scores", 0.0, 1.0, f"AssertionError: x is not right: m{n}.")
        for n in range(1, 8) for i in range(8 - n)
    ]
    html = write_report([row("s", A04, "missing")], cells, tmp_path / "r.html").read_text()
    assert Page(html).tables["mistakes"][1:] == [
        [A04, "test_scores", "m1", "7"],
        [A04, "test_scores", "m2", "6"],
        [A04, "test_scores", "m3", "5"],
        [A04, "test_scores", "m4", "4"],
        [A04, "test_scores", "m5", "3"],
        [A04, "test_scores", "2 other messages", "3"],
    ]


def test_plots_are_embedded_png_and_nothing_is_fetched(page):
    images = [attrs["src"] for tag, attrs in page.tags if tag == "img"]
    assert len(images) == 2  # the score histograms and the pass-rate bars
    for src in images:
        prefix = "data:image/png;base64,"
        assert src.startswith(prefix)
        assert base64.b64decode(src.removeprefix(prefix)).startswith(b"\x89PNG\r\n\x1a\n")
    assert not [tag for tag, _ in page.tags if tag in ("script", "link", "iframe", "object")]
    sources = [value for _, attrs in page.tags for key, value in attrs.items()
               if key in ("src", "href")]
    assert not [value for value in sources if "http" in value]


def test_text_from_students_is_escaped(html):
    assert "<script" not in html.lower()
    assert "<img src=http" not in html
    assert html.count("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;") == 2  # the flags
    assert "&lt;img src=http://evil.example/x.png&gt;" in html


def test_a_grade_row_is_checked_when_it_is_made():
    with pytest.raises(TypeError, match="status must be a Status"):
        GradeRow("a", A04, "graded", score=1.0, max_score=2.0)
    with pytest.raises(ValueError, match="graded but has score None"):
        GradeRow("a", A04, Status.GRADED)
    with pytest.raises(ValueError, match="'done' is not a valid Status"):
        row("a", A04, "done")


@pytest.mark.parametrize(
    ("rows", "cells", "error", "says"),
    [
        ([{"student_id": "a", "status": "graded"}], [], TypeError, "rows[0] must be a GradeRow"),
        ("rows", [], TypeError, "list of GradeRow"),
        ([], [cell("a", A04, "t", "", 1.0)], ValueError, "must be a number"),
        ([], [cell("a", A04, "t", 1.0, 1.0, None)], TypeError, "message"),
    ],
)
def test_bad_input_is_refused_with_what_was_expected(tmp_path, rows, cells, error, says):
    with pytest.raises(error, match=re.escape(says)):
        write_report(rows, cells, tmp_path / "r.html")
    assert not (tmp_path / "r.html").exists()


# --- test_cell_results -----------------------------------------------------------------------


def code_cell(outputs, grade_id=None, grade=False, solution=False):
    new = nbformat.v4.new_code_cell("...", outputs=outputs)
    if grade_id:
        new.metadata["nbgrader"] = {"grade_id": grade_id, "grade": grade, "solution": solution,
                                    "locked": not solution, "points": 1 if grade else 0}
    return new


def error(ename, evalue):
    return nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=["..."])


def test_cell_results_gives_each_test_cells_error_message():
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Exercise"),
        code_cell([error("NameError", "name 'torch' is not defined")], "answer", solution=True),
        code_cell([nbformat.v4.new_output("stream", name="stdout", text="ok\n")],
                  "test_passes", grade=True),
        code_cell([error("AssertionError", "scores(Q, K) is not right: you did not divide by "
                         "√d_k.")], "test_scores", grade=True),
        code_cell([error("NotImplementedError", "")], "test_blank", grade=True),
        code_cell([nbformat.v4.new_output(
            "stream", name="stderr",
            text="\n/site/torch/x.py:3: UserWarning: a view was written to\n  warn()\n")],
            "test_warns", grade=True),
        code_cell([error("ValueError", "1")], "written_answer", grade=True, solution=True),
        code_cell([error("ValueError", "2")]),
    ])
    notebook = nbformat.reads(nbformat.writes(notebook), as_version=4)  # as read from disk
    assert cells.test_cell_results(notebook) == {
        "test_passes": "",
        "test_scores": "AssertionError: scores(Q, K) is not right: you did not divide by √d_k.",
        "test_blank": "NotImplementedError",
        "test_warns": "stderr: /site/torch/x.py:3: UserWarning: a view was written to",
    }


def test_cell_results_wants_a_notebook():
    with pytest.raises(TypeError, match="nbformat notebook"):
        cells.test_cell_results({"cell": []})


# --- diagnosis on real messages of course_utils.checks ---------------------------------------


def failure(check, *args, **kwargs) -> str:
    """The message a test cell shows when ``check`` fails: "AssertionError: <evalue>"."""
    with pytest.raises(AssertionError) as raised:
        check(*args, **kwargs)
    return f"AssertionError: {raised.value}"


@pytest.fixture(scope="module")
def qk():
    generator = torch.Generator().manual_seed(0)
    return torch.randn(4, 3, generator=generator), torch.randn(4, 3, generator=generator)


def test_a_known_mistake_is_named_whatever_the_test_called_the_answer(qk):
    q, k = qk
    visible = failure(checks.check_attention_weights, torch.softmax(q @ k.T, -1), q, k,
                      causal=False, name="attention_weights(Q, K)")
    hidden = failure(checks.check_attention_weights, torch.softmax(2 * q @ k.T, -1), 2 * q, k,
                     causal=False, name="weights for 4 queries")
    assert diagnosis(visible) == diagnosis(hidden) == "you did not divide by √d_k"
    assert diagnosis(visible.removeprefix("AssertionError: ")) == "you did not divide by √d_k"
    no_mask = failure(checks.check_attention_weights, torch.softmax(q @ k.T / 3**0.5, -1), q, k,
                      causal=True, name="causal_softmax(S)")
    assert diagnosis(no_mask) == (
        "you did not apply the causal mask: position i must not see any j > i"
    )


def test_mistakes_of_other_topics_and_other_forms_are_named(qk):
    q, k = qk
    columns = failure(checks.check_rows_sum_to_one, torch.softmax(q @ k.T, 0), "weights")
    assert diagnosis(columns) == (
        "you took the softmax over the queries (dim=0) instead of over the keys "
        "(the last axis): each ROW must sum to 1"
    )
    x = torch.randn(3, 4, dtype=torch.float64)
    mean, var = x.mean(-1, keepdim=True), x.var(-1, unbiased=False, keepdim=True)
    ones, zeros = torch.ones(4, dtype=torch.float64), torch.zeros(4, dtype=torch.float64)
    no_eps = failure(checks.check_layer_norm, (x - mean) / var.sqrt(), x, ones, zeros, eps=0.1)
    assert diagnosis(no_eps) == checks.transformer_blocks.BLOCK_MISTAKES["no_eps"]


def test_a_known_mistake_is_found_within_any_wording(qk):
    generator = torch.Generator().manual_seed(1)
    x, w_v = (torch.randn(*shape, generator=generator, dtype=torch.float64)
              for shape in ((4, 5), (5, 2)))
    w_q, w_k = torch.randn(2, 5, 3, generator=generator, dtype=torch.float64)
    q, k = x @ w_q, x @ w_k
    keep = torch.ones(4, 4, dtype=torch.bool).tril()
    alpha = torch.softmax((q @ k.T / 3**0.5).masked_fill(~keep, float("-inf")), -1)
    swapped = failure(checks.check_causal_attention, (alpha, alpha @ x @ w_v), x, w_q, w_k, w_v,
                      "causal_attention(X, W_Q, W_K, W_V)")
    assert diagnosis(swapped) == "you returned (alpha, a): return the outputs first, (a, alpha)"
    not_positive = (
        "some features are ≤ 0: φ(x) = g(x) e^{Wᵀx}/√R is an exponential times a positive "
        "factor, > 0 everywhere (cos or sin features can be negative)"
    )
    features = torch.rand(3, 6, dtype=torch.float64)
    for smallest in (-0.5, 0.0):
        features[0, 0] = smallest
        message = failure(checks.check_positive_features, features, x[:3],
                          torch.randn(5, 6, generator=generator, dtype=torch.float64))
        assert diagnosis(message) == not_positive


def test_a_mistake_named_inside_a_check_drops_the_name(qk):
    q, k = qk
    scores = q @ k.T
    assert diagnosis(failure(checks.check_softmax, torch.exp(scores), scores)) == (
        "you returned exp(s) without dividing by the sum of the row"
    )
    pairs = failure(checks.check_window_pairs, [("a", "a"), ("a", "b"), ("b", "a"), ("b", "b")],
                    ["a", "b"], 1)
    assert diagnosis(pairs) == "it pairs each word with itself (j = 0); the context is 0 < |j| <= c"


def test_unknown_wrong_values_count_together_whatever_the_values(qk):
    q, k = qk
    right = torch.softmax(q @ k.T / 3**0.5, -1)
    first = failure(checks.check_attention_weights, right + 1, q, k, False, "weights(Q, K)")
    second = failure(checks.check_attention_weights, right * 3, q, k, False, "weights(Q, K)")
    assert first != second
    assert diagnosis(first) == diagnosis(second) == "weights(Q, K) is not right (tolerance 0.0001)"
    missing = failure(checks.check_attention_weights, None, q, k, False, "weights(Q, K)")
    assert diagnosis(missing) == "weights(Q, K) is None: did you forget to return or assign it?"


def test_other_exceptions_give_their_name_and_a_short_text():
    with pytest.raises(NameError) as raised:
        exec("scores(Q, K)", {})
    assert diagnosis(f"NameError: {raised.value}") == "NameError: name 'scores' is not defined"
    assert diagnosis("NotImplementedError") == "NotImplementedError: answer left blank"
    assert diagnosis("AssertionError") == "AssertionError"
    long = diagnosis("TypeError: " + "x" * 500 + "\nsecond line")
    assert long.startswith("TypeError: xxx") and long.endswith("…") and len(long) == 160
    assert diagnosis("stderr: /site/torch/x.py:3: UserWarning: a view was written to") == (
        "UserWarning: a view was written to"
    )


def test_diagnosis_wants_a_failure_message():
    with pytest.raises(ValueError, match="empty"):
        diagnosis("  ")
    with pytest.raises(TypeError, match="str"):
        diagnosis(None)

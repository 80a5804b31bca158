"""The comparison outside the kernel: values as the kernel reports them, decided here.

The expected values are written by hand (or by NumPy from hand-written formulas), never by
the code under test; each test was seen failing with the comparison broken on purpose.
"""

import json
import math

import numpy as np
import pytest
import torch
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_output

from course_utils.checks.guards.report import FULL, MIME, encode
from course_utils.exercises import Compare
from grader.scoring.outside import OUTSIDE, CompareOutside, take_reports, verdict
from grader.scoring.same_value import kept, same

LOOSE = Compare()


@pytest.mark.parametrize("got, expected", [
    ([1.0, 2.0], torch.tensor([1.0, 2.0])),                        # a list and a tensor
    (np.array([[1, 2], [3, 4]], dtype=np.float32), [[1.0, 2.0], [3.0, 4.0]]),
    (torch.tensor([[True, False]]), [[1, 0]]),                      # bool and int
    (3, 3.0000001),
    (torch.tensor(2.5), 2.5),                                       # a 0-d tensor, a number
    ({("a", "b"): 3}, {("a", "b"): 3.0}),                           # tuple keys, Counter-like
    ([float("nan"), 1.0], torch.tensor([math.nan, 1.0])),
    ({"x", "y"}, frozenset({"y", "x"})),
    ("the", "the"),
    ([["a", "b"], 2], (("a", "b"), 2)),                             # tuples and lists alike
])
def test_the_same_value_in_another_container_or_dtype_is_the_same(got, expected):
    assert same(encode(got), encode(expected), LOOSE)


@pytest.mark.parametrize("got, expected", [
    ([1.0, 2.0], [1.0, 2.1]),
    ([1.0, 2.0], [[1.0, 2.0]]),                                     # another shape
    ([1.0, 2.0, 3.0], [1.0, 2.0]),
    ({("a", "b"): 3}, {("a", "c"): 3}),
    ({"x"}, {"x", "y"}),
    ("the", "The"),
    (None, 0),
    ([float("nan")], [0.0]),
    ([["a", "b"], ["c", "d"]], [["c", "d"], ["a", "b"]]),          # order matters by default
])
def test_a_different_value_is_not_the_same(got, expected):
    assert not same(encode(got), encode(expected), LOOSE)


def test_unordered_accepts_any_order_and_nothing_else():
    pairs = [("a", "b"), ("c", "d"), ("a", "b")]
    rule = Compare(unordered=True)
    assert same(encode(pairs[::-1]), encode(pairs), rule)
    assert not same(encode([("a", "b"), ("c", "d"), ("c", "d")]), encode(pairs), rule)


def test_unordered_accepts_numbers_and_rows_of_numbers_in_any_order():
    rule = Compare(unordered=True)
    ids = [(4, 1), (4, 4), (1, 4), (4, 1)]  # pairs of word ids: reported as one array
    assert same(encode(torch.tensor(ids[::-1])), encode(ids), rule)
    assert same(encode([3.0, 1.0, 2.0]), encode([1.0, 2.0, 3.0]), rule)
    assert not same(encode([(4, 1), (4, 4), (1, 4), (1, 4)]), encode(ids), rule)
    assert not same(encode([(1, 4), (4, 1), (4, 4), (4, 1)]), encode(ids), LOOSE)
    assert not same(encode([[4, 1, 4, 4], [1, 4, 4, 1]]), encode(ids), rule)  # another shape


def test_a_large_array_is_compared_by_its_summary_within_the_elementwise_tolerance():
    generator = torch.Generator().manual_seed(0)
    right = torch.randn(80, 70, generator=generator, dtype=torch.float64)
    assert right.numel() > FULL
    report = encode(right)
    assert "summary" in report["array"] and "values" not in report["array"]
    # float32 rounding and noise inside the tolerance pass; a row off, or all, fails
    assert same(encode(right.float()), report, LOOSE)
    assert same(encode(right + 0.5 * LOOSE.atol), report, LOOSE)
    off = right.clone()
    off[41] += 0.05
    assert not same(encode(off), report, LOOSE)
    assert not same(encode(right * 1.01), report, LOOSE)
    assert not same(encode(right.T.contiguous()), report, LOOSE)    # same values, wrong shape
    assert same(encode(right.tolist()), report, LOOSE)             # a list summarised alike
    rows = torch.randn(3, FULL + 1, generator=generator, dtype=torch.float64)
    assert same(encode(rows.tolist()), encode(rows), LOOSE)        # rows longer than FULL too
    assert same(encode(rows.tolist()), encode(rows), Compare(distribution=True))
    assert not same(encode((rows * 1.01).tolist()), encode(rows), LOOSE)


def test_random_draws_compare_as_samples_of_one_law():
    """Cauchy draws made two ways (NumPy's sampler, the tangent of a uniform angle) are one
    law; a normal sample, or Cauchy at twice the scale, is not."""
    rule = Compare(distribution=True)
    rng, other = np.random.default_rng(0), np.random.default_rng(1)
    solution = 0.3 * rng.standard_cauchy((4, 5000))
    tangent = 0.3 * np.tan(np.pi * (other.uniform(size=(4, 5000)) - 0.5))
    assert same(encode(tangent), encode(solution), rule)
    assert not same(encode(0.3 * other.standard_normal((4, 5000))), encode(solution), rule)
    assert not same(encode(2 * tangent), encode(solution), rule)
    assert not same(encode(tangent.T), encode(solution), rule)
    assert not same(encode(tangent), encode(solution), LOOSE)  # not the same values


def reported_cell(grade_id: str, values: list, failed: bool = False) -> NotebookNode:
    cell = new_code_cell("checks.check(...)")
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": grade_id,
                                 "points": 2}
    cell.outputs = [new_output("stream", name="stdout", text="✓ passed\n")]
    cell.outputs += [new_output("display_data", data={MIME: {"value": encode(value)}})
                     for value in values]
    if failed:
        cell.outputs.append(new_output("error", ename="TestFailed", evalue="rows", traceback=[]))
    return cell


def stored(values: list) -> dict:
    return {"test_x": [{"value": encode(value)} for value in values]}


def test_the_reports_are_taken_out_and_the_rest_kept():
    cell = reported_cell("test_x", [1.0, [2, 3]])
    assert take_reports(cell) == [1.0, encode([2, 3])]
    assert [output.output_type for output in cell.outputs] == ["stream"]


@pytest.mark.parametrize("reported, why", [
    ([1.0, [2, 3]], ""),
    ([1.0, [2, 4]], "check 2 of 2 got a value that differs"),
    ([1.0], "the cell stopped after 1 of its 2 checks"),
    ([], "the cell stopped after 0 of its 2 checks"),
    ([1.0, [2, 3], 5], "3 values were checked where the test checks 2"),
])
def test_a_cell_passes_only_when_every_value_is_the_stored_one(reported, why):
    got = verdict("test_x", [encode(v) for v in reported], stored([1.0, [2, 3]]), "ada")
    assert (got.startswith(why) if why else got == "")


def test_without_stored_answers_a_cell_that_reports_fails_and_one_that_does_not_passes():
    assert "no stored answers" in verdict("test_x", [encode(1.0)], None, "ada")
    assert verdict("test_x", [], None, "ada") == ""


def test_a_per_student_value_is_left_to_the_kernel_unless_the_grader_can_work_it_out(
        monkeypatch):
    entries = {"test_x": [{"per_student": True}, {"value": 2.0}]}
    assert verdict("test_x", [encode(99.0), encode(2.0)], entries, "ada") == ""
    from grader.scoring import outside

    monkeypatch.setitem(outside.PER_STUDENT, "test_x", lambda student, index: 7.0)
    assert verdict("test_x", [encode(7.0), encode(2.0)], entries, "ada") == ""
    assert verdict("test_x", [encode(99.0), encode(2.0)], entries, "ada").startswith("check 1")


def test_the_preprocessor_fails_a_wrong_cell_keeps_a_kernel_failure_and_strips_every_report(
        tmp_path):
    folder = tmp_path / "answers" / "a1"
    folder.mkdir(parents=True)
    (folder / "nb.json").write_text(json.dumps({"tests": {**stored([1.0]), "test_y": []}}))
    right, wrong = reported_cell("test_x", [1.0]), reported_cell("test_x", [2.0])
    failed_in_kernel = reported_cell("test_x", [2.0], failed=True)
    plain = new_code_cell("print(1)")
    plain.outputs = [new_output("display_data", data={MIME: {"value": 5}})]
    outputs = []
    for cell in (right, wrong, failed_in_kernel):
        notebook = NotebookNode(cells=[plain, cell], metadata={}, nbformat=4, nbformat_minor=5)
        CompareOutside(answers_directory=str(tmp_path / "answers")).preprocess(
            notebook, {"nbgrader": {"assignment": "a1", "notebook": "nb", "student": "ada"}})
        outputs.append([output.get("ename") for output in cell.outputs
                        if output.output_type == "error"])
        assert plain.outputs == []
        assert not any(MIME in output.get("data", {}) for output in cell.outputs)
    assert outputs == [[], [OUTSIDE], ["TestFailed"]]


def test_random_features_compare_by_the_kernel_they_estimate():
    """Features of one Gaussian kernel made two honest ways (cos(wᵀx + b) and cos(b − wᵀx),
    w and −w being equally likely) estimate one kernel; features without the √2, or of
    another bandwidth, do not."""
    rule = Compare(feature_map=True)
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 2))
    w, b = rng.normal(size=(2, 8000)), rng.uniform(0, 2 * np.pi, 8000)
    solution = np.sqrt(2 / 8000) * np.cos(x @ w + b)
    stored_gram = kept(encode(solution, whole=True), rule)
    assert stored_gram["features"] == 8000
    exact = np.exp(-((x[:, None] - x[None]) ** 2).sum(-1) / 2)
    assert np.abs(np.array(stored_gram["gram"]) - exact).max() < 0.05   # the estimate is one
    negated = np.sqrt(2 / 8000) * np.cos(b - x @ w)
    assert same(encode(negated, whole=True), stored_gram, rule)
    assert not same(encode(negated / np.sqrt(2), whole=True), stored_gram, rule)
    assert not same(encode(np.sqrt(2 / 8000) * np.cos(2 * x @ w + b), whole=True),
                    stored_gram, rule)
    assert not same(encode(negated[:, :4000], whole=True), stored_gram, rule)


def test_the_ta_is_told_of_a_cell_that_passed_in_the_kernel_but_not_outside():
    from nbformat.v4 import new_notebook, writes

    from grader.running.worker import Result
    from grader.scoring.autograde import incidents

    cell = reported_cell("test_x", [])
    cell.outputs.append(new_output("error", ename=OUTSIDE, evalue="check 1 of 2 ...",
                                   traceback=[]))
    result = Result("a1", "ada", graded=True, notebooks={"nb.ipynb": writes(
        new_notebook(cells=[cell]))})
    assert incidents(result) == (
        "cell test_x passed in the kernel but not on the grader's comparison")

"""Notebook 04's exercise 6, judged outside the kernel: the slips of the given function.

The sentences below were worked by hand from the given function's three lines: chunk(3)
cuts 2 d_k + d_v columns into parts of ceil((2 d_k + d_v) / 3), right when that is d_k
(d_k − 3 < d_v ≤ d_k); the scale √d_model is right when d_model = d_k, or when n = 1 (one
weight, 1 whatever its score); the example's 3 × 3 mask is right only when n = 3.
"""

import pytest

from course_utils.checks.guards.report import encode
from grader.scoring.given_slips import JUDGED, SLIPS, goes_wrong, right
from grader.scoring.outside import verdict

RIGHT = {"Q, K, V": (3, 4, 4, 8), "scores": (3, 8, 4, 4), "future": (5, 4, 4, 4)}


@pytest.mark.parametrize(("line", "sizes", "wrong"), [
    ("Q, K, V", (3, 4, 4, 4), False),   # d_v = d_k
    ("Q, K, V", (3, 4, 3, 2), False),   # d_v = d_k − 1: three parts of 3 by chance
    ("Q, K, V", (3, 4, 3, 1), False),   # d_v = d_k − 2: the same
    ("Q, K, V", (3, 4, 4, 1), True),    # d_v = d_k − 3: parts of 3, not 4
    ("Q, K, V", (3, 4, 4, 5), True),
    ("scores", (3, 4, 4, 4), False),
    ("scores", (1, 8, 4, 4), False),    # one word: one weight, 1
    ("scores", (2, 8, 4, 4), True),
    ("future", (3, 8, 2, 6), False),
    ("future", (1, 4, 4, 4), True),     # an error, as for any other n
    ("future", (4, 4, 4, 4), True),
])
def test_a_line_goes_wrong_where_worked_by_hand(line, sizes, wrong):
    assert goes_wrong(line, sizes) is wrong


@pytest.mark.parametrize("answer", [
    RIGHT,
    {"q,k,v": [3, 5, 5, 1], "Scores": [3, 5, 3, 3], "future": [1, 6, 6, 6]},
    {"QKV": (3, 2, 2, 6), "scores": (3, 3, 2, 2), "future": (4, 2, 2, 2)},
])
def test_every_right_answer_is_right(answer):
    assert right(answer)
    assert JUDGED["test_my_slips"](encode(answer), 0)


@pytest.mark.parametrize("answer", [
    {**RIGHT, "scores": (3, 4, 4, 4)},           # the scale holds there
    {**RIGHT, "Q, K, V": (4, 4, 3, 2)},          # three equal parts by chance, and n = 4
    {**RIGHT, "future": (5, 8, 4, 4)},           # the scale goes wrong there too
    {"Q, K, V": (3, 4, 4, 8), "scores": (3, 8, 4, 4), "alpha": (5, 4, 4, 4)},
    {"Q, K, V": (3, 4, 4, 8), "scores": (3, 8, 4, 4)},
    {**RIGHT, "return": (5, 4, 4, 4)},
    {**RIGHT, "future": (5, 4, 4, 65)},          # larger than the exercise allows
    {**RIGHT, "future": (5, 4, 4.0, 4)},
    {**RIGHT, "future": (5, 4, 4)},
    {**RIGHT, "scores": (3, 8, 4, 4), "Scores": (3, 8, 4, 4)},
])
def test_every_wrong_answer_is_wrong(answer):
    assert not right(answer)
    assert not JUDGED["test_my_slips"](encode(answer), 0)


@pytest.mark.parametrize("reported", [None, 3, [1, 2], {"dict": [["scores", 1]]}, encode(...)])
def test_a_value_that_is_no_answer_is_wrong(reported):
    assert not JUDGED["test_my_slips"](reported, 0)


def test_the_three_slips_are_the_given_functions_lines_that_assign_and_not_alpha():
    assert SLIPS == ("Q, K, V", "scores", "future")
    assert not any(goes_wrong(line, (3, 4, 4, 4)) for line in SLIPS)   # the example's sizes


def test_a_judged_value_is_decided_by_its_judge_outside_the_kernel():
    stored = {"test_my_slips": [{"judged": True}]}
    assert verdict("test_my_slips", [encode(RIGHT)], stored, "ada") == ""
    wrong = {**RIGHT, "scores": (3, 4, 4, 4)}
    assert "not right" in verdict("test_my_slips", [encode(wrong)], stored, "ada")
    assert "stopped after 0" in verdict("test_my_slips", [], stored, "ada")
    assert "not right" in verdict("test_other", [encode(RIGHT)],
                                  {"test_other": [{"judged": True}]}, "ada")

"""Notebook 04's exercise 4, the lectures' lookup of Mexican food worked by hand on each
student's own menu: the draw and its checks (well-formed, consistent with each other, the
likely slips of the average; whether the numbers are right is graded outside the kernel,
tests/grader/scoring/test_by_hand_answers.py), against a menu worked with pen and paper."""

import json
import math
import os
import subprocess
import sys

import pytest
import torch

from course_utils.by_hand import FOODS, menu_of
from course_utils.exercises import exercise

# The instructor's menu (the solution notebook's), worked by hand. K as the lecture prints
# it, a column per food (burrito, taco, sushi, apple); V likewise (price, calories, salt).
Q = (0.6, -1.0, 0.5, -0.4)
KEYS = ((0.7, -0.7, -0.8, 0.4), (0.0, -0.7, 0.4, -0.4), (-1.0, -0.2, 1.0, -0.4),
        (-1.0, -0.3, -0.8, 0.9))
VALUES = ((9.5, 770, 2.7), (12, 740, 1.4), (5.5, 710, 2.3), (8, 630, 2.5))
# k_n · q: 0.42 + 0.7 - 0.4 - 0.16 = 0.56; 0 + 0.7 + 0.2 + 0.16 = 1.06;
# -0.6 + 0.2 + 0.5 + 0.16 = 0.26; -0.6 + 0.3 - 0.4 - 0.36 = -1.06
DOTS = (0.56, 1.06, 0.26, -1.06)
# e^0.56 = 1.7507, e^1.06 = 2.8864, e^0.26 = 1.2969, e^-1.06 = 0.3465; sum 6.2804
WEIGHTS = [0.279, 0.46, 0.207, 0.055]  # each e^(k_n · q) / 6.2804, to 3 decimals
# V times those weights, to 2 decimals: 0.279 * 9.5 + 0.46 * 12 + 0.207 * 5.5 + 0.055 * 8 ...
AVERAGE = [9.75, 736.85, 2.01]
# the same with the dot products halved (exercises 1 to 3's 1/√d_k): e^0.28 = 1.3231,
# e^0.53 = 1.6989, e^0.13 = 1.1388, e^-0.53 = 0.5886; sum 4.7495
HALVED = [0.279, 0.358, 0.24, 0.124]


CHECK_AS = """
import contextlib
import io
import json
from course_utils import checks

def restored(value):  # JSON has no Ellipsis: "..." stands for it
    if isinstance(value, list):
        return [restored(item) for item in value]
    return ... if value == "..." else value


outcome = []
for check, *arguments in json.loads({calls!r}):
    arguments = [restored(argument) for argument in arguments]
    said = io.StringIO()
    try:
        with contextlib.redirect_stdout(said):
            getattr(checks, check)(*arguments, "answer")
        notes = [line for line in said.getvalue().splitlines() if not line.startswith("✓ ")]
        outcome.append("passed" + (" with a note: " + " ".join(notes) if notes else ""))
    except AssertionError as error:
        outcome.append(str(error))
print(json.dumps(outcome))
"""


def checked_as(student: str | None, *calls: tuple) -> list[str]:
    """What each ``(check, answer, *other answers)`` says in a fresh interpreter whose
    student is ``student`` ("passed", "passed with a note: ...", or the failure's message):
    the id is the one a process starts with, which a test cannot change in its own. The
    string "..." in an answer stands for ``...``."""
    env = {name: value for name, value in os.environ.items()
           if name not in ("COURSE_STUDENT", "JUPYTERHUB_USER")}
    if student is not None:
        env["COURSE_STUDENT"] = student
    done = subprocess.run([sys.executable, "-c", CHECK_AS.format(calls=json.dumps(calls))],
                          env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_the_instructors_menu_is_the_one_worked_by_hand():
    menu = menu_of("instructor")
    assert (menu.q, menu.keys, menu.values) == (Q, KEYS, VALUES)
    assert menu_of("ada") != menu and menu_of(None) != menu
    shown = str(menu)
    assert "Student id: instructor" in shown and all(food in shown for food in FOODS)
    # printed as the lecture writes K: row i holds entry i of every food's key
    assert "K (the keys)             0.7      0.0     -1.0     -1.0" in shown
    assert "DEMONSTRATION" in str(menu_of(None))


def test_the_hand_worked_numbers_agree_with_torch():
    def tensor(numbers):
        return torch.tensor(numbers, dtype=torch.float64)

    dots = tensor(KEYS) @ tensor(Q)
    assert torch.allclose(dots, tensor(DOTS), atol=1e-9)
    weights = torch.softmax(dots, dim=0)
    assert torch.allclose(weights, tensor(WEIGHTS), atol=5e-4)
    assert torch.allclose(torch.softmax(dots / 2, dim=0), tensor(HALVED), atol=5e-4)
    exact = weights @ tensor(VALUES)
    assert torch.allclose(tensor(AVERAGE), exact, atol=0, rtol=1.5e-3)


@pytest.mark.parametrize("student", [f"student{i}" for i in range(300)])
def test_every_menu_tells_the_lookups_story_and_separates_its_slips(student):
    """The slips of the weights move one by more than the tolerance the grader compares
    with (the record's, course_utils.exercises.alpha3_by_hand)."""
    menu = menu_of(student)
    dots = [sum(q * k for q, k in zip(menu.q, key, strict=True)) for key in menu.keys]
    assert min(dots[:2]) > max(dots[2:]), "burrito and taco must be the most Mexican"
    assert 1.5 - 1e-9 <= max(dots) - min(dots) <= 4 + 1e-9 and len(set(dots)) == 4
    keys, q = (torch.tensor(part, dtype=torch.float64) for part in (menu.keys, menu.q))
    right = torch.softmax(keys @ q, dim=0)
    rule = exercise("mexican_by_hand").compare
    slips = {"scaled": torch.softmax(keys @ q / 2, dim=0),
             "rows of K": torch.softmax(keys.T @ q, dim=0),
             "no softmax": keys @ q / (keys @ q).sum()}
    for slip, wrong in slips.items():
        assert ((wrong - right).abs() > rule.atol + rule.rtol * right.abs()).any(), slip


WEIGHTS_CHECK, AVERAGE_CHECK = "check_own_mexican_weights", "check_own_mexican_average"


def averaged(weights) -> list[float]:
    return [sum(w * value[row] for w, value in zip(weights, VALUES, strict=True))
            for row in range(3)]


def test_the_checks_as_the_instructors_kernel_runs_them():
    rows = [sum(key[i] * q for key, q in zip(KEYS, Q, strict=True)) for i in range(4)]
    rows_of_k = [math.exp(r) / sum(math.exp(x) for x in rows) for r in rows]
    exponentials = [math.exp(dot) for dot in DOTS]
    swapped = averaged([0.46, 0.279, 0.207, 0.055])  # burrito's and taco's weights swapped
    said = iter(checked_as(
        "instructor",
        (WEIGHTS_CHECK, WEIGHTS), (WEIGHTS_CHECK, tuple(WEIGHTS)),
        (AVERAGE_CHECK, AVERAGE, WEIGHTS),
        (AVERAGE_CHECK, [9.7402, 736.0993, 2.0089], WEIGHTS),  # unrounded
        (AVERAGE_CHECK, AVERAGE, "not yet"),   # no weights to check it against
        # wrong weights that a softmax can give: the check cannot tell, the grading does
        (WEIGHTS_CHECK, HALVED), (WEIGHTS_CHECK, rows_of_k),
        (WEIGHTS_CHECK, [0.299, 0.44, 0.207, 0.055]),
        (AVERAGE_CHECK, averaged(HALVED), HALVED),
        # what no softmax gives: apple's dot product is negative, so is its "weight"
        (WEIGHTS_CHECK, [dot / sum(DOTS) for dot in DOTS]),
        (WEIGHTS_CHECK, [0.3, 0.46, 0.207, 0.055]),
        (WEIGHTS_CHECK, [0.279, 0.46, 0.207]),
        # the slips of the average, seen through the student's own weights
        (AVERAGE_CHECK, averaged([0.25] * 4), WEIGHTS),
        (AVERAGE_CHECK, list(VALUES[1]), WEIGHTS),
        (AVERAGE_CHECK, averaged(exponentials), WEIGHTS),
        (AVERAGE_CHECK, swapped, WEIGHTS),
        (AVERAGE_CHECK, [9.75, 800.0, 2.01], WEIGHTS), (AVERAGE_CHECK, [9.75], WEIGHTS)))
    assert [next(said) for _ in range(5)] == ["passed"] * 5
    assert [next(said) for _ in range(4)] == ["passed"] * 4
    assert "negative entries" in next(said)
    assert "should sum to 1" in next(said)
    assert "should be 4 numbers, P(k_n | q) for burrito, taco, sushi, apple" in next(said)
    assert "same weight" in next(said)
    assert "most Mexican food alone" in next(said)
    message = next(said)
    assert "price (€)" in message and "calories (kcal)" in message, message
    message = next(said)
    assert message.startswith("passed with a note: ") and "your own mexican_weights" in message
    assert "price (€)" in message and "cannot tell which" in message, message
    assert "736" not in message and "9.7" not in message, message
    message = next(said)
    assert "calories (kcal) does not" in message and "sum to 1" in message, message
    assert "[price, calories, salt]" in next(said)


def test_another_students_numbers_are_not_told_apart_and_no_id_scores_nothing():
    """The checks never say whether numbers are right for the menu: another student's pass
    them in ada's kernel (they are graded outside it)."""
    assert checked_as("ada", (WEIGHTS_CHECK, WEIGHTS)) == ["passed"]
    for message in checked_as(None, (WEIGHTS_CHECK, WEIGHTS), (AVERAGE_CHECK, AVERAGE, WEIGHTS)):
        assert "no student id is set" in message, message

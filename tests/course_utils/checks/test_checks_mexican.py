"""Notebook 04's exercise 4, the lectures' lookup of Mexican food worked by hand on each
student's own menu: the draw and its checks, against a menu worked with pen and paper."""

import json
import math
import os
import subprocess
import sys

import pytest
import torch

from course_utils import by_hand, checks
from course_utils.by_hand import FOODS, menu_of
from course_utils.checks import by_hand as by_hand_checks

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
import json
from course_utils import checks

outcome = []
for check, answer in json.loads({calls!r}):
    try:
        getattr(checks, check)(answer, "answer")
        outcome.append("passed")
    except AssertionError as error:
        outcome.append(str(error))
print(json.dumps(outcome))
"""


def checked_as(student: str | None, *calls: tuple[str, list]) -> list[str]:
    """What each ``(check, answer)`` says in a fresh interpreter whose student is
    ``student`` ("passed", or the failure's message): the id is the one a process starts
    with, which a test cannot change in its own."""
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
    menu = menu_of(student)
    dots = [sum(q * k for q, k in zip(menu.q, key, strict=True)) for key in menu.keys]
    assert min(dots[:2]) > max(dots[2:]), "burrito and taco must be the most Mexican"
    assert 1.5 - 1e-9 <= max(dots) - min(dots) <= 4 + 1e-9 and len(set(dots)) == 4
    with by_hand_checks._checking():
        right = by_hand_checks._food_weights(menu)
        for message, wrong in by_hand_checks._weights_mistakes(menu).items():
            assert (wrong - right).abs().max() > 2 * by_hand_checks.WEIGHTS_TOLERANCE, message


WEIGHTS_CHECK, MISTAKES_CHECK, AVERAGE_CHECK = (
    "check_own_mexican_weights", "check_mexican_average_mistakes", "check_own_mexican_average")


def averaged(weights) -> list[float]:
    return [sum(w * value[row] for w, value in zip(weights, VALUES, strict=True))
            for row in range(3)]


def test_the_checks_as_the_instructors_kernel_runs_them():
    rows = [sum(key[i] * q for key, q in zip(KEYS, Q, strict=True)) for i in range(4)]
    slipped_weights = {  # what each slip of the weights gives, and what the check says
        "divided the dot products by √d_k": HALVED,
        "rows of K as the foods' keys": [math.exp(r) / sum(math.exp(x) for x in rows)
                                         for r in rows],
        # apple's dot product is negative, so is its "weight": no softmax gives that
        "negative entries: softmax": [dot / sum(DOTS) for dot in DOTS],
        "entries [1, 2] (counting from 1) are off": [0.299, 0.44, 0.207, 0.055]}
    exponentials = [math.exp(dot) for dot in DOTS]
    slipped_averages = {"same weight": averaged([0.25] * 4),
                        "most Mexican food alone": list(VALUES[1]),
                        "without dividing by the sum": averaged(exponentials),
                        "divided the dot products by √d_k": averaged(HALVED)}
    swapped = averaged([0.46, 0.279, 0.207, 0.055])  # burrito's and taco's weights swapped
    with by_hand_checks._checking():
        demonstration = by_hand_checks._food_weights(menu_of(None)).tolist()
    calls = [(WEIGHTS_CHECK, WEIGHTS), (WEIGHTS_CHECK, tuple(WEIGHTS)),
             (MISTAKES_CHECK, AVERAGE), (AVERAGE_CHECK, AVERAGE),
             (AVERAGE_CHECK, [9.7402, 736.0993, 2.0089]),   # unrounded
             *[(WEIGHTS_CHECK, weights) for weights in slipped_weights.values()],
             *[(check, average) for average in slipped_averages.values()
               for check in (MISTAKES_CHECK, AVERAGE_CHECK)],
             (MISTAKES_CHECK, swapped), (AVERAGE_CHECK, swapped),
             (MISTAKES_CHECK, [9.75, 800.0, 2.01]), (MISTAKES_CHECK, [9.75]),
             (WEIGHTS_CHECK, demonstration)]
    said = iter(checked_as("instructor", *calls))
    assert [next(said) for _ in range(5)] == ["passed"] * 5
    for expected, weights in slipped_weights.items():
        message = next(said)
        assert expected in message, message
        assert "0.46" not in message.replace(str(weights[:1])[1:-1], ""), message
    for expected in slipped_averages:
        for _ in range(2):  # the visible check names it, and so does the hidden one
            message = next(said)
            assert expected in message, message
    assert next(said) == "passed"   # the swap is no likely slip: only the hidden check sees it
    message = next(said)
    assert "price (€)" in message and "salt (g)" in message and "736" not in message, message
    message = next(said)
    assert "calories (kcal) does not" in message and "sum to 1" in message, message
    assert "[price, calories, salt]" in next(said)
    assert "demonstration menu" in next(said)


def test_another_students_numbers_and_no_id_score_nothing():
    for message in checked_as("ada", (WEIGHTS_CHECK, WEIGHTS), (AVERAGE_CHECK, AVERAGE)):
        assert "is not right" in message, message
    for message in checked_as(None, (WEIGHTS_CHECK, WEIGHTS), (MISTAKES_CHECK, AVERAGE)):
        assert "no student id is set" in message, message


def test_the_helpers_refuse_outside_a_check_and_the_comparison_leaves_the_average_out():
    with pytest.raises(by_hand_checks.NotWhileAnswering):
        by_hand_checks._food_weights(menu_of("ada"))
    with pytest.raises(by_hand_checks.NotWhileAnswering):
        by_hand_checks._food_average(menu_of("ada"))
    with pytest.raises(TypeError, match="compare_by_hand takes"):
        checks.compare_by_hand(mexican_by_hand=AVERAGE)


def test_whose_numbers_an_average_holds():
    ada = by_hand.sentence_of("instructor")
    assert checks.right_for("mexican_by_hand", AVERAGE, ada)
    assert not checks.right_for("mexican_by_hand", AVERAGE, by_hand.sentence_of("ada"))

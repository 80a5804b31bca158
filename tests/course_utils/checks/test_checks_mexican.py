"""Notebook 04's exercise 4, a prediction of the lectures' lookup of Mexican food on each
student's own menu (not graded): the draw, against a menu worked with pen and paper."""

import pytest
import torch

from course_utils.by_hand import DISTINCT, FOODS, menu_of

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
def test_every_menu_tells_the_lookups_story_and_shows_what_the_scale_does(student):
    """Burrito and taco lead; the 1/√d_k the lecture leaves out, the rows of K taken as keys
    (the notation's likely slip) or no softmax each move a weight by more than the draw's
    DISTINCT; and the scale always shrinks the largest weight (the notebook says so)."""
    menu = menu_of(student)
    dots = [sum(q * k for q, k in zip(menu.q, key, strict=True)) for key in menu.keys]
    assert min(dots[:2]) > max(dots[2:]), "burrito and taco must be the most Mexican"
    assert 1.5 - 1e-9 <= max(dots) - min(dots) <= 4 + 1e-9 and len(set(dots)) == 4
    keys, q = (torch.tensor(part, dtype=torch.float64) for part in (menu.keys, menu.q))
    right = torch.softmax(keys @ q, dim=0)
    slips = {"scaled": torch.softmax(keys @ q / 2, dim=0),
             "rows of K": torch.softmax(keys.T @ q, dim=0),
             "no softmax": keys @ q / (keys @ q).sum()}
    for slip, wrong in slips.items():
        assert ((wrong - right).abs() > DISTINCT).any(), slip
    assert slips["scaled"].max() < right.max()

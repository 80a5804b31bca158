"""Checks of notebook 04's numbers worked by hand: well-formed, and consistent with each
other. Never whether they are right.

A visible check that said, entry by entry, whether typed numbers are right for the
student's own sentence would be an oracle: a ten-line loop over candidate values, calling
it and keeping what passes, would find the numbers without any arithmetic. So the checks
here fail only when the numbers cannot be right for anyone:

* when they are not there, not as many as asked, or not numbers (``...`` left, NaN);
* when they break what every right answer keeps: α₃ and the menu's weights sum to 1 and
  none is negative; a₃ and the menu's average lie between the smallest and largest of the
  values they mix (to the rounding asked);
* when they show a slip by how they follow from the student's OTHER numbers: a₃ is
  Σ_j α_3j k_j of their own α₃ (the keys weighted instead of the values), the average
  weights every food alike or takes the top food alone; or they are the worked example's
  scores, which are nobody's.

And they say, without failing, whether the numbers agree with each other, within the
rounding the exercises ask for: α₃ is the softmax of the student's own scores (exercise 1);
a₃ is Σ_j α_3j v_j of their own α₃ and the sentence's values; the average is
Σ_n P(k_n | q) v_n of their own weights and the menu's values. A disagreement means one of
the two is off, and the check cannot know which: failing the later one would cost a right
answer its points for an earlier slip.

Whether the numbers are right for the student's sentence and menu is decided when the work
is graded, in the grader's process: it works them out from the student's id
(``grader.scoring.by_hand_answers``, which no student receives) and compares each value the
test cells report with them, under the exercise's tolerance (its record's ``compare``,
``course_utils.exercises``). Nothing in ``course_utils`` computes them: it draws the
sentence and the menu (the inputs, :mod:`course_utils.by_hand`), and that is all.

Each check fails without a student id, and says how to set one: the values a₃ and the
average are mixed from are drawn from it, and numbers worked from the demonstration's
sentence score 0 when graded.
"""

import torch

from ..by_hand import FOODS, VALUE_ROWS, OwnMenu, OwnSentence, own_menu, own_sentence
from ..exercises import exercise
from ..student import HOW_TO_SET_THE_ID
from .attention import MISTAKES
from .core import as_tensor
from .guards import checked_plainly, plain

__all__ = ["FOOD_MISTAKES", "check_own_alpha_3", "check_own_mexican_average",
           "check_own_mexican_weights", "check_own_output_3", "check_own_scores_3"]

NO_ID = ("no student id is set, so the sentence printed at exercise 1 is the\n"
         "DEMONSTRATION's, and numbers worked from it score 0 when your work is graded.\n"
         "Set your id, then work the numbers of the sentence printed for it.\n"
         + HOW_TO_SET_THE_ID)
# The lectures' worked example, in the notebook's text: no student's sentence has its dot
# products (course_utils.by_hand draws again), so its scores are nobody's.
WORKED_SCORES = (-0.5, -2.0, 1.0)
NOT_YOURS = ("these are the scores of the worked example (the lectures' sentence), not of "
             "your own sentence printed at the top of exercise 1")
# How far a softmax's rounded weights may sum from 1: each is off by up to half its last
# decimal (α₃: 3 weights to 3 decimals; the menu: 4 weights to 3 decimals).
SUM_TOLERANCE = {"alpha_3_by_hand": 0.002, "mexican_weights": 0.0025}
FOOD_MISTAKES = {
    "equal_weights": "you gave every food the same weight: look at what multiplies each "
    "food's value in the lecture's v_q",
    "top_food": "you took the values of the most Mexican food alone: look at which foods the "
    "sum of the lecture's v_q runs over",
}
GRADED = ("one of the two answers is off, and this check cannot tell which: both are "
          "graded against your own sentence when your work is graded")


def _yours(name: str) -> OwnSentence:
    """The student's sentence; fails, saying how to set the id, when there is none."""
    yours = own_sentence()
    if yours.student is None:
        raise AssertionError(f"{name}: {NO_ID}")
    return yours


def _yours_menu(name: str) -> OwnMenu:
    """The student's menu; fails, saying how to set the id, when there is none."""
    yours = own_menu()
    if yours.student is None:
        raise AssertionError(f"{name}: {NO_ID}")
    return yours


def _numbers(answer, count: int, name: str, what: str = "") -> torch.Tensor:
    """``answer`` (already plain) as ``count`` finite float64 numbers; else AssertionError."""
    numbers = as_tensor(answer, name)
    if tuple(numbers.shape) != (count,):
        raise AssertionError(f"{name} should be {count} numbers{what}; got shape "
                             f"{tuple(numbers.shape)}")
    if not torch.isfinite(numbers).all():
        raise AssertionError(f"{name} should be {count} numbers; it holds NaN or infinity")
    return numbers


def _typed(value, count: int) -> torch.Tensor | None:
    """Another of the student's answers (``scores_3_by_hand`` for α₃, ...) as ``count``
    finite numbers, or None when it is not that yet (a blank, a stray object): then
    nothing is checked against it."""
    try:
        return _numbers(plain(value, "an earlier answer"), count, "an earlier answer")
    except AssertionError:
        return None


def _sums_to_one(weights: torch.Tensor, name: str, exercise_name: str) -> None:
    """Fail unless ``weights`` are a softmax's: none negative, summing to 1 (rounded)."""
    if (weights < 0).any():
        raise AssertionError(f"{name} has negative entries: a softmax gives weights between "
                             "0 and 1")
    total = weights.sum().item()
    if abs(total - 1) > SUM_TOLERANCE[exercise_name]:
        raise AssertionError(f"{name} should sum to 1, as a softmax's weights do; yours sum "
                             f"to {total:.4f}: check each e^x and the sum you divided by")


def _note(name: str, text: str) -> None:
    """Say, without failing, that ``name`` disagrees with another of the student's answers."""
    print(f"{name}: note: {text}; {GRADED}.")


def _off(actual: torch.Tensor, expected: torch.Tensor, name: str) -> list[int]:
    """The entries, from 1, where ``actual`` is farther from ``expected`` than the record of
    exercise ``name`` allows (``atol + rtol·|expected|``: the rounding it asks for)."""
    rule = exercise(name).compare
    far = (actual - expected).abs() > rule.atol + rule.rtol * expected.abs()
    return [index + 1 for index in far.nonzero().flatten().tolist()]


def _in_range(average: torch.Tensor, values: torch.Tensor, rows, name: str,
              exercise_name: str, hint: str) -> None:
    """Fail when an entry of ``average`` lies outside the smallest and largest of the
    values it averages (one row each), by more than the rounding the record of
    ``exercise_name`` allows: no weights summing to 1 give that."""
    rule = exercise(exercise_name).compare
    low, high = values.min(dim=0).values, values.max(dim=0).values
    outside = [row for row, x, a, b in zip(rows, average, low, high, strict=True)
               if not a - rule.atol - rule.rtol * abs(a) <= x <= b + rule.atol + rule.rtol * abs(b)]
    if outside:
        raise AssertionError(
            f"{name} is not right: a weighted average lies between the smallest and largest "
            f"value it averages, and your {', '.join(map(str, outside))} does not: {hint}")


def _agreement(name: str, off: list[int], disagrees: str, passed: str, why: str = "") -> None:
    """Note that ``name`` is not ``disagrees`` (the student's other numbers worked on) at the
    entries ``off``, and ``why``; or, where none is off, that it ``passed``."""
    if off:
        _note(name, f"{disagrees}: entries {off} (counting from 1) differ by more than the "
              f"rounding allows{why}")
    else:
        _passed(name, passed)


def _passed(name: str, what: str, whose: str = "sentence") -> None:
    """Say what the check saw, and that it does not know whether the numbers are right."""
    print(f"✓ {name}: {what}; whether right for your own {whose} is checked when your work "
          "is graded")


@checked_plainly
def check_own_scores_3(actual, name: str = "scores_3_by_hand") -> None:
    """Fail unless ``actual`` is three numbers, [score_31, score_32, score_33], and not the
    worked example's (whether they are q₃ · k_j / √d_k of the student's sentence is graded
    outside the kernel)."""
    _yours(name)
    scores = _numbers(actual, 3, name, ", [score_31, score_32, score_33]")
    if not _off(scores, torch.tensor(WORKED_SCORES, dtype=torch.float64), "scores_3_by_hand"):
        raise AssertionError(f"{name} is not right: {NOT_YOURS}.")
    _passed(name, "three numbers")


@checked_plainly
def check_own_alpha_3(actual, scores, name: str = "alpha_3_by_hand") -> None:
    """Fail unless ``actual`` is three weights, none negative, summing to 1 (to the rounding
    asked); say whether they are the softmax of the student's own ``scores`` (their answer
    to exercise 1, when it is three numbers). Whether they are right is graded outside the
    kernel."""
    _yours(name)
    alpha = _numbers(actual, 3, name, ", [alpha_31, alpha_32, alpha_33]")
    _sums_to_one(alpha, name, "alpha_3_by_hand")
    own = _typed(scores, 3)
    off = [] if own is None else _off(alpha, torch.softmax(own, dim=0), "alpha_3_by_hand")
    _agreement(name, off, "these weights are not the softmax of your own scores_3_by_hand",
               "three weights summing to 1" + (
                   "" if own is None else ", the softmax of your scores_3_by_hand"),
               " (each α_3j is e^score_3j divided by the sum of the three e^score_3l)")


@checked_plainly
def check_own_output_3(actual, alpha, name: str = "a_3_by_hand") -> None:
    """Fail unless ``actual`` is four numbers that weights summing to 1 can give from the
    sentence's values, and not the student's own ``alpha`` (exercise 2's answer, when it
    is three numbers) times the keys; say whether it is Σ_j α_3j v_j of that ``alpha``.
    Whether it is right is graded outside the kernel."""
    yours = _yours(name)
    values, keys = (torch.tensor(part, dtype=torch.float64) for part in (yours.values, yours.keys))
    output = _numbers(actual, values.shape[1], name)
    weights = _typed(alpha, len(values))
    off = [] if weights is None else _off(output, weights @ values, "a_3_by_hand")
    if off and not _off(output, weights @ keys, "a_3_by_hand"):
        raise AssertionError(f"{name} is not right: {MISTAKES['values_not_weighted']}.")
    entries = [f"entry {i}" for i in range(1, values.shape[1] + 1)]
    _in_range(output, values, entries, name, "a_3_by_hand",
              "are your weights α₃ positive, and do they sum to 1?")
    passed = "four numbers" + (
        "" if weights is None else ", your alpha_3_by_hand times your sentence's values")
    _agreement(name, off, "this is not α_31 v_1 + α_32 v_2 + α_33 v_3 of your own "
               "alpha_3_by_hand and your sentence's values", passed)


@checked_plainly
def check_own_mexican_weights(actual, name: str = "mexican_weights") -> None:
    """Fail unless ``actual`` is four weights, one per food, that a softmax can give: none
    negative, summing to 1 to the rounding asked. Whether they are right is graded outside
    the kernel."""
    _yours_menu(name)
    weights = _numbers(actual, len(FOODS), name, f", P(k_n | q) for {', '.join(FOODS)}")
    _sums_to_one(weights, name, "mexican_weights")
    _passed(name, "four weights summing to 1", "menu")


@checked_plainly
def check_own_mexican_average(actual, weights, name: str = "mexican_by_hand") -> None:
    """Fail unless ``actual``, the average [price, calories, salt], lies between the foods'
    smallest and largest values and is not a likely slip of the student's own ``weights``
    (exercise 4's first answer, when it is four numbers: every food weighted alike, the top
    food alone); say whether it is Σ_n P(k_n | q) v_n of those weights and the menu's
    values. Whether it is right is graded outside the kernel."""
    menu = _yours_menu(name)
    values = torch.tensor(menu.values, dtype=torch.float64)
    average = _numbers(actual, len(VALUE_ROWS), name, ", [price, calories, salt]")
    own = _typed(weights, len(FOODS))
    off = [] if own is None else _off(average, own @ values, "mexican_by_hand")
    if off:
        top = torch.zeros(len(FOODS), dtype=torch.float64)
        top[own.argmax()] = 1.0
        for message, slip in ((FOOD_MISTAKES["equal_weights"], torch.full_like(own, 0.25)),
                              (FOOD_MISTAKES["top_food"], top)):
            if not _off(average, slip @ values, "mexican_by_hand"):
                raise AssertionError(f"{name} is not right: {message}.")
    _in_range(average, values, VALUE_ROWS, name, "mexican_by_hand",
              "are your weights positive, and do they sum to 1?")
    if off:
        rows = ", ".join(VALUE_ROWS[entry - 1] for entry in off)
        _note(name, "this is not the average of the foods' values weighted by your own "
              f"mexican_weights: its {rows} {'differs' if len(off) == 1 else 'differ'} by "
              "more than the rounding allows")
    else:
        _passed(name, "an average within the foods' values" + (
            "" if own is None else ", weighted by your mexican_weights"), "menu")

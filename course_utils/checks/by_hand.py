"""Checks of notebook 04's numbers worked by hand: well-formed, and consistent with each
other. Never whether they are right.

A visible check that said, entry by entry, whether typed numbers are right for the
student's own sentence would be an oracle: a ten-line loop over candidate values, calling
it and keeping what passes, would find the numbers without any arithmetic. So the checks
here fail only when the numbers cannot be right for anyone:

* when they are not there, not as many as asked, or not numbers (``...`` left, NaN);
* when they break what every right answer keeps: α₃ sums to 1 and none of its weights is
  negative; a₃ lies between the smallest and largest of the values it mixes (to the
  rounding asked);
* when they show a slip by how they follow from the student's OTHER numbers: a₃ is
  Σ_j α_3j k_j of their own α₃ (the keys weighted instead of the values); or they are the
  worked example's scores, which are nobody's.

And they say, without failing, whether the numbers agree with each other, within the
rounding the exercises ask for (:data:`ROUNDING`): α₃ is the softmax of the student's own
scores (exercise 1); a₃ is Σ_j α_3j v_j of their own α₃ and the sentence's values. A
disagreement means one of the two is off, and the check cannot know which: failing the
later one would cost a right answer its points for an earlier slip.

Whether the numbers are right for the student's sentence is decided when the work is
graded, in the grader's process: it works them out from the student's id
(``grader.scoring.by_hand_answers``, which no student receives) and compares each value the
test cell reports with them, under the exercise's tolerance (its record's ``compare``,
``course_utils.exercises``). Nothing in ``course_utils`` computes them: it draws the
sentence (the inputs, :mod:`course_utils.by_hand`), and that is all.

Each check fails without a student id, and says how to set one: the values a₃ is mixed
from are drawn from it, and numbers worked from the demonstration's sentence score 0 when
graded.
"""

import torch

from ..by_hand import OwnSentence, own_sentence
from ..student import HOW_TO_SET_THE_ID
from .attention import MISTAKES
from .core import as_tensor
from .guards import checked_plainly, plain

__all__ = ["ROUNDING", "check_own_alpha_3", "check_own_output_3", "check_own_scores_3"]

NO_ID = ("no student id is set, so the sentence printed at exercise 1 is the\n"
         "DEMONSTRATION's, and numbers worked from it score 0 when your work is graded.\n"
         "Set your id, then work the numbers of the sentence printed for it.\n"
         + HOW_TO_SET_THE_ID)
# The lectures' worked example, in the notebook's text: no student's sentence has its dot
# products (course_utils.by_hand draws again), so its scores are nobody's.
WORKED_SCORES = (-0.5, -2.0, 1.0)
NOT_YOURS = ("these are the scores of the worked example (the lectures' sentence), not of "
             "your own sentence printed at the top of exercise 1")
# How far α₃'s rounded weights may sum from 1: each of the 3 is off by up to 0.0005.
SUM_TOLERANCE = 0.002
# How far each answer may lie from the exact value, by the rounding its exercise asks for:
# the scores to 2 decimals, 0.005; α₃ to 3 decimals from the scores to 2, whose rounding moves
# each weight by up to 0.0025, and its own by 0.0005; a₃ to 2 decimals from α₃ to 3, those
# weights off by up to 0.0082 together times values up to 2, and its own rounding: 0.0214.
ROUNDING = {"scores_3_by_hand": 0.006, "alpha_3_by_hand": 0.004, "a_3_by_hand": 0.022}
GRADED = ("one of the two answers is off, and this check cannot tell which: both are "
          "graded against your own sentence when your work is graded")


def _yours(name: str) -> OwnSentence:
    """The student's sentence; fails, saying how to set the id, when there is none."""
    yours = own_sentence()
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


def _sums_to_one(weights: torch.Tensor, name: str) -> None:
    """Fail unless ``weights`` are a softmax's: none negative, summing to 1 (rounded)."""
    if (weights < 0).any():
        raise AssertionError(f"{name} has negative entries: a softmax gives weights between "
                             "0 and 1")
    total = weights.sum().item()
    if abs(total - 1) > SUM_TOLERANCE:
        raise AssertionError(f"{name} should sum to 1, as a softmax's weights do; yours sum "
                             f"to {total:.4f}: check each e^x and the sum you divided by")


def _note(name: str, text: str) -> None:
    """Say, without failing, that ``name`` disagrees with another of the student's answers."""
    print(f"{name}: note: {text}; {GRADED}.")


def _off(actual: torch.Tensor, expected: torch.Tensor, name: str) -> list[int]:
    """The entries, from 1, where ``actual`` is farther from ``expected`` than the rounding
    the answer ``name`` asks for allows (:data:`ROUNDING`)."""
    far = (actual - expected).abs() > ROUNDING[name]
    return [index + 1 for index in far.nonzero().flatten().tolist()]


def _in_range(average: torch.Tensor, values: torch.Tensor, rows, name: str, slack: float,
              hint: str) -> None:
    """Fail when an entry of ``average`` lies outside the smallest and largest of the
    values it averages (one row each), by more than ``slack`` (the rounding asked for): no
    weights summing to 1 give that."""
    low, high = values.min(dim=0).values, values.max(dim=0).values
    outside = [row for row, x, a, b in zip(rows, average, low, high, strict=True)
               if not a - slack <= x <= b + slack]
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
    _sums_to_one(alpha, name)
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
    _in_range(output, values, entries, name, ROUNDING["a_3_by_hand"],
              "are your weights α₃ positive, and do they sum to 1?")
    passed = "four numbers" + (
        "" if weights is None else ", your alpha_3_by_hand times your sentence's values")
    _agreement(name, off, "this is not α_31 v_1 + α_32 v_2 + α_33 v_3 of your own "
               "alpha_3_by_hand and your sentence's values", passed)

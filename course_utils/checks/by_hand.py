"""Checks of notebook 04's numbers worked by hand, against the student's own sentence.

Each check draws the sentence itself (:func:`course_utils.by_hand.own_sentence`, from the
id the kernel was started with), so a number right for another student's sentence, or
for the lectures' worked example, scores 0. Without an id every check fails and says how
to set one: the demonstration's numbers would score 0 when graded.

Nothing here hands a student the numbers. The messages name the entries that are off, or
the mistake the numbers match; :func:`compare_by_hand` says which entries of exercises 1
to 3 agree with the code's numbers, never the numbers. Exercise 4's menu (the lectures'
"what is Mexican food like?", :func:`course_utils.by_hand.own_menu`) is checked in two
steps: its weights visibly, its average visibly for the likely mistakes only and exactly
by the hidden tests. The helpers that compute them (``_scores``, ``_alpha``, ``_output``,
``_food_weights``, ``_food_average``, all through ``_tensors``) refuse to run unless a check or the
comparison is running, so an answer cell that calls them fails; the grading also flags
any by-hand answer that reaches the course's code (grader.integrity.own_numbers).
"""

import contextlib
import contextvars
import math
from collections.abc import Callable, Iterator

import torch

from ..by_hand import (
    D_K,
    VALUE_ROWS,
    WORKED_EXAMPLE,
    OwnMenu,
    OwnSentence,
    menu_of,
    own_menu,
    own_sentence,
    sentence_of,
)
from ..student import HOW_TO_SET_THE_ID
from .attention import MISTAKES
from .core import as_tensor, check_close, check_rows_sum_to_one
from .guards import checked_plainly, plain

__all__ = ["check_mexican_average_mistakes", "check_own_alpha_3", "check_own_mexican_average",
           "check_own_mexican_weights", "check_own_output_3", "check_own_scores_3",
           "compare_by_hand", "right_for"]

NOT_YOURS = {
    "worked example": "these are the numbers of the worked example (the lectures' sentence), "
    "not of your own sentence printed at the top of exercise 1",
    "demonstration": "these are the demonstration numbers, drawn when no student id was "
    "set; your id is set now: work out the numbers of your own sentence, printed at the top "
    "of exercise 1",
}
NO_ID = ("no student id is set, so the sentence printed at exercise 1 is the\n"
         "DEMONSTRATION's, and numbers worked from it score 0 when your work is graded.\n"
         "Set your id, then work the numbers of the sentence printed for it.\n"
         + HOW_TO_SET_THE_ID)

# Only while a check (or the comparison) runs may the helpers below compute a sentence's
# numbers: called from an answer cell they refuse.
_working = contextvars.ContextVar("checking numbers worked by hand", default=False)


class NotWhileAnswering(RuntimeError):
    """An answer asked the checks' own helpers for the numbers it should work out."""


@contextlib.contextmanager
def _checking() -> Iterator[None]:
    token = _working.set(True)
    try:
        yield
    finally:
        _working.reset(token)


def _tensors(numbers: OwnSentence | OwnMenu) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(query, keys, values) of a sentence or a menu, one key and one value per row."""
    if not _working.get():
        raise NotWhileAnswering(
            "the checks' helpers compute the numbers a check expects and run only inside a "
            "check: work the numbers out yourself (pen and paper, or Python on your "
            "sentence's plain numbers)")
    query = numbers.q_3 if isinstance(numbers, OwnSentence) else numbers.q
    return tuple(torch.tensor(part, dtype=torch.float64)
                 for part in (query, numbers.keys, numbers.values))


def _scores(sentence: OwnSentence, scale: float = 1 / math.sqrt(D_K)) -> torch.Tensor:
    q_3, keys, _ = _tensors(sentence)
    return keys @ q_3 * scale


def _alpha(sentence: OwnSentence, scale: float = 1 / math.sqrt(D_K)) -> torch.Tensor:
    return torch.softmax(_scores(sentence, scale), dim=0)


def _output(sentence: OwnSentence, scale: float = 1 / math.sqrt(D_K),
            weighted: int = 2) -> torch.Tensor:
    """α₃ times the values (``weighted=2``), or times the keys (1): a mistake."""
    return _alpha(sentence, scale) @ _tensors(sentence)[weighted]


def _food_weights(menu: OwnMenu, scale: float = 1.0, rows_of_k: bool = False) -> torch.Tensor:
    """P(k_n | q) = softmax over the foods of k_n · q (the lectures' Key Equation 40: no
    1/√d_k). ``scale`` 1/√d_k, or ``rows_of_k`` (the printed K's rows taken as the keys,
    K q instead of Kᵀ q): a mistake."""
    q, keys, _ = _tensors(menu)
    printed_k = keys.T  # the lectures' K: a column per food
    return torch.softmax((printed_k if rows_of_k else printed_k.T) @ q * scale, dim=0)


def _food_average(menu: OwnMenu, weights: torch.Tensor | None = None) -> torch.Tensor:
    """v_q = Σ_n P(k_n | q) v_n (Key Equation 43): [price, calories, salt]."""
    values = _tensors(menu)[2]
    return (_food_weights(menu) if weights is None else weights) @ values


def _menu(sentence: OwnSentence) -> OwnMenu:
    """The menu drawn from the same id as ``sentence``."""
    return menu_of(sentence.student)


# Each by-hand answer: (what computes it, the tolerance of its check). The tolerances follow
# the rounding the exercises ask for: scores to 2 decimals; α₃ to 3 (from the rounded
# scores); a₃ to 2 (from α₃ to 3, each within the 0.002 its check allows). Exercise 4's
# average, to 2 decimals from four weights to 3, is off by up to 0.002 times a food's largest
# value plus the rounding: its tolerance is per entry, [price, calories, salt].
AVERAGE_TOLERANCE = torch.tensor([0.04, 2.0, 0.012], dtype=torch.float64)
WEIGHTS_TOLERANCE = 0.002
EXERCISES: dict[str, tuple[Callable[[OwnSentence], torch.Tensor], float | torch.Tensor]] = {
    "scores_3_by_hand": (_scores, 0.006),
    "alpha_3_by_hand": (_alpha, 0.002),
    "a_3_by_hand": (_output, 0.02),
    "mexican_by_hand": (lambda sentence: _food_average(_menu(sentence)), AVERAGE_TOLERANCE),
}
COMPARED = ("scores_3_by_hand", "alpha_3_by_hand", "a_3_by_hand")  # exercise 4's average is hidden
FOOD_MISTAKES = {
    "scaled": "you divided the dot products by √d_k, as in exercises 1 to 3: the lectures' "
    "weights (their Key Equation 40) take the plain dot product k_n · q",
    "rows_of_k": "you took the rows of K as the foods' keys: in the lectures' notation each "
    "food's key is a column of K, so the dot products are Kᵀ q",
    "no_softmax": "you divided the dot products by their sum: the weights are a softmax, "
    "e^(k_n · q) divided by the sum of the four",
    "demonstration": "these are the numbers of the demonstration menu, drawn when no student "
    "id was set; your id is set now: work the menu printed for it",
    "equal_weights": "you gave every food the same weight: weight each food's value by its "
    "attention weight P(k_n | q)",
    "top_food": "you took the values of the most Mexican food alone: attention averages every "
    "food's value, each with its weight",
    "not_normalised": "you weighted the values by e^(k_n · q) without dividing by the sum of "
    "the four",
}


def _mistakes(answer, yours: OwnSentence) -> dict[str, torch.Tensor]:
    """{diagnosis: the value} for the wrong scales, and for the numbers of another sentence
    (the worked example's; the demonstration's)."""
    others = {NOT_YOURS["worked example"]: answer(WORKED_EXAMPLE),
              NOT_YOURS["demonstration"]: answer(sentence_of(None))}
    return {MISTAKES["no_scale"]: answer(yours, 1.0),
            MISTAKES["divide_by_dk"]: answer(yours, 1 / D_K), **others}


def _yours(name: str) -> OwnSentence:
    """The student's sentence; fails, saying how to set the id, when there is none."""
    yours = own_sentence()
    if yours.student is None:
        raise AssertionError(f"{name}: {NO_ID}")
    return yours


@checked_plainly
def check_own_scores_3(actual, name: str = "scores_3_by_hand") -> None:
    """Fail unless ``actual`` is [score_31, score_32, score_33] of the student's own
    sentence, q₃ · k_j / √d_k, to 2 decimals."""
    yours = _yours(name)
    with _checking():
        check_close(actual, _scores(yours), name, atol=EXERCISES[name][1], reveal=False,
                    mistakes=_mistakes(_scores, yours))


@checked_plainly
def check_own_alpha_3(actual, name: str = "alpha_3_by_hand") -> None:
    """Fail unless ``actual`` is [α_31, α_32, α_33] of the student's own sentence, to 3
    decimals (after the scores rounded to 2)."""
    yours = _yours(name)
    check_rows_sum_to_one(actual, name, atol=0.005)
    with _checking():
        check_close(actual, _alpha(yours), name, atol=EXERCISES[name][1], reveal=False,
                    mistakes=_mistakes(_alpha, yours))


@checked_plainly
def check_own_output_3(actual, name: str = "a_3_by_hand") -> None:
    """Fail unless ``actual`` is a₃ = Σ_j α_3j v_j of the student's own sentence, to 2
    decimals (from α₃ to 3 decimals)."""
    yours = _yours(name)
    with _checking():
        mistakes = _mistakes(_output, yours)
        mistakes[MISTAKES["values_not_weighted"]] = _output(yours, weighted=1)
        check_close(actual, _output(yours), name, atol=EXERCISES[name][1], reveal=False,
                    mistakes=mistakes)


def _yours_menu(name: str) -> OwnMenu:
    """The student's menu; fails, saying how to set the id, when there is none."""
    yours = own_menu()
    if yours.student is None:
        raise AssertionError(f"{name}: {NO_ID}")
    return yours


def _weights_mistakes(menu: OwnMenu) -> dict[str, torch.Tensor]:
    """{diagnosis: the weights} of the likely slips on ``menu``, and the demonstration's."""
    q, keys, _ = _tensors(menu)
    dots = keys @ q
    return {FOOD_MISTAKES["scaled"]: _food_weights(menu, scale=1 / math.sqrt(D_K)),
            FOOD_MISTAKES["rows_of_k"]: _food_weights(menu, rows_of_k=True),
            FOOD_MISTAKES["no_softmax"]: dots / dots.sum(),
            FOOD_MISTAKES["demonstration"]: _food_weights(menu_of(None))}


@checked_plainly
def check_own_mexican_weights(actual, name: str = "mexican_weights") -> None:
    """Fail unless ``actual`` is [P(k_1 | q), ..., P(k_4 | q)] of the student's own menu,
    to 3 decimals: the softmax of the plain dot products of q with the columns of K."""
    yours = _yours_menu(name)
    check_rows_sum_to_one(actual, name, atol=0.005)
    with _checking():
        check_close(actual, _food_weights(yours), name, atol=WEIGHTS_TOLERANCE, reveal=False,
                    mistakes=_weights_mistakes(yours))


def _average_mistakes(menu: OwnMenu) -> dict[str, torch.Tensor]:
    """{diagnosis: the average} of the likely slips on ``menu``."""
    q, keys, values = _tensors(menu)
    exponentials = torch.exp(keys @ q)
    top = torch.zeros(len(values), dtype=torch.float64)
    top[exponentials.argmax()] = 1.0
    carried = {message: _food_average(menu, weights)
               for message, weights in _weights_mistakes(menu).items()}
    return {**carried, FOOD_MISTAKES["equal_weights"]: values.mean(dim=0),
            FOOD_MISTAKES["top_food"]: top @ values,
            FOOD_MISTAKES["not_normalised"]: exponentials @ values}


def _matches(actual: torch.Tensor, expected: torch.Tensor) -> bool:
    return actual.shape == expected.shape and bool(
        ((actual - expected).abs() <= AVERAGE_TOLERANCE).all())


@checked_plainly
def check_mexican_average_mistakes(actual, name: str = "mexican_by_hand") -> None:
    """Fail when ``actual``, the average [price, calories, salt] of the student's menu, is
    not a weighted average of the foods' values (an entry outside their range) or is what
    a likely mistake gives. Whether it is right, the hidden :func:`check_own_mexican_average`
    decides."""
    yours = _yours_menu(name)
    average = as_tensor(actual, name)
    if average.shape != (len(VALUE_ROWS),):
        raise AssertionError(f"{name} should be {len(VALUE_ROWS)} numbers, "
                             f"[price, calories, salt]; got shape {tuple(average.shape)}")
    with _checking():
        values = _tensors(yours)[2]
        right = _food_average(yours)
        for message, wrong in _average_mistakes(yours).items():
            if _matches(average, wrong) and not _matches(average, right):
                raise AssertionError(f"{name} is not right: {message}.")
    low, high = values.min(dim=0).values, values.max(dim=0).values
    outside = [row for row, x, a, b in zip(VALUE_ROWS, average, low, high, strict=True)
               if not a - 1e-9 <= x <= b + 1e-9]
    if outside:
        raise AssertionError(
            f"{name} is not right: a weighted average lies between the foods' smallest and "
            f"largest value, and your {', '.join(outside)} does not: are your weights "
            "positive, and do they sum to 1?")


@checked_plainly
def check_own_mexican_average(actual, name: str = "mexican_by_hand") -> None:
    """Fail unless ``actual`` is v_q = Σ_n P(k_n | q) v_n of the student's own menu,
    [price, calories, salt] to 2 decimals (from weights to 3)."""
    check_mexican_average_mistakes(actual, name)
    off, _ = _entries_off("mexican_by_hand", actual, _yours(name))
    if off:
        rows = ", ".join(VALUE_ROWS[entry - 1] for entry in off)
        raise AssertionError(f"{name} is not right: the {rows} of your weighted average "
                             "are off; check that step, then your weights' decimals")


def _entries_off(name: str, answer, sentence: OwnSentence) -> tuple[list[int], int]:
    """(the entries, from 1, of ``answer`` to the by-hand exercise ``name`` that are off for
    ``sentence``, how many it has); AssertionError when it is no list of numbers of the
    right length."""
    compute, tolerance = EXERCISES[name]
    actual = as_tensor(plain(answer, name), name)
    with _checking():
        expected = compute(sentence)
    if actual.shape != expected.shape:
        raise AssertionError(f"{name} should have {len(expected)} entries; got shape "
                             f"{tuple(actual.shape)}")
    off = ~((actual - expected).abs() <= tolerance)  # NaN is off too
    return [index + 1 for index in off.nonzero().flatten().tolist()], len(expected)


def right_for(name: str, answer, sentence: OwnSentence) -> bool:
    """Whether ``answer`` to the by-hand exercise ``name`` is right for ``sentence``, within
    its check's tolerance (the grading asks it of another student's sentence)."""
    if name not in EXERCISES:
        raise ValueError(f"expected one of {sorted(EXERCISES)}, got {name!r}")
    try:
        return not _entries_off(name, answer, sentence)[0]
    except AssertionError:
        return False


def compare_by_hand(**answers) -> None:
    """Print, for each number worked by hand (``scores_3_by_hand=...``), which entries agree
    with what code computes for the student's own sentence: agree or differ, never the
    code's numbers (working them out is the exercise)."""
    unknown = sorted(set(answers) - set(COMPARED))
    if unknown:
        raise TypeError(f"compare_by_hand takes {sorted(COMPARED)}; got {unknown}")
    yours = own_sentence()
    if yours.student is None:
        print(f"Nothing compared: {NO_ID}")
        return
    print(f"Your sentence (student id {yours.student}), worked by code and by you:")
    for name, answer in answers.items():
        try:
            off, entries = _entries_off(name, answer, yours)
        except AssertionError as error:
            print(f"  {name}: not compared: {error}")
            continue
        print(f"  {name}: {_verdict(off, entries)}")


def _verdict(off: list[int], entries: int) -> str:
    """"all 3 entries agree", or which entries differ."""
    if not off:
        return f"all {entries} entries agree"
    agree = [entry for entry in range(1, entries + 1) if entry not in off]
    differ = (f"entry {off[0]} DIFFERS" if len(off) == 1
              else f"entries {', '.join(map(str, off))} DIFFER")
    return differ + (f"; {', '.join(map(str, agree))} agree" if agree else "")

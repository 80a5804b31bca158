"""Checks of notebook 04's numbers worked by hand, against the student's own sentence.

Each check draws the sentence itself (:func:`course_utils.by_hand.own_sentence`, from the
id the kernel was started with), so a number right for another student's sentence, or
for the lectures' worked example, scores 0. Without an id every check fails and says how
to set one: the demonstration's numbers would score 0 when graded.

Nothing here hands a student the numbers. The messages name the entries that are off, or
the mistake the numbers match; :func:`compare_by_hand` says which entries agree with the
code's numbers, never the numbers. The helpers that compute them (``_scores``,
``_alpha``, ``_output``, all through ``_tensors``) refuse to run unless a check or the
comparison is running, so an answer cell that calls them fails; the grading also flags
any by-hand answer that reaches the course's code (grader.integrity.own_numbers).
"""

import contextlib
import contextvars
import math
from collections.abc import Callable, Iterator

import torch

from ..by_hand import D_K, WORKED_EXAMPLE, OwnSentence, own_sentence, sentence_of
from ..student import HOW_TO_SET_THE_ID
from .attention import MISTAKES
from .core import as_tensor, check_close, check_rows_sum_to_one
from .guards import checked_plainly, plain

__all__ = ["check_own_alpha_3", "check_own_output_3", "check_own_scores_3", "compare_by_hand",
           "right_for"]

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


def _tensors(sentence: OwnSentence) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    if not _working.get():
        raise NotWhileAnswering(
            "the checks' helpers compute the numbers a check expects and run only inside a "
            "check: work the numbers out yourself (pen and paper, or Python on your "
            "sentence's plain numbers)")
    return tuple(torch.tensor(part, dtype=torch.float64)
                 for part in (sentence.q_3, sentence.keys, sentence.values))


def _scores(sentence: OwnSentence, scale: float = 1 / math.sqrt(D_K)) -> torch.Tensor:
    q_3, keys, _ = _tensors(sentence)
    return keys @ q_3 * scale


def _alpha(sentence: OwnSentence, scale: float = 1 / math.sqrt(D_K)) -> torch.Tensor:
    return torch.softmax(_scores(sentence, scale), dim=0)


def _output(sentence: OwnSentence, scale: float = 1 / math.sqrt(D_K),
            weighted: int = 2) -> torch.Tensor:
    """α₃ times the values (``weighted=2``), or times the keys (1): a mistake."""
    return _alpha(sentence, scale) @ _tensors(sentence)[weighted]


# Each by-hand answer: (what computes it, the tolerance of its check). The tolerances follow
# the rounding the exercises ask for: scores to 2 decimals; α₃ to 3 (from the rounded
# scores); a₃ to 2 (from α₃ to 3, each within the 0.002 its check allows).
EXERCISES: dict[str, tuple[Callable[[OwnSentence], torch.Tensor], float]] = {
    "scores_3_by_hand": (_scores, 0.006),
    "alpha_3_by_hand": (_alpha, 0.002),
    "a_3_by_hand": (_output, 0.02),
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
    unknown = sorted(set(answers) - set(EXERCISES))
    if unknown:
        raise TypeError(f"compare_by_hand takes {sorted(EXERCISES)}; got {unknown}")
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

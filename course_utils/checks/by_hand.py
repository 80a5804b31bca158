"""Checks of notebook 04's numbers worked by hand, against the student's own sentence.

Each check draws the sentence itself (:func:`course_utils.by_hand.own_sentence`, from the
id the kernel was started with), so a number right for another student's sentence, or
for the lectures' worked example, scores 0. The expected values are not revealed: the
message names the entries that are off, or the mistake the numbers match.
"""

import math

import torch

from ..by_hand import D_K, WORKED_EXAMPLE, OwnSentence, own_sentence, sentence_of
from .attention import MISTAKES
from .core import check_close, check_rows_sum_to_one

__all__ = ["check_own_alpha_3", "check_own_output_3", "check_own_scores_3"]

NOT_YOURS = {
    "worked example": "these are the numbers of the worked example (the lectures' sentence), "
    "not of your own sentence printed at the top of exercise 1",
    "demonstration": "these are the demonstration numbers, drawn when no student id was "
    "set; your id is set now: work out the numbers of your own sentence, printed at the top "
    "of exercise 1",
}


def _tensors(sentence: OwnSentence) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return tuple(torch.tensor(part, dtype=torch.float64)
                 for part in (sentence.q_3, sentence.keys, sentence.values))


def _dot_products(sentence: OwnSentence) -> torch.Tensor:
    q_3, keys, _ = _tensors(sentence)
    return keys @ q_3


def _scores(sentence: OwnSentence, scale: float = 1 / math.sqrt(D_K)) -> torch.Tensor:
    return _dot_products(sentence) * scale


def _alpha(sentence: OwnSentence, scale: float = 1 / math.sqrt(D_K)) -> torch.Tensor:
    return torch.softmax(_scores(sentence, scale), dim=0)


def _output(sentence: OwnSentence, scale: float = 1 / math.sqrt(D_K),
            weighted: int = 2) -> torch.Tensor:
    """α₃ times the values (``weighted=2``), or times the keys (1): a mistake."""
    return _alpha(sentence, scale) @ _tensors(sentence)[weighted]


def _mistakes(answer, yours: OwnSentence) -> dict[str, torch.Tensor]:
    """{diagnosis: the value} for the wrong scales, and for the numbers of another sentence
    (the worked example's; the demonstration's, when the student has an id)."""
    others = {NOT_YOURS["worked example"]: answer(WORKED_EXAMPLE)}
    if yours.student is not None:
        others[NOT_YOURS["demonstration"]] = answer(sentence_of(None))
    return {MISTAKES["no_scale"]: answer(yours, 1.0),
            MISTAKES["divide_by_dk"]: answer(yours, 1 / D_K), **others}


def check_own_scores_3(actual, name: str = "scores_3_by_hand") -> None:
    """Fail unless ``actual`` is [score_31, score_32, score_33] of the student's own
    sentence, q₃ · k_j / √d_k, to 2 decimals."""
    yours = own_sentence()
    check_close(actual, _scores(yours), name, atol=0.006, reveal=False,
                mistakes=_mistakes(_scores, yours))


def check_own_alpha_3(actual, name: str = "alpha_3_by_hand") -> None:
    """Fail unless ``actual`` is [α_31, α_32, α_33] of the student's own sentence, to 3
    decimals (after the scores rounded to 2)."""
    yours = own_sentence()
    check_rows_sum_to_one(actual, name, atol=0.005)
    check_close(actual, _alpha(yours), name, atol=0.002, reveal=False,
                mistakes=_mistakes(_alpha, yours))


def check_own_output_3(actual, name: str = "a_3_by_hand") -> None:
    """Fail unless ``actual`` is a₃ = Σ_j α_3j v_j of the student's own sentence, to 2
    decimals (from α₃ to 3 decimals, each within the 0.002 its check allows)."""
    yours = own_sentence()
    mistakes = _mistakes(_output, yours)
    mistakes[MISTAKES["values_not_weighted"]] = _output(yours, weighted=1)
    check_close(actual, _output(yours), name, atol=0.02, reveal=False, mistakes=mistakes)

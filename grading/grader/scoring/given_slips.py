"""Notebook 04's exercise 6, judged in the grader's process: the slips of a given function.

    right("my_slips", {"Q, K, V": (3, 4, 4, 8), "scores": (3, 8, 4, 4), "future": (5, 4, 4, 4)})
    -> True
    JUDGED["test_my_slips"](reported value, 0)   the same, on the value as the kernel reports it

The notebook gives a ``causal_attention`` that is right on its 3-word example and wrong
elsewhere: three of its lines hold only for that example's sizes. The student names each
(by what it assigns) with the sizes (n, d_model, d_k, d_v) of a sentence on which that line
goes wrong while the other two hold. Many answers are right, so no stored value can be
compared: the test cell reports the answer (``course_utils.checks.check_slips``, which looks
at its form only), ``make answers`` stores ``{"judged": true}``, and
:mod:`grader.scoring.outside` asks :data:`JUDGED`.

The judge runs the given function as the notebook does (cell ``ex6-slips-run``) on random
inputs of each sentence's sizes, against PyTorch's attention, once with only the named line
as given (the others written right): it must go wrong (a wrong output, or an error); and
once for each other slipping line alone: each must be right. The lines written right are
instructors' code, never in ``course_utils``: they are exercise 7's answer.
"""

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F

from course_utils.checks.attention import LARGEST_SIZE, line_of

__all__ = ["JUDGED", "SLIPS", "goes_wrong", "right"]

# the given function's lines that hold only for its example, by what they assign
SLIPS = ("Q, K, V", "scores", "future")
EXAMPLE_FUTURE = [[False, True, True], [False, False, True], [False, False, False]]


def _attention(x, w_q, w_k, w_v, given: str) -> torch.Tensor:
    """The outputs a of the given function with the line ``given`` as the notebook gives it
    and the other lines right."""
    if given == "Q, K, V":
        q, k, v = (x @ torch.cat([w_q, w_k, w_v], dim=1)).chunk(3, dim=1)
    else:
        q, k, v = x @ w_q, x @ w_k, x @ w_v
    scale = math.sqrt(x.shape[1] if given == "scores" else q.shape[1])
    n = x.shape[0]
    future = (torch.tensor(EXAMPLE_FUTURE) if given == "future"
              else torch.ones(n, n, dtype=torch.bool).triu(diagonal=1))
    alpha = torch.softmax((q @ k.T / scale).masked_fill(future, -math.inf), dim=-1)
    return alpha @ v


def goes_wrong(given: str, sizes) -> bool:
    """Whether the function with only the line ``given`` as given goes wrong on a sentence
    of ``sizes`` (n, d_model, d_k, d_v): a wrong output, or an error."""
    n, d_model, d_k, d_v = sizes
    generator = torch.Generator().manual_seed(0)
    x, w_q, w_k, w_v = (torch.randn(*shape, generator=generator, dtype=torch.float64)
                        for shape in ((n, d_model), (d_model, d_k), (d_model, d_k),
                                      (d_model, d_v)))
    reference = F.scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v, is_causal=True)
    try:
        output = _attention(x, w_q, w_k, w_v, given)
    except (RuntimeError, ValueError, IndexError):
        return True
    return output.shape != reference.shape or not torch.allclose(output, reference, atol=1e-6)


def _sizes(value) -> tuple[int, ...] | None:
    if not (isinstance(value, list | tuple) and len(value) == 4):
        return None
    if not all(type(size) is int and 1 <= size <= LARGEST_SIZE for size in value):
        return None
    return tuple(value)


def right(answer: dict) -> bool:
    """Whether ``answer`` ({line: sizes}, as the student wrote it) names the three slipping
    lines, each with a sentence on which it goes wrong while the other two hold."""
    if not isinstance(answer, dict):
        return False
    named = {line_of(line): _sizes(sizes) for line, sizes in answer.items()}
    slips = {line_of(line): line for line in SLIPS}
    if len(named) != len(answer) or named.keys() != slips.keys() or None in named.values():
        return False
    return all(goes_wrong(slips[line], sizes)
               and not any(goes_wrong(other, sizes) for other in SLIPS if other != slips[line])
               for line, sizes in named.items())


def _decoded(encoded) -> dict | None:
    """The answer from the value the kernel reported (``report.encode``): a dict of
    {"dict": [[key, value], ...]}, its values lists of whole numbers."""
    if not isinstance(encoded, dict) or not isinstance(encoded.get("dict"), list):
        return None
    pairs = encoded["dict"]
    if not all(isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)
               for pair in pairs):
        return None
    return {key: value for key, value in pairs}


def _judge_slips(encoded, index: int) -> bool:
    answer = _decoded(encoded)
    return index == 0 and answer is not None and right(answer)


# {test cell: function(the value it reported, index of the value) -> whether it is right}
JUDGED: dict[str, Callable[[object, int], bool]] = {"test_my_slips": _judge_slips}

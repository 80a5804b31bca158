"""Notebook 04's answers that depend on the student: worked out for each student from the
id alone, in the grader's process (never in a kernel, never in ``course_utils``).

    answer("alpha_3_by_hand", "ada")            [α_31, α_32, α_33] of ada's sentence
    right_for("alpha_3_by_hand", [0.2, 0.1, 0.7], "ada")   -> False
    PER_STUDENT["test_a_3_by_hand"]("ada", 1)      α₃ as ``report.encode`` writes it

04's by-hand warm-up (exercises 1 to 3, three answer cells) is worked on a sentence drawn
from the student's id (:mod:`course_utils.by_hand`): the inputs, which the notebook prints.
Its one test cell, ``test_a_3_by_hand``, only checks that the typed numbers are well-formed
and consistent with each other (:mod:`course_utils.checks.by_hand`), which no loop over
candidate values can turn into the answer; it reports the three answers, and ``make
answers`` stores those as ``{"per_student": true}`` (they differ between two ids).
:mod:`grader.scoring.outside` then asks :data:`PER_STUDENT` for the values worked out here
for the student graded, and compares within the exercise's tolerance, its record's
``compare`` (``course_utils.exercises.alpha3_by_hand``). The values are the exact ones
(float64): every honest rounding lies within that tolerance of them, rounding at each step
as the exercises ask or not at all.

The hidden tests of ``causal_attention`` draw their inputs from the student's id too
(``own_seed``, so that an output leaked from one student's grading fits no one else's):
:func:`causal_attention_inputs` draws the same, and the reference below computes the
answers. It must stay the hidden test cell's draw, call for call (a test checks it against
the solution notebook's cell).

:func:`right_for` tells whose numbers an answer holds (``grader.integrity.own_numbers``).
"""

import math
from collections.abc import Callable

import numpy as np
import torch

from course_utils.by_hand import D_K, OwnSentence, sentence_of
from course_utils.checks.by_hand import ROUNDING
from course_utils.checks.guards.report import encode
from course_utils.student import seed_of

__all__ = ["ANSWER_CELLS", "PER_STUDENT", "alpha", "answer", "causal_attention",
           "causal_attention_inputs", "output", "right_for", "scores"]

CAUSAL_PURPOSE = "04_alpha3_by_hand: causal_attention"  # the hidden test's own_seed


def _tensors(sentence: OwnSentence) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q_3, keys, values) of a sentence, one key and one value per row."""
    return tuple(np.array(part, dtype=np.float64) for part in (sentence.q_3, sentence.keys,
                                                                sentence.values))


def _softmax(x: np.ndarray) -> np.ndarray:
    exponentials = np.exp(x - x.max())
    return exponentials / exponentials.sum()


def scores(sentence: OwnSentence) -> np.ndarray:
    """score(x_3, x_j) = q_3 · k_j / √d_k, j = 1, 2, 3 (exercise 1)."""
    q_3, keys, _ = _tensors(sentence)
    return keys @ q_3 / math.sqrt(D_K)


def alpha(sentence: OwnSentence) -> np.ndarray:
    """α_3j = the softmax of the three scores (exercise 2)."""
    return _softmax(scores(sentence))


def output(sentence: OwnSentence) -> np.ndarray:
    """a_3 = Σ_j α_3j v_j (exercise 3)."""
    return alpha(sentence) @ _tensors(sentence)[2]


def _student(student: str | None) -> str | None:
    """The id as the kernel read it (``course_utils.student.student_id``): blank is none."""
    return (student or "").strip() or None


ANSWERS: dict[str, Callable[[str | None], np.ndarray]] = {
    "scores_3_by_hand": lambda student: scores(sentence_of(student)),
    "alpha_3_by_hand": lambda student: alpha(sentence_of(student)),
    "a_3_by_hand": lambda student: output(sentence_of(student)),
}
# The by-hand test cell's reported values, in order: the answers it checks, each the grade id
# of its answer cell (several answer cells feed the one test cell).
REPORTED = {"test_a_3_by_hand": ("scores_3_by_hand", "alpha_3_by_hand", "a_3_by_hand")}
# The answer cells of numbers worked by hand (their grade ids).
ANSWER_CELLS = tuple(name for names in REPORTED.values() for name in names)


def answer(name: str, student: str | None) -> np.ndarray:
    """The right value of the by-hand answer ``name`` (a key of ``ANSWERS``) for
    ``student`` (None: the demonstration's numbers), exact."""
    if name not in ANSWERS:
        raise ValueError(f"expected one of {sorted(ANSWERS)}, got {name!r}")
    return ANSWERS[name](_student(student))


def right_for(name: str, numbers, student: str | None) -> bool:
    """Whether ``numbers``, an answer to the by-hand exercise ``name``, are right for
    ``student``'s sentence, within the rounding the exercise asks for (``ROUNDING``)."""
    expected = answer(name, student)
    try:
        given = np.asarray(numbers, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return given.shape == expected.shape and bool(
        np.allclose(given, expected, rtol=0.0, atol=ROUNDING[name]))


def _by_hand(cell: str) -> Callable[[str, int], object]:
    def expected(student: str, index: int):
        names = REPORTED[cell]
        return encode(answer(names[index], student).tolist()) if index < len(names) else None
    return expected


# --- causal_attention's hidden tests: inputs of each student's own -----------------------


def causal_attention_inputs(student: str | None) -> list[tuple[torch.Tensor, ...]]:
    """The (X, W_Q, W_K, W_V) of each hidden test of ``causal_attention``, in order, as
    the test cell draws them in a kernel of ``student``."""
    generator = torch.Generator().manual_seed(seed_of(CAUSAL_PURPOSE, _student(student)))

    def draw(*shape, dtype=torch.float32):
        return torch.randn(*shape, generator=generator, dtype=dtype)

    five = draw(5, 6, dtype=torch.float64)
    w_q, w_k = draw(2, 6, 3, dtype=torch.float64)
    cases = [(five, w_q, w_k, draw(6, 2, dtype=torch.float64))]   # 5 tokens, d_k 3, d_v 2
    one = draw(1, 4)
    w_q, w_k = draw(2, 4, 2)
    cases.append((one, w_q, w_k, draw(4, 5)))                     # a one-word sentence
    seven = draw(7, 8)
    cases.append((seven, *draw(3, 8, 8)))                         # 7 tokens, d_k = d_v = 8
    batch = draw(4, 5, 6)
    w_q, w_k = draw(2, 6, 3)
    cases.append((batch, w_q, w_k, draw(6, 2)))                   # 4 sentences of 5 tokens
    return cases


def causal_attention(x: torch.Tensor, w_q: torch.Tensor, w_k: torch.Tensor,
                     w_v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(a, alpha) of causal self-attention over the rows of ``x`` (of each sentence, for a
    batch (B, n, d_model)), in float64."""
    x, w_q, w_k, w_v = (t.to(torch.float64) for t in (x, w_q, w_k, w_v))
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    n = x.shape[-2]
    future = torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)
    weights = torch.softmax((q @ k.mT / math.sqrt(q.shape[-1])).masked_fill(future, -math.inf),
                            dim=-1)
    return weights @ v, weights


def _causal_attention(student: str, index: int):
    """The cell's value ``index``, that of its hidden test ``index`` (the visible test
    reports nothing: only ``checks.grade`` does)."""
    cases = causal_attention_inputs(student)
    return encode(causal_attention(*cases[index])) if 0 <= index < len(cases) else None


# {test cell: function(student id, index of the value) -> its expected value, encoded}
PER_STUDENT: dict[str, Callable[[str, int], object]] = {
    **{cell: _by_hand(cell) for cell in REPORTED},
    "test_causal_attention": _causal_attention,
}

"""The sentence of notebook 04's by-hand exercises: each student's own.

The lectures' worked example ("I am good": q₃ = [-1, 1, 0, 0], scores (-0.5, -2, 1)) is
the same for everyone. Exercises 1 to 3 ask for the scores, the weights α₃ and the output
a₃ of a sentence drawn from the student's id (:mod:`course_utils.student`): a query q₃ and
three keys with one decimal, from -2.0 to 2.0, and three values, whole numbers from -2 to
2, in d_k = 4 dimensions. The draw is redone until the three scores q₃ · k_j / 2 are
distinct and 1 to 4 apart (the softmax is neither flat nor all on one word) and are not
the worked example's.

Why decimals: two students must rarely share a right answer (copying is named by the
similarity step, which compares value answers exactly). The softmax depends only on the
differences of the scores, so α₃ takes as many values as the pair (s₁ - s₃, s₂ - s₃):
with whole-number entries the differences are halves, and α₃ took only 168 values over
20,000 ids. With entries to one decimal the scores have 2 decimals (after rounding) and
two students share α₃ about once in 200,000 pairs, their scores and a₃ never in 20,000
ids (tests/benchmarks/bench_by_hand.py measures it).
"""

from dataclasses import dataclass

from .student import HOW_TO_SET_THE_ID, OwnNumbers, student_id

__all__ = ["D_K", "WORKED_EXAMPLE", "OwnSentence", "own_sentence", "sentence_of"]

D_K = 4
PURPOSE = "04_alpha3_by_hand, one decimal: q_3, k_1 to k_3, v_1 to v_3"
TENTHS = (-20, 20)  # q_3 and the keys: -2.0 to 2.0, in tenths
VALUES = (-2, 2)  # the values: whole numbers
SPREAD = (1, 4)  # the largest score minus the smallest


@dataclass(frozen=True)
class OwnSentence:
    """A student's q₃, keys k₁..k₃ and values v₁..v₃ (``student`` None: demonstration)."""

    student: str | None
    q_3: tuple[float, ...]
    keys: tuple[tuple[float, ...], ...]
    values: tuple[tuple[int, ...], ...]

    def __str__(self) -> str:
        if self.student is None:
            whose = ("No student id is set (neither COURSE_STUDENT nor JUPYTERHUB_USER), so these\n"
                     "are DEMONSTRATION numbers: answers worked from them will NOT count when\n"
                     f"your work is graded, and the checks refuse them.\n{HOW_TO_SET_THE_ID}\n")
        else:
            whose = f"Student id: {self.student}\n"
        rows = [f"  q_3 = {list(self.q_3)}"]
        rows += [f"  k_{j} = {str(list(key)):<25} v_{j} = {list(value)}"
                 for j, (key, value) in enumerate(zip(self.keys, self.values, strict=True), 1)]
        return whose + f"Your sentence's vectors (d_k = {D_K}):\n" + "\n".join(rows)


# The lectures' sentence: q_3 and the rows of K and V of "I am good" (notebook 04, section 2).
WORKED_EXAMPLE = OwnSentence(
    student="the lectures' worked example",
    q_3=(-1, 1, 0, 0),
    keys=((0, -1, 1, 2), (2, -2, 0, 0), (-1, 1, 0, 0)),
    values=((1, 2, 2, 1), (2, 0, 1, -1), (0, 0, 1, 1)),
)
WORKED_DOTS = (-100, -400, 200)  # its q_3 · k_j, in hundredths


def _friendly(q_3: list[int], keys: list[list[int]]) -> bool:
    """Whether the scores of q₃ and the keys (in tenths) are distinct, ``SPREAD`` apart and
    not the worked example's. Exact: the dot products in hundredths are whole numbers."""
    dots = [sum(q * k for q, k in zip(q_3, key, strict=True)) for key in keys]
    spread = (max(dots) - min(dots)) / 100 / D_K ** 0.5
    return (len(set(dots)) == len(dots) and SPREAD[0] <= spread <= SPREAD[1]
            and tuple(dots) != WORKED_DOTS)


def sentence_of(student: str | None) -> OwnSentence:
    """The sentence of ``student`` (None: the demonstration sentence)."""
    draw = OwnNumbers(PURPOSE, student)

    def tenths() -> list[int]:
        return draw.integers(D_K, *TENTHS)

    while True:
        q_3, keys = tenths(), [tenths(), tenths(), tenths()]
        if _friendly(q_3, keys):
            break
    while len(set(values := tuple(tuple(draw.integers(D_K, *VALUES)) for _ in range(3)))) < 3:
        pass

    def decimal(vector: list[int]) -> tuple[float, ...]:
        return tuple(x / 10 for x in vector)

    return OwnSentence(student, decimal(q_3), tuple(map(decimal, keys)), values)


def own_sentence() -> OwnSentence:
    """The sentence of the student whose work this kernel runs (:func:`student_id`)."""
    return sentence_of(student_id())

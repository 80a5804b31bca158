"""The sentence of notebook 04's by-hand exercises: each student's own.

The lectures' worked example ("I am good": q₃ = [-1, 1, 0, 0], scores (-0.5, -2, 1)) is
the same for everyone. Exercises 1 to 3 ask for the scores, the weights α₃ and the output
a₃ of a sentence drawn from the student's id (:mod:`course_utils.student`): a query q₃,
three keys and three values, whole numbers from -2 to 2 in d_k = 4 dimensions, so that the
dot products are whole numbers and the scores halves. The draw is redone until the three
dot products are distinct, at most 8 in size, 2 to 8 apart (the softmax is neither
flat nor all on one word), and not the worked example's.
"""

from dataclasses import dataclass

from .student import OwnNumbers, student_id

__all__ = ["D_K", "WORKED_EXAMPLE", "OwnSentence", "own_sentence", "sentence_of"]

D_K = 4
PURPOSE = "04_alpha3_by_hand: q_3, k_1 to k_3, v_1 to v_3"
ENTRIES = (-2, 2)
LARGEST_DOT = 8
SPREAD = (2, 8)


@dataclass(frozen=True)
class OwnSentence:
    """A student's q₃, keys k₁..k₃ and values v₁..v₃ (``student`` None: demonstration)."""

    student: str | None
    q_3: tuple[int, ...]
    keys: tuple[tuple[int, ...], ...]
    values: tuple[tuple[int, ...], ...]

    def __str__(self) -> str:
        if self.student is None:
            whose = (
                "No student id is set (neither COURSE_STUDENT nor JUPYTERHUB_USER), so these\n"
                "are DEMONSTRATION numbers: answers worked from them will NOT count when your\n"
                "work is graded. On the course server your id is set for you; on your own\n"
                "machine start JupyterLab as `COURSE_STUDENT=<your id> make lab`.\n"
            )
        else:
            whose = f"Student id: {self.student}\n"
        rows = [f"  q_3 = {list(self.q_3)}"]
        rows += [f"  k_{j} = {str(list(key)):<17} v_{j} = {list(value)}"
                 for j, (key, value) in enumerate(zip(self.keys, self.values, strict=True), 1)]
        return whose + f"Your sentence's vectors (d_k = {D_K}):\n" + "\n".join(rows)


# The lectures' sentence: q_3 and the rows of K and V of "I am good" (notebook 04, section 2).
WORKED_EXAMPLE = OwnSentence(
    student="the lectures' worked example",
    q_3=(-1, 1, 0, 0),
    keys=((0, -1, 1, 2), (2, -2, 0, 0), (-1, 1, 0, 0)),
    values=((1, 2, 2, 1), (2, 0, 1, -1), (0, 0, 1, 1)),
)


def _dots(q: tuple[int, ...], keys: tuple[tuple[int, ...], ...]) -> tuple[int, ...]:
    return tuple(sum(a * b for a, b in zip(q, key, strict=True)) for key in keys)


def _friendly(dots: tuple[int, ...]) -> bool:
    return (len(set(dots)) == len(dots) and max(map(abs, dots)) <= LARGEST_DOT
            and SPREAD[0] <= max(dots) - min(dots) <= SPREAD[1]
            and dots != _dots(WORKED_EXAMPLE.q_3, WORKED_EXAMPLE.keys))


def sentence_of(student: str | None) -> OwnSentence:
    """The sentence of ``student`` (None: the demonstration sentence)."""
    draw = OwnNumbers(PURPOSE, student)

    def vector() -> tuple[int, ...]:
        return tuple(draw.integers(D_K, *ENTRIES))

    while True:
        q_3, keys = vector(), (vector(), vector(), vector())
        if _friendly(_dots(q_3, keys)):
            break
    while len(set(values := (vector(), vector(), vector()))) < 3:
        pass
    return OwnSentence(student, q_3, keys, values)


def own_sentence() -> OwnSentence:
    """The sentence of the student whose work this kernel runs (:func:`student_id`)."""
    return sentence_of(student_id())

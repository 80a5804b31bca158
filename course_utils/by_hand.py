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

Exercise 4, a prediction (not graded), is the lectures' own picture of attention, a lookup:
a query "mexican", a key per food (how Mexican it is), a value per food (price, calories,
salt), written as the lectures write them, one column per food. Each student's menu is
drawn from the same id for another purpose (:func:`menu_of`): the query and keys with one
decimal from -1.0 to 1.0, the values whole or half euros, tens of kcal and tenths of a
gram, redrawn until burrito and taco are the most Mexican foods, the dot products are
distinct and 1.5 to 4 apart, and the rows of K (the notation's likely slip) give other
weights than its columns.
"""

import math
from dataclasses import dataclass

from .student import HOW_TO_SET_THE_ID, OwnNumbers, id_note, student_id

__all__ = ["D_K", "FOODS", "VALUE_ROWS", "WORKED_EXAMPLE", "OwnMenu", "OwnSentence", "menu_of",
           "own_menu", "own_sentence", "sentence_of"]

D_K = 4
PURPOSE = "04_alpha3_by_hand, one decimal: q_3, k_1 to k_3, v_1 to v_3"
TENTHS = (-20, 20)  # q_3 and the keys: -2.0 to 2.0, in tenths
VALUES = (-2, 2)  # the values: whole numbers
SPREAD = (1, 4)  # the largest score minus the smallest


def _whose(student: str | None) -> str:
    """The first line of a printout: the id the numbers are for, or why they count for no one."""
    if student is None:
        note = id_note()
        return ("No student id is set, so these are DEMONSTRATION numbers: answers worked\n"
                "from them will NOT count when your work is graded, and the checks refuse them.\n"
                + (f"{note}\n" if note else "") + f"{HOW_TO_SET_THE_ID}\n")
    return f"Student id: {student}\n"


@dataclass(frozen=True)
class OwnSentence:
    """A student's q₃, keys k₁..k₃ and values v₁..v₃ (``student`` None: demonstration)."""

    student: str | None
    q_3: tuple[float, ...]
    keys: tuple[tuple[float, ...], ...]
    values: tuple[tuple[int, ...], ...]

    def __str__(self) -> str:
        rows = [f"  q_3 = {list(self.q_3)}"]
        rows += [f"  k_{j} = {str(list(key)):<25} v_{j} = {list(value)}"
                 for j, (key, value) in enumerate(zip(self.keys, self.values, strict=True), 1)]
        return _whose(self.student) + f"Your sentence's vectors (d_k = {D_K}):\n" + "\n".join(rows)


# The lectures' sentence: q_3 and the rows of K and V of "I am good" (notebook 04, section 2).
WORKED_EXAMPLE = OwnSentence(
    student="the lectures' worked example",
    q_3=(-1, 1, 0, 0),
    keys=((0, -1, 1, 2), (2, -2, 0, 0), (-1, 1, 0, 0)),
    values=((1, 2, 2, 1), (2, 0, 1, -1), (0, 0, 1, 1)),
)
WORKED_DOTS = (-100, -400, 200)  # its q_3 · k_j, in hundredths


def _decimal(tenths: list[int]) -> tuple[float, ...]:
    return tuple(x / 10 for x in tenths)


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

    return OwnSentence(student, _decimal(q_3), tuple(map(_decimal, keys)), values)


def own_sentence() -> OwnSentence:
    """The sentence of the student whose work this kernel runs (:func:`student_id`)."""
    return sentence_of(student_id())


# --- exercise 4: the lectures' lookup, "what is Mexican food like?" ------------------------

FOODS = ("burrito", "taco", "sushi", "apple")
MEXICAN = 2  # the first two foods
VALUE_ROWS = ("price (€)", "calories (kcal)", "salt (g)")
MENU_PURPOSE = "04_alpha3_by_hand, exercise 4: q, the keys and values of four foods"
# each value row as whole numbers drawn from a range, and the unit they count
PRICE, CALORIES, SALT = ((6, 28), 0.5), ((15, 85), 10), ((2, 30), 0.1)
MENU_SPREAD = (1.5, 4)  # the largest dot product minus the smallest
DISTINCT = 0.02  # the rows of K must move some weight by more than this


@dataclass(frozen=True)
class OwnMenu:
    """A student's query q ("mexican"), a key and a value per food of ``FOODS``
    (``student`` None: demonstration). Printed as the lectures write K and V: a column per
    food."""

    student: str | None
    q: tuple[float, ...]
    keys: tuple[tuple[float, ...], ...]
    values: tuple[tuple[float, ...], ...]

    def __str__(self) -> str:
        def row(label: str, numbers, style: str = ".1f") -> str:
            return f"  {label:<19}" + "".join(f"{number:>9{style}}" for number in numbers)

        lines = [f"Your menu (d_k = {D_K}), as the lectures write it: one column per food.",
                 f'  q ("mexican") = {list(self.q)}',
                 row("", ()) + "".join(f"{food:>9}" for food in FOODS)]
        lines += [row("K (the keys)" if i == 0 else "", [key[i] for key in self.keys])
                  for i in range(D_K)]
        lines += [row(f"V {name}", [value[i] for value in self.values], "g")
                  for i, name in enumerate(VALUE_ROWS)]
        return _whose(self.student) + "\n".join(lines)


def _softmax(dots: list[float]) -> list[float]:
    exponentials = [math.exp(dot - max(dots)) for dot in dots]
    return [e / sum(exponentials) for e in exponentials]


def _menu_friendly(q: list[int], keys: list[list[int]]) -> bool:
    """Whether the dot products (in hundredths: whole numbers) put burrito and taco above
    the others, are distinct and ``MENU_SPREAD`` apart, and whether the rows of K, read as
    keys, would give other weights."""
    dots = [sum(a * b for a, b in zip(q, key, strict=True)) for key in keys]
    rows = [sum(key[i] * q[n] for n, key in enumerate(keys)) for i in range(D_K)]
    spread = (max(dots) - min(dots)) / 100
    moved = max(abs(a - b) for a, b in zip(_softmax([d / 100 for d in dots]),
                                           _softmax([r / 100 for r in rows]), strict=True))
    return (min(dots[:MEXICAN]) > max(dots[MEXICAN:]) and len(set(dots)) == len(dots)
            and MENU_SPREAD[0] <= spread <= MENU_SPREAD[1] and moved > DISTINCT)


def menu_of(student: str | None) -> OwnMenu:
    """The menu of ``student`` (None: the demonstration menu)."""
    draw = OwnNumbers(MENU_PURPOSE, student)
    while True:
        q, keys = draw.integers(D_K, -10, 10), [draw.integers(D_K, -10, 10) for _ in FOODS]
        if _menu_friendly(q, keys):
            break

    def value() -> tuple[float, ...]:
        return tuple(round(draw.integer(*bounds) * unit, 1)
                     for bounds, unit in (PRICE, CALORIES, SALT))

    while len(set(values := tuple(value() for _ in FOODS))) < len(FOODS):
        pass
    return OwnMenu(student, _decimal(q), tuple(map(_decimal, keys)), values)


def own_menu() -> OwnMenu:
    """The menu of the student whose work this kernel runs (:func:`student_id`)."""
    return menu_of(student_id())

"""Every autograded exercise of the workbook, one record each, one module per notebook.

    from course_utils.exercises import EXERCISES, exercise
    exercise("attention_update").points        -> 3
    exercise("attention_update").notebook      -> "05_masked_attention"

A notebook's module lists its exercises in the order of the notebook (``EXERCISES``, a
tuple of :class:`~course_utils.exercises.record.Exercise`); adding an exercise adds a
record there. The records hold no answer: what an exercise must return is stored with the
instructors (``make answers``), never here.
"""

from types import MappingProxyType

from course_utils.exercises import (
    alpha3_by_hand,
    bert_and_gpt,
    bpe,
    linear_attention,
    masked_attention,
    random_fourier_features,
    skipgram,
    static_vs_contextual,
    transformer_blocks,
)
from course_utils.exercises.record import Compare, Exercise

__all__ = ["EXERCISES", "Compare", "Exercise", "by_notebook", "exercise", "rule_of"]

NOTEBOOKS = (static_vs_contextual, skipgram, bpe, alpha3_by_hand, masked_attention,
             transformer_blocks, linear_attention, random_fourier_features, bert_and_gpt)

EXERCISES: MappingProxyType = MappingProxyType(
    {record.name: record for module in NOTEBOOKS for record in module.EXERCISES})


def exercise(name: str) -> Exercise:
    """The record of the exercise ``name`` (its answer cell's grade id)."""
    if name not in EXERCISES:
        raise KeyError(f"no exercise named {name!r}: expected one of {sorted(EXERCISES)}")
    return EXERCISES[name]


def by_notebook(notebook: str) -> tuple[Exercise, ...]:
    """The exercises of ``notebook`` (an assignment id), in its order."""
    return tuple(record for record in EXERCISES.values() if record.notebook == notebook)


def rule_of(name: str) -> Compare:
    """How the values of exercise ``name`` are compared; the default for a name that is no
    exercise of the workbook (a course's own notebook)."""
    return EXERCISES[name].compare if name in EXERCISES else Compare()

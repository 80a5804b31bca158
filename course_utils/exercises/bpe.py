"""The exercises of 03_bpe: one record each (``course_utils.exercises``)."""

from course_utils.exercises.record import Compare, Exercise

# Its test cells are still in the form before one-line checks: graded by the kernel alone.
OLD = Compare(in_kernel_only=True)
NOTEBOOK = "03_bpe"

EXERCISES = (
    Exercise("count_pairs", NOTEBOOK, points=2, compare=OLD),
    Exercise("merge_pair", NOTEBOOK, points=2, compare=OLD),
    Exercise("learn_vocabulary", NOTEBOOK, points=3, compare=OLD),
    Exercise("segment_word", NOTEBOOK, points=2, compare=OLD),
    Exercise("merge_chunk", NOTEBOOK, points=3, compare=OLD),
    Exercise("encode", NOTEBOOK, points=4, compare=OLD),
)

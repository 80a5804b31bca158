"""The exercises of 03_bpe: one record each (``course_utils.exercises``)."""

from course_utils.exercises.record import Exercise

NOTEBOOK = "03_bpe"

EXERCISES = (
    Exercise("count_pairs", NOTEBOOK, points=2),
    Exercise("merge_pair", NOTEBOOK, points=2),
    Exercise("learn_vocabulary", NOTEBOOK, points=3),
    Exercise("segment_word", NOTEBOOK, points=2),
    Exercise("merge_chunk", NOTEBOOK, points=3),
    Exercise("encode", NOTEBOOK, points=4),
)

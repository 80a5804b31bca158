"""The exercises of 06_transformer_blocks: one record each (``course_utils.exercises``)."""

from course_utils.exercises.record import Exercise

NOTEBOOK = "06_transformer_blocks"

EXERCISES = (
    Exercise("positional_encoding", NOTEBOOK, points=2),
    Exercise("rope", NOTEBOOK, points=3),
    Exercise("layer_norm", NOTEBOOK, points=2),
    Exercise("transformer_block", NOTEBOOK, points=4),
    Exercise("is_causal", NOTEBOOK, points=2),
)

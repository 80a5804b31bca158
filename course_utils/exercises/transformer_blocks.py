"""The exercises of 06_transformer_blocks: one record each (``course_utils.exercises``)."""

from course_utils.exercises.record import Exercise

NOTEBOOK = "06_transformer_blocks"

EXERCISES = (
    Exercise("positional_encoding", NOTEBOOK, points=2, check="check_positional_encoding"),
    Exercise("rope", NOTEBOOK, points=3, check="check_rope_answer"),
    Exercise("layer_norm", NOTEBOOK, points=2, check="check_layer_norm"),
    Exercise("transformer_block", NOTEBOOK, points=4, check="check_transformer_block"),
    Exercise("is_causal", NOTEBOOK, points=2, check="check_is_causal_of"),
)

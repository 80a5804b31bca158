"""The exercises of 06_transformer_blocks: one record each (``course_utils.exercises``)."""

from course_utils.exercises.record import Compare, Exercise

# Its test cells are still in the form before one-line checks: graded by the kernel alone.
OLD = Compare(in_kernel_only=True)
NOTEBOOK = "06_transformer_blocks"

EXERCISES = (
    Exercise("positional_encoding", NOTEBOOK, points=2, compare=OLD),
    Exercise("rope", NOTEBOOK, points=3, compare=OLD),
    Exercise("layer_norm", NOTEBOOK, points=2, compare=OLD),
    Exercise("transformer_block", NOTEBOOK, points=4, compare=OLD),
    Exercise("is_causal", NOTEBOOK, points=2, compare=OLD),
)

"""The exercises of 07_linear_attention: one record each (``course_utils.exercises``)."""

from course_utils.exercises.record import Compare, Exercise

# Its test cells are still in the form before one-line checks: graded by the kernel alone.
OLD = Compare(in_kernel_only=True)
NOTEBOOK = "07_linear_attention"

EXERCISES = (
    Exercise("kernel_attention", NOTEBOOK, points=3, compare=OLD),
    Exercise("recurrent_step", NOTEBOOK, points=2, compare=OLD),
    Exercise("causal_linear_attention", NOTEBOOK, points=4, compare=OLD),
    Exercise("separation", NOTEBOOK, points=2, compare=OLD),
)

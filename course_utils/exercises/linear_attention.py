"""The exercises of 07_linear_attention: one record each (``course_utils.exercises``)."""

from course_utils.exercises.record import Exercise

NOTEBOOK = "07_linear_attention"

EXERCISES = (
    Exercise("kernel_attention", NOTEBOOK, points=3),
    Exercise("recurrent_step", NOTEBOOK, points=2),
    Exercise("causal_linear_attention", NOTEBOOK, points=4),
    Exercise("separation", NOTEBOOK, points=2),
)

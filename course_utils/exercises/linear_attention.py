"""The exercises of 07_linear_attention: one record each (``course_utils.exercises``)."""

from course_utils.exercises.record import Exercise

NOTEBOOK = "07_linear_attention"

EXERCISES = (
    Exercise("kernel_attention", NOTEBOOK, points=3, check="check_kernel_attention"),
    Exercise("recurrent_step", NOTEBOOK, points=2, check="check_recurrent_step"),
    Exercise("causal_linear_attention", NOTEBOOK, points=4,
             check="check_causal_linear_attention"),
    Exercise("separation", NOTEBOOK, points=2, check="check_separation"),
)

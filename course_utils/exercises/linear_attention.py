"""The exercises of 07_linear_attention: one record each (``course_utils.exercises``)."""

from course_utils.exercises.allowance import ATTENTION, ChunkedWork, LinearWork, NoSquareMatrix
from course_utils.exercises.record import Exercise, Recurrence

NOTEBOOK = "07_linear_attention"

EXERCISES = (
    Exercise("kernel_attention", NOTEBOOK, points=1, check="check_kernel_attention",
             twins=("course_utils.models.linear_attention.fmm_attention",
                    "course_utils.checks.linear_attention._attend",
                    "course_utils.checks.linear_attention._signed",
                    "notebook.softmax_attention",
                    "notebook.similarity_attention"),
             torch_twins=ATTENTION,
             rules=(NoSquareMatrix, LinearWork)),
    Exercise("recurrent_step", NOTEBOOK, points=2, check="check_recurrent_step",
             run=Recurrence(state=2, sequences=3),   # S, z; q, k, v
             twins=("course_utils.checks.linear_attention._attend",
                    "course_utils.checks.linear_attention._signed",
                    "course_utils.checks.linear_attention._decay",
                    "course_utils.checks.linear_attention._state_as_keys",
                    "course_utils.checks.linear_attention._states",
                    "notebook.masked_kernel_attention")),
    Exercise("causal_linear_attention", NOTEBOOK, points=4,
             check="check_causal_linear_attention",
             twins=("course_utils.models.linear_attention.fmm_attention",
                    "course_utils.checks.linear_attention._attend",
                    "course_utils.checks.linear_attention._signed",
                    "notebook.softmax_attention",
                    "notebook.similarity_attention",
                    "notebook.masked_kernel_attention"),
             torch_twins=ATTENTION,
             rules=(NoSquareMatrix, LinearWork, ChunkedWork)),
    Exercise("separation", NOTEBOOK, points=2, check="check_separation",
             twins=("course_utils.checks.linear_attention._tight",)),
)

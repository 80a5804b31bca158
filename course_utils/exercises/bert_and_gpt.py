"""The exercises of 09_bert_and_gpt: one record each (``course_utils.exercises``)."""

from course_utils.exercises.record import Compare, Exercise

# Its test cells are still in the form before one-line checks: graded by the kernel alone.
OLD = Compare(in_kernel_only=True)
NOTEBOOK = "09_bert_and_gpt"

EXERCISES = (
    Exercise("masked_lm_loss", NOTEBOOK, points=2, compare=OLD),
    Exercise("bert_parameters", NOTEBOOK, points=2, compare=OLD),
    Exercise("best_span", NOTEBOOK, points=2, compare=OLD),
)

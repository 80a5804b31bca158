"""The exercises of 09_bert_and_gpt: one record each (``course_utils.exercises``)."""

from course_utils.exercises.record import Exercise

NOTEBOOK = "09_bert_and_gpt"

EXERCISES = (
    Exercise("masked_lm_loss", NOTEBOOK, points=2),
    Exercise("bert_parameters", NOTEBOOK, points=2),
    Exercise("best_span", NOTEBOOK, points=2),
)

"""The exercises of 04_alpha3_by_hand: one record each (``course_utils.exercises``)."""

from course_utils.exercises.record import Exercise

NOTEBOOK = "04_alpha3_by_hand"

EXERCISES = (
    Exercise("scores_3_by_hand", NOTEBOOK, points=1),
    Exercise("alpha_3_by_hand", NOTEBOOK, points=2),
    Exercise("a_3_by_hand", NOTEBOOK, points=1),
    Exercise("mexican_by_hand", NOTEBOOK, points=2),
    Exercise("causal_softmax", NOTEBOOK, points=3),
    Exercise("causal_attention", NOTEBOOK, points=4),
    Exercise("impossible_entries", NOTEBOOK, points=1),
)

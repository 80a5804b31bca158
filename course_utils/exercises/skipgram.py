"""The exercises of 02_skipgram: one record each (``course_utils.exercises``)."""

from course_utils.exercises.record import Exercise

NOTEBOOK = "02_skipgram"

EXERCISES = (
    Exercise("window_pairs", NOTEBOOK, points=2),
    Exercise("window_loss", NOTEBOOK, points=3),
    Exercise("sgd_step", NOTEBOOK, points=5),
    Exercise("negative_sampling_loss", NOTEBOOK, points=1),
)

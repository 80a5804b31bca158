"""The exercises of 01_static_vs_contextual: one record each (``course_utils.exercises``)."""

from course_utils.exercises.record import Exercise

NOTEBOOK = "01_static_vs_contextual"

EXERCISES = (
    Exercise("embed", NOTEBOOK, points=1),
    Exercise("cosine_matrix", NOTEBOOK, points=2),
    Exercise("nearest_words", NOTEBOOK, points=2),
    Exercise("updated_embedding", NOTEBOOK, points=2),
    Exercise("updated_embeddings", NOTEBOOK, points=4),
)

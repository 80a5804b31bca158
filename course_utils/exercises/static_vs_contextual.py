"""The exercises of 01_static_vs_contextual: one record each (``course_utils.exercises``)."""

from course_utils.exercises.record import Exercise

NOTEBOOK = "01_static_vs_contextual"

EXERCISES = (
    Exercise("embed", NOTEBOOK, points=1, check="check_lookup"),
    Exercise("cosine_matrix", NOTEBOOK, points=2, check="check_cosine_matrix"),
    Exercise("nearest_words", NOTEBOOK, points=2, check="check_neighbours"),
    Exercise("updated_embedding", NOTEBOOK, points=2, check="check_contextual_update"),
    Exercise("updated_embeddings", NOTEBOOK, points=4, check="check_updated_embeddings"),
)

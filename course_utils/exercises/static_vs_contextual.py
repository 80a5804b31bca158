"""The exercises of 01_static_vs_contextual: one record each (``course_utils.exercises``)."""

from course_utils.exercises.allowance import ATTENTION, ELEMENTARY, NO_SOFTMAX, Allowance
from course_utils.exercises.record import Exercise

NOTEBOOK = "01_static_vs_contextual"

EXERCISES = (
    Exercise("embed", NOTEBOOK, points=1, check="check_lookup"),
    Exercise("cosine_matrix", NOTEBOOK, points=2, check="check_cosine_matrix"),
    # may rank by PyTorch's cosine (computing it was exercise 2)
    Exercise("nearest_words", NOTEBOOK, points=2, check="check_neighbours",
             allowance=Allowance(torch_ops=ELEMENTARY | {"cosine_similarity"})),
    # derives a softmax whose exponentials cannot overflow: torch's softmax functions, which
    # take that step already, are refused
    Exercise("updated_embedding", NOTEBOOK, points=2, check="check_contextual_update",
             allowance=NO_SOFTMAX,
             torch_twins=ATTENTION),
    Exercise("updated_embeddings", NOTEBOOK, points=4, check="check_updated_embeddings",
             twins=("course_utils.models.attention.attention_weights",),
             torch_twins=ATTENTION),
)

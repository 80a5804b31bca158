"""The exercises of 01_static_vs_contextual: one record each (``course_utils.exercises``)."""

from course_utils.exercises.allowance import ATTENTION, ELEMENTARY, NO_SOFTMAX, Allowance
from course_utils.exercises.record import Exercise

NOTEBOOK = "01_static_vs_contextual"

EXERCISES = (
    Exercise("embed", NOTEBOOK, points=1, check="check_lookup",
             twins=("course_utils.words.embeddings.one_hot",
                    "course_utils.words.embeddings.lookup")),
    Exercise("cosine_matrix", NOTEBOOK, points=2, check="check_cosine_matrix",
             twins=("course_utils.words.embeddings.cosine_similarity",
                    "course_utils.checks.embeddings._cosines")),
    # may rank by PyTorch's cosine (computing it was exercise 2)
    Exercise("nearest_words", NOTEBOOK, points=2, check="check_neighbours",
             allowance=Allowance(torch_ops=ELEMENTARY | {"cosine_similarity"}),
             twins=("course_utils.words.embeddings.nearest_neighbours",
                    "course_utils.words.embeddings.cosine_similarity",
                    "course_utils.checks.embeddings._cosines")),
    # derives a softmax whose exponentials cannot overflow: torch's softmax functions, which
    # take that step already, are refused
    Exercise("updated_embedding", NOTEBOOK, points=2, check="check_contextual_update",
             allowance=NO_SOFTMAX,
             twins=("course_utils.words.embeddings.contextual_update",
                    "course_utils.checks.embeddings._causal_update"),
             torch_twins=ATTENTION),
    Exercise("updated_embeddings", NOTEBOOK, points=4, check="check_updated_embeddings",
             twins=("course_utils.words.embeddings.contextual_update",
                    "course_utils.checks.embeddings._causal_update",
                    "course_utils.models.attention.attention",
                    "course_utils.models.attention.attention_weights",
                    "course_utils.models.attention.masked_softmax",
                    "course_utils.models.attention.causal_mask"),
             torch_twins=ATTENTION),
)

"""The exercises of 01_static_vs_contextual: one record each (``course_utils.exercises``)."""

from course_utils.exercises.allowance import ATTENTION, DEFAULT, ELEMENTARY, NO_SOFTMAX, Allowance
from course_utils.exercises.record import Exercise

NOTEBOOK = "01_static_vs_contextual"

EXERCISES = (
    Exercise("embed", NOTEBOOK, points=1, check="check_lookup"),
    Exercise("cosine_matrix", NOTEBOOK, points=2, check="check_cosine_matrix"),
    # finds the cosine order with a distance search: torch's distances allowed, every cosine
    # function refused (the step from distances to cosines is the exercise)
    Exercise("nearest_words", NOTEBOOK, points=2, check="check_neighbours",
             allowance=Allowance(says=DEFAULT.says + ", and torch.cdist",
                                 torch_ops=ELEMENTARY | {"cdist"}),
             twins=("notebook.cosine_matrix",),
             torch_twins=("cosine_similarity",)),
    # derives a softmax whose exponentials cannot overflow: torch's softmax functions, which
    # take that step already, are refused
    Exercise("updated_embedding", NOTEBOOK, points=2, check="check_contextual_update",
             allowance=NO_SOFTMAX,
             torch_twins=ATTENTION),
    Exercise("updated_embeddings", NOTEBOOK, points=4, check="check_updated_embeddings",
             twins=("course_utils.models.attention.attention_weights",),
             torch_twins=ATTENTION),
)

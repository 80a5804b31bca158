"""The exercises of 01_static_vs_contextual: one record each (``course_utils.exercises``)."""

from course_utils.exercises.allowance import (
    ATTENTION,
    C_MODULES,
    ELEMENTARY,
    NO_SOFTMAX,
    PLAIN,
    TORCH,
    Allowance,
)
from course_utils.exercises.record import Exercise

NOTEBOOK = "01_static_vs_contextual"

# torch's products of two vectors or matrices, and its elementwise products (a product summed
# is a dot product): each gives dot products, and with them cosines
PRODUCTS = frozenset("""
matmul mm bmm mv dot vdot inner outer ger einsum tensordot kron addmm addmv addbmm baddbmm
__matmul__ __rmatmul__ vecdot cov corrcoef
mul mul_ multiply __mul__ __rmul__ __imul__ prod cumprod addcmul addcmul_
""".split())
DISTANCES_ONLY = ("plain Python (math, collections, itertools...), torch.cdist, and torch's "
                  "elementary tensor operations but none of their products (@, matmul, dot, "
                  "einsum, * between tensors or with a number...)")

PLAIN_MATH = "plain Python (math, collections, itertools...), no torch and no NumPy"

EXERCISES = (
    Exercise("embed", NOTEBOOK, points=1, check="check_lookup"),
    # a pair of matrices on which exercise 2's draft returns no cosines: its test reports
    # whether it does (draft_fails_on), the same verdict for every right pair
    Exercise("cosine_counterexample", NOTEBOOK, points=1, check="check_draft_fails"),
    Exercise("cosine_matrix", NOTEBOOK, points=1, check="check_cosine_matrix"),
    # finds the cosine order with a distance search: torch's distances allowed, every cosine
    # function and every product of two vectors refused (the step from distances to cosines
    # is the exercise); NumPy, whose products no guard watches, is left out
    Exercise("nearest_words", NOTEBOOK, points=1, check="check_neighbours",
             allowance=Allowance(says=DISTANCES_ONLY, modules=PLAIN + TORCH,
                                 c_modules=tuple(m for m in C_MODULES if m != "numpy"),
                                 torch_ops=(ELEMENTARY - PRODUCTS) | {"cdist"}),
             twins=("notebook.cosine_matrix",),
             torch_twins=("cosine_similarity",)),
    # derives a softmax whose exponentials cannot overflow: torch's softmax functions, which
    # take that step already, are refused
    Exercise("updated_embedding", NOTEBOOK, points=2, check="check_contextual_update",
             allowance=NO_SOFTMAX,
             torch_twins=ATTENTION),
    Exercise("updated_embeddings", NOTEBOOK, points=1, check="check_updated_embeddings",
             twins=("course_utils.models.attention.attention_weights",),
             torch_twins=ATTENTION),
    # the written question's formula for bark's tree feature with m dogs among L words, as a
    # function: plain Python only, so that no tensor code can compute the update instead
    Exercise("many_dogs", NOTEBOOK, points=1, check="check_many_dogs",
             allowance=Allowance(says=PLAIN_MATH, modules=PLAIN, torch_ops=frozenset(),
                                 c_modules=tuple(m for m in C_MODULES
                                                 if m not in ("numpy", "torch")))),
)

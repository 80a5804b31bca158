"""The exercises of 02_skipgram: one record each (``course_utils.exercises``)."""

from course_utils.exercises.allowance import DEFAULT, ELEMENTARY, NO_AUTOGRAD, Allowance, NoAutograd
from course_utils.exercises.record import Compare, Exercise

NOTEBOOK = "02_skipgram"

EXERCISES = (
    # the pairs in any order (the exercise says so; the check compares them as a multiset)
    Exercise("window_pairs", NOTEBOOK, points=2, check="check_window_pairs",
             compare=Compare(unordered=True)),
    # the warm-up: L_t from the probability model, torch's log-sum-exp allowed, its softmax
    # functions and losses (which hold the derived form already) refused
    Exercise("window_loss", NOTEBOOK, points=1, check="check_window_loss",
             allowance=Allowance(
                 says=DEFAULT.says + ", torch.logsumexp among them, but not torch's softmax "
                                     "functions (softmax, log_softmax) or its losses "
                                     "(cross_entropy, nll_loss)",
                 torch_ops=ELEMENTARY - {"softmax", "log_softmax"}),
             torch_twins=("cross_entropy", "nll_loss", "log_softmax")),
    # J(theta) at W = 0 as a formula in T, c and N, derived before the cell that computes it
    # for the lecture's sentence: its visible check looks at the form only; the grade compares
    # the hidden tests' values (other T, c, N) with the stored answers
    Exercise("j_at_zero", NOTEBOOK, points=1, check="check_j_at_zero"),
    # the closed-form gradient: no autograd
    Exercise("sgd_step", NOTEBOOK, points=5, check="check_sgd_step",
             allowance=NO_AUTOGRAD,
             rules=(NoAutograd,)),
    # the negative-sampling gradient derived and a step built on it: no autograd
    Exercise("ns_step", NOTEBOOK, points=4, check="check_ns_step",
             allowance=NO_AUTOGRAD,
             rules=(NoAutograd,)),
)

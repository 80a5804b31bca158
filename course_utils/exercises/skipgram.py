"""The exercises of 02_skipgram: one record each (``course_utils.exercises``)."""

from course_utils.exercises.allowance import ELEMENTARY, LOSSES, NO_AUTOGRAD, Allowance, NoAutograd
from course_utils.exercises.record import Compare, Exercise

NOTEBOOK = "02_skipgram"

EXERCISES = (
    # the pairs in any order (the exercise says so; the check compares them as a multiset)
    Exercise("window_pairs", NOTEBOOK, points=2, check="check_window_pairs",
             compare=Compare(unordered=True)),
    # may take PyTorch's cross-entropy (log-softmax and the negative log-likelihood of the
    # text); the closed-form gradient no autograd
    Exercise("window_loss", NOTEBOOK, points=3, check="check_window_loss",
             allowance=Allowance(torch_ops=ELEMENTARY | LOSSES)),
    Exercise("sgd_step", NOTEBOOK, points=5, check="check_sgd_step",
             allowance=NO_AUTOGRAD,
             rules=(NoAutograd,)),
    Exercise("negative_sampling_loss", NOTEBOOK, points=1, check="check_negative_sampling_loss"),
)

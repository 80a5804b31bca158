"""The exercises of 07_linear_attention: one record each (``course_utils.exercises``)."""

import torch

from course_utils.exercises.allowance import ATTENTION, LinearWork, NoSquareMatrix
from course_utils.exercises.record import Exercise

NOTEBOOK = "07_linear_attention"


def token_by_token(step, S, z, q, k, v, feature_map, gamma):
    """How a test runs ``recurrent_step``: over the rows of ``q``, ``k`` (n, D) and ``v``
    (n, D_v) in order, from the state ``S``, ``z``, each call given the state the last one
    returned (as tensors like ``S``). The list of what each call returned; it stops early at
    a result that is not three things or a state that cannot be given back (the check says
    which)."""
    steps = []
    for i in range(len(v)):
        result = step(S, z, q[i], k[i], v[i], feature_map, gamma)
        steps.append(result)
        if not isinstance(result, tuple | list) or len(result) != 3:
            break
        try:
            fed = [torch.as_tensor(part, dtype=S.dtype, device=S.device) for part in result[:2]]
        except (TypeError, ValueError, RuntimeError):
            break
        if fed[0].shape != S.shape or fed[1].shape != z.shape:
            break
        S, z = fed
    return steps

EXERCISES = (
    Exercise("kernel_attention", NOTEBOOK, points=1, check="check_kernel_attention",
             twins=("course_utils.models.linear_attention.fmm_attention",
                    "course_utils.checks.linear_attention._attend",
                    "course_utils.checks.linear_attention._signed",
                    "notebook.softmax_attention",
                    "notebook.similarity_attention"),
             torch_twins=ATTENTION,
             rules=(NoSquareMatrix, LinearWork)),
    Exercise("recurrent_step", NOTEBOOK, points=2, check="check_recurrent_step",
             run=token_by_token,
             twins=("course_utils.checks.linear_attention._attend",
                    "course_utils.checks.linear_attention._signed",
                    "course_utils.checks.linear_attention._decay",
                    "course_utils.checks.linear_attention._state_as_keys",
                    "course_utils.checks.linear_attention._states",
                    "notebook.masked_kernel_attention")),
    Exercise("causal_linear_attention", NOTEBOOK, points=4,
             check="check_causal_linear_attention",
             twins=("course_utils.models.linear_attention.fmm_attention",
                    "course_utils.checks.linear_attention._attend",
                    "course_utils.checks.linear_attention._signed",
                    "notebook.softmax_attention",
                    "notebook.similarity_attention",
                    "notebook.masked_kernel_attention"),
             torch_twins=ATTENTION,
             rules=(NoSquareMatrix, LinearWork)),
    Exercise("separation", NOTEBOOK, points=2, check="check_separation",
             twins=("course_utils.checks.linear_attention._tight",)),
)

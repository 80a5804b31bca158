"""The exercises of 05_masked_attention: one record each (``course_utils.exercises``)."""

from course_utils.exercises.allowance import ATTENTION
from course_utils.exercises.record import Exercise

NOTEBOOK = "05_masked_attention"

# what computes a whole multi-head attention layer: the course's layer, PyTorch's and the
# checks' reference (refused here, and in 06's my_attention, the same with biases)
MULTI_HEAD_TWINS = ("course_utils.models.attention.MultiHeadAttention.forward",
                    "course_utils.models.attention.MultiHeadAttention._computed",
                    "course_utils.models.attention.attention_weights",
                    "course_utils.checks.masked_attention._pytorch_reference",
                    "course_utils.checks.masked_attention._pytorch_layer",
                    "torch.nn.MultiheadAttention.forward")

EXERCISES = (
    Exercise("attention_update", NOTEBOOK, points=3, check="check_attention_update",
             twins=("course_utils.models.attention.attention_weights",),
             torch_twins=ATTENTION),
    Exercise("padding_mask", NOTEBOOK, points=3, check="check_padding_mask"),
    Exercise("split_heads", NOTEBOOK, points=1, check="check_split_heads",
             twins=("course_utils.models.attention.MultiHeadAttention.forward",
                    "course_utils.models.attention.MultiHeadAttention._computed")),
    Exercise("multi_head_attention", NOTEBOOK, points=4, check="check_multi_head_attention",
             twins=MULTI_HEAD_TWINS, torch_twins=ATTENTION),
)

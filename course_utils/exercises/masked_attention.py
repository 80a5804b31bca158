"""The exercises of 05_masked_attention: one record each (``course_utils.exercises``)."""

from course_utils.exercises.record import Exercise

NOTEBOOK = "05_masked_attention"

EXERCISES = (
    Exercise("attention_update", NOTEBOOK, points=3, check="check_attention_update"),
    Exercise("padding_mask", NOTEBOOK, points=3, check="check_padding_mask"),
    Exercise("split_heads", NOTEBOOK, points=2, check="check_split_heads"),
    Exercise("multi_head_attention", NOTEBOOK, points=4, check="check_multi_head_attention"),
)

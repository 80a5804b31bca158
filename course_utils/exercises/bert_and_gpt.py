"""The exercises of 09_bert_and_gpt: one record each (``course_utils.exercises``)."""

from course_utils.exercises.record import Compare, Exercise

NOTEBOOK = "09_bert_and_gpt"

EXERCISES = (
    Exercise("masked_lm_loss", NOTEBOOK, points=2, check="check_masked_lm_loss"),
    # a count is one whole number: the default rtol would let ±0.1 % of 10⁸ parameters through
    Exercise("bert_parameters", NOTEBOOK, points=2, check="check_bert_parameters",
             compare=Compare(rtol=0.0, atol=0.5)),
    Exercise("best_span", NOTEBOOK, points=2, check="check_best_span"),
)

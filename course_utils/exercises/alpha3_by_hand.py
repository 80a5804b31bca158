"""The exercises of 04_alpha3_by_hand: one record each (``course_utils.exercises``).

The warm-up's numbers worked by hand (exercises 1 to 3: the scores, α₃ and a₃ of the
student's own sentence, three answer cells) are graded by one test cell, ``test_a_3_by_hand``.
They depend on the student's id: the grader works them out for each student
(``grader.scoring.by_hand_answers``) and compares the three values that test cell reports
with them under one rule, this record's ``compare``: a₃'s, whose rounding allows the most.
a₃ to 2 decimals from α₃ to 3: those weights, off by up to 0.0082 together, times values up
to 2, and a₃'s own rounding, 0.0214, so atol 0.022. The scores and α₃ are then graded
within 0.022 too, looser than their own rounding needs (0.006 and 0.004,
``course_utils.checks.by_hand.ROUNDING``, which the visible checks use): enough for a
1-point warm-up, and each likely slip (√d_k forgotten, divided by d_k, the keys weighted
instead of the values, another student's sentence) moves at least one of the three values
by more (tests/grader/scoring/test_by_hand_answers.py).

The repair of exercise 6 (``causal_attention``, for one sentence or a batch) draws its hidden
tests' inputs from the student's id too (``grader.scoring.by_hand_answers``). Exercise 7's
``next_row`` (the KV cache) is compared with PyTorch's causal attention on n + 1 tokens, and
``OneRow`` refuses any matrix of every position against every position: the earlier rows are
never computed again.

The slips of exercise 6 (``my_slips``: each line of the given function that goes wrong, with
a sentence on which it alone does) have many right answers: the grader judges the value the
test cell reports by running that function, outside the kernel
(``grader.scoring.given_slips``), and the visible check looks at the form only.
"""

from course_utils.exercises.allowance import ATTENTION, OneRow
from course_utils.exercises.record import Compare, Exercise

NOTEBOOK = "04_alpha3_by_hand"

EXERCISES = (
    Exercise("a_3_by_hand", NOTEBOOK, points=1, check="check_own_output_3",
             compare=Compare(rtol=0.0, atol=0.022)),
    Exercise("my_slips", NOTEBOOK, points=2, check="check_slips"),
    Exercise("causal_attention", NOTEBOOK, points=1, check="check_causal_attention",
             twins=("course_utils.models.attention.attention_weights",),
             torch_twins=ATTENTION),
    # the KV cache: the new token's row from the cached keys and values, never the earlier rows
    Exercise("next_row", NOTEBOOK, points=2, check="check_next_row",
             twins=("course_utils.checks.attention._last_row",),
             torch_twins=ATTENTION, rules=(OneRow,)),
    # two decimals each, and one rounding either way
    Exercise("slides_score_gaps", NOTEBOOK, points=1, check="check_score_gaps",
             compare=Compare(rtol=0.0, atol=0.011)),
)

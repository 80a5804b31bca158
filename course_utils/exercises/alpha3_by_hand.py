"""The exercises of 04_alpha3_by_hand: one record each (``course_utils.exercises``).

The numbers worked by hand (exercises 1 to 4) depend on the student's id: the grader works
them out for each student (``grader.scoring.by_hand_answers``) and compares what the test
cells report with them within what the rounding the exercise asks for allows, exact value
against any honest rounding (none at all, or at each step as asked):

* scores to 2 decimals: 0.005, so atol 0.006;
* α₃ to 3 decimals, from the scores to 2: the scores' rounding moves each weight by up to
  0.0025, its own by 0.0005, so atol 0.004;
* a₃ to 2 decimals, from α₃ to 3: those weights, off by up to 0.0082 together, times values
  up to 2, and a₃'s own rounding, 0.0214, so atol 0.022;
* exercise 4's weights to 3 decimals and its average [price, calories, salt] to 2 from
  them, one rule for both (one test cell): the average is off by up to 0.005 plus 0.0005
  times the sum of a row's values, which grows with the row's size (calories are hundreds,
  salt a few grams), so atol 0.01 and rtol 0.006 (over 20,000 menus, any weights within
  0.0005 of the right ones pass); the weights then pass within 0.01 to 0.016, less than the
  0.02 by which the menu's likely slip (the rows of K taken as keys) moves one of them.
"""

from course_utils.exercises.allowance import ATTENTION
from course_utils.exercises.record import Compare, Exercise

NOTEBOOK = "04_alpha3_by_hand"

EXERCISES = (
    Exercise("scores_3_by_hand", NOTEBOOK, points=1, check="check_own_scores_3",
             compare=Compare(rtol=0.0, atol=0.006)),
    Exercise("alpha_3_by_hand", NOTEBOOK, points=2, check="check_own_alpha_3",
             compare=Compare(rtol=0.0, atol=0.004)),
    Exercise("a_3_by_hand", NOTEBOOK, points=1, check="check_own_output_3",
             compare=Compare(rtol=0.0, atol=0.022)),
    Exercise("mexican_by_hand", NOTEBOOK, points=2, check="check_own_mexican_average",
             compare=Compare(rtol=0.006, atol=0.01)),
    Exercise("causal_softmax", NOTEBOOK, points=3, check="check_causal_softmax",
             twins=("course_utils.models.attention.attention_weights",)),
    Exercise("causal_attention", NOTEBOOK, points=4, check="check_causal_attention",
             twins=("course_utils.models.attention.attention_weights",),
             torch_twins=ATTENTION),
    # a set of pairs: order and repeats do not matter, a list of pairs is the same answer
    Exercise("impossible_entries", NOTEBOOK, points=1, check="check_hidden_entries",
             compare=Compare(as_set=True)),
)

"""grader.scoring.by_hand_answers: 04's answers worked out for each student from the id,
against numbers worked by hand (here, in NumPy on the printed vectors), and the comparison
outside the kernel that uses them: every honest rounding passes, the likely slips do not."""

import functools
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch

from course_utils import student as student_module
from course_utils.by_hand import WORKED_EXAMPLE, sentence_of
from course_utils.checks.guards.report import encode
from course_utils.exercises import rule_of
from grader.scoring import outside
from grader.scoring.by_hand_answers import (
    ANSWER_CELLS,
    PER_STUDENT,
    alpha,
    answer,
    causal_attention,
    causal_attention_inputs,
    output,
    right_for,
    scores,
)
from grader.scoring.same_value import same
from tests.grading_cases.alpha3_by_hand import BRUTE_FORCE, BY_HAND, by_hand_answers

REPO = Path(__file__).resolve().parents[3]
SOLUTION = REPO / "solutions" / "04_alpha3_by_hand" / "04_alpha3_by_hand.ipynb"

# The sentence of the id "instructor", as the notebook prints it (the solution's student).
Q_3 = [1.8, 0.8, 0.2, -1.8]
KEYS = [[1.0, -0.3, -1.4, -1.0], [1.4, 0.3, 0.9, -0.3], [-0.6, -1.0, 1.6, -1.5]]
VALUES = [[1, -1, -2, -2], [1, -1, -2, -1], [-2, -1, 1, -1]]
# By hand: q_3 · k_1 = 1.8 - 0.24 - 0.28 + 1.8 = 3.08; q_3 · k_2 = 2.52 + 0.24 + 0.18 + 0.54
# = 3.48; q_3 · k_3 = -1.08 - 0.8 + 0.32 + 2.7 = 1.14; halved (√d_k = 2):
SCORES = [1.54, 1.74, 0.57]
# e^1.54 = 4.6646, e^1.74 = 5.6973, e^0.57 = 1.7683, sum 12.1302:
ALPHA = [0.3845, 0.4697, 0.1458]
# 0.3845 v_1 + 0.4697 v_2 + 0.1458 v_3, entry by entry:
A_3 = [0.5627, -1.0, -1.5627, -1.3845]
# The lectures' worked example, written out in the notebook's text.
WORKED = {"scores_3_by_hand": [-0.5, -2.0, 1.0], "alpha_3_by_hand": [0.175, 0.039, 0.786],
          "a_3_by_hand": [0.25, 0.35, 1.18, 0.92]}


def test_numpy_on_the_printed_vectors_gives_the_hand_worked_numbers():
    """The hand-worked numbers above, checked once in NumPy (not with the module's code)."""
    q_3, keys, values = np.array(Q_3), np.array(KEYS), np.array(VALUES)
    worked = keys @ q_3 / 2
    assert np.allclose(worked, SCORES, atol=1e-12)
    e = np.exp(worked)
    assert np.allclose(e / e.sum(), ALPHA, atol=5e-5)
    assert np.allclose(e / e.sum() @ values, A_3, atol=5e-5)
    shown = str(sentence_of("instructor"))
    assert f"q_3 = {Q_3}" in shown and all(f"v_{j} = {v}" in shown for j, v in
                                           enumerate(VALUES, 1)), shown


def test_the_answers_of_a_sentence_worked_by_hand():
    sentence = sentence_of("instructor")
    assert np.allclose(scores(sentence), SCORES, atol=1e-12)
    assert np.allclose(alpha(sentence), ALPHA, atol=5e-5)
    assert np.allclose(output(sentence), A_3, atol=5e-5)
    for name, expected in WORKED.items():
        computed = {"scores_3_by_hand": scores, "alpha_3_by_hand": alpha,
                    "a_3_by_hand": output}[name](WORKED_EXAMPLE)
        assert np.allclose(computed, expected, atol=0.005), name


WARM_UP = "test_a_3_by_hand"  # the one test cell of the three answer cells


def test_the_test_cell_gets_its_values_for_the_student_graded_in_order():
    sentence = sentence_of("instructor")
    for index, worked in enumerate((scores, alpha, output)):
        assert PER_STUDENT[WARM_UP]("instructor", index) == encode(worked(sentence).tolist())
    assert PER_STUDENT[WARM_UP]("instructor", 3) is None  # no fourth value
    assert PER_STUDENT[WARM_UP]("ada", 0) != PER_STUDENT[WARM_UP]("bob", 0)
    # a blank id is the kernel's "no id": the demonstration's numbers
    demonstration = encode(scores(sentence_of(None)).tolist())
    assert PER_STUDENT[WARM_UP](" ", 0) == demonstration
    assert ANSWER_CELLS == BY_HAND
    assert outside.PER_STUDENT.keys() >= {WARM_UP, "test_causal_attention"}


def test_the_comparison_outside_decides_the_by_hand_cell_by_the_students_own_numbers():
    stored = {WARM_UP: [{"per_student": True}] * 3}
    ada = [encode(numbers) for numbers in by_hand_answers(sentence_of("ada")).values()]
    assert outside.verdict(WARM_UP, ada, stored, "ada") == ""
    assert "differs from the expected answer" in outside.verdict(WARM_UP, ada, stored, "bob")


def honest_sentence_answers(student: str) -> list[dict[str, np.ndarray]]:
    """Every way of rounding the by-hand route (or not): the scores to 2 decimals or not,
    α₃ from them to 3 decimals or not, a₃ from those (or the unrounded) weights to 2."""
    sentence = sentence_of(student)
    q_3, keys, values = (np.array(part, dtype=float) for part in
                         (sentence.q_3, sentence.keys, sentence.values))
    exact = keys @ q_3 / 2
    routes = []
    for scores_typed in (exact, np.round(exact, 2)):
        e = np.exp(scores_typed - scores_typed.max())
        weights = e / e.sum()
        for alpha_typed in (weights, np.round(weights, 3)):
            for mixed in (alpha_typed, weights):
                for a_3 in (mixed @ values, np.round(mixed @ values, 2)):
                    routes.append({"scores_3_by_hand": scores_typed,
                                   "alpha_3_by_hand": alpha_typed, "a_3_by_hand": a_3})
    return routes


@functools.cache
def expected_of(cell: str, student: str, index: int):
    return PER_STUDENT[cell](student, index)


def passes(answers: dict, student: str) -> bool:
    """Whether the warm-up's test cell, reporting ``answers`` ({grade id: numbers}), passes
    the comparison outside for ``student``."""
    rule = rule_of(WARM_UP.removeprefix("test_"))
    return all(same(encode(np.asarray(answers[name]).tolist()),
                    expected_of(WARM_UP, student, index), rule)
               for index, name in enumerate(BY_HAND))


def test_every_honest_rounding_passes():
    """Over 400 ids here (course_utils.checks.by_hand.ROUNDING's bounds were measured over
    20,000; the record's one tolerance for the three is the largest of them)."""
    for student in (f"student{i}" for i in range(400)):
        for route in honest_sentence_answers(student):
            assert passes(route, student), (student, route)
        assert passes(by_hand_answers(sentence_of(student)), student), student


def test_the_likely_slips_do_not_pass():
    for student in (f"student{i}" for i in range(300)):
        sentence = sentence_of(student)
        right = by_hand_answers(sentence)
        for slip in (by_hand_answers(sentence, scale=1.0), by_hand_answers(sentence, scale=1 / 4)):
            assert not passes(slip, student), student
        keys = by_hand_answers(sentence, weighted="keys")["a_3_by_hand"]
        assert not passes({**right, "a_3_by_hand": keys}, student), student
        for other in ("ada", None):  # another sentence's numbers, or its scores alone
            copied = by_hand_answers(sentence_of(other))
            assert not passes(copied, student), (student, other)
            assert not passes({**right, "scores_3_by_hand": copied["scores_3_by_hand"]},
                              student), (student, other)


def test_right_for_tells_whose_numbers_an_answer_holds():
    for grade_id, numbers in by_hand_answers(sentence_of("ada")).items():
        assert right_for(grade_id, numbers, "ada")
        assert not right_for(grade_id, numbers, "bob")
        assert not right_for(grade_id, numbers[:-1], "ada")  # an entry short: not right
        assert not right_for(grade_id, [..., *numbers[1:]], "ada")
    with pytest.raises(ValueError, match="expected one of"):
        answer("scores", "ada")


# --- causal_attention's hidden tests, drawn from the student's id ------------------------


class Recorder:
    """The ``checks`` of a test cell that only records what ``grade`` is given."""

    def __init__(self):
        self.graded = []

    def grade(self, exercise, *inputs):
        self.graded.append((exercise, inputs))


def hidden_tests(grade_id: str) -> str:
    notebook = nbformat.read(SOLUTION, as_version=4)
    cell = next(c for c in notebook.cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    return cell.source.split("### BEGIN HIDDEN TESTS")[1].split("### END HIDDEN TESTS")[0]


@pytest.mark.parametrize("student", ["ada", "instructor"])
def test_the_grader_draws_the_hidden_inputs_the_test_cell_draws(student, monkeypatch):
    monkeypatch.setattr(student_module, "student_id", lambda: student)
    recorder = Recorder()
    exec(hidden_tests("test_causal_attention"), {"checks": recorder, "torch": torch,
                                                 "device": torch.device("cpu")})
    assert [name for name, _ in recorder.graded] == ["causal_attention"] * 4
    drawn = causal_attention_inputs(student)
    assert len(drawn) == len(recorder.graded)
    for (_, inputs), ours in zip(recorder.graded, drawn, strict=True):
        assert all(a.dtype == b.dtype and torch.equal(a, b)
                   for a, b in zip(inputs, ours, strict=True))
    assert not torch.equal(causal_attention_inputs("bob")[0][0], drawn[0][0])


def test_the_hidden_answers_are_causal_attention_as_pytorch_computes_it():
    for index, (x, w_q, w_k, w_v) in enumerate(causal_attention_inputs("ada")):
        q, k, v = x.double() @ w_q.double(), x.double() @ w_k.double(), x.double() @ w_v.double()
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        reference, weights = causal_attention(x, w_q, w_k, w_v)
        assert torch.allclose(reference, a, atol=1e-12)
        assert torch.allclose(weights.sum(-1), torch.ones(x.shape[:-1], dtype=torch.float64))
        assert (weights.triu(1) == 0).all()
        assert PER_STUDENT["test_causal_attention"]("ada", index) == encode((reference, weights))
    assert PER_STUDENT["test_causal_attention"]("ada", 4) is None  # no fifth value


# --- the visible checks are no oracle --------------------------------------------------------

SEARCH_AT_HOME = BRUTE_FORCE + """
import json
from course_utils import checks

found = search(checks.check_own_scores_3, 3, "scores_3_by_hand")
print("FOUND " + json.dumps(found))
"""


def test_a_loop_over_the_visible_check_finds_nothing():
    """The loop of the CHEAT case, as a student would run it at home (no allowlist, their
    id set): the check says only that three numbers are numbers, so it keeps the first."""
    env = {name: value for name, value in os.environ.items()
           if name not in ("COURSE_STUDENT", "JUPYTERHUB_USER")}
    env["COURSE_STUDENT"] = "ada"
    done = subprocess.run([sys.executable, "-c", SEARCH_AT_HOME], env=env, capture_output=True,
                          text=True, check=True, timeout=300)
    found = json.loads(done.stdout.split("FOUND ", 1)[1])
    assert found == [-4.0, -4.0, -4.0]
    assert not right_for("scores_3_by_hand", found, "ada")


def test_the_same_loop_against_a_check_that_names_the_entries_off_finds_the_numbers():
    """What the loop does against an oracle: the check it replaced said which entries were
    off for the student's own sentence."""
    right = scores(sentence_of("ada"))
    namespace = {}
    exec(BRUTE_FORCE, namespace)

    def oracle(trial, name):
        off = [i + 1 for i, (a, b) in enumerate(zip(trial, right, strict=True))
               if abs(a - b) > 0.006]
        if off:
            raise AssertionError(f"{name} is not right: entries {off} (counting from 1) are off")

    found = namespace["search"](oracle, 3, "scores_3_by_hand")
    assert right_for("scores_3_by_hand", found, "ada")
    assert math.isclose(sum(found), sum(right), abs_tol=0.02)

"""Notebook 04's checks of the sentence's numbers worked by hand (exercises 1 to 3): they
fail on what no right answer does and say, without failing, where the student's numbers
disagree with each other; they never say whether the numbers are right for the sentence
(graded outside the kernel: tests/grader/scoring/test_by_hand_answers.py)."""

import json
import os
import subprocess
import sys

from course_utils.by_hand import sentence_of
from tests.grading_cases.alpha3_by_hand import by_hand_answers

CHECK_AS = """
import contextlib
import io
import json
from course_utils import checks

def restored(value):  # JSON has no Ellipsis: "..." stands for it
    if isinstance(value, list):
        return [restored(item) for item in value]
    return ... if value == "..." else value


outcome = []
for check, *arguments in json.loads({calls!r}):
    arguments = [restored(argument) for argument in arguments]
    said = io.StringIO()
    try:
        with contextlib.redirect_stdout(said):
            getattr(checks, check)(*arguments, "answer")
        notes = [line for line in said.getvalue().splitlines() if not line.startswith("✓ ")]
        outcome.append("passed" + (" with a note: " + " ".join(notes) if notes else ""))
    except AssertionError as error:
        outcome.append(str(error))
print(json.dumps(outcome))
"""


def checked_as(student: str | None, *calls: tuple) -> list[str]:
    """What each ``(check, answer, *other answers)`` says in a fresh interpreter whose
    student is ``student`` ("passed", "passed with a note: ...", or the failure's message):
    the id is the one a process starts with, which a test cannot change in its own. The
    string "..." in an answer stands for ``...``."""
    env = {name: value for name, value in os.environ.items()
           if name not in ("COURSE_STUDENT", "JUPYTERHUB_USER")}
    if student is not None:
        env["COURSE_STUDENT"] = student
    done = subprocess.run([sys.executable, "-c", CHECK_AS.format(calls=json.dumps(calls))],
                          env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


ADA = sentence_of("ada")
RIGHT = by_hand_answers(ADA)


def keys_mixed(alpha: list[float]) -> list[float]:
    return [round(sum(a * key[i] for a, key in zip(alpha, ADA.keys, strict=True)), 2)
            for i in range(4)]


def test_each_check_as_a_students_kernel_runs_it():
    scores, alpha, a_3 = RIGHT["scores_3_by_hand"], RIGHT["alpha_3_by_hand"], RIGHT["a_3_by_hand"]
    nudged = [alpha[0] + 0.03, alpha[1] - 0.03, alpha[2]]   # still sums to 1
    said = iter(checked_as(
        "ada",
        ("check_own_scores_3", scores), ("check_own_scores_3", [s + 0.5 for s in scores]),
        ("check_own_alpha_3", alpha, scores), ("check_own_alpha_3", alpha, [1, "...", 2]),
        ("check_own_output_3", a_3, alpha),
        # wrong but well-formed: nothing tells them apart in the kernel
        ("check_own_alpha_3", [1 / 3, 1 / 3, 1 / 3], [0, 0, 0]),
        # failing: what no right answer is
        ("check_own_scores_3", [-0.5, -2, 1]), ("check_own_scores_3", [scores[0], "...", 1]),
        ("check_own_scores_3", scores[:2]), ("check_own_scores_3", [1.0, float("nan"), 2.0]),
        ("check_own_alpha_3", [0.5, 0.3, 0.3], scores),
        ("check_own_alpha_3", [1.2, -0.1, -0.1], scores),
        ("check_own_output_3", keys_mixed(alpha), alpha),
        ("check_own_output_3", [5.0, 0, 0, 0], alpha),
        # a disagreement with the student's own other answer: said, not failed
        ("check_own_alpha_3", nudged, scores),
        ("check_own_output_3", a_3, nudged)))
    assert [next(said) for _ in range(6)] == ["passed"] * 6
    assert "scores of the worked example" in next(said)
    assert "still holds `...`" in next(said)
    assert "should be 3 numbers, [score_31, score_32, score_33]" in next(said)
    assert "NaN or infinity" in next(said)
    assert "should sum to 1" in next(said)
    assert "negative entries" in next(said)
    assert "the weights are right but the output is not α V" in next(said)
    assert "your entry 1 does not" in next(said)
    for message in (next(said), next(said)):
        assert message.startswith("passed with a note: "), message
        assert "entries [" in message and "cannot tell which" in message, message

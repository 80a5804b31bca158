"""The student's id, the numbers drawn from it, and 04's checks of the numbers worked by hand."""

import hashlib
import json
import os
import subprocess
import sys
from collections import Counter

import pytest

from course_utils.by_hand import WORKED_EXAMPLE, sentence_of
from course_utils.student import OwnNumbers, student_id
from tests.grading_cases.alpha3_by_hand import by_hand_answers


def run_python(code: str, **environment: str) -> str:
    """What ``code`` prints in a fresh interpreter started with ``environment`` added
    (and the ids of the caller's environment removed)."""
    env = {name: value for name, value in os.environ.items()
           if name not in ("COURSE_STUDENT", "JUPYTERHUB_USER")}
    done = subprocess.run([sys.executable, "-c", code], env=env | environment,
                          capture_output=True, text=True, check=True)
    return done.stdout


def dot_products(sentence) -> list[int]:
    """q₃ · k_j for j = 1, 2, 3."""
    return [sum(q * k for q, k in zip(sentence.q_3, key, strict=True)) for key in sentence.keys]


@pytest.mark.parametrize("environment, expected", [
    ({"COURSE_STUDENT": "ada", "JUPYTERHUB_USER": "bob"}, "ada"),  # the grader's wins
    ({"JUPYTERHUB_USER": "bob"}, "bob"),
    ({"COURSE_STUDENT": "  ", "JUPYTERHUB_USER": " bob\n"}, "bob"),
    ({"COURSE_STUDENT": ""}, None),
    ({}, None),
])
def test_the_id_comes_from_the_grader_or_the_course_server(environment, expected):
    assert student_id(environment) == expected


def test_the_id_is_the_one_the_kernel_was_started_with_not_one_set_later():
    code = ("import os\nfrom course_utils.student import student_id\n"
            "os.environ['COURSE_STUDENT'] = 'bob'\nprint(student_id())")
    assert run_python(code, COURSE_STUDENT="ada").strip() == "ada"
    assert run_python(code).strip() == "None"


def test_own_numbers_are_the_shake_256_stream_of_purpose_and_id():
    """Byte by byte, SHAKE-256 of "purpose\\nid" (hashlib documents the function)."""
    stream = hashlib.shake_256(b"exercise\nada").digest(200)
    draw = OwnNumbers("exercise", "ada")
    assert draw.integers(200, 0, 255) == list(stream)
    # 3 numbers: a byte of 255 would favour the first, so it is skipped
    expected = [byte % 3 - 1 for byte in hashlib.shake_256(b"exercise\nbob").digest(400)
                if byte < 255][:300]
    assert OwnNumbers("exercise", "bob").integers(300, -1, 1) == expected


def test_own_numbers_do_not_depend_on_pythons_hash_seed():
    code = ("from course_utils.by_hand import sentence_of\n"
            "print(sentence_of('ada'), sentence_of(None))")
    assert run_python(code, PYTHONHASHSEED="1") == run_python(code, PYTHONHASHSEED="2")


def test_a_hidden_tests_seed_is_the_first_63_bits_of_the_students_stream():
    code = "from course_utils.student import own_seed\nprint(own_seed('04 scores'))"
    for student, key in (("ada", b"ada"), ("bob", b"bob"), (None, b"\0demonstration")):
        stream = hashlib.shake_256(b"04 scores\n" + key).digest(8)
        environment = {"COURSE_STUDENT": student} if student else {}
        assert int(run_python(code, **environment)) == int.from_bytes(stream, "big") >> 1


def test_own_numbers_refuse_a_range_they_cannot_draw_evenly():
    with pytest.raises(ValueError, match="1 to 256 numbers; got 0..256"):
        OwnNumbers("exercise", "ada").integer(0, 256)
    with pytest.raises(ValueError, match="needs a purpose"):
        OwnNumbers("", "ada")


def test_every_sentence_can_be_worked_by_hand_and_students_rarely_share_an_answer():
    """Over 2000 ids: small whole numbers, distinct dot products at most 8 in size and 2 to 8
    apart; two students' right answers agree rarely (scores: under 1 in 200 pairs)."""
    answers = Counter()
    for number in range(2000):
        sentence = sentence_of(f"student{number}")
        vectors = [sentence.q_3, *sentence.keys, *sentence.values]
        assert all(len(v) == 4 and all(-2 <= x <= 2 for x in v) for v in vectors)
        dots = dot_products(sentence)
        assert len(set(dots)) == 3 and max(map(abs, dots)) <= 8, sentence
        assert 2 <= max(dots) - min(dots) <= 8 and dots != [-1, -4, 2], sentence
        answers[tuple(by_hand_answers(sentence)["scores_3_by_hand"])] += 1
    same = sum((count / 2000) ** 2 for count in answers.values())
    assert same < 1 / 200, same
    assert sentence_of("ada") != sentence_of("bob") != sentence_of(None)


def test_the_demonstration_sentence_says_its_numbers_will_not_count():
    assert "DEMONSTRATION numbers" in str(sentence_of(None))
    assert "will NOT count" in str(sentence_of(None))
    shown = str(sentence_of("ada"))
    assert "Student id: ada" in shown and "DEMONSTRATION" not in shown
    assert f"q_3 = {list(sentence_of('ada').q_3)}" in shown


CHECK_AS_STUDENT = """
import json
from course_utils import checks
from course_utils.by_hand import sentence_of

answers = json.loads({answers!r})
outcome = {{}}
for whose, theirs in answers.items():
    for name, value in theirs.items():
        try:
            getattr(checks, {checks!r}[name])(value, name)
            outcome[f"{{whose}} {{name}}"] = "passed"
        except AssertionError as error:
            outcome[f"{{whose}} {{name}}"] = str(error)
print(json.dumps(outcome))
"""
CHECKS = {"scores_3_by_hand": "check_own_scores_3", "alpha_3_by_hand": "check_own_alpha_3",
          "a_3_by_hand": "check_own_output_3"}


def test_only_the_students_own_numbers_pass_and_the_others_are_named():
    answers = {"ada": by_hand_answers(sentence_of("ada")),
               "bob": by_hand_answers(sentence_of("bob")),
               "worked": by_hand_answers(WORKED_EXAMPLE),
               "demonstration": by_hand_answers(sentence_of(None))}
    code = CHECK_AS_STUDENT.format(answers=json.dumps(answers), checks=CHECKS)
    outcome = json.loads(run_python(code, COURSE_STUDENT="ada"))
    for name in CHECKS:
        assert outcome[f"ada {name}"] == "passed"
        assert "is not right" in outcome[f"bob {name}"]
        assert "worked example" not in outcome[f"bob {name}"]
        assert "numbers of the worked example" in outcome[f"worked {name}"]
        assert "demonstration numbers" in outcome[f"demonstration {name}"]
    # without an id, the demonstration numbers are the ones checked
    outcome = json.loads(run_python(code))
    assert {outcome[f"demonstration {name}"] for name in CHECKS} == {"passed"}
    assert "is not right" in outcome["ada scores_3_by_hand"]

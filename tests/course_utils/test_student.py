"""The student's id, the numbers drawn from it, and 04's checks of the numbers worked by hand."""

import hashlib
import json
import os
import subprocess
import sys

import pytest

from course_utils import student as student_module
from course_utils.by_hand import WORKED_EXAMPLE, sentence_of
from course_utils.student import OwnNumbers, student_id, use_id
from tests.benchmarks.bench_by_hand import chance_matches
from tests.grading_cases.alpha3_by_hand import by_hand_answers


def run_python(code: str, **environment: str) -> str:
    """What ``code`` prints in a fresh interpreter started with ``environment`` added
    (and the ids of the caller's environment removed)."""
    env = {name: value for name, value in os.environ.items()
           if name not in ("COURSE_STUDENT", "JUPYTERHUB_USER") and not name.startswith("BINDER_")}
    done = subprocess.run([sys.executable, "-c", code], env=env | environment,
                          capture_output=True, text=True, check=True)
    return done.stdout


def dot_products(sentence) -> list[float]:
    """q₃ · k_j for j = 1, 2, 3."""
    return [sum(q * k for q, k in zip(sentence.q_3, key, strict=True)) for key in sentence.keys]


@pytest.mark.parametrize("environment, expected", [
    ({"COURSE_STUDENT": "ada", "JUPYTERHUB_USER": "bob"}, "ada"),  # the grader's wins
    ({"JUPYTERHUB_USER": "bob"}, "bob"),
    ({"COURSE_STUDENT": "  ", "JUPYTERHUB_USER": " bob\n"}, "bob"),
    ({"COURSE_STUDENT": ""}, None),
    ({}, None),
    # a hub's name made up for the session is no student's id
    ({"JUPYTERHUB_USER": "jovyan"}, None),
    ({"JUPYTERHUB_USER": "course-repo-8zq1x", "BINDER_LAUNCH_HOST": "https://mybinder.org/"},
     None),
    ({"COURSE_STUDENT": "ada", "BINDER_REPO_URL": "https://github.com/x/y"}, "ada"),
])
def test_the_id_comes_from_the_grader_or_the_course_server(environment, expected, monkeypatch):
    monkeypatch.setattr(student_module, "_recorded", None)
    assert student_id(environment) == expected


@pytest.fixture
def no_recorded_id(monkeypatch):
    monkeypatch.setattr(student_module, "_recorded", None)


@pytest.mark.parametrize("bad, error, message", [
    (None, TypeError, "as a string, in quotes"),
    (1234567, TypeError, "got int"),
    ("", ValueError, "between the quotes"),
    ("   ", ValueError, "between the quotes"),
    ("<your id>", ValueError, "in place of <your id>"),
    ("ada\nbob", ValueError, "one line of printable characters"),
])
def test_use_id_refuses_what_is_not_an_id(bad, error, message, no_recorded_id):
    with pytest.raises(error, match=message):
        use_id(bad)
    assert student_module._recorded is None


def test_the_id_set_in_the_notebook_is_used_where_the_kernel_brought_none(no_recorded_id,
                                                                          capsys):
    use_id("  ada ")
    assert student_id({}) == "ada"
    assert capsys.readouterr().out.startswith("Student id: ada\n")
    # on Binder, the hub's made-up name gives way to it
    assert student_id({"JUPYTERHUB_USER": "jovyan", "BINDER_REQUEST": "v2/gh/x/y"}) == "ada"
    # the kernel's id wins: the grader's, the course server's
    assert student_id({"COURSE_STUDENT": "bob"}) == "bob"
    assert student_id({"JUPYTERHUB_USER": "bob"}) == "bob"


def test_the_numbers_follow_the_id_set_in_the_notebook():
    code = ("from course_utils import student\nfrom course_utils.by_hand import own_sentence\n"
            "student.use_id('ada')\nprint(own_sentence())")
    printed = run_python(code)
    assert printed.startswith("Student id: ada\n(set in this notebook")
    assert printed.endswith(str(sentence_of("ada")) + "\n")


def test_an_id_the_kernel_started_with_wins_and_use_id_says_so():
    code = ("from course_utils import student\nstudent.use_id('ada')\n"
            "print(student.student_id())")
    printed = run_python(code, COURSE_STUDENT="bob")
    assert printed.startswith("Student id: bob\n(from COURSE_STUDENT")
    assert "'ada', is NOT used" in printed and printed.endswith("bob\n")
    assert "NOT used" not in run_python(code, COURSE_STUDENT="ada")


def test_a_hubs_made_up_name_is_passed_over_and_the_printout_says_so():
    code = "from course_utils import student\nstudent.show_id()"
    printed = run_python(code, JUPYTERHUB_USER="course-repo-8zq1x",
                         BINDER_LAUNCH_HOST="https://mybinder.org/")
    assert "No student id is set" in printed and "DEMONSTRATION" in printed
    assert "'course-repo-8zq1x', a name the hub made up" in printed
    assert 'student.use_id("<your id>")' in printed


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


def test_every_sentence_can_be_worked_by_hand():
    """Over 2000 ids: q_3 and the keys to one decimal from -2 to 2, the values whole numbers
    from -2 to 2; the scores distinct, 1 to 4 apart, not the worked example's."""
    for number in range(2000):
        sentence = sentence_of(f"student{number}")
        for vector in (sentence.q_3, *sentence.keys):
            assert len(vector) == 4 and all(-2 <= x <= 2 and round(x, 1) == x for x in vector)
        for vector in sentence.values:
            assert len(vector) == 4 and all(x in range(-2, 3) for x in vector)
        scores = [dot / 2 for dot in dot_products(sentence)]
        assert len(set(scores)) == 3 and 1 - 1e-9 <= max(scores) - min(scores) <= 4 + 1e-9
        assert scores != [-0.5, -2, 1], sentence
    assert sentence_of("ada") != sentence_of("bob") != sentence_of(None)


def test_a_class_of_300_has_fewer_than_one_innocent_matching_pair_per_exercise():
    """Over 20,000 ids, the chance that two students' right answers (rounded as the
    exercises ask) are the same, times the C(300, 2) pairs of a class: under 1 for each
    exercise (tests/benchmarks/bench_by_hand.py prints it)."""
    found = chance_matches()
    assert set(found) == set(CHECKS)
    for grade_id, (_, pairs, distinct) in found.items():
        assert pairs < 1, (grade_id, pairs)
        assert distinct > 19_000, (grade_id, distinct)


def test_the_demonstration_sentence_says_its_numbers_will_not_count():
    assert "DEMONSTRATION numbers" in str(sentence_of(None))
    assert "will NOT count" in str(sentence_of(None))
    shown = str(sentence_of("ada"))
    assert "Student id: ada" in shown and "DEMONSTRATION" not in shown
    assert f"q_3 = {list(sentence_of('ada').q_3)}" in shown


CHECK_AS_STUDENT = """
import json
from course_utils import checks

answers = json.loads({answers!r})
outcome = {{}}
for whose, theirs in answers.items():
    for name, (check, earlier) in {checks!r}.items():
        try:
            arguments = [theirs[name]] + ([theirs[earlier]] if earlier else [])
            getattr(checks, check)(*arguments, name)
            outcome[f"{{whose}} {{name}}"] = "passed"
        except AssertionError as error:
            outcome[f"{{whose}} {{name}}"] = str(error)
print("OUTCOME " + json.dumps(outcome))
"""
# {answer: (its check, the earlier answer it is checked against)}
CHECKS = {"scores_3_by_hand": ("check_own_scores_3", None),
          "alpha_3_by_hand": ("check_own_alpha_3", "scores_3_by_hand"),
          "a_3_by_hand": ("check_own_output_3", "alpha_3_by_hand")}


def checked(answers: dict, **environment: str) -> dict[str, str]:
    code = CHECK_AS_STUDENT.format(answers=json.dumps(answers), checks=CHECKS)
    return json.loads(run_python(code, **environment).split("OUTCOME ", 1)[1])


def test_the_checks_never_say_whether_numbers_are_right_for_the_sentence():
    """In ada's kernel, her numbers pass, and so do bob's scores and weights: they are
    well-formed and agree with each other, and whether they are right is graded outside
    the kernel (grader.scoring.by_hand_answers). Bob's a₃ mixes his values, not ada's: no
    weights summing to 1 give it from hers, which any right answer must."""
    answers = {"ada": by_hand_answers(sentence_of("ada")),
               "bob": by_hand_answers(sentence_of("bob")),
               "worked": by_hand_answers(WORKED_EXAMPLE)}
    outcome = checked(answers, COURSE_STUDENT="ada")
    for name in CHECKS:
        assert outcome[f"ada {name}"] == "passed"
    assert outcome["bob scores_3_by_hand"] == outcome["bob alpha_3_by_hand"] == "passed"
    assert "a weighted average lies between" in outcome["bob a_3_by_hand"]
    assert "scores of the worked example" in outcome["worked scores_3_by_hand"]
    assert outcome["worked alpha_3_by_hand"] == "passed"  # the softmax of its own scores


def test_without_an_id_every_check_fails_and_says_how_to_set_one():
    answers = {"ada": by_hand_answers(sentence_of("ada")),
               "demonstration": by_hand_answers(sentence_of(None))}
    outcome = checked(answers)
    for whose in answers:
        for name in CHECKS:
            message = outcome[f"{whose} {name}"]
            assert "no student id is set" in message and "DEMONSTRATION" in message, message
            assert "score 0" in message and 'student.use_id("<your id>")' in message
            assert "course server" in message


def test_course_utils_holds_no_code_that_works_the_numbers_out():
    """The right numbers are worked out by the grader only (grader.scoring.by_hand_answers);
    course_utils draws the inputs."""
    from course_utils import checks
    from course_utils.checks import by_hand

    for name in ("_scores", "_alpha", "_output", "_food_weights", "_food_average", "_tensors",
                 "right_for", "compare_by_hand", "EXERCISES", "NotWhileAnswering"):
        assert not hasattr(by_hand, name) and not hasattr(checks, name), name

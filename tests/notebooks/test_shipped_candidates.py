"""The parts of tests/notebooks/test_shipped_answers.py that need no kernel: which functions
are candidates, which exercises they fit, and how a candidate is run on a test's source."""

import inspect
import time
from fractions import Fraction

import pytest
import torch

from course_utils.checks.guards.records import TWINS
from tests.support import in_kernel
from tests.support.in_kernel import COUNT, SIZE, made_by
from tests.support.shipped_functions import (
    ARGUMENTS,
    fits,
    machinery,
    required_positional,
    same_tree,
    shipped_candidates,
)


@pytest.fixture(scope="module")
def shipped():
    candidates, skipped = shipped_candidates()
    return {c.name: c for c in candidates}, {s.name: s.why for s in skipped}


def test_functions_private_ones_and_methods_of_built_instances_are_candidates(shipped):
    candidates, _ = shipped
    assert "course_utils.tokens.bpe.corpus_from_text" in candidates
    assert "course_utils.checks.skipgram._context" in candidates  # private, of the checks
    assert "course_utils.models.minilm.MiniLMEncoder().embed" in candidates  # built bare


def test_methods_of_classes_that_need_arguments_are_candidates(shipped):
    candidates, skipped = shipped
    forward = candidates["course_utils.models.attention.MultiHeadAttention(...).forward"]
    assert forward.built and dict(forward.arguments) == {"embed_dim": SIZE, "num_heads": COUNT}
    assert forward.fits(1) and forward.fits(6)  # forward(query, key, value, mask, ...)
    assert "course_utils.models.gpt.TinyGPT(...).forward" in candidates
    assert not [name for name, why in skipped.items() if "needs arguments" in why], (
        "a class needs arguments that ARGUMENTS does not declare")


def test_every_declared_class_is_one_that_needs_arguments(shipped):
    candidates, _ = shipped
    built = {name.split("(...)")[0] for name in candidates if "(...)" in name}
    assert built == set(ARGUMENTS)


def test_what_is_skipped_says_why(shipped):
    candidates, skipped = shipped
    assert "special method" in skipped["course_utils.models.attention.MultiHeadAttention.__init__"]
    assert skipped["course_utils.checks.guards.answer_cells"].startswith("the guards'")
    assert not any(machinery(name.split("()")[0].rpartition(".")[0]) for name in candidates)


def test_no_twin_of_an_exercise_is_in_the_skipped_machinery():
    """The guards' modules are no candidates: none may hold an exercise's answer."""
    inside = [path for paths in TWINS.values() for path in paths if machinery(path)]
    assert not inside, f"a twin lives in the guards' machinery, which is not tried: {inside}"


@pytest.mark.parametrize(("parameters", "required", "expected"), [
    ("a, b", 2, True),
    ("a, b=None", 2, True),  # fewer required, the rest with defaults
    ("a, b=None", 1, True),
    ("a, b, c=1", 1, False),
    ("*args", 3, True),
    ("a, *, key", 1, False),  # a required keyword the test does not give
    ("", 1, False),
])
def test_fits_when_callable_with_the_required_positional_arguments(parameters, required,
                                                                   expected):
    namespace = {}
    exec(f"def f({parameters}): pass", namespace)  # noqa: S102
    assert fits(inspect.signature(namespace["f"]), required) is expected


def test_required_positional_reads_the_answer_cells_function():
    cell = "import torch\n\ndef padding_mask(lengths, n, causal=False):\n    return None\n"
    assert required_positional(cell, "padding_mask") == 2
    assert required_positional("answer = [1, 2]", "answer") is None  # a value exercise


def test_same_tree_names_what_differs(tmp_path):
    for side in ("a", "b"):
        (tmp_path / side / "sub").mkdir(parents=True)
        (tmp_path / side / "sub" / "same.py").write_text("x = 1\n")
    (tmp_path / "a" / "sub" / "changed.py").write_text("x = 1\n")
    (tmp_path / "b" / "sub" / "changed.py").write_text("x = 2\n")
    (tmp_path / "a" / "only.py").write_text("")
    assert same_tree(tmp_path / "a", tmp_path / "b") == ["only.py", "sub/changed.py"]


def test_run_binds_the_candidate_and_puts_the_solution_back():
    solution = abs
    namespace = {"distance": solution}
    in_kernel.run(namespace, "distance", "math", "fabs", False, "assert distance(-2) == 2", 5.0)
    with pytest.raises(AssertionError):
        in_kernel.run(namespace, "distance", "operator", "pos", False,
                      "assert distance(-2) == 2", 5.0)
    assert namespace["distance"] is solution


def test_run_stops_a_slow_candidate():
    namespace = {"wait": None}
    started = time.monotonic()
    with pytest.raises(in_kernel.OutOfTime):
        in_kernel.run(namespace, "wait", "time", "sleep", False, "wait(30)", 0.2)
    assert time.monotonic() - started < 5
    assert namespace["wait"] is None


def test_the_controls_are_the_solution_and_the_solution_stuck():
    namespace = {"double": lambda x: 2 * x}
    in_kernel.run(namespace, "double", in_kernel.SOLUTION, "", False,
                  "assert double(1) == 2 and double(2) == 4", 5.0)
    with pytest.raises(AssertionError):
        in_kernel.run(namespace, "double", in_kernel.STUCK, "", False,
                      "assert double(1) == 2 and double(2) == 4", 5.0)


def test_arguments_are_read_off_the_inputs_of_each_call():
    x = torch.ones(2, 3, 12)
    assert in_kernel.value(SIZE, ([1, 2], x, 4)) == 12  # the first input with a shape
    assert in_kernel.value(SIZE, ("text",)) == 8
    assert in_kernel.value(COUNT, (x, 4, 5)) == 4
    assert in_kernel.value(COUNT, (3, True)) == 1  # not the first input, and no bool
    assert in_kernel.value(made_by("fractions.Fraction", numerator=1, denominator=3), ()) == \
        Fraction(1, 3)
    assert in_kernel.value("relu", (x,)) == "relu"


ATTENTION = "course_utils.models.attention"
SHAPE_TEST = """
import torch

g = torch.Generator().manual_seed(0)
for d in (4, 6):  # an instance per call, its sizes read off the call's inputs
    x = torch.randn(3, 5, d, generator=g)
    output, weights = attend_all(x)
    assert output.shape == x.shape and weights is None
"""


def test_a_method_of_a_class_built_from_the_inputs_can_answer_and_leaves_the_draws_alone():
    arguments = tuple(ARGUMENTS[f"{ATTENTION}.MultiHeadAttention"].items())
    namespace = {"attend_all": None}
    torch.manual_seed(1)
    expected = torch.rand(3)
    torch.manual_seed(1)
    in_kernel.run(namespace, "attend_all", ATTENTION, "MultiHeadAttention.forward", True,
                  SHAPE_TEST, 20.0, arguments)
    assert torch.equal(torch.rand(3), expected)  # no draw of the notebook's was taken
    with pytest.raises(Exception):  # noqa: B017 (whatever the wrong call raises)
        in_kernel.run(namespace, "attend_all", ATTENTION, "MultiHeadAttention.extra_repr",
                      True, SHAPE_TEST, 20.0, arguments)
    assert namespace["attend_all"] is None

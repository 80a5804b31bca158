"""While a test cell runs the student's function, the library cannot answer for it."""

import warnings

import nbformat
import numpy as np
import pytest
import torch

import course_utils.models.attention
from course_utils import checks
from course_utils.checks.guards.refuse import functions_at
from course_utils.models.attention import attention_weights
from grader.integrity.tamper import imported_twins
from tests.conftest import REPO
from tests.course_utils.checks import as_cells
from tests.course_utils.checks import cell as notebook_cell
from tests.support.nbgrader_course import grade_id

KEEP = torch.ones(3, 3, dtype=torch.bool).tril()
S = torch.randn(3, 3, generator=torch.Generator().manual_seed(0))
EYE = torch.eye(3)


def masked_softmax(s, keep):  # the weights of the scores s themselves, by PyTorch
    return torch.softmax(s.masked_fill(~keep, float("-inf")), dim=-1)


def causal_softmax(s):  # answers with an imported twin
    return attention_weights(s, EYE, mask=KEEP, scale=1.0)


def through_the_module(s):  # answers with the module's twin
    return course_utils.models.attention.attention_weights(s, s)


def written_out(s):  # a student's own code, -1e9 masking
    return torch.softmax(s.masked_fill(~KEEP, -1e9), dim=-1)


as_cells(globals(), "causal_softmax", "through_the_module", "written_out")


def test_every_twin_names_a_real_function_of_the_library():
    for exercise, paths in checks.TWINS.items():
        for path in paths:
            if not path.startswith("notebook."):  # the notebook's own: test_guards.py
                assert functions_at(path), f"{exercise}: {path}"


def test_a_twin_called_by_an_answer_fails_with_a_message_that_says_why():
    with pytest.raises(checks.LibraryTwinError, match="causal_attention called "
                       "course_utils.models.attention.attention_weights.*your own code"):
        checks.own_work(causal_softmax, "causal_attention")(S)
    assert isinstance(checks.LibraryTwinError("x"), AssertionError)  # nbgrader counts a failure


def test_the_exercise_is_named_never_found_from_the_callers_names():
    """The record named decides, whatever the function or the notebook's names for it."""
    with pytest.raises(checks.LibraryTwinError, match="attention_weights"):
        checks.own_work(through_the_module, "causal_attention")(S)
    with pytest.raises(TypeError, match="exercise"):
        checks.own_work(through_the_module)(S)


def test_own_code_runs_and_the_twins_come_back_afterwards():
    answer = checks.own_work(written_out, "causal_attention")
    assert torch.allclose(answer(S), masked_softmax(S, KEEP))
    assert course_utils.models.attention.attention_weights is attention_weights
    assert checks.attention.attention_weights is attention_weights  # the checks still work
    assert causal_softmax(S).shape == (3, 3)  # and so do later cells


def test_a_function_without_twins_runs_under_the_plain_allowance():
    @notebook_cell
    def unrelated(x):
        return torch.softmax(x.masked_fill(~KEEP, float("-inf")), dim=-1)

    assert torch.allclose(checks.own_work(unrelated, "unrelated")(S), masked_softmax(S, KEEP))

    @notebook_cell
    def through_the_course(x):
        return attention_weights(x, EYE, mask=KEEP, scale=1.0)

    with pytest.raises(checks.NotAllowed, match="attention_weights is not yours"):
        checks.own_work(through_the_course, "unrelated")(S)


def notebook_cells():
    """(assignment, its cells) for every solution notebook."""
    for path in sorted((REPO / "solutions").glob("*/*.ipynb")):
        yield path.stem, nbformat.read(path, as_version=4).cells


def test_every_exercise_with_a_twin_is_tested_through_own_work():
    for assignment, cells in notebook_cells():
        tests = {grade_id(cell): cell.source for cell in cells}
        for cell in cells:
            exercise = grade_id(cell)
            if exercise in checks.TWINS and cell.metadata["nbgrader"].get("solution"):
                calls = tests.get(f"test_{exercise}", "")
                # checks.check and checks.grade (one-line test cells) call it through own_work
                through = (f'checks.check("{exercise}"', f'checks.grade("{exercise}"')
                assert any(call in calls for call in through), f"{assignment}: test_{exercise}"


def test_no_twin_is_imported_before_its_exercise():
    for assignment, cells in notebook_cells():
        for n, cell in enumerate(cells):
            exercise = grade_id(cell)
            if exercise not in checks.TWINS or not cell.metadata["nbgrader"].get("solution"):
                continue
            for before in cells[:n]:
                if before.cell_type == "code":
                    early = imported_twins(before.source, exercise)
                    assert not early, f"{assignment}: {early} imported before exercise {exercise}"


def test_a_method_twin_fails_on_every_object_of_its_class_and_comes_back():
    """``module.Class.method`` twins are refused by their code: a cached object's bound
    method reaches the stand-in too."""
    import tiktoken

    from course_utils.tokens import cl100k

    gpt4 = cl100k.cl100k()
    path = "tiktoken.Encoding.encode"
    assert functions_at(path) == [(path, vars(tiktoken.Encoding)["encode"])]

    @notebook_cell
    def encode(text, ranks, special_tokens):  # answers with the cached tokenizer
        return gpt4.encode(text, allowed_special="all")

    with pytest.raises(checks.LibraryTwinError, match="encode called " + path):
        checks.own_work(encode, "encode")("hello", cl100k.cl100k_ranks(),
                                          cl100k.CL100K_SPECIAL_TOKENS)
    assert gpt4.encode("hello world") == [15339, 1917]  # back afterwards


def test_a_right_answer_that_warns_keeps_its_points():
    """nbgrader scores a test cell with any stderr output 0: warnings must not reach it."""

    @notebook_cell
    def causal_softmax(s):
        warnings.warn("a harmless warning from the student's code", UserWarning, stacklevel=1)
        return torch.softmax(s.masked_fill(~KEEP, float("-inf")), dim=-1)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        weights = checks.own_work(causal_softmax, "causal_attention")(S)
        read_only = np.broadcast_to(weights.numpy(), (3, 3))  # torch warns on read-only arrays
        assert checks.as_tensor(read_only).shape == (3, 3)


def test_a_twin_from_another_package_is_refused_in_its_own_module_and_comes_back():
    import torch.nn.functional as F

    original = F.layer_norm

    @notebook_cell
    def layer_norm(x):  # answers with PyTorch's functional layer norm
        return F.layer_norm(x, (3,))

    with pytest.raises(checks.LibraryTwinError, match="torch.nn.functional.layer_norm"):
        checks.own_work(layer_norm, "layer_norm")(S)
    assert F.layer_norm is original and torch.nn.functional.layer_norm is original
    assert F.layer_norm(S, (3,)).shape == (3, 3)

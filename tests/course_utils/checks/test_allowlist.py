"""The allowlist at the interpreter (course_utils/checks/guards/allowlist.py): while an answer
runs, what its exercise does not allow is refused where it is called, however it is
reached, and what the exercise's text allows is never refused.

The oracle is the library itself: each refused answer would compute the right value
(scikit-learn, torch, the course reference), so only a refusal keeps it from the points.
"""

import copy
import math
import sys
import types
from collections import Counter

import numpy as np
import pytest
import sklearn.metrics.pairwise
import torch
import torch.nn.functional as F
from IPython.core.interactiveshell import InteractiveShell

import course_utils.words.embeddings
from course_utils import checks, grading_kernel
from course_utils.checks.guards import NotAllowed, answer_cells, record_baseline
from course_utils.checks.guards.allowances import ALLOWANCES, DEFAULT, Allowance

GENERATOR = torch.Generator().manual_seed(3)
X = torch.randn(5, 4, generator=GENERATOR, dtype=torch.float64)


def graded(answer, *args):
    """``answer`` run as a test cell runs an answer to 01's ``cosine_matrix``."""
    cosine_matrix = answer
    return checks.own_work(cosine_matrix)(*args)


def right(x):
    return sklearn.metrics.pairwise.cosine_similarity(x.numpy())


# --- honest answers, written any way the text allows, are never refused ---------------------

def plain_loops(x):
    rows = x.tolist()
    norms = [math.sqrt(sum(v * v for v in row)) for row in rows]
    return [[sum(a * b for a, b in zip(r, s, strict=True)) / (n * m)
             for s, m in zip(rows, norms, strict=True)]
            for r, n in zip(rows, norms, strict=True)]


def with_numpy(x):
    a = np.asarray(x)
    unit = a / np.linalg.norm(a, axis=1, keepdims=True)
    return unit @ unit.T


def with_torch(x):
    unit = x / x.norm(dim=-1, keepdim=True)
    return torch.einsum("id,jd->ij", unit, unit)


def with_a_class_and_collections(x):
    class Unit:
        def __init__(self, row):
            self.row = row / torch.sqrt((row ** 2).sum())

    counts = Counter(range(3))
    units = torch.stack([Unit(row).row for row in x]) * (counts[0] / counts[1])
    return units @ units.T


@pytest.mark.parametrize("answer", [plain_loops, with_numpy, with_torch,
                                    with_a_class_and_collections])
def test_an_honest_answer_is_never_refused(answer):
    np.testing.assert_allclose(np.asarray(graded(answer, X)), right(X), atol=1e-9)


# --- what the exercise does not allow is refused where it is called -------------------------

def another_library(x):
    return sklearn.metrics.pairwise.cosine_similarity(x.numpy())


def another_torch_function(x):
    return F.cosine_similarity(x[:, None], x[None, :], dim=-1)


def torch_script(x):
    scripted = torch.jit.script(with_torch)
    return scripted(x)


def the_course_reference(x):
    return course_utils.words.embeddings.cosine_similarity(x, x)


def another_thread(x):
    import threading

    box = []
    worker = threading.Thread(target=lambda: box.append(right(x)))
    worker.start()
    worker.join()
    return box[0]


def another_process(x):
    import subprocess

    subprocess.run(["true"], check=False)
    return right(x)


def a_fresh_copy(x):
    rebuilt = types.FunctionType(right.__code__, {"sklearn": sklearn})
    return rebuilt(x)


def a_computed_name(x):
    pairwise = getattr(sklearn.metrics, "pair" + "wise")
    return pairwise.cosine_similarity(x.numpy())


def a_string_run(x):
    return eval("sklearn.metrics.pairwise.cosine_similarity(x.numpy())")


def the_callers_frame(x):
    try:
        raise ValueError
    except ValueError as error:
        return error.__traceback__.tb_frame.f_back.f_locals


def every_object(x):
    import gc

    return list(map(gc.get_objects, [0]))  # a C function called by a C function


def through_the_import_system(x):
    import importlib._bootstrap

    return importlib._bootstrap._call_with_frames_removed(
        sklearn.metrics.pairwise.cosine_similarity, x.numpy())


def caught_and_went_on(x):
    try:
        return another_library(x)
    except AssertionError:
        return another_library(x)


@pytest.mark.parametrize("answer", [
    another_library, another_torch_function, torch_script, the_course_reference,
    another_thread, another_process, a_fresh_copy, a_computed_name, a_string_run,
    the_callers_frame, every_object, through_the_import_system, caught_and_went_on,
])
def test_what_the_exercise_does_not_allow_is_refused(answer):
    with pytest.raises(AssertionError, match="is not yours"):
        graded(answer, X)


def test_the_refusal_names_what_was_refused_and_what_is_allowed():
    with pytest.raises(NotAllowed) as refusal:
        graded(another_library, X)
    message = str(refusal.value)
    assert message.startswith("sklearn.")  # the library function that started
    assert "is not yours" in message
    assert "elementary tensor operations" in message


def test_after_a_refusal_the_next_answer_runs_as_before():
    with pytest.raises(NotAllowed):
        graded(another_library, X)
    np.testing.assert_allclose(np.asarray(graded(with_torch, X)), right(X), atol=1e-9)
    assert copy.deepcopy([1]) == [1]  # outside a region, nothing is refused


# --- a whole answer cell, as nbgrader runs it -----------------------------------------------

@pytest.fixture
def shell():
    """An IPython shell with the ``%%answer_cell`` magic, as in the kernel."""
    shell = InteractiveShell.instance()
    grading_kernel.load_ipython_extension(shell)
    shell.user_ns.update(checks=checks, torch=torch, X=X)
    record_baseline()  # the shell as the notebook's first cell leaves it
    yield shell
    answer_cells._refused_cells.clear()
    record_baseline()


def test_an_answer_cell_runs_its_own_code_under_the_allowlist(shell):
    shell.run_cell("%%answer_cell cosine_matrix\nimport math\n"
                   "def cosine_matrix(x):\n    u = x / x.norm(dim=-1, keepdim=True)\n"
                   "    return u @ u.T\n")
    assert "cosine_matrix" in shell.user_ns
    test = shell.run_cell("def _():\n    checks.own_work(cosine_matrix)(X)\n_()\ndel _")
    assert test.success  # the test calls the guarded function: its region, not a nested one
    shell.run_cell("%%answer_cell cosine_matrix\nimport gc\ngc.get_objects()\nreached = True\n")
    assert "reached" not in shell.user_ns


def test_an_answer_cell_that_catches_a_refusal_fails_every_later_test(shell):
    shell.run_cell("%%answer_cell cosine_matrix\nimport gc\ntry:\n    gc.get_objects()\n"
                   "except AssertionError:\n    pass\n"
                   "def cosine_matrix(x):\n    u = x / x.norm(dim=-1, keepdim=True)\n"
                   "    return u @ u.T\n")
    test = shell.run_cell("checks.own_work(cosine_matrix)(X)")
    assert isinstance(test.error_in_exec, NotAllowed)
    assert "went on after a refusal" in str(test.error_in_exec)


def test_a_function_an_answer_cell_defines_stays_under_the_allowlist_when_called_later(shell):
    shell.run_cell("%%answer_cell cosine_matrix\nimport gc\n"
                   "def cosine_matrix(x):\n    gc.get_objects()\n    return x @ x.T\n")
    later = shell.run_cell("cosine_matrix(X)")  # a plain cell, no test around it
    assert isinstance(later.error_in_exec, NotAllowed)
    assert shell.user_ns["cosine_matrix"].__name__ == "cosine_matrix"


def test_a_module_a_library_imports_while_the_answer_runs_loads_but_stays_refused_to_it(
        tmp_path, monkeypatch):
    site = tmp_path / "site-packages"  # installed code, as far as the allowlist can tell
    site.mkdir()
    (site / "lazylib.py").write_text("def answer(x):\n    import lazyheavy\n"
                                     "    return lazyheavy.TWO * x\n")
    (site / "lazyheavy.py").write_text("def double(x):\n    return 2 * x\n"
                                       "TWO = double(1)  # module code that calls its own code\n")
    monkeypatch.syspath_prepend(str(site))
    allowance = Allowance(modules=DEFAULT.modules + ("lazylib",))
    monkeypatch.setitem(ALLOWANCES, "lazy_answer", allowance)
    import lazylib

    def lazy_answer(x):
        return lazylib.answer(x)

    assert checks.own_work(lazy_answer)(3) == 6  # lazylib may import lazyheavy for itself,
    # whose body runs as the import system's

    def lazy_answer(x):  # noqa: F811 (the answer reaching the module itself)
        return sys.modules["lazyheavy"].double(x)

    with pytest.raises(NotAllowed, match="lazyheavy.double is not yours"):
        checks.own_work(lazy_answer)(3)
    monkeypatch.delitem(sys.modules, "lazylib")
    monkeypatch.delitem(sys.modules, "lazyheavy")

"""The allowlist at the interpreter (course_utils/checks/guards/allowlist.py): while an answer
runs, what its exercise does not allow is refused where it is called, however it is
reached, and what the exercise's text allows is never refused.

The oracle is the library itself: each refused answer would compute the right value
(scikit-learn, torch, the course reference), so only a refusal keeps it from the points.
The answers are the notebook's own code (``cell``, ``as_cells``: compiled from no file, as a
notebook's cells are).
"""

import copy
import dataclasses
import decimal
import io
import math
import os
import shutil
import statistics
import subprocess
import sys
import threading
import types
from collections import Counter

import numpy as np
import pytest
import sklearn.metrics.pairwise
import torch
import torch.nn.functional as F
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.io import Tee

import course_utils.words.word_eval
from course_utils import checks, grading_kernel
from course_utils.checks import guards
from course_utils.checks.guards import (
    NotAllowed,
    allowlist,
    answer_cells,
    cost,
    leftovers,
    record_baseline,
    records,
    refuse,
)
from course_utils.exercises import allowance as allowances
from course_utils.exercises import exercise
from course_utils.exercises.allowance import ALIASES, DEFAULT, ELEMENTARY, NO_SOFTMAX, Allowance
from tests.conftest import REPO
from tests.course_utils.checks import as_cells, cell, notebook

GENERATOR = torch.Generator().manual_seed(3)
X = torch.randn(5, 4, generator=GENERATOR, dtype=torch.float64)


def graded(answer, *args):
    """``answer`` run as a test cell runs an answer to 01's ``cosine_matrix``."""
    cosine_matrix = answer
    return checks.own_work(cosine_matrix, "cosine_matrix")(*args)


def right(x):
    return sklearn.metrics.pairwise.cosine_similarity(x.numpy())


def answer_from(source: str, name: str = "cosine_matrix"):
    """The function ``name`` that ``source``, a notebook cell's code, defines."""
    namespace = notebook({"torch": torch, "F": F, "np": np, "math": math, "decimal": decimal,
                          "dataclasses": dataclasses, "statistics": statistics})
    exec(compile(source, "<cell>", "exec"), namespace)  # noqa: S102 (the test's own answers)
    return namespace[name]


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


def prints_while_debugging(x):
    unit = x / x.norm(dim=-1, keepdim=True)
    print("unit rows", unit.shape, unit[0])  # a tensor, printed
    print(f"first norm {unit[0].norm():.3f}", repr(unit[:1]), {"rows": len(unit)})
    return unit @ unit.T


def with_hasattr_and_decimal(x):
    if hasattr(x, "norm"):
        cents = decimal.Decimal("1.23456").quantize(decimal.Decimal("0.01"))
        assert str(cents) == "1.23"
    unit = x / x.norm(dim=-1, keepdim=True)
    return unit @ unit.T


def with_statistics_by_name(x):
    rows = x.tolist()
    norms = [math.sqrt(statistics.fmean(v * v for v in row) * len(row)) for row in rows]
    return [[sum(a * b for a, b in zip(r, s, strict=True)) / (n * m)
             for s, m in zip(rows, norms, strict=True)]
            for r, n in zip(rows, norms, strict=True)]


as_cells(globals(), "plain_loops", "with_numpy", "with_torch", "with_a_class_and_collections",
         "prints_while_debugging", "with_hasattr_and_decimal", "with_statistics_by_name")


@pytest.mark.parametrize("answer", [plain_loops, with_numpy, with_torch,
                                    with_a_class_and_collections, with_statistics_by_name])
def test_an_honest_answer_is_never_refused(answer):
    np.testing.assert_allclose(np.asarray(graded(answer, X)), right(X), atol=1e-9)


def test_an_answer_may_print_while_debugging_through_the_notebooks_stream():
    """IPython's stream is Python code (ipykernel's ``OutStream.write``; here IPython's
    ``Tee``): ``print``'s own work, not the answer's."""
    printed = io.StringIO()
    stream = Tee(printed)
    try:
        got = graded(prints_while_debugging, X)
        text = printed.getvalue()
    finally:
        stream.close()
    np.testing.assert_allclose(np.asarray(got), right(X), atol=1e-9)
    assert "unit rows torch.Size([5, 4]) tensor([" in text and "first norm 1.000" in text


def test_an_answer_may_ask_hasattr_and_round_with_decimal():
    np.testing.assert_allclose(np.asarray(graded(with_hasattr_and_decimal, X)), right(X),
                               atol=1e-9)


SPELLINGS = {  # the body of cosine_matrix(x), with u the unit rows of x
    "tril_": "c = u @ u.T\nreturn c.clone().tril_() + c.triu(1)",
    "rsqrt_": "v = x * (x * x).sum(-1, keepdim=True).rsqrt_()\nreturn v @ v.T",
    "square_": "v = x / x.clone().square_().sum(-1, keepdim=True).sqrt()\nreturn v @ v.T",
    "clamp_min_": "v = x / x.norm(dim=-1, keepdim=True).clamp_min_(1e-12)\nreturn v @ v.T",
    "subtract": "c = u @ u.T\nreturn torch.subtract(c, torch.zeros_like(c))",
    "tensor_split": "return torch.cat([rows @ u.T for rows in torch.tensor_split(u, 2)])",
    "block_diag": "n, d = u.shape\nreturn torch.block_diag(u, u)[:n, :d] @ u.T",
    "diff": "c = u @ u.T\nstart = torch.zeros(len(c), 1, dtype=c.dtype)\n"
            "return torch.diff(torch.cat([start, c.cumsum(1)], 1), dim=1)",
    "F.pad": "return F.pad(u, (0, 1))[:, :-1] @ u.T",
    "torch.is_tensor": "assert torch.is_tensor(x)\nreturn u @ u.T",
    "torch.manual_seed": "torch.manual_seed(0)\nreturn u @ u.T",
    "np.random.default_rng": "order = np.random.default_rng(0).permutation(len(u))\n"
                             "back = np.argsort(order)\nv = u[order]\n"
                             "return (v @ v.T)[back][:, back]",
}


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_the_in_place_and_alias_spellings_of_allowed_ops_are_allowed(spelling):
    body = "\n    ".join(SPELLINGS[spelling].splitlines())
    answer = answer_from(f"def cosine_matrix(x):\n    u = x / x.norm(dim=-1, keepdim=True)\n"
                         f"    {body}\n")
    np.testing.assert_allclose(np.asarray(graded(answer, X)), right(X), atol=1e-9)


def test_every_in_place_op_and_every_alias_of_an_allowed_op_is_allowed():
    in_place = [f"{name}_" for name in ELEMENTARY if hasattr(torch.Tensor, f"{name}_")]
    assert len(in_place) > 50 and all(DEFAULT.allows_op(name) for name in in_place)
    aliases = [alias for alias, op in ALIASES.items() if op in ELEMENTARY]
    assert all(DEFAULT.allows_op(alias) for alias in aliases)
    assert all(DEFAULT.allows_op(f"__i{name[2:]}") for name in ELEMENTARY
               if name.startswith("__") and hasattr(torch.Tensor, f"__i{name[2:]}"))
    for name in ("layer_norm", "layer_norm_", "cosine_similarity", "scaled_dot_product_attention"):
        assert not DEFAULT.allows_op(name), name
    assert not NO_SOFTMAX.allows_op("special_softmax")  # an alias goes with its op
    assert not NO_SOFTMAX.allows_op("special_logsumexp")


# --- what the exercise does not allow is refused where it is called -------------------------

def another_library(x):
    return sklearn.metrics.pairwise.cosine_similarity(x.numpy())


def another_torch_function(x):
    return F.cosine_similarity(x[:, None], x[None, :], dim=-1)


def torch_script(x):
    scripted = torch.jit.script(with_torch)
    return scripted(x)


def the_course_reference(x):
    vectors = course_utils.words.word_eval.WordVectors([f"w{n}" for n in range(len(x))], x)
    return vectors.unit @ vectors.unit.T


def another_thread(x):
    box = []
    worker = threading.Thread(target=lambda: box.append(another_library(x)))
    worker.start()
    worker.join()
    return box[0]


def a_thread_pool(x):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(sklearn.metrics.pairwise.cosine_similarity, x.numpy()).result()


def a_thread_started_by_c_code(x):
    import _thread

    box = []

    def worker():
        box.append(sklearn.metrics.pairwise.cosine_similarity(x.numpy()))

    list(map(_thread.start_new_thread, [worker], [()]))  # C calling C: no Python call to see
    for _ in range(10**8):
        if box:
            return box[0]
    return None


def a_queue_listener(x):
    import logging
    import logging.handlers
    import queue

    box, requests = [], queue.Queue()

    class Compute(logging.Handler):
        def handle(self, record):
            box.append(sklearn.metrics.pairwise.cosine_similarity(record.msg))

    listener = logging.handlers.QueueListener(requests, Compute())
    listener.start()
    requests.put(logging.makeLogRecord({"msg": x.numpy()}))
    listener.stop()
    return box[0]


def another_process(x):
    import subprocess

    subprocess.run(["true"], check=False)
    return another_library(x)


def a_fresh_copy(x):
    rebuilt = types.FunctionType(another_library.__code__, {"sklearn": sklearn})
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


def handed_to_map(x):
    return list(map(sklearn.metrics.pairwise.cosine_similarity, [x.numpy()]))[0]


def handed_to_an_allowed_function(x):
    import heapq

    return heapq.nlargest(1, [x.numpy()], key=sklearn.metrics.pairwise.cosine_similarity)[0]


def handed_in_a_partial(x):
    import functools

    similarity = functools.partial(sklearn.metrics.pairwise.cosine_similarity)
    return sorted([x.numpy()], key=similarity)[0]


def caught_and_went_on(x):
    try:
        return another_library(x)
    except AssertionError:
        return another_library(x)


def with_a_decoy_region(x):
    try:  # the guard's state, as it was a module attribute: a region in another thread
        allowlist._region.append(allowlist.Region(None, DEFAULT, thread=0))
    except AttributeError:
        pass
    return sklearn.metrics.pairwise.cosine_similarity(x.numpy())


as_cells(globals(), "another_library", "another_torch_function", "torch_script",
         "the_course_reference", "another_thread", "a_thread_pool", "a_thread_started_by_c_code",
         "a_queue_listener", "another_process", "a_fresh_copy", "a_computed_name", "a_string_run",
         "the_callers_frame", "every_object", "through_the_import_system", "handed_to_map",
         "handed_to_an_allowed_function", "handed_in_a_partial", "caught_and_went_on",
         "with_a_decoy_region")


@pytest.mark.parametrize("answer", [
    another_library, another_torch_function, torch_script, the_course_reference,
    another_thread, a_thread_pool, a_thread_started_by_c_code, a_queue_listener,
    another_process, a_fresh_copy, a_computed_name, a_string_run, the_callers_frame,
    every_object, through_the_import_system, handed_to_map, handed_to_an_allowed_function,
    handed_in_a_partial, sklearn.metrics.pairwise.cosine_similarity, caught_and_went_on,
    with_a_decoy_region,
], ids=lambda answer: getattr(answer, "__name__", "?"))
def test_what_the_exercise_does_not_allow_is_refused(answer):
    # the allowlist refuses it, or the twins before it (the course's own cosine is one)
    with pytest.raises(AssertionError, match="is not yours|the library's own answer"):
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


def test_an_answer_may_import_what_it_may_use_and_nothing_else():
    answer = answer_from("def cosine_matrix(x):\n    import statistics\n    import decimal\n"
                         "    assert statistics.mean([1, 3]) == 2\n"
                         "    u = x / x.norm(dim=-1, keepdim=True)\n    return u @ u.T\n")
    np.testing.assert_allclose(np.asarray(graded(answer, X)), right(X), atol=1e-9)
    sys.modules.pop("mailbox", None)  # an import the interpreter audits: a module not loaded
    answer = answer_from("def cosine_matrix(x):\n    import mailbox\n    return x\n")
    with pytest.raises(NotAllowed, match="import.*mailbox"):
        graded(answer, X)


def test_statistics_is_allowed_by_function_not_as_a_whole():
    """statistics is allowed by function: linear_regression, which fits a least-squares line
    in one call, is not (checked under 08's offset_variance, a plain allowance)."""
    source = ("def fit(Rs, errors):\n"
              "    x, y = [math.log(r) for r in Rs], [math.log(e) for e in errors]\n"
              "    return statistics.linear_regression(x, y).slope\n")
    fit = answer_from(source, "fit")
    with pytest.raises(NotAllowed, match="statistics.linear_regression is not yours"):
        checks.own_work(fit, "offset_variance")([10, 100, 1000], [0.1, 0.03, 0.01])
    honest = answer_from("def fit(Rs, errors):\n"
                         "    x, y = [math.log(r) for r in Rs], [math.log(e) for e in errors]\n"
                         "    cx, cy = statistics.fmean(x), statistics.fmean(y)\n"
                         "    return sum((a - cx) * (b - cy) for a, b in zip(x, y)) / "
                         "sum((a - cx) ** 2 for a in x)\n", "fit")
    assert checks.own_work(honest, "offset_variance")([10, 100], [0.1, 0.01]) == pytest.approx(-1)


# --- the guard's own state: out of a notebook's reach --------------------------------------

@pytest.mark.parametrize("module", [allowlist, refuse, allowances, records, cost,
                                    answer_cells, leftovers],
                         ids=lambda module: module.__name__.rpartition(".")[2])
def test_the_guards_modules_hold_no_state_a_notebook_could_edit(module):
    """The regions in force, the caches and the tables are no list, dict or set a notebook
    reaches as a module attribute (``allowlist._region.append(decoy)``)."""
    imported = {name for name, value in vars(module).items()  # another module's (torch's)
                for other in list(sys.modules.values()) if other is not module
                and getattr(other, "__name__", "").partition(".")[0] != "course_utils"
                and getattr(other, "__dict__", {}).get(name) is value}
    editable = [name for name, value in vars(module).items() if not name.startswith("__")
                and isinstance(value, list | dict | set | threading.local)
                and name not in imported]
    assert editable == []


@pytest.mark.parametrize("table", ["TWINS", "TORCH_TWINS", "RULES"])
def test_the_guards_tables_are_read_only(table):
    mapping = getattr(records, table)
    key = next(iter(mapping))
    with pytest.raises(TypeError):
        mapping[key] = ()
    with pytest.raises(AttributeError):
        mapping.pop(key)
    assert all(isinstance(value, tuple) for value in mapping.values())
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT.modules = ()


def test_a_record_edited_by_a_notebook_changes_nothing_the_guards_read():
    """The guards copy the records as they are imported: a frozen record edited with
    ``object.__setattr__`` leaves the tables, and the refusals, as they were."""
    record = exercise("layer_norm")
    saved = {name: getattr(record, name) for name in ("torch_twins", "allowance", "twins")}
    try:
        object.__setattr__(record, "torch_twins", ())
        object.__setattr__(record, "twins", ())
        object.__setattr__(record, "allowance", Allowance(torch_ops=ELEMENTARY | {"layer_norm"}))
        assert records.TORCH_TWINS["layer_norm"] == allowances.NORMALISATIONS
        with pytest.raises((checks.LibraryTwinError, NotAllowed)):
            checks.own_work(lambda x: F.layer_norm(x, x.shape[-1:]), "layer_norm")(X)
    finally:
        for name, value in saved.items():
            object.__setattr__(record, name, value)

    assert all(isinstance(getattr(allowances, name), tuple | frozenset)
               for name in ("PLAIN", "NUMPY", "TORCH", "NEVER", "BUILTINS", "C_MODULES",
                            "ELEMENTARY", "STATISTICS", "MODEL_OPS", "LOSSES"))


def test_the_switches_are_the_kernels_start_environment_not_what_a_cell_sets(tmp_path):
    """The grading kernel imports its extension at its start; a cell that sets the switches
    before the notebook imports the checks changes nothing."""
    script = ("import os\nimport course_utils.grading_kernel\n"
              "os.environ['COURSE_ALLOWLIST'] = 'off'\n"
              "os.environ['COURSE_ALLOWLIST_RECORD'] = 'refusals.txt'\n"
              "from course_utils.checks.guards import refuse\n"
              "print(refuse.ALLOWLIST, refuse.RECORD)\n")
    environment = {name: value for name, value in os.environ.items()
                   if name not in grading_kernel.SWITCHES}
    shown = subprocess.run([sys.executable, "-c", script], env=environment, cwd=tmp_path,
                           capture_output=True, text=True, check=True).stdout
    assert shown.split() == ["True", "None"]


def test_rebinding_the_switches_in_the_guards_modules_changes_nothing(monkeypatch, tmp_path):
    record = tmp_path / "refusals.txt"
    for module in (refuse, allowlist):
        monkeypatch.setattr(module, "ALLOWLIST", False, raising=False)
        monkeypatch.setattr(module, "RECORD", str(record), raising=False)
    with pytest.raises(NotAllowed):
        graded(another_library, X)
    assert not record.exists()


def test_a_module_copied_beside_the_notebook_is_no_code_of_the_students(tmp_path, monkeypatch):
    """Only the notebook's cells are the student's own: a copy of the course's BPE module saved as
    a module beside the notebook, or run by a module's body, is a library, allowed by none."""
    reference = REPO / "course_utils" / "tokens" / "bpe.py"
    shutil.copy(reference, tmp_path / "bpe_copy.py")
    (tmp_path / "bpe_run.py").write_text(f"exec(open({str(reference)!r}).read())\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    corpus = {("l", "o", "w", "_"): 5, ("l", "o", "w", "e", "r", "_"): 2}
    try:
        for name in ("bpe_copy", "bpe_run"):
            module = __import__(name)

            @cell
            def merge_pair(corpus, pair, module=module):
                return module.corpus_from_text("low lower")

            with pytest.raises(NotAllowed, match=f"{name}.py:corpus_from_text is not yours"):
                checks.own_work(merge_pair, "merge_pair")(corpus, ("l", "o"))
    finally:
        for name in ("bpe_copy", "bpe_run"):
            sys.modules.pop(name, None)


# --- a whole answer cell, as nbgrader runs it -----------------------------------------------

@pytest.fixture
def shell():
    """An IPython shell with the ``%%answer_cell`` magic, as in the kernel."""
    shell = InteractiveShell.instance()  # one per process: what earlier tests defined goes
    for name in ("cosine_matrix", "Rows", "got", "normalised", "reached"):
        shell.user_ns.pop(name, None)
    # the extension's magic alone: loading the extension would seal the guards' baseline for
    # the rest of pytest's process (tests/course_utils/test_grading_kernel.py loads it)
    shell.register_magic_function(grading_kernel.answer_cell, magic_kind="cell")
    with pytest.MonkeyPatch.context() as patch:  # the refusals of this test's cells alone
        remember, first = answer_cells._refusals()
        patch.setattr(answer_cells, "_remember_refusal", remember)
        patch.setattr(guards, "refused_cell", first)
        shell.user_ns.update(checks=checks, torch=torch, X=X)
        record_baseline()  # the shell as the notebook's first cell leaves it
        yield shell
    InteractiveShell.clear_instance()  # later tests run outside IPython again
    record_baseline()


def test_an_answer_cell_runs_its_own_code_under_the_allowlist(shell):
    shell.run_cell("%%answer_cell cosine_matrix\nimport math\n"
                   "def cosine_matrix(x):\n    u = x / x.norm(dim=-1, keepdim=True)\n"
                   "    return u @ u.T\n")
    assert "cosine_matrix" in shell.user_ns
    test = shell.run_cell(
        "def _():\n    checks.own_work(cosine_matrix, 'cosine_matrix')(X)\n_()\ndel _")
    assert test.success  # the test calls the guarded function: its region, not a nested one
    shell.run_cell("%%answer_cell cosine_matrix\nimport gc\ngc.get_objects()\nreached = True\n")
    assert "reached" not in shell.user_ns


def test_an_answer_cell_may_define_a_dataclass_and_a_no_grad_function(shell):
    """Both decorators read signatures with ``inspect``, which no answer may call: their own
    work, not the answer's."""
    cell_code = ("%%answer_cell cosine_matrix\nfrom dataclasses import dataclass\n\n"
                 "@dataclass(frozen=True)\nclass Rows:\n    values: torch.Tensor\n\n"
                 "    def unit(self):\n"
                 "        return self.values / self.values.norm(dim=-1, keepdim=True)\n\n"
                 "@torch.no_grad()\ndef cosine_matrix(x):\n    u = Rows(x).unit()\n"
                 "    print('unit rows', u)\n    return u @ u.T\n")
    shell.run_cell(cell_code)
    assert {"Rows", "cosine_matrix"} <= shell.user_ns.keys()  # the cell ran to its end
    test = shell.run_cell("got = checks.own_work(cosine_matrix, 'cosine_matrix')(X)")
    assert test.success
    np.testing.assert_allclose(np.asarray(shell.user_ns["got"]), right(X), atol=1e-9)


def test_a_torch_function_called_by_c_code_is_judged_in_a_cell_and_later(shell):
    shell.run_cell("%%answer_cell layer_norm\n"
                   "normalised = list(map(torch.layer_norm, [X], [(4,)]))\n")
    assert "normalised" not in shell.user_ns
    shell.run_cell("%%answer_cell cosine_matrix\ndef cosine_matrix(x):\n"
                   "    return torch.stack(list(map(torch.cosine_similarity, x[:, None], "
                   "[x] * len(x))))\n")
    later = shell.run_cell("cosine_matrix(X)")  # a plain cell, no test around it
    assert isinstance(later.error_in_exec, NotAllowed)
    assert "torch's cosine_similarity is not yours" in str(later.error_in_exec)


def test_an_answer_cell_that_catches_a_refusal_fails_every_later_test(shell):
    shell.run_cell("%%answer_cell cosine_matrix\nimport gc\ntry:\n    gc.get_objects()\n"
                   "except AssertionError:\n    pass\n"
                   "def cosine_matrix(x):\n    u = x / x.norm(dim=-1, keepdim=True)\n"
                   "    return u @ u.T\n")
    test = shell.run_cell("checks.own_work(cosine_matrix, 'cosine_matrix')(X)")
    assert isinstance(test.error_in_exec, NotAllowed)
    assert "went on after a refusal" in str(test.error_in_exec)


def test_a_function_an_answer_cell_defines_stays_under_the_allowlist_when_called_later(shell):
    shell.run_cell("%%answer_cell cosine_matrix\nimport gc\n"
                   "def cosine_matrix(x):\n    gc.get_objects()\n    return x @ x.T\n")
    later = shell.run_cell("cosine_matrix(X)")  # a plain cell, no test around it
    assert isinstance(later.error_in_exec, NotAllowed)
    assert shell.user_ns["cosine_matrix"].__name__ == "cosine_matrix"
    shell.run_cell("%%answer_cell cosine_matrix\nimport gc\n@torch.no_grad()\n"
                   "def cosine_matrix(x):\n    gc.get_objects()\n    return x @ x.T\n")
    later = shell.run_cell("cosine_matrix(X)")  # decorated: still the cell's function
    assert isinstance(later.error_in_exec, NotAllowed)

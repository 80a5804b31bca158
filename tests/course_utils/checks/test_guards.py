"""The guards of a test cell (course_utils.checks.guards): each trick of a clever answer is
stopped where it cannot walk around, and every honest answer, in place or not, passes.

The oracle is the real behaviour: the right values come from PyTorch, scikit-learn and the
formulas; a trick must raise ``AssertionError`` (the test cell fails), never pass.
"""

import gc
import sys
import threading
import types

import numpy as np
import pytest
import sklearn.gaussian_process.kernels
import sklearn.metrics.pairwise
import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

import course_utils.models.attention
from course_utils import checks
from course_utils.checks.guards import record_baseline
from course_utils.checks.guards.refuse import LibraryTwinError, library_twins_unavailable
from course_utils.exercises import exercise
from course_utils.exercises.checking import run_answer
from tests.course_utils.checks import as_cells, cell

GENERATOR = torch.Generator().manual_seed(0)
Q, K, V = torch.randn(3, 6, 4, generator=GENERATOR, dtype=torch.float64)
KEEP = torch.ones(6, 6, dtype=torch.bool).tril()


def elu_features(x):
    return F.elu(x) + 1


@pytest.fixture
def fresh_baseline():
    """A test that changes the process records the baseline again when it is done."""
    yield
    record_baseline()


# --- what an answer returns is made plain ----------------------------------------------------

class Spy:
    """Records every method of it a check calls."""

    calls: list[str] = []

    def __init_subclass__(cls):
        for name in ("__eq__", "__ne__", "__bool__", "__len__", "__iter__", "__array__",
                     "__float__", "__getitem__"):
            def spy(self, *args, _name=name, **kwargs):
                Spy.calls.append(_name)
                return True if _name in ("__eq__", "__bool__") else NotImplemented
            setattr(cls, name, spy)


class AlwaysEqualList(list, Spy):
    pass


class ReadsTheCallersExpected(Spy):
    pass


def test_an_object_that_lies_is_refused_without_any_of_its_methods_being_called():
    Spy.calls.clear()
    fox = "the quick brown fox".split()
    with pytest.raises(AssertionError, match="AlwaysEqualList, a class made from list: return "
                       "a plain list"):
        checks.check_window_pairs(AlwaysEqualList(), fox, 1)
    with pytest.raises(AssertionError, match="ReadsTheCallersExpected: return a plain tensor"):
        checks.check_close(ReadsTheCallersExpected(), [1.0, 2.0], "scores_3_by_hand")
    with pytest.raises(AssertionError, match="ReadsTheCallersExpected"):
        checks.check_window_pairs([("the", "quick"), ReadsTheCallersExpected()], fox, 1)
    assert Spy.calls == []


def test_a_tensor_subclass_whose_torch_function_says_yes_is_refused():
    class Agreeable(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return True if func in (torch.allclose, torch.equal) else super().__torch_function__(
                func, types, args, kwargs)

    wrong = torch.zeros(6, 6).as_subclass(Agreeable)

    @cell
    def causal_softmax(s):
        return wrong

    with pytest.raises(AssertionError, match="Agreeable, a class made from Tensor"):
        answer = checks.own_work(causal_softmax, "causal_attention")
        checks.check_attention_weights(answer(Q @ K.T), Q, K, True)


def test_plain_values_of_every_honest_kind_pass_and_come_back_as_builtins():
    from collections import Counter

    got = checks.plain([np.int64(2), np.float32(0.5), (True, "a", b"b"), {"k": None}])
    assert got == [2, 0.5, (True, "a", b"b"), {"k": None}]
    assert [type(x) for x in got[:2]] == [int, float]
    assert checks.plain(Counter({("e", "r"): 9})) == {("e", "r"): 9}
    assert type(checks.plain(Counter())) is dict
    array = np.arange(3.0)
    copied = checks.plain(array)
    copied[0] = 7
    assert array[0] == 0  # a copy
    tensor = torch.ones(2, requires_grad=True) * 2
    assert checks.plain(tensor).requires_grad is False
    assert checks.plain(torch.nn.Parameter(torch.ones(2))).__class__ is torch.Tensor


@pytest.mark.parametrize("value, message", [
    (np.array([object()]), "NumPy array of object values"),
    (iter([1, 2]), "list_iterator: return a plain"),
    ({1: (x for x in "ab")}, "generator"),
    (torch.ones(2, device="meta"), "ordinary"),
])
def test_what_is_not_plain_data_is_refused_with_what_to_return_instead(value, message):
    with pytest.raises(AssertionError, match=message):
        checks.plain(value)


def test_a_container_that_holds_itself_is_refused_not_recursed_forever():
    loop = []
    loop.append(loop)
    with pytest.raises(AssertionError, match="contains itself"):
        checks.plain(loop)


# --- inputs are copies: answers that work in place keep their points --------------------------

def test_answers_that_update_their_inputs_in_place_are_graded_on_what_they_return():
    @cell
    def recurrent_step(S, z, q_i, k_i, v_i, feature_map, gamma):
        phi_k = feature_map(k_i)
        S.mul_(gamma).add_(torch.outer(phi_k, v_i))
        z.mul_(gamma).add_(phi_k)
        phi_q = feature_map(q_i)
        return S, z, phi_q @ S / (phi_q @ z)

    S, z = torch.rand(4, 4, dtype=torch.float64), torch.rand(4, dtype=torch.float64) + 0.5
    before = S.clone(), z.clone()
    answer = checks.own_work(recurrent_step, "recurrent_step")
    steps = run_answer(exercise("recurrent_step"), answer, (S, z, Q, K, V, elu_features, 0.8), {})
    checks.check_recurrent_step(steps, S, z, Q, K, V, elu_features, 0.8)
    assert torch.equal(S, before[0]) and torch.equal(z, before[1])

    @cell
    def layer_norm(x, gamma, beta, eps=1e-5):
        x -= x.mean(dim=-1, keepdim=True)
        x /= torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps)
        return x.mul_(gamma).add_(beta)

    x, gamma, beta = torch.randn(3, 5, generator=GENERATOR), torch.rand(5), torch.randn(5)
    answer = checks.own_work(layer_norm, "layer_norm")
    checks.check_layer_norm(answer(x, gamma, beta), x, gamma, beta)
    assert torch.allclose(F.layer_norm(x, (5,), gamma, beta), layer_norm(x.clone(), gamma, beta),
                          atol=1e-6)


# --- the library's answer is refused where it computes ----------------------------------------

def test_a_twin_kept_in_a_default_argument_or_found_with_gc_is_refused():
    eye = torch.eye(6, dtype=torch.float64)

    @cell
    def causal_softmax(s, weights=course_utils.models.attention.attention_weights):
        return weights(s, eye, mask=KEEP, scale=1.0)

    with pytest.raises(checks.LibraryTwinError, match="attention_weights"):
        checks.own_work(causal_softmax, "causal_attention")(Q @ K.T)
    found = next(o for o in gc.get_objects()
                 if type(o) is types.FunctionType and o.__qualname__ == "attention_weights"
                 and o.__module__ == "course_utils.models.attention")

    @cell
    def causal_softmax(s):  # noqa: F811 (a second answer under the exercise's name)
        return found(s, eye, mask=KEEP, scale=1.0)

    with pytest.raises(checks.LibraryTwinError, match="attention_weights"):
        checks.own_work(causal_softmax, "causal_attention")(Q @ K.T)
    assert torch.allclose(found(Q @ K.T, eye, mask=KEEP, scale=1.0).sum(-1),
                          torch.ones(6, dtype=torch.float64))


@pytest.mark.parametrize("layout", ["flat", "package"])
def test_a_twin_not_imported_yet_is_not_imported_by_the_guard_and_is_refused_once_imported(
    tmp_path, monkeypatch, layout
):
    files = {"flat": {"slow_library.py": "def answer(x):\n    return x + 1\n"},
             "package": {"slow_package/__init__.py": "",
                         "slow_package/models.py": "class Model:\n"
                                                   "    def answer(self, x):\n"
                                                   "        return x + 1\n"}}[layout]
    path = {"flat": "slow_library.answer", "package": "slow_package.models.Model.answer"}[layout]
    module = path.rsplit(".", 2 if layout == "package" else 1)[0]
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.syspath_prepend(tmp_path)
    table = {"plus_one": (path,)}  # the twin guard alone (the allowlist refuses the module)

    def answer():
        library = __import__(module, fromlist=["_"])
        return library.answer(1) if layout == "flat" else library.Model().answer(1)

    try:
        with library_twins_unavailable("plus_one", twins=table):
            assert module not in sys.modules  # the guard imported nothing
        with library_twins_unavailable("plus_one", twins=table):
            with pytest.raises(LibraryTwinError, match=path.replace(".", r"\.")):
                answer()  # imported while the answer runs: refused at once
        with library_twins_unavailable("plus_one", twins=table):
            with pytest.raises(LibraryTwinError):  # imported now: refused as any twin
                answer()
        assert answer() == 2  # and given back after each call
        assert type(sys.modules[module].__loader__).__name__ == "SourceFileLoader"
    finally:
        for name in [name for name in sys.modules if name.startswith("slow_")]:
            monkeypatch.delitem(sys.modules, name)


@pytest.mark.parametrize("answer", [
    cell(lambda X, Y, s: sklearn.metrics.pairwise.pairwise_kernels(X, Y, metric="rbf",
                                                                   gamma=1 / (2 * s * s))),
    cell(lambda X, Y, s: sklearn.gaussian_process.kernels.RBF(s)(X, Y)),
], ids=["pairwise_kernels(metric='rbf')", "the RBF kernel object"])
def test_scikit_learns_kernels_are_refused_by_any_door(answer):
    @cell
    def gaussian_kernel(X, Y, sigma):
        return answer(X, Y, sigma)

    X = np.random.default_rng(0).normal(size=(4, 3))
    with pytest.raises(checks.LibraryTwinError, match="sklearn"):
        checks.own_work(gaussian_kernel, "gaussian_kernel")(X, X, 1.0)


def test_an_honest_gaussian_kernel_may_use_the_expansion_of_the_distance():
    from sklearn.metrics.pairwise import rbf_kernel

    @cell
    def gaussian_kernel(X, Y, sigma):
        squared = (X**2).sum(1)[:, None] + (Y**2).sum(1)[None, :] - 2 * X @ Y.T
        return np.exp(-squared / (2 * sigma**2))

    X = np.random.default_rng(1).normal(size=(5, 2))
    got = checks.own_work(gaussian_kernel, "gaussian_kernel")(X, X[:3], 0.7)
    assert np.allclose(got, rbf_kernel(X, X[:3], gamma=1 / (2 * 0.7**2)))


@pytest.mark.parametrize("exercise, call", [
    ("attention_update", lambda E: E + F.scaled_dot_product_attention(E, E, E)),
    ("attention_update", lambda E: E + torch.ops.aten._scaled_dot_product_attention_math(
        E, E, E)[0]),
    ("multi_head_attention", lambda E: F.multi_head_attention_forward(
        E[:, None], E[:, None], E[:, None], 4, 2, torch.eye(12, 4, dtype=E.dtype), None, None,
        None, False, 0.0, torch.eye(4, dtype=E.dtype), None)[0][:, 0]),
    ("layer_norm", lambda E: F.layer_norm(E, (4,))),
    ("layer_norm", lambda E: torch.native_layer_norm(E, (4,), None, None, 1e-5)[0]),
    ("layer_norm", lambda E: torch.ops.aten.native_layer_norm.default(E, [4], None, None,
                                                                        1e-5)[0]),
    ("layer_norm", lambda E: F.group_norm(E, 1)),
    ("layer_norm", lambda E: F.batch_norm(E.T[None], None, None, training=True)[0].T),
])
def test_torchs_answer_is_refused_at_the_op_whatever_the_path(exercise, call):
    call = cell(call)

    @cell
    def answer(*args, **kwargs):
        return call(args[0])

    with pytest.raises(checks.LibraryTwinError, match="torch.*(attention|norm)"):
        checks.own_work(answer, exercise)(Q)


def test_tiktoken_is_refused_in_the_build_exercise_whatever_the_method():
    import tiktoken

    from course_utils.tokens.byte_bpe import CL100K_PATTERN

    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
    tiny = tiktoken.Encoding("tiny", pat_str=CL100K_PATTERN, mergeable_ranks=ranks,
                             special_tokens={})

    @cell
    def encode(text, ranks, special_tokens):
        return tiny.encode_to_numpy(text).tolist()

    with pytest.raises(checks.LibraryTwinError, match="tiktoken.core.Encoding.encode_to_numpy"):
        checks.own_work(encode, "encode")("abab", ranks, {})
    assert tiny.encode("abab") == [256, 256]  # back afterwards


def similarity_attention(Q, K, V, sim):  # the notebook's own quadratic helper (07)
    S = sim(Q, K)
    return (S @ V) / S.sum(dim=-1, keepdim=True)


def test_the_notebooks_own_reference_helper_is_a_twin_of_the_exercise_after_it():
    @cell
    def kernel_attention(q, k, v, feature_map):
        return similarity_attention(q, k, v, lambda a, b: feature_map(a) @ feature_map(b).T)

    q = torch.randn(4, 4, generator=GENERATOR, dtype=torch.float64)  # N = D: no shape rule
    with pytest.raises(checks.LibraryTwinError, match="notebook.similarity_attention"):
        checks.own_work(kernel_attention, "kernel_attention")(q, q, q, elu_features)


# --- the exercises' stated rules -------------------------------------------------------------

def closed_form_step(W, ids, t, c, lr):
    """The sgd_step of 02 in closed form (one matrix, log-softmax over the vocabulary)."""
    a = ids[t]
    contexts = [ids[t + j] for j in range(-c, c + 1) if j and 0 <= t + j < len(ids)]
    p = torch.softmax(W @ W[a], dim=0)
    loss = -sum(torch.log(p[b]) for b in contexts)
    grad = torch.zeros_like(W)
    for b in contexts:
        error = p.clone()
        error[b] -= 1
        grad += torch.outer(error, W[a])
        grad[a] += W.T @ error
    return loss, grad, W - lr * grad


def with_enable_grad(W, ids, t, c, lr):
    with torch.enable_grad():
        leaf = W.clone().requires_grad_()
        loss = -torch.log_softmax(leaf @ leaf[ids[t]], dim=0)[ids[t + 1]]
        loss.backward()
    return loss, leaf.grad, W - lr * leaf.grad


def with_torch_func(W, ids, t, c, lr):
    grad = torch.func.grad(lambda w: -torch.log_softmax(w @ w[ids[t]], dim=0)[ids[t + 1]])(W)
    return 0.0, grad, W - lr * grad


as_cells(globals(), "similarity_attention", "closed_form_step", "with_enable_grad",
         "with_torch_func")


@pytest.mark.parametrize("answer", [with_enable_grad, with_torch_func])
def test_sgd_step_may_not_use_autograd_even_under_enable_grad(answer):
    @cell
    def sgd_step(*args):
        return answer(*args)

    W, ids = torch.randn(7, 3, generator=GENERATOR, dtype=torch.float64), torch.tensor([1, 4, 2])
    with pytest.raises(AssertionError, match="sgd_step used autograd.*closed form|not yours"):
        checks.own_work(sgd_step, "sgd_step")(W, ids, 1, 1, 0.1)


def test_a_closed_form_step_written_in_place_keeps_its_points():
    @cell
    def sgd_step(W, ids, t, c, lr):
        loss, grad, _ = closed_form_step(W, ids, t, c, lr)
        W -= lr * grad  # in place
        return loss, grad, W

    W, ids = torch.randn(7, 3, generator=GENERATOR, dtype=torch.float64), torch.tensor([1, 4, 2])
    answer = checks.own_work(sgd_step, "sgd_step")
    checks.check_sgd_step(answer(W, ids, 1, 1, 0.1), W, ids, 1, 1, 0.1)


def test_linear_attention_may_not_make_the_n_by_n_matrix_by_any_route():
    @cell
    def kernel_attention(q, k, v, feature_map):
        weights = torch.einsum("id,jd->ij", feature_map(q), feature_map(k))
        return weights @ v / weights.sum(-1, keepdim=True)

    q, k = torch.randn(2, 30, 4, generator=GENERATOR, dtype=torch.float64)
    v = torch.randn(30, 3, generator=GENERATOR, dtype=torch.float64)
    with pytest.raises(checks.RuleBroken, match=r"shape \(30, 30\).*no N × N matrix"):
        checks.own_work(kernel_attention, "kernel_attention")(q, k[:30], v, elu_features)

    @cell
    def kernel_attention(q, k, v, feature_map):  # noqa: F811 (the regrouped form)
        phi_q, phi_k = feature_map(q), feature_map(k)
        return phi_q @ (phi_k.T @ v) / (phi_q @ phi_k.sum(0))[:, None]

    answer = checks.own_work(kernel_attention, "kernel_attention")
    checks.check_kernel_attention(answer(q, k, v, elu_features),
                                  q, k, v, elu_features)


# --- nothing left behind ---------------------------------------------------------------------

def test_a_torch_function_mode_left_on_fails_every_check_until_it_is_gone():
    class Yes(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if func in (torch.allclose, torch.equal):
                return True
            return func(*args, **(kwargs or {}))

    mode = Yes()
    mode.__enter__()
    try:
        with pytest.raises(checks.LeftBehind, match="torch function mode"):
            checks.check_close(torch.zeros(2), [1.0, 1.0])
    finally:
        mode.__exit__(None, None, None)
    with pytest.raises(AssertionError, match="not right"):
        checks.check_close(torch.zeros(2), [1.0, 1.0])


def test_a_trace_hook_a_patched_helper_or_builtin_and_a_running_thread_are_named(fresh_baseline):
    record_baseline()
    trace = sys.gettrace()
    sys.settrace(lambda *args: None)
    try:
        with pytest.raises(checks.LeftBehind, match="sys.settrace"):
            checks.check_nothing_left_behind()
    finally:
        sys.settrace(trace)
    for owner, name in ((torch, "allclose"), (np.testing, "assert_allclose"),
                        (__builtins__ if isinstance(__builtins__, dict) else vars(__builtins__),
                         "abs")):
        space = owner if isinstance(owner, dict) else vars(owner)
        original = space[name]
        space[name] = lambda *args, **kwargs: True
        try:
            with pytest.raises(checks.LeftBehind, match=f"{name} replaced"):
                checks.check_nothing_left_behind()
        finally:
            space[name] = original
    stop = threading.Event()

    def wait():  # code that is not installed, as a notebook cell's
        stop.wait()

    thread = threading.Thread(target=wait)
    library_thread = threading.Thread(target=stop.wait)  # installed code only: a library's
    library_thread.start()
    thread.start()
    try:
        with pytest.raises(checks.LeftBehind, match="a thread started by the notebook"):
            checks.check_nothing_left_behind()
    finally:
        stop.set()
        thread.join()
        library_thread.join()
    checks.check_nothing_left_behind()


def test_ipython_hooks_that_hide_a_failure_are_found(fresh_baseline):
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.events.register("post_run_cell", print)  # a callback known before the answers
    record_baseline()
    shell.showtraceback = lambda *args, **kwargs: None
    with pytest.raises(checks.LeftBehind, match="shell.showtraceback"):
        checks.check_nothing_left_behind()
    del shell.showtraceback
    shell.set_custom_exc((AssertionError,), lambda *args, **kwargs: None)
    with pytest.raises(checks.LeftBehind, match="custom exception handler"):
        checks.check_nothing_left_behind()
    shell.set_custom_exc((), None)
    compared = []

    class Callback:  # compared with the known callbacks, it would say "I am one of them"
        def __call__(self, result):
            pass

        def __eq__(self, other):
            compared.append(other)
            return True

    shell.events.callbacks["post_run_cell"].append(Callback())
    with pytest.raises(checks.LeftBehind, match="'post_run_cell' event"):
        checks.check_nothing_left_behind()
    assert compared == []
    shell.events.callbacks["post_run_cell"].pop()
    checks.check_nothing_left_behind()
    shell.events.unregister("post_run_cell", print)

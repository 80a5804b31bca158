"""Nothing an answer leaves behind can act on the checks.

An answer cell runs before its test cell, in the same process. It could leave behind
something that acts later: a torch function or dispatch mode that makes every comparison
pass, a ``sys.settrace``/``setprofile`` hook, an IPython hook that hides a failing test's
traceback (``showtraceback``, a custom exception handler, an input or AST transformer, an
event callback), a thread, or a patched builtin or assertion helper (``torch.allclose``,
``numpy.testing``, ``course_utils``'s own functions).

``seal_baseline()`` records the state once, when a grading kernel starts (its extension,
``course_utils.grading_kernel``, before any notebook cell runs); elsewhere (a student's own
kernel) ``record_baseline()`` records it when ``course_utils.checks`` is imported (the
notebook's first cell, before any answer). ``check_nothing_left_behind()`` compares
the state now with it and raises ``LeftBehind`` (an ``AssertionError``: the test fails)
naming what it found. It reads state only (identities, lengths of mode stacks, thread
ids): it calls no code an answer could have replaced. The modules and classes the checks
compute their expected values with (torch, ``torch.nn.functional``, ``nn.LayerNorm``...,
NumPy, scikit-learn's kernels, tiktoken, ``course_utils``) are watched whole: each function
is the same object with the same code as at the baseline, and a module imported since holds
no function of the notebook's own code.
"""

import builtins
import math
import operator
import sys
import threading
import types
from dataclasses import dataclass, field

import numpy.testing
import torch
import torch.testing

from .allowlist import is_own

__all__ = ["LeftBehind", "check_nothing_left_behind", "record_baseline", "seal_baseline"]

# Names IPython or the interpreter themselves bind again between cells.
VOLATILE_BUILTINS = frozenset({"exit", "quit", "get_ipython", "display", "input", "raw_input",
                               "getpass", "_", "__", "___", "copyright", "credits", "license",
                               "help"})
# Libraries whose threads or IPython callbacks may appear after the baseline.
LIBRARIES = ("tqdm", "ipykernel", "IPython", "zmq", "jupyter_client", "matplotlib",
             "matplotlib_inline", "ipywidgets", "comm")
# Where installed code lives (the standard library, the environment's packages): a thread
# that runs only such code belongs to a library (tqdm's monitor, a thread pool of Dask).
INSTALLED = tuple({sys.prefix, sys.base_prefix, sys.exec_prefix, "<frozen"})
SHELL_LISTS = ("input_transformers_cleanup", "input_transformers_post", "ast_transformers")


class LeftBehind(AssertionError):
    """Something an answer left running or patched, found before a check compares."""


# The modules and torch.nn classes the checks compute their expected values with, watched
# whole (by identity and code), when they are imported.
REFERENCES = ("torch", "torch.nn.functional", "numpy", "numpy.linalg", "tiktoken",
              "tiktoken.core", "sklearn.metrics.pairwise", "sklearn.kernel_approximation")
REFERENCE_CLASSES = ("Module", "Linear", "LayerNorm", "MultiheadAttention",
                     "TransformerEncoderLayer", "Dropout", "Embedding")


def _watched_namespaces() -> dict[str, dict]:
    """Namespaces whose functions the checks rely on, by name."""
    spaces = {"builtins": vars(builtins), "math": vars(math), "operator": vars(operator),
              "torch.Tensor": vars(torch.Tensor), "torch.TensorBase": vars(torch._C.TensorBase),
              "torch.testing": vars(torch.testing), "numpy.testing": vars(numpy.testing)}
    spaces |= {name: vars(sys.modules[name]) for name in REFERENCES if name in sys.modules}
    spaces |= {f"torch.nn.{name}": vars(getattr(torch.nn, name)) for name in REFERENCE_CLASSES}
    spaces |= {name: vars(module) for name, module in list(sys.modules.items())
               if name.startswith("course_utils") and module is not None}
    return spaces


def _codes(functions: dict) -> dict[str, types.CodeType]:
    return {name: value.__code__ for name, value in functions.items()
            if type(value) is types.FunctionType}


def _replaced(now, then, code) -> bool:
    """Whether ``now`` stands where ``then`` (whose code was ``code``) stood: another object,
    but for the library's own wrapper of it (torch wraps some of its functions when it
    loads parts of itself), or the same function with other code."""
    if now is then:
        return type(then) is types.FunctionType and then.__code__ is not code
    wrapper = now
    while type(wrapper) is types.FunctionType and not is_own(wrapper):
        wrapper = getattr(wrapper, "__wrapped__", None)
        if wrapper is then:
            return False
    return True


def _notebook_made(functions: dict) -> list[str]:
    """The names bound to a function of the notebook's own code."""
    return [name for name, value in functions.items()
            if is_own(value)]


def _functions(namespace: dict) -> dict[str, object]:
    return {name: value for name, value in list(namespace.items())
            if callable(value) and name not in VOLATILE_BUILTINS}


def _shell():
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython else None


def _shell_state(shell) -> dict[str, object]:
    """What of the IPython shell decides how a cell's error is shown."""
    if shell is None:
        return {}
    state = {"custom exception handler": shell.custom_exceptions}
    for name in SHELL_LISTS:
        state[name] = tuple(getattr(shell, name, ()))
    for name, value in vars(shell).items():
        if callable(value) and hasattr(type(shell), name):  # a method replaced on the shell
            state[f"shell.{name}"] = value
    for klass in type(shell).__mro__:
        for name, value in _functions(vars(klass)).items():
            state[f"{klass.__name__}.{name}"] = value
    return state


@dataclass
class Baseline:
    """The state when the checks were imported."""

    trace: object = field(default_factory=sys.gettrace)
    profile: object = field(default_factory=sys.getprofile)
    thread_trace: object = field(default_factory=threading.gettrace)
    thread_profile: object = field(default_factory=threading.getprofile)
    function_modes: int = field(default_factory=torch._C._len_torch_function_stack)
    dispatch_modes: int = field(default_factory=torch._C._len_torch_dispatch_stack)
    threads: frozenset = field(default_factory=lambda: frozenset(sys._current_frames()))
    functions: dict = field(default_factory=lambda: {
        space: _functions(names) for space, names in _watched_namespaces().items()})
    codes: dict = field(default_factory=dict)

    def __post_init__(self):
        self.codes = {space: _codes(functions) for space, functions in self.functions.items()}
    shell: dict = field(default_factory=lambda: _shell_state(_shell()))
    callbacks: dict = field(default_factory=lambda: _callbacks(_shell()))


def _callbacks(shell) -> dict[str, tuple]:
    if shell is None:
        return {}
    return {event: tuple(functions) for event, functions in shell.events.callbacks.items()}


def _same(now, then) -> bool:
    """Identity, item by item for tuples (never ``==``: it could run an answer's code)."""
    if type(now) is tuple and type(then) is tuple:
        return len(now) == len(then) and all(a is b for a, b in zip(now, then, strict=True))
    return now is then


def _from_a_library(callback) -> bool:
    """Whether an IPython callback is a library's function (matplotlib's inline backend...)."""
    function = getattr(callback, "__func__", callback) if type(callback) is types.MethodType \
        else callback
    if type(function) is not types.FunctionType:
        return False
    return (function.__module__ or "").split(".")[0] in LIBRARIES


def _notebook_thread(frame, thread) -> bool:
    """Whether a thread runs, or was given to run, code that is not installed (a notebook
    cell's, or the student's own file's): its stack, its ``target`` (a ``Timer``'s
    ``function``). Read without calling any of the thread object's methods."""
    codes = []
    while frame is not None:
        codes.append(frame.f_code)
        frame = frame.f_back
    if thread is not None:
        attributes = object.__getattribute__(thread, "__dict__")
        for name in ("_target", "function"):
            codes.append(getattr(attributes.get(name), "__code__", None))
    return any(type(code) is types.CodeType and not code.co_filename.startswith(INSTALLED)
               for code in codes)


def _found(baseline: Baseline) -> list[str]:
    found = []
    if torch._C._len_torch_function_stack() != baseline.function_modes:
        found.append("a torch function mode (TorchFunctionMode) is still on")
    if torch._C._len_torch_dispatch_stack() != baseline.dispatch_modes:
        found.append("a torch dispatch mode (TorchDispatchMode) is still on")
    for what, now, then in (("sys.settrace", sys.gettrace(), baseline.trace),
                            ("sys.setprofile", sys.getprofile(), baseline.profile),
                            ("threading.settrace", threading.gettrace(), baseline.thread_trace),
                            ("threading.setprofile", threading.getprofile(),
                             baseline.thread_profile)):
        if now is not then:
            found.append(f"a {what} hook is set")
    spaces = _watched_namespaces()
    for space, names in spaces.items():
        if space in baseline.functions:
            codes = baseline.codes[space]
            changed = [name for name, value in baseline.functions[space].items()
                       if _replaced(names.get(name), value, codes.get(name))]
        else:  # imported since: none of its functions may be the notebook's
            changed = _notebook_made(_functions(names))
        if changed:
            found.append(f"{space}.{', '.join(sorted(changed)[:3])} replaced")
    shell = _shell()
    now = _shell_state(shell)
    changed = sorted(name for name in set(now) | set(baseline.shell)
                     if not _same(now.get(name), baseline.shell.get(name)))
    if changed:
        found.append(f"IPython's {', '.join(changed[:3])} changed")
    for event, functions in _callbacks(shell).items():
        known = baseline.callbacks.get(event, ())
        added = [f for f in functions  # by identity: `in` would call the callback's __eq__
                 if not any(f is g for g in known) and not _from_a_library(f)]
        if added:
            found.append(f"a callback on IPython's '{event}' event was added")
    for ident, frame in sys._current_frames().items():
        thread = threading._active.get(ident)
        if ident not in baseline.threads and _notebook_thread(frame, thread):
            found.append(f"a thread started by the notebook is running (thread {ident})")
    return found


def _baseline_keeper():
    """``record``, ``seal`` and ``kept``, sharing the baseline in their closure (no module
    attribute an answer could clear or replace)."""
    kept: list[Baseline] = []
    sealed: list[bool] = []

    def record() -> None:
        """Record the state that later checks compare with (again: a new baseline), unless
        the grading kernel's extension has sealed one."""
        if not sealed:
            kept[:] = [Baseline()]

    def seal() -> None:
        """Record the baseline for good, the installed originals: the grading kernel's
        extension calls this as the kernel starts, before any cell of the notebook."""
        if not sealed:
            kept[:] = [Baseline()]
            sealed.append(True)

    def baseline() -> Baseline:
        if not kept:
            record()
        return kept[0]

    return record, seal, baseline


record_baseline, seal_baseline, _kept_baseline = _baseline_keeper()


def check_nothing_left_behind() -> None:
    """Raise ``LeftBehind`` naming each hook, mode, thread or patch found since the baseline."""
    found = _found(_kept_baseline())
    if found:
        raise LeftBehind(
            "the tests cannot trust this notebook's state: " + "; ".join(found)
            + ". Something in your answers (or a cell you added) changed how Python, IPython "
            "or torch run the tests; remove it, restart the kernel and run all cells again"
        )

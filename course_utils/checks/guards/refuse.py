"""The library's answer is refused where it is computed, not by name.

While an answer runs, two guards stand where a twin does its work, whatever path led there
(imported under another name, kept in a default argument, found again with ``gc``, reached
through a dictionary of the library such as scikit-learn's ``PAIRWISE_KERNEL_FUNCTIONS``):

* **Python twins** (``TWINS``: functions and methods of ``course_utils``, scikit-learn,
  tiktoken, and the notebook's own reference helpers): each function object's code is
  swapped for code that raises ``LibraryTwinError``, and swapped back afterwards. Every
  reference to the function reaches the stand-in, because the function object is the same.
* **torch functions** (``TORCH_TWINS``: name fragments such as ``"scaled_dot_product"`` or
  ``"layer_norm"``): a ``torch.overrides.TorchFunctionMode`` sees every torch call the
  answer makes (``torch.ops.aten...`` too) and refuses those whose name holds a fragment.
  The same mode enforces the exercise's stated rules (``RULES``,
  ``course_utils.exercises.allowance``) on each call and on each tensor the call returns.
"""

import contextlib
import fnmatch
import functools
import importlib
import sys
import types
from collections.abc import Callable, Iterator, Mapping

from torch.overrides import TorchFunctionMode

from course_utils.switches import start_switch

from .after_import import after_import
from .records import RULES, TORCH_TWINS, TWINS

__all__ = [
    "LibraryTwinError",
    "TorchWatch",
    "functions_at",
    "library_twins_unavailable",
    "op_name",
    "refuse",
    "twin_message",
    "twin_functions",
    "watching",
]

NOTEBOOK = "notebook."  # a TWINS path that names a function of the notebook itself


class LibraryTwinError(AssertionError):
    """A student's answer called the library function that answers its exercise."""


# An instructor trying an exercise's allowlist out: refusals are written to this file, one
# per line, and not raised (COURSE_ALLOWLIST_RECORD=<file> jupyter nbconvert --execute ...).
RECORD = start_switch("COURSE_ALLOWLIST_RECORD")
# COURSE_ALLOWLIST=off leaves the allowlist out, for measuring what it costs (make bench).
# Both are read from the kernel's start environment (course_utils.grading_kernel), never
# from os.environ, and the guards act on the copies their functions hold, not on these names.
ALLOWLIST = start_switch("COURSE_ALLOWLIST", "on") != "off"


def _refuser(record: str | None) -> Callable[[LibraryTwinError], None]:
    def refuse(error: LibraryTwinError) -> None:
        """Raise ``error``; with ``COURSE_ALLOWLIST_RECORD`` set, write it down instead."""
        if not record:
            raise error
        with open(record, "a") as file:
            file.write(f"{error}\n")

    return refuse


refuse = _refuser(RECORD)


def twin_message(exercise: str, what: str) -> str:
    """What a refusal of the library's answer says."""
    return (f"{exercise} called {what}, the library's own answer to this exercise: "
            "write it with your own code (torch, numpy and plain Python are all fine)")


def _owner(name: str):
    """The module ``name``, or the class ``module.Class`` it names."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError:
        module_name, _, class_name = name.rpartition(".")
        return getattr(importlib.import_module(module_name), class_name)


def _resolve(path: str):
    """The twin at ``path``: ``module.function`` or ``module.Class.method``."""
    owner_name, _, attribute = path.rpartition(".")
    return getattr(_owner(owner_name), attribute)


def _defined_in(module: types.ModuleType) -> Iterator[tuple[str, Callable]]:
    """(qualified name, function) of every function and method the module itself defines."""
    for value in list(vars(module).values()):
        if getattr(value, "__module__", None) != module.__name__:
            continue
        if isinstance(value, types.FunctionType):
            yield value.__qualname__, value
        elif isinstance(value, type):
            for attribute in vars(value).values():
                function = getattr(attribute, "__func__", getattr(attribute, "fget", attribute))
                if isinstance(function, types.FunctionType):
                    yield function.__qualname__, function


def functions_at(path: str, namespace: dict | None = None) -> list[tuple[str, Callable]]:
    """(path, function) of the twins that ``path`` names.

    A path is ``module.function``, ``module.Class.method``, ``module.<pattern>`` (every
    function or method the module defines whose qualified name matches the ``fnmatch``
    pattern, e.g. ``tiktoken.core.*``) or ``notebook.name`` (a function of ``namespace``).
    """
    if path.startswith(NOTEBOOK):
        function = (namespace or {}).get(path.removeprefix(NOTEBOOK))
        return [(path, function)] if isinstance(function, types.FunctionType) else []
    if "*" in path:
        module_name = path[:path.index("*")].rpartition(".")[0]
        pattern = path[len(module_name) + 1:]
        return [(f"{module_name}.{name}", function)
                for name, function in _defined_in(importlib.import_module(module_name))
                if fnmatch.fnmatchcase(name, pattern)]
    return [(path, _resolve(path))]


def _not_imported(path: str) -> list[str]:
    """The names along ``path`` from its first module that is not imported yet (empty when
    the twin at ``path`` can be reached without importing anything)."""
    if path.startswith(NOTEBOOK):
        return []
    parts = path.split("*")[0].rstrip(".").split(".")
    owner = None
    for end, part in enumerate(parts, start=1):
        name = ".".join(parts[:end])
        if name in sys.modules:
            owner = sys.modules[name]
        elif owner is not None and part in vars(owner):  # vars: a lazy module stays lazy
            owner = vars(owner)[part]
            if not isinstance(owner, types.ModuleType):
                return []
        else:
            return [".".join(parts[:n]) for n in range(end, len(parts) + 1)]
    return []


def twin_functions(
    exercise: str, namespace: dict | None = None, *, imported_only: bool = False,
    twins: Mapping[str, tuple[str, ...]] = TWINS,
) -> dict[Callable, str]:
    """{function object: its path} of every Python twin of ``exercise`` (``functions_at``);
    a function wrapped with ``functools.wraps`` brings the function it wraps. With
    ``imported_only``, the twins of modules not imported yet are left out (none imported).
    ``twins`` is the table (``TWINS``; a test may pass its own)."""
    found = {}
    for path in twins.get(exercise, ()):
        if imported_only and _not_imported(path):
            continue
        for name, function in functions_at(path, namespace):
            while isinstance(function, types.FunctionType) and function not in found:
                found[function] = name
                function = getattr(function, "__wrapped__", None)
    return found


@functools.cache
def _template(free_variables: int) -> types.CodeType:
    """The code of a function that raises the constant ``"refusal"``, with this many free
    variables (a function's code can only be swapped for code with as many)."""
    free = [f"free_{n}" for n in range(free_variables)]
    source = "\n".join([
        "def outer():",
        *(f"    {name} = None" for name in free),
        "    def refuse(*args, **kwargs):",
        f"        ({', '.join(free)},)" if free else "",
        '        raise "refusal"',
        "    return refuse",
    ])
    namespace = {}
    exec(compile(source, "<library twin>", "exec"), namespace)  # noqa: S102 (our own source)
    return namespace["outer"]().__code__


def _refusing_code(function: types.FunctionType, error: LibraryTwinError) -> types.CodeType:
    code = _template(len(function.__code__.co_freevars))
    return code.replace(co_consts=tuple(error if c == "refusal" else c for c in code.co_consts))


@contextlib.contextmanager
def library_twins_unavailable(exercise: str, namespace: dict | None = None,
                              twins: Mapping[str, tuple[str, ...]] = TWINS) -> Iterator[None]:
    """While the block runs, every Python twin of ``exercise`` raises ``LibraryTwinError``
    (an ``AssertionError``: the test fails) with a message that says why.

    A twin whose module is not imported yet cannot be reached without importing it: rather
    than importing it here (transformers' modeling modules take seconds), its code is
    swapped as soon as the answer imports it (``after_import``)."""
    swapped: dict[Callable, types.CodeType] = {}

    def refuse_reachable_twins() -> None:
        for function, path in twin_functions(exercise, namespace, imported_only=True,
                                             twins=twins).items():
            if function not in swapped:
                swapped[function] = function.__code__
                error = LibraryTwinError(twin_message(exercise, path))
                function.__code__ = _refusing_code(function, error)

    waiting = {name for path in twins.get(exercise, ()) for name in _not_imported(path)}
    try:
        refuse_reachable_twins()
        with after_import(waiting, refuse_reachable_twins):
            yield
    finally:
        for function, code in swapped.items():
            function.__code__ = code


def op_name(function) -> str:
    """The name of a torch function as the mode sees it (``"layer_norm"``,
    ``"native_layer_norm.default"`` for ``torch.ops``, ``"requires_grad.__set__"``)."""
    name = getattr(function, "__name__", "") or ""
    if name in ("__get__", "__set__"):
        name = f"{getattr(getattr(function, '__self__', None), '__name__', '')}.{name}"
    return name


class TorchWatch(TorchFunctionMode):
    """Every torch call of an answer to ``exercise``: refused when its name holds one of the
    exercise's ``TORCH_TWINS`` fragments, and checked against its ``RULES``, which are made
    from the answer's arguments. (Whether the op is one the exercise allows at all is the
    allowlist's question: its region has a function mode of its own, ``allowlist.py``.)"""

    def __init__(self, exercise: str, args: tuple, kwargs: dict):
        super().__init__()
        self.exercise = exercise
        self.fragments = TORCH_TWINS.get(exercise, ())
        self.rules = [rule(exercise, args, kwargs) for rule in RULES.get(exercise, ())]

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = op_name(func)
        if any(fragment in name for fragment in self.fragments):
            raise LibraryTwinError(twin_message(self.exercise, f"torch's {name}"))
        for rule in self.rules:
            rule.before(name)
        result = func(*args, **(kwargs or {}))
        for rule in self.rules:
            rule.after(name, result)
        return result


def watching(exercise: str, args: tuple, kwargs: dict) -> TorchWatch:
    """``TorchWatch`` for an answer to ``exercise``."""
    return TorchWatch(exercise, args, kwargs)


"""What an answer returns is made plain before any check looks at it.

A check that calls ``==``, ``bool()`` or a method of the student's object runs the
student's code inside the check: a ``list`` subclass whose ``__eq__`` is always true, a
``torch.Tensor`` subclass that makes ``allclose`` pass, an object whose ``__bool__`` reads
the check's own ``expected``. ``plain`` accepts only the exact types of Python, NumPy and
PyTorch, converted recursively into new objects, and refuses anything else with a message
that says what to return instead. It never calls a method of the value it is given: it
reads the value's exact ``type()``, and converts with the functions of those types
(``list(...)`` of a plain list, ``torch.Tensor.detach(t)``), which no student code can
replace on an object of that exact type.

    plain([1, np.int64(2)], "ids")     -> [1, 2]            (NumPy scalars become Python's)
    plain(torch.ones(2), "output")     -> a detached copy of the tensor (same dtype, device)
    plain(MyList([1]), "ids")          -> AssertionError: ids is a MyList ... return a plain list
"""

import collections

import numpy as np
import torch

__all__ = ["plain"]

SCALARS = (int, float, complex, bool, str, bytes, type(None), type(Ellipsis))  # ... : a skeleton
SEQUENCES = (list, tuple, set, frozenset)
# PyTorch's and the standard library's own subclasses that are plain data too
TENSORS = (torch.Tensor, torch.nn.Parameter)
DICTS = (dict, collections.Counter, collections.OrderedDict, collections.defaultdict)
NUMPY_SCALARS = frozenset(np.sctypeDict.values())
ARRAY_KINDS = "biufcUS"  # bool, integers, floats, complex, str, bytes: not objects
DEEPEST = 64


def plain(value, name: str = "answer"):
    """``value`` rebuilt from exact built-in types: tensors (detached copies), NumPy arrays
    (copies) of numbers, bools or strings, Python and NumPy numbers (as Python numbers),
    ``str``, ``bytes``, ``None``, and lists, tuples, sets and dicts of these.

    Raises ``AssertionError`` (the test fails) naming the type that came and what to
    return instead.
    """
    return _plain(value, name, depth=0, open_containers=set())


def _plain(value, name, depth, open_containers):
    kind = type(value)
    if kind in SCALARS:
        return value
    if kind in NUMPY_SCALARS:
        return np.generic.item(value)
    if kind in TENSORS:
        return _tensor(value, name)
    if kind is np.ndarray:
        return _array(value, name)
    if kind in SEQUENCES or kind in DICTS:
        if depth >= DEEPEST or id(value) in open_containers:
            raise AssertionError(f"{name} is nested too deeply (or contains itself)")
        open_containers.add(id(value))
        try:
            return _container(value, kind, name, depth + 1, open_containers)
        finally:
            open_containers.discard(id(value))
    raise AssertionError(_refusal(kind, name))


def _container(value, kind, name, depth, open_containers):
    def inner(item):
        return _plain(item, f"an item of {name}", depth, open_containers)

    if kind in DICTS:
        return {inner(key): inner(item) for key, item in dict.items(value)}
    items = [inner(item) for item in kind.__iter__(value)]
    return items if kind is list else kind(items)


def _tensor(value, name):
    tensor = torch.Tensor.detach(value)
    if tensor.layout is not torch.strided or tensor.device.type == "meta":
        raise AssertionError(
            f"{name} is a {tensor.layout} tensor on {tensor.device}: return an ordinary "
            "(dense) tensor with its values"
        )
    return torch.Tensor.clone(tensor)


def _array(value, name):
    if value.dtype.kind not in ARRAY_KINDS:
        raise AssertionError(
            f"{name} is a NumPy array of {value.dtype} values: return numbers (an array of "
            "float or int, a tensor or a list)"
        )
    return np.array(value, copy=True)


def _refusal(kind: type, name: str) -> str:
    """The message for a value of type ``kind``: what it is, and what to return instead."""
    got = type.__dict__["__qualname__"].__get__(kind)
    parent = next((base for base in type.__dict__["__mro__"].__get__(kind)[1:]
                   if base in SCALARS + SEQUENCES + TENSORS + DICTS or base is np.ndarray), None)
    if parent is not None:
        plain_name = type.__dict__["__qualname__"].__get__(parent)
        return (f"{name} is a {got}, a class made from {plain_name}: return a plain "
                f"{plain_name} (the tests accept only Python's, NumPy's and PyTorch's own types)")
    return (f"{name} is a {got}: return a plain tensor, NumPy array, list, tuple, set, dict, "
            "number or str (the tests accept only Python's, NumPy's and PyTorch's own types)")

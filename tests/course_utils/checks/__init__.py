"""Tests of ``course_utils.checks``.

The allowlist (``course_utils/checks/guards/allowlist.py``) takes for the student's own code
only code compiled from the notebook's cells, which is no file on disk; a function of a test
module is a module's, like a library's. ``cell`` and ``as_cells`` give a test's answers the
notebook's standing: the same code, compiled from no file, in a namespace that is no module's.
"""

import linecache
import types

__all__ = ["as_cells", "cell", "notebook"]


def _refiled(code: types.CodeType, filename: str) -> types.CodeType:
    consts = tuple(_refiled(const, filename) if isinstance(const, types.CodeType) else const
                   for const in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def cell(function: types.FunctionType, namespace: dict | None = None) -> types.FunctionType:
    """``function`` as a notebook's cell would have defined it: its code (nested functions
    too) compiled from no file, in ``namespace`` (a copy of its module's globals)."""
    source = function.__code__.co_filename
    filename = f"<cell of {source}>"
    if filename not in linecache.cache:  # tracebacks still show the lines
        lines = linecache.getlines(source)
        linecache.cache[filename] = (sum(map(len, lines)), None, lines, filename)
    new = types.FunctionType(_refiled(function.__code__, filename),
                             notebook(function.__globals__) if namespace is None else namespace,
                             function.__name__, function.__defaults__, function.__closure__)
    new.__kwdefaults__ = function.__kwdefaults__
    new.__qualname__ = function.__qualname__
    new.__doc__ = function.__doc__
    new.__dict__.update(function.__dict__)
    return new


def notebook(namespace: dict) -> dict:
    """A copy of a module's globals named as no module is (classes made there are the
    notebook's own, as those a cell makes in ``__main__``)."""
    return {**namespace, "__name__": "a notebook's cells"}


def as_cells(namespace: dict, *names: str) -> None:
    """The functions ``names`` of a test module (``namespace``, its globals) made a notebook
    cell's (``cell``), sharing one copy of the module's namespace."""
    shared = notebook(namespace)
    for name in names:
        shared[name] = namespace[name] = cell(namespace[name], shared)

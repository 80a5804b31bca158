"""Code that hides what it uses: a name it computes at run time where the code would name
what it reaches, so that reading the line does not tell (and no other family can see it).

Flagged "hides what it uses":

- a name that is not a literal string where a function takes the name of what it reaches:
  the attribute of ``getattr``, ``setattr``, ``delattr``, ``hasattr``,
  ``operator.attrgetter``, ``operator.methodcaller`` and of the methods
  ``__getattribute__``, ``__setattr__``...; the module of ``__import__``,
  ``importlib.import_module``, ``pydoc.locate``, ``pkgutil.resolve_name``; the target of
  ``mock.patch`` and ``mock.patch.object``; the key of a namespace (``vars(x)[key]``,
  ``x.__dict__.get(key)``, ``globals()``, ``sys.modules``, ``__builtins__``, also through
  ``operator.getitem`` and ``itemgetter``); the names a class gets from ``type(name,
  bases, namespace)``, and keyword names given as ``**{key: value}``;
- one of those functions handed on instead of called (``g = getattr``, ``map(getattr,
  ...)``, ``functools.reduce(getattr, names, obj)``): what it will be given is not here;
- a module reached as another module's attribute (``torch.sys``, ``np.os.environ``,
  ``from torch import sys``): the import it stands for is not written (the scanner reads
  the path from that module on, so ``torch.sys.modules`` is also ``sys.modules``).

The decoders that only hide a string (``codecs``, ``base64``, ``bytes.fromhex``...) are
in ``families.USED`` and ``SPELLED``. What a student writes every day is not flagged:
``getattr(self, "weight")``, ``"".join(pieces)``, ``text[::-1]``, ``word.encode("utf-8")``,
``bytes(ids).decode("utf-8", errors="replace")``, ``chr``: a name they build is flagged
where it is used as a name, whatever built it.

Also here, as "runs code from a string": ``timeit`` given a statement that is not a
function (a string, or a name the cell does not define with ``def``).
"""

import ast
from collections.abc import Callable, Iterator

from grader.integrity.tamper.families import (
    ATTRIBUTE_FUNCTIONS,
    BUILTIN_NAMES,
    CARRIED_MODULES,
    HIDES_NAMES,
    MOCK_PATCH,
    NAMESPACE_READERS,
    RUNS_STRING_CODE,
)
from grader.integrity.tamper.spelling import attribute_owners, constant

EVERY = None  # every argument names something (attrgetter("a", "b.c"))

# function -> the positions of its arguments that name what it reaches
NAME_ARGUMENTS: dict[str, tuple[int, ...] | None] = {
    **{f"builtins.{function}": (1,) for function in ATTRIBUTE_FUNCTIONS},
    "builtins.__import__": (0,),
    "operator.attrgetter": EVERY,
    "operator.methodcaller": (0,),
    "importlib.import_module": (0,),
    "importlib.util.find_spec": (0,),
    "pydoc.locate": (0,),
    "pkgutil.resolve_name": (0,),
    MOCK_PATCH: (0,),
    f"{MOCK_PATCH}.object": (1,),
}
# Methods that take an attribute's name (``object.__setattr__(x, name, value)``).
ATTRIBUTE_METHODS = frozenset({"__getattribute__", "__getattr__", "__setattr__", "__delattr__"})
# Methods of a namespace dictionary that take a key.
NAMESPACE_METHODS = frozenset({"get", "pop", "setdefault", "__getitem__", "__setitem__",
                               "__delitem__"})
ITEM_FUNCTIONS = frozenset({"operator.getitem", "operator.setitem", "operator.delitem"})
TIMEIT = frozenset({"timeit.timeit", "timeit.repeat", "timeit.Timer"})


class Hidden:
    """The "hides what it uses" findings of one cell (and ``timeit`` of a string);
    ``path`` is the scanner's."""

    def __init__(self, tree: ast.Module, path: Callable[[ast.AST], str | None]):
        self.path = path
        self.called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
        self.owners = attribute_owners(tree)
        self.functions = {node.name for node in ast.walk(tree)
                          if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}

    def families(self, node: ast.AST) -> Iterator[str]:
        if self._hides(node):
            yield HIDES_NAMES
        if isinstance(node, ast.Call) and self._timeit_of_a_string(node):
            yield RUNS_STRING_CODE

    def _hides(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Call):
            return self._computed_name(node) or self._computed_keywords(node)
        if isinstance(node, ast.Subscript):
            return self._namespace(node.value) and not _literal(node.slice)
        if isinstance(node, ast.ImportFrom):  # from torch import sys
            return bool(node.module) and any(a.name in CARRIED_MODULES for a in node.names)
        if isinstance(node, ast.Attribute) and node.attr in CARRIED_MODULES:
            return True  # torch.sys
        return (isinstance(node, ast.Name | ast.Attribute) and isinstance(node.ctx, ast.Load)
                and id(node) not in self.called and id(node) not in self.owners
                and self._callee(node) in NAME_ARGUMENTS)

    def _callee(self, function: ast.AST) -> str | None:
        """The path of what is called: a builtin by its bare name is ``builtins.name``."""
        path = self.path(function)
        if path is None and isinstance(function, ast.Name) and function.id in BUILTIN_NAMES:
            return f"builtins.{function.id}"
        return path

    def _computed_name(self, call: ast.Call) -> bool:
        """A call that reaches something by a name that is not a literal string."""
        callee = self._callee(call.func)
        if callee in NAME_ARGUMENTS and not self._names_written(call, NAME_ARGUMENTS[callee]):
            return True
        if callee == "builtins.getattr":  # getattr(torch, "sys")
            return constant(call.args[1]) in CARRIED_MODULES
        if isinstance(call.func, ast.Attribute) and call.func.attr in ATTRIBUTE_METHODS:
            return not any(_literal(argument) for argument in call.args[:2])
        if isinstance(call.func, ast.Attribute) and call.func.attr in NAMESPACE_METHODS:
            return self._namespace(call.func.value) and not (
                call.args and _literal(call.args[0]))
        if callee in ITEM_FUNCTIONS:
            return bool(call.args) and self._namespace(call.args[0]) and not (
                len(call.args) > 1 and _literal(call.args[1]))
        getter = self._callee(call.func.func) if isinstance(call.func, ast.Call) else None
        if getter == "operator.itemgetter":  # itemgetter(key)(namespace)
            return any(self._namespace(argument) for argument in call.args) and not all(
                _literal(key) for key in call.func.args)
        if callee == "builtins.type" and len(call.args) == 3:  # type(name, bases, namespace)
            namespace = call.args[2]
            return not (isinstance(namespace, ast.Dict) and all(
                key is not None and _literal(key) for key in namespace.keys))
        return False

    def _names_written(self, call: ast.Call, positions: tuple[int, ...] | None) -> bool:
        """Whether the arguments at ``positions`` (all of them for EVERY) are literal
        strings; one given by keyword instead counts if every keyword is a literal."""
        arguments = call.args
        if any(isinstance(argument, ast.Starred) for argument in arguments):
            return False
        if positions is EVERY:
            return all(_literal(argument) for argument in arguments)
        if all(position < len(arguments) for position in positions):
            return all(_literal(arguments[position]) for position in positions)
        return bool(call.keywords) and all(_literal(k.value) for k in call.keywords if k.arg)

    def _computed_keywords(self, call: ast.Call) -> bool:
        """``f(**{key: value})`` with a key that is not a literal string."""
        for keyword in call.keywords:
            if keyword.arg is None and isinstance(keyword.value, ast.DictComp):
                return True
            if keyword.arg is None and isinstance(keyword.value, ast.Dict) and not all(
                    key is not None and _literal(key) for key in keyword.value.keys):
                return True
        return False

    def _namespace(self, node: ast.AST) -> bool:
        """``vars(x)``, ``globals()``, ``locals()``, ``x.__dict__``, ``sys.modules``,
        ``__builtins__``, or a name for one of them."""
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in NAMESPACE_READERS):
            return True
        if isinstance(node, ast.Attribute) and node.attr == "__dict__":
            return True
        path = self.path(node) or ""
        return path in {"sys.modules", "builtins"} or path.endswith(".__dict__")

    def _timeit_of_a_string(self, call: ast.Call) -> bool:
        """``timeit.timeit("code")``: the statement and setup are run as code."""
        if self.path(call.func) not in TIMEIT:
            return False
        statements = [*call.args[:2], *(k.value for k in call.keywords
                                        if k.arg in {"stmt", "setup"})]
        return not all(isinstance(s, ast.Lambda | ast.Attribute)
                       or (isinstance(s, ast.Name) and s.id in self.functions)
                       for s in statements)


def _literal(node: ast.AST) -> bool:
    return constant(node, None) is not None

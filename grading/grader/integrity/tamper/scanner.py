"""The scanner: the (line, family) findings of one answer cell."""

import ast
from collections.abc import Iterator, Mapping

from grader.integrity.tamper.context import ScanContext
from grader.integrity.tamper.families import (
    BUILTIN_NAMES,
    DICT_MUTATORS,
    MOCK_PATCH,
    PATCHES_BUILTINS,
    PATCHES_COURSE_UTILS,
    PATCHES_TEST_HELPER,
    REACHES_IPYTHON,
    REBINDS_TEST_NAME,
    TEST_HELPERS,
    TOUCHES_INTERPRETER,
)
from grader.integrity.tamper.names import STAR, ModuleNames, imported
from grader.integrity.tamper.spelling import carried, constant, under
from grader.integrity.tamper.uses import Uses

# Functions that import the module a string names.
MODULE_LOADERS = frozenset({"importlib.import_module", "pydoc.locate", "pkgutil.resolve_name"})
# Methods that read an entry of a namespace dictionary (``vars(builtins).get("exec")``).
NAMESPACE_GETTERS = frozenset({"get", "pop", "setdefault", "__getitem__"})

# Bare names that mean these modules even when the cell does not import them.
MODULE_NAMES = {
    name: name
    for name in ("builtins", "course_utils", "importlib", "IPython", "numpy", "sys", "torch")
}
MODULE_NAMES |= {"__builtins__": "builtins", "np": "numpy"}


class Scanner:
    """The findings, (line, family), of one answer cell; see the module's docstring."""

    def __init__(self, tree: ast.Module, grade_id: str, context: ScanContext):
        self.tree = tree
        self.allowed = context.answers.get(grade_id, frozenset())
        self.context = context
        self.names = ModuleNames(tree)
        self.aliases = self._aliases()
        self.uses = Uses(tree, self.path)

    def findings(self) -> Iterator[tuple[int, str]]:
        yield from self._bindings()
        for node in ast.walk(self.tree):
            for family in self._families_of(node):
                yield node.lineno, family

    def _aliases(self) -> dict[str, str]:
        """name -> the dotted path it stands for: the notebook's imports, then the cell's
        own imports (in any scope) and assignments of a module or its attribute
        (``t = torch.testing``)."""
        aliases = dict(MODULE_NAMES)
        # a name the notebook imports from two modules stands for the first (in sort order)
        aliases.update((name, min(origins)) for name, origins in self.context.imports.items()
                       if name != STAR and origins)
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                aliases.update((name, origin) for name, origin in imported(node) if name != STAR)
        for _ in range(2):  # an alias of an alias
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                    path = self.path(node.value, aliases)
                    if path:
                        aliases[node.targets[0].id] = path
        return aliases

    def path(self, node: ast.AST, aliases: Mapping[str, str] | None = None) -> str | None:
        """The dotted path an expression stands for (``np.testing`` -> "numpy.testing",
        ``vars(checks)`` -> "course_utils.checks.__dict__"), or None if it is not one."""
        aliases = self.aliases if aliases is None else aliases
        attributes = []
        while isinstance(node, ast.Attribute):  # a loop: a long chain cannot exhaust the stack
            attributes.insert(0, node.attr)
            node = node.value
        owner = aliases.get(node.id) if isinstance(node, ast.Name) else None
        if isinstance(node, ast.Subscript):
            owner = self._namespace_entry(node.value, node.slice, aliases)
        if isinstance(node, ast.Call) and node.args:
            owner = self._path_of_call(node, aliases)
        return carried(".".join([owner, *attributes])) if owner else None

    def _path_of_call(self, call: ast.Call, aliases: Mapping[str, str]) -> str | None:
        """``vars(m)`` -> "m.__dict__", ``getattr(m, "x")`` -> "m.x", ``vars(m).get("x")``
        -> "m.x", ``importlib.import_module("m")``, ``__import__("m")``, ``pydoc.locate("m")``
        -> "m"; None for any other call."""
        function = call.func.id if isinstance(call.func, ast.Name) else None
        owner = self.path(call.args[0], aliases)
        if function == "vars" and owner:
            return f"{owner}.__dict__"
        if function == "getattr" and owner and len(call.args) > 1:
            return f"{owner}.{constant(call.args[1])}"
        if isinstance(call.func, ast.Attribute) and call.func.attr in NAMESPACE_GETTERS:
            return self._namespace_entry(call.func.value, call.args[0], aliases)
        if function == "__import__" or self.path(call.func, aliases) in MODULE_LOADERS:
            module = constant(call.args[0], None)
            return module.replace(":", ".") if module else None  # pkgutil's "m:name"
        return None

    def _bindings(self) -> Iterator[tuple[int, str]]:
        """Top-level bindings of builtins' names and of the test cells' names."""
        for name, node in self.names.bindings:
            if name in self.allowed:
                continue
            if name in BUILTIN_NAMES:
                yield node.lineno, PATCHES_BUILTINS
            elif name in self.context.test_names and not self._same_import(name, node):
                yield node.lineno, REBINDS_TEST_NAME
        for origin, node in self.names.star_imports:
            if origin not in self.context.imports.get(STAR, ()):
                yield node.lineno, REBINDS_TEST_NAME

    def _same_import(self, name: str, node: ast.AST) -> bool:
        """Whether ``node`` imports ``name`` from a module the notebook imports it from."""
        if not isinstance(node, ast.Import | ast.ImportFrom):
            return False
        origins = {origin for bound, origin in imported(node) if bound == name}
        return bool(origins) and origins <= self.context.imports.get(name, frozenset())

    def _families_of(self, node: ast.AST) -> Iterator[str]:
        for patched in self._patched_paths(node):
            family = _patch_family(patched)
            if family:
                yield family
        yield from self.uses.families(node)

    def _patched_paths(self, node: ast.AST) -> list[str]:
        """The dotted paths ``node`` assigns, deletes or patches (``"numpy.allclose"``)."""
        stored = not isinstance(getattr(node, "ctx", ast.Load()), ast.Load)
        if isinstance(node, ast.Attribute) and stored:
            return [p for p in [self.path(node)] if p]
        if isinstance(node, ast.Subscript) and stored:
            return [p for p in [self._namespace_entry(node.value, node.slice)] if p]
        if isinstance(node, ast.Call):
            return self._patched_by_call(node)
        return []

    def _namespace_entry(self, namespace: ast.AST, key: ast.AST | None,
                         aliases: Mapping[str, str] | None = None) -> str | None:
        """``m.__dict__[key]`` -> "m.key"; ``__builtins__[key]`` -> "builtins.key";
        ``sys.modules["m"]`` -> "m" (a key that is not written out: "m.*", or None)."""
        owner = self.path(namespace, aliases)
        if owner == "sys.modules":
            return constant(key, None)
        if owner and owner.endswith(".__dict__"):
            owner = owner.removesuffix(".__dict__")
        elif owner != "builtins":
            return None
        return f"{owner}.{constant(key)}"

    def _patched_by_call(self, call: ast.Call) -> list[str]:
        """setattr/delattr, mock.patch(...) and its variants, ``vars(m).update(...)``."""
        function = self.path(call.func)
        args = call.args
        if (isinstance(call.func, ast.Name) and call.func.id in {"setattr", "delattr"}) or (
                function in {"builtins.setattr", "builtins.delattr"}):
            owner = self.path(args[0]) if args else None
            return [f"{owner}.{constant(args[1]) if len(args) > 1 else '*'}"] if owner else []
        if function == MOCK_PATCH or function == f"{MOCK_PATCH}.dict":
            target = (constant(args[0], None) or self.path(args[0])) if args else None
            return [target] if target else []
        if function in {f"{MOCK_PATCH}.object", f"{MOCK_PATCH}.multiple"}:
            owner = self.path(args[0]) if args else None
            names = [constant(args[1])] if len(args) > 1 else [k.arg or "*" for k in call.keywords]
            return [f"{owner}.{name}" for name in names] if owner else []
        if isinstance(call.func, ast.Attribute) and call.func.attr in DICT_MUTATORS:
            entry = self._namespace_entry(call.func.value, None)
            return [entry] if entry else []
        return []


def _patch_family(path: str) -> str | None:
    if under(path, "course_utils"):
        return PATCHES_COURSE_UTILS
    if any(under(path, helper) for helper in TEST_HELPERS):
        return PATCHES_TEST_HELPER
    if under(path, "builtins"):
        return PATCHES_BUILTINS
    if under(path, "sys") or under(path, "importlib"):
        return TOUCHES_INTERPRETER
    if under(path, "IPython"):
        return REACHES_IPYTHON
    return None

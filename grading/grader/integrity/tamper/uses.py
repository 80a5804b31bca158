"""The families of what a cell reaches, rather than patches: a module or attribute used
however it is spelled, names flagged wherever they are written, the namespaces as
dictionaries, a library's private parts, and objects built to answer for themselves."""

import ast
from collections.abc import Callable, Iterator

from course_utils.exercises import EXERCISES
from grader.integrity.tamper.families import (
    ANSWERS_COMPARISONS,
    ARRAY_TYPES,
    ATTRIBUTE_FUNCTIONS,
    NAMESPACE_READERS,
    NOT_USED,
    OWN_LIBRARY,
    PRIVATE_PARTS,
    PUBLIC_UNDERSCORED,
    PUBLIC_UNDERSCORED_PATHS,
    READS_FRAMES,
    RUNS_LATER,
    RUNS_STRING_CODE,
    SPELLED,
    STRING_RUNNERS,
    USED,
    VALUE_TYPES,
    WEAKREF_CALLBACKS,
)
from grader.integrity.tamper.hidden import Hidden
from grader.integrity.tamper.members import OwnMembers
from grader.integrity.tamper.spelling import (
    attribute_owners,
    carried,
    constant,
    imported_paths,
    is_private,
    root_of,
    spellings,
    under,
)

# What reaches an object's attributes by the names it is given, and how many of its
# arguments are names (all of attrgetter's; the first of methodcaller's).
ATTRIBUTE_GETTERS = {"operator.attrgetter": None, "operator.methodcaller": 1}


class Uses:
    """The families of each node of one cell; ``path`` is the scanner's: the dotted path an
    expression stands for, with the cell's and the notebook's imports and aliases."""

    def __init__(self, tree: ast.Module, path: Callable[[ast.AST], str | None]):
        self.path = path
        self.members = OwnMembers(tree)
        # a.b.c is one use, "a.b.c": not also one of "a.b" and one of "a"
        self.inner = attribute_owners(tree)
        self.hidden = Hidden(tree, path)

    def families(self, node: ast.AST) -> Iterator[str]:
        for used in self._used_paths(node):
            for family, prefixes in USED.items():
                if any(under(used, p) for p in prefixes) and not any(
                        under(used, p) for p in NOT_USED.get(family, ())):
                    yield family
        spelled = spellings(node)
        for family, names in SPELLED.items():
            if spelled & names:
                yield family
        if isinstance(node, ast.Name) and node.id in STRING_RUNNERS:
            yield RUNS_STRING_CODE
        if (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
                and node.id in NAMESPACE_READERS):
            yield READS_FRAMES
        if self._weakref_callback(node):
            yield RUNS_LATER
        if self._answers_for_itself(node):
            yield ANSWERS_COMPARISONS
        if self._private(node):
            yield PRIVATE_PARTS
        yield from self.hidden.families(node)

    def _used_paths(self, node: ast.AST) -> list[str]:
        """The paths a name, attribute, call (``getattr``, ``import_module``), namespace
        entry (``sys.modules["gc"]``) or import reaches; an attribute chain once, whole."""
        if isinstance(node, ast.Import | ast.ImportFrom):
            return [carried(path) for path in imported_paths(node)]
        if isinstance(node, ast.Name | ast.Attribute | ast.Call | ast.Subscript) and (
                id(node) not in self.inner):
            return [p for p in [self.path(node)] if p]
        return []

    def _weakref_callback(self, node: ast.AST) -> bool:
        """``weakref.ref(obj, callback)``: a function called when ``obj`` is collected."""
        return (isinstance(node, ast.Call) and self.path(node.func) in WEAKREF_CALLBACKS
                and (len(node.args) > 1 or any(k.arg == "callback" for k in node.keywords)))

    def _answers_for_itself(self, node: ast.AST) -> bool:
        """A class built on a value type, ``type(name, bases, namespace)`` with such a base,
        or an assignment of ``__class__`` (its special methods are spelled: ``SPELLED``)."""
        if isinstance(node, ast.ClassDef):
            return any(self._value_type(base) for base in node.bases)
        if isinstance(node, ast.Call) and self._is_builtin(node.func, "type") and len(
                node.args) == 3 and isinstance(node.args[1], ast.Tuple | ast.List):
            return any(self._value_type(base) for base in node.args[1].elts)
        if isinstance(node, ast.Attribute | ast.Name) and not isinstance(node.ctx, ast.Load):
            return (node.attr if isinstance(node, ast.Attribute) else node.id) == "__class__"
        if isinstance(node, ast.Call) and len(node.args) > 1 and (
                self._is_builtin(node.func, "setattr") or (
                isinstance(node.func, ast.Attribute) and node.func.attr == "__setattr__")):
            return constant(node.args[1], None) == "__class__"
        return False

    def _value_type(self, base: ast.AST) -> bool:
        if isinstance(base, ast.Subscript):  # list[int]
            base = base.value
        path = self.path(base)
        if path is None:
            return isinstance(base, ast.Name) and base.id in VALUE_TYPES
        return path in ARRAY_TYPES or (under(path, "builtins")
                                       and path.removeprefix("builtins.") in VALUE_TYPES)

    def _is_builtin(self, function: ast.AST, name: str) -> bool:
        if isinstance(function, ast.Name) and function.id == name:
            return True
        return self.path(function) == f"builtins.{name}"

    def _private(self, node: ast.AST) -> bool:
        """An import of a private module or name; a private attribute (``_x``) of anything
        but the cell's own classes and their instances."""
        if isinstance(node, ast.Import | ast.ImportFrom):
            return any(_private_path(path) for path in imported_paths(node))
        getter = self.path(node.func) if isinstance(node, ast.Call) else None
        if getter in ATTRIBUTE_GETTERS:  # attrgetter("a._b"), methodcaller("_b", *arguments)
            names = node.args[:ATTRIBUTE_GETTERS[getter]]
            return any(is_private(part) for name in names
                       for part in constant(name, "").split("."))
        attribute = self._attribute(node)
        if attribute is None:
            return False
        name, owner = attribute
        if not is_private(name) or name in PUBLIC_UNDERSCORED or name in self.members.attributes:
            return False
        root = root_of(owner)
        if isinstance(root, ast.Name) and root.id in self.members.instances:
            return False
        owner_path = self.path(owner)
        return not owner_path or _private_path(f"{owner_path}.{name}")

    def _attribute(self, node: ast.AST) -> tuple[str, ast.AST] | None:
        """(name, owner) of ``owner.name`` or ``getattr(owner, "name")`` and its kin."""
        if isinstance(node, ast.Attribute):
            return node.attr, node.value
        if isinstance(node, ast.Call) and len(node.args) > 1 and any(
                self._is_builtin(node.func, f) for f in ATTRIBUTE_FUNCTIONS):
            name = constant(node.args[1], None)
            return (name, node.args[0]) if name else None
        return None


# A library's private module that is an exercise's twin (``tiktoken._educational.*``) is named
# as a twin ("imports a twin", grader.integrity.tamper.twins), not as its private parts.
TWIN_MODULES = frozenset(twin.removesuffix(".*") for exercise in EXERCISES.values()
                         for twin in exercise.twins if twin.endswith(".*"))


def _private_path(path: str) -> bool:
    """Whether a module path has a private part (``torch._C``), not in the course's library
    nor a twin module of an exercise."""
    if (path in PUBLIC_UNDERSCORED_PATHS or under(path, OWN_LIBRARY)
            or any(under(path, module) for module in TWIN_MODULES)):
        return False
    return any(is_private(part) and part not in PUBLIC_UNDERSCORED for part in path.split("."))

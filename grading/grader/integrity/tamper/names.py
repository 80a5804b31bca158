"""The names a cell binds and reads in the notebook's namespace, scope by scope."""

import ast
from collections.abc import Iterator
from dataclasses import dataclass

STAR = "*"


class ModuleNames:
    """The names a cell binds and reads in the notebook's namespace (its top level).

    ``bindings``: (name, node) for each binding at the top level, or inside a function for
    a name it declares ``global`` (assignment, ``for``, ``with``, ``del``, ``def``,
    ``class``, ``import``, ``except ... as``, ``:=``, ``match``).
    ``reads``: names read from the top level (not a function's own locals).
    ``imports``: name -> (origins, node) of the top-level imports (``"np"`` -> ``{"numpy"}``);
    ``star_imports``: (``"module.*"``, node) of each ``from module import *``.

    The tree is walked with a list of nodes still to visit, each with the scopes around it
    (innermost last), not by recursion: a long expression cannot exhaust Python's stack.
    """

    def __init__(self, tree: ast.Module):
        self.bindings: list[tuple[str, ast.AST]] = []
        self.reads: set[str] = set()
        self.imports: dict[str, tuple[set[str], ast.AST]] = {}
        self.star_imports: list[tuple[str, ast.AST]] = []
        pending: list[tuple[ast.AST, tuple[_Scope, ...]]] = [(node, ()) for node in tree.body]
        while pending:
            node, scopes = pending.pop()
            pending += self._visit(node, scopes)

    def _visit(self, node: ast.AST, scopes: tuple["_Scope", ...]) -> list:
        """Record what ``node`` itself binds or reads; return its children with their scopes."""
        children = list(ast.iter_child_nodes(node))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            return self._visit_function(node, scopes)
        if isinstance(node, ast.ClassDef):
            self._bind(node.name, node, scopes)
            outside = [*node.decorator_list, *node.bases, *node.keywords]
            inside = scopes + (_Scope.of(node.body, "class"),)
            return [(child, scopes) for child in outside] + [(n, inside) for n in node.body]
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            targets = {name for g in node.generators for name in _stored_names(g.target)}
            inside = scopes + (_Scope(frozenset(targets), frozenset(), "comprehension"),)
            return [(child, inside) for child in children]
        if isinstance(node, ast.Name):
            if not isinstance(node.ctx, ast.Load):
                self._bind(node.id, node, scopes)
            elif _reads_top_level(node.id, scopes):
                self.reads.add(node.id)
        elif isinstance(node, ast.NamedExpr):  # := in a comprehension binds outside it
            while scopes and scopes[-1].kind == "comprehension":
                scopes = scopes[:-1]
            self._bind(node.target.id, node, scopes)
            return [(node.value, scopes)]
        elif isinstance(node, ast.Import | ast.ImportFrom):
            self._visit_import(node, scopes)
        else:
            for name in _names_bound_by(node):  # except ... as name, match patterns
                self._bind(name, node, scopes)
        return [(child, scopes) for child in children]

    def _visit_function(self, node, scopes: tuple["_Scope", ...]) -> list:
        outside = [*node.args.defaults, *filter(None, node.args.kw_defaults)]
        if not isinstance(node, ast.Lambda):
            self._bind(node.name, node, scopes)
            outside += [*node.decorator_list, *filter(None, [node.returns])]
        arguments = node.args
        parameters = {a.arg for a in [*arguments.posonlyargs, *arguments.args,
                                      *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
                      if a is not None}
        body = [node.body] if isinstance(node, ast.Lambda) else node.body
        scope = _Scope.of(body, "function")
        inside = scopes + (_Scope(scope.local | parameters, scope.declared_global, "function"),)
        return [(child, scopes) for child in outside] + [(child, inside) for child in body]

    def _visit_import(self, node: ast.Import | ast.ImportFrom, scopes) -> None:
        for name, origin in imported(node):
            if name == STAR:
                if not scopes:
                    self.star_imports.append((origin, node))
            elif self._bind(name, node, scopes):
                origins, _ = self.imports.setdefault(name, (set(), node))
                origins.add(origin)

    def _bind(self, name: str, node: ast.AST, scopes: tuple["_Scope", ...]) -> bool:
        """Record ``name`` bound by ``node`` if that binding is top-level; say if it was."""
        top_level = not scopes or name in scopes[-1].declared_global
        if top_level:
            self.bindings.append((name, node))
        return top_level


def _reads_top_level(name: str, scopes: tuple["_Scope", ...]) -> bool:
    """Whether reading ``name`` inside ``scopes`` reads the notebook's namespace (a class's
    names are not seen from the functions inside it)."""
    for depth, scope in enumerate(reversed(scopes)):
        if name in scope.declared_global:
            return True
        if name in scope.local and (depth == 0 or scope.kind != "class"):
            return False
    return True


@dataclass(frozen=True)
class _Scope:
    """A function, class or comprehension: the names it binds itself, and those it
    declares ``global``."""

    local: frozenset[str]
    declared_global: frozenset[str]
    kind: str

    @classmethod
    def of(cls, body: list[ast.AST], kind: str) -> "_Scope":
        nodes = list(_own_nodes(body))
        declared = {name for node in nodes if isinstance(node, ast.Global) for name in node.names}
        bound = {name for node in nodes for name in _names_bound_by(node)}
        return cls(frozenset(bound - declared), frozenset(declared), kind)


def _own_nodes(body: list[ast.AST]) -> Iterator[ast.AST]:
    """The nodes of a scope's body, not those inside its functions and classes (which are
    yielded themselves, so that their names count)."""
    pending = list(body)
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            pending += ast.iter_child_nodes(node)


def _names_bound_by(node: ast.AST) -> list[str]:
    """The names ``node`` itself binds where it stands."""
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        return [node.id]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [name for name, _ in imported(node) if name != STAR]
    if isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    return []


def _stored_names(target: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def imported(node: ast.Import | ast.ImportFrom) -> list[tuple[str, str]]:
    """(bound name, origin) of each name an import binds; ``("*", "m.*")`` for a star.

    ``import a.b`` binds a to "a", ``import a.b as c`` binds c to "a.b", ``from a import b
    as c`` binds c to "a.b" (the origin a module or an attribute: the same string both ways).
    """
    if isinstance(node, ast.Import):
        return [(alias.asname, alias.name) if alias.asname
                else (alias.name.split(".")[0], alias.name.split(".")[0])
                for alias in node.names]
    module = "." * node.level + (node.module or "")
    return [(alias.asname or alias.name, f"{module}.{alias.name}") for alias in node.names]

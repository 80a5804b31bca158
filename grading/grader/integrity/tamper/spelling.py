"""How code spells what it reaches: dotted paths, literal strings, the identifiers a node
writes, and names that are private."""

import ast

from grader.integrity.tamper.families import CARRIED_MODULES


def under(path: str, prefix: str) -> bool:
    """Whether ``path`` is ``prefix`` or inside it."""
    return path == prefix or path.startswith(prefix + ".")


def carried(path: str) -> str:
    """The path from the last module it reaches through another on: ``torch.sys.modules``
    -> "sys.modules", ``np.os.environ`` -> "os.environ"; any other path as it is."""
    parts = path.split(".")
    for n in range(len(parts) - 1, 0, -1):
        if parts[n] in CARRIED_MODULES:
            return ".".join([CARRIED_MODULES[parts[n]], *parts[n + 1:]])
    return path


def attribute_owners(tree: ast.AST) -> set[int]:
    """The ids of the nodes that own an attribute (``a.b`` of ``a.b.c``): an attribute chain
    is one use, whole, read at its end."""
    return {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}


def constant(node: ast.AST | None, otherwise: str | None = "*") -> str | None:
    """The string a node spells literally (``"allclose"``), else ``otherwise``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return otherwise


def spellings(node: ast.AST) -> set[str]:
    """The identifiers ``node`` itself writes: a name, an attribute, each part of an
    imported name, a function or class it defines, a keyword argument or pattern, a
    literal string (and each part of one that is a dotted name)."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Attribute):
        return {node.attr}
    if isinstance(node, ast.alias):
        return {*node.name.split("."), *filter(None, [node.asname])}
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.keyword):
        return {node.arg} if node.arg else set()
    if isinstance(node, ast.MatchClass):  # case object(__globals__=g)
        return set(node.kwd_attrs)
    text = constant(node, None)
    if text and all(part.isidentifier() for part in text.split(".")):
        return {text, *text.split(".")}  # attrgetter("f.__globals__")
    return {text} if text else set()


def imported_paths(node: ast.Import | ast.ImportFrom) -> list[str]:
    """What an import reaches, whole: ``import a.b`` -> "a.b", ``from a import b`` -> "a.b"."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    module = "." * node.level + (node.module or "")
    return [f"{module}.{alias.name}" for alias in node.names]


def root_of(node: ast.AST) -> ast.AST:
    """What an expression starts from: ``self`` of ``self.layers[0].weight()``."""
    while True:  # a loop: a long chain cannot exhaust the stack
        if isinstance(node, ast.Attribute | ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        else:
            return node


def is_private(name: str) -> bool:
    """``_x`` or ``__x``, not ``__x__`` (Python's own) nor ``_`` alone."""
    dunder = name.startswith("__") and name.endswith("__")
    return name.startswith("_") and name.strip("_") != "" and not dunder

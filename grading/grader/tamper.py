"""Tamper flags: answer-cell lines that change what the tests rely on, for a TA to look at.

A test cell trusts a few things: the checks of ``course_utils.checks`` and the library they
compare with, numpy's and torch's comparison helpers, Python's builtins, the import system,
IPython, and the notebook's names it reads (``checks``, ``W_T``, ``torch``...). An answer
cell can change any of them, so that a wrong answer passes or a failing test looks like it
passed. This module reads the code of every answer cell (nbgrader ``solution`` code cells)
with ``ast``, without running it, and flags each line that does one of these things:

=====================================  ===================================================
family                                 flagged lines
=====================================  ===================================================
patches course_utils                   assigning, deleting or ``setattr`` of an attribute of
                                       any ``course_utils`` module, however imported
                                       (``checks.check_close = ...``, ``setattr(c, ...)``,
                                       ``course_utils.checks.__dict__[...] = ...``): the
                                       checks and the library they compare with
patches a numpy/torch test helper      the same for ``numpy.testing``, ``torch.testing``,
                                       ``allclose``, ``isclose``, ``array_equal``,
                                       ``array_equiv``, ``equal``, the methods of
                                       ``torch.Tensor`` and ``numpy.ndarray``, and any
                                       ``unittest.mock.patch`` of them
patches builtins                       patching ``builtins`` or ``__builtins__``, and
                                       binding a builtin's name in the notebook's namespace
                                       (``abs = ...``, ``def isinstance``, ``AssertionError
                                       = Exception`` at the cell's top level)
touches sys.modules or a hook          any use of ``sys.modules``, ``sys.meta_path``,
                                       ``sys.path_hooks``, ``sys.excepthook``,
                                       ``sys.displayhook``, ``sys.settrace``,
                                       ``sys.setprofile`` or ``importlib.reload``, and
                                       patching ``sys`` or ``importlib``
hooks IPython                          any use of ``get_ipython`` (``showtraceback``,
                                       ``events``, ``run_cell``, input and AST transformers,
                                       custom exception handlers...), any ``%`` magic or
                                       ``!`` shell line, patching ``IPython``
rebinds a name the test cells use      binding, at the notebook's top level, a name a test
                                       cell reads without setting it (``checks = ...``,
                                       ``W_T = ...``, ``import numpy as torch``, ``del
                                       device``, another exercise's ``def embed``, a
                                       ``global`` name assigned in a function), and
                                       ``from module import *``
runs code from a string                any use of ``exec``, ``eval``, ``compile`` or
                                       ``__import__``, which would hide the above
=====================================  ===================================================

What an honest answer does is not flagged: reading ``np.allclose(...)``, defining a local
``sum`` inside a function, binding the names the official answer of that cell binds (the
function the exercise asks for), and importing a module under the name the notebook itself
gives it (``import numpy as np`` where the notebook has ``import numpy as np``).

Modules are followed however they are named: imported under another name, through an
alias (``t = torch.testing``), ``vars(m)``, ``getattr(m, "x")`` or ``importlib.import_module``.

A flag means "look at this line", not "this student cheated": the scan sees the code only,
and a curious student may well write ``sys.modules`` or ``%timeit``, or recompute a test
input (``W_T = ...``) with the very same value to try an answer out. It also does not try
to out-guess every trick (code built from strings, an object that pretends to be a
module): it flags the families above, and the family "runs code from a string" catches
the most common way to hide the others.

IPython syntax (``%time``, ``%%capture``, ``!ls``, ``x?``) is first turned into Python the
way the kernel does it (``get_ipython().run_line_magic(...)``), so a magic cannot hide a
cell from the scan; the result then falls under "hooks IPython". A cell that is not valid
Python even so gets no flags: the kernel refuses it with a ``SyntaxError`` before running
any of it, so it changed nothing, and its tests fail on their own.

Only answer cells are read, as nbgrader marks them; cells a student adds, or notebook code
cells without nbgrader metadata (which nbgrader runs but does not restore), are not.
"""

import ast
import builtins
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from IPython.core.inputtransformer2 import TransformerManager
from nbformat import NotebookNode

PATCHES_COURSE_UTILS = "patches course_utils"
PATCHES_TEST_HELPER = "patches a numpy/torch test helper"
PATCHES_BUILTINS = "patches builtins"
TOUCHES_INTERPRETER = "touches sys.modules or a hook"
HOOKS_IPYTHON = "hooks IPython"
REBINDS_TEST_NAME = "rebinds a name the test cells use"
RUNS_STRING_CODE = "runs code from a string"

FAMILIES = (
    PATCHES_COURSE_UTILS,
    PATCHES_TEST_HELPER,
    PATCHES_BUILTINS,
    TOUCHES_INTERPRETER,
    HOOKS_IPYTHON,
    REBINDS_TEST_NAME,
    RUNS_STRING_CODE,
)

# Bare names that mean these modules even when the cell does not import them.
MODULE_NAMES = {
    name: name
    for name in ("builtins", "course_utils", "importlib", "IPython", "numpy", "sys", "torch")
}
MODULE_NAMES |= {"__builtins__": "builtins", "np": "numpy"}

# Patching any of these (or what lies under them) is patching a test helper.
TEST_HELPERS = (
    "numpy.testing",
    "torch.testing",
    "numpy.allclose",
    "numpy.isclose",
    "numpy.array_equal",
    "numpy.array_equiv",
    "torch.allclose",
    "torch.isclose",
    "torch.equal",
    "numpy.ndarray",
    "torch.Tensor",
    "numpy.*",  # setattr(np, name, ...) with a name that is not spelled out: any of them
    "torch.*",
)

# Any use of these is flagged: they reach into the import system or the interpreter.
INTERPRETER_HOOKS = (
    "sys.modules",
    "sys.meta_path",
    "sys.path_hooks",
    "sys.excepthook",
    "sys.displayhook",
    "sys.settrace",
    "sys.setprofile",
    "importlib.reload",
)

STRING_RUNNERS = frozenset({"exec", "eval", "compile", "__import__"})

# Python's own builtins; not the helpers `site` adds for the prompt (`exit`, `help`...) or
# IPython's (`display`; `get_ipython` has its own family), nor the module's own dunders.
BUILTIN_NAMES = frozenset(
    name for name in dir(builtins)
    if not name.startswith("_")
    and name not in {"copyright", "credits", "exit", "help", "license", "quit", "display",
                     "get_ipython"}
) | {"__builtins__", "__import__", "__build_class__"}

# Methods that change a namespace dictionary (``vars(m).update(...)``).
DICT_MUTATORS = frozenset({"update", "setdefault", "pop", "popitem", "clear", "__setitem__",
                           "__delitem__"})

MOCK_PATCH = "unittest.mock.patch"
STAR = "*"


@dataclass(frozen=True)
class Flag:
    """One line of an answer cell for a TA to look at."""

    cell: str  # the answer cell's grade id
    line: int  # 1-based line number inside the cell
    family: str  # one of FAMILIES
    code: str  # that line of the student's code, stripped

    def __str__(self) -> str:
        return f"cell {self.cell} line {self.line}: {self.family}: {self.code}"


@dataclass(frozen=True)
class ScanContext:
    """What the test cells of one assignment rely on, read from its instructor notebook.

    ``test_names``: names some test cell reads without setting them itself.
    ``answers``: grade id of an answer cell -> the names its official answer binds.
    ``imports``: name -> the modules the notebook's code cells import under that name
    (``"np" -> {"numpy"}``, ``"checks" -> {"course_utils.checks"}``), and ``"*"`` -> the
    modules it imports everything from (``"course_utils.data.*"``).
    """

    test_names: frozenset[str]
    answers: Mapping[str, frozenset[str]]
    imports: Mapping[str, frozenset[str]]


def scan_notebook(submitted: NotebookNode, source: NotebookNode) -> list[Flag]:
    """Flags of every answer cell of ``submitted`` (an nbformat NotebookNode), with the test
    cells' names and the official answers' bindings read from ``source`` (the instructor
    notebook, solutions/<a>/<a>.ipynb, whose test cells are the code cells with
    nbgrader.grade == true and solution == false)."""
    context = read_scan_context(source)
    flags = []
    for grade_id, code in answer_cells(submitted):
        flags += scan_cell(code, grade_id, context)
    return flags


def read_scan_context(source: NotebookNode) -> ScanContext:
    """The ``ScanContext`` of an instructor notebook (ValueError if a test cell is not
    Python: the tests could not run either)."""
    test_names: set[str] = set()
    for grade_id, code in autograder_tests(source):
        tree = parse_cell(code)
        if tree is None:
            raise ValueError(f"test cell {grade_id!r} of the source notebook is not valid Python")
        names = ModuleNames(tree)
        test_names |= names.reads - {name for name, _ in names.bindings}
    answers = {
        grade_id: frozenset(name for name, _ in _module_names(code).bindings)
        for grade_id, code in answer_cells(source)
    }
    imports: dict[str, set[str]] = {}
    for cell in _cells(source):
        names = _module_names(cell.source if cell.cell_type == "code" else "")
        for name, (origins, _) in names.imports.items():
            imports.setdefault(name, set()).update(origins)
        for origin, _ in names.star_imports:
            imports.setdefault(STAR, set()).add(origin)
    return ScanContext(
        frozenset(test_names), answers, {name: frozenset(o) for name, o in imports.items()}
    )


def _module_names(code: str) -> "ModuleNames":
    """The ``ModuleNames`` of a cell; none for a cell that is not Python."""
    return ModuleNames(parse_cell(code) or ast.Module(body=[], type_ignores=[]))


def answer_cells(notebook: NotebookNode) -> list[tuple[str, str]]:
    """(grade id, source) of the notebook's answer cells: code cells nbgrader marks as
    solution. A cell without a grade id is named by its position, ``cell <n>``."""
    return [
        (_nbgrader(cell).get("grade_id") or f"cell {n}", cell.source)
        for n, cell in enumerate(_cells(notebook), start=1)
        if cell.cell_type == "code" and _nbgrader(cell).get("solution")
    ]


def autograder_tests(notebook: NotebookNode) -> list[tuple[str, str]]:
    """(grade id, source) of the notebook's test cells: code cells nbgrader grades that are
    not solution cells."""
    return [
        (_nbgrader(cell).get("grade_id") or f"cell {n}", cell.source)
        for n, cell in enumerate(_cells(notebook), start=1)
        if cell.cell_type == "code"
        and _nbgrader(cell).get("grade")
        and not _nbgrader(cell).get("solution")
    ]


def _cells(notebook) -> list:
    if not isinstance(notebook, Mapping) or not isinstance(notebook.get("cells"), list):
        raise TypeError(
            f"expected a notebook (nbformat.NotebookNode with cells), got {type(notebook).__name__}"
        )
    return notebook["cells"]


def _nbgrader(cell) -> Mapping:
    """The cell's nbgrader metadata, as ``nbgrader.utils.is_solution`` and ``is_grade`` read
    it (importing nbgrader itself takes seconds)."""
    return cell.get("metadata", {}).get("nbgrader", {})


def parse_cell(code: str) -> ast.Module | None:
    """The cell as the kernel runs it: IPython syntax turned into Python, or None if it is
    not valid Python even so. Line numbers are the cell's own."""
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):  # ValueError: a null byte
        pass
    # IPython drops the leading blank lines; put them back so that lines keep their numbers.
    lines = code.splitlines()
    blank = next((n for n, line in enumerate(lines) if line.strip()), len(lines))
    try:
        return ast.parse("\n" * blank + TransformerManager().transform_cell(code))
    except (SyntaxError, ValueError, RecursionError):
        return None


def scan_cell(code: str, grade_id: str, context: ScanContext) -> list[Flag]:
    """The flags of one answer cell, one per line and family, in line order."""
    if not isinstance(code, str):
        raise TypeError(f"expected the cell's source as str, got {type(code).__name__}")
    tree = parse_cell(code)
    if tree is None:
        return []
    lines = code.splitlines()
    found = set(Scanner(tree, grade_id, context).findings())
    return [
        Flag(grade_id, line, family, lines[line - 1].strip() if line <= len(lines) else "")
        for line, family in sorted(found, key=lambda f: (f[0], FAMILIES.index(f[1])))
    ]


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
        for name, origin in _imported(node):
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
        return [name for name, _ in _imported(node) if name != STAR]
    if isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    return []


def _stored_names(target: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _imported(node: ast.Import | ast.ImportFrom) -> list[tuple[str, str]]:
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


class Scanner:
    """The findings, (line, family), of one answer cell; see the module's docstring."""

    def __init__(self, tree: ast.Module, grade_id: str, context: ScanContext):
        self.tree = tree
        self.allowed = context.answers.get(grade_id, frozenset())
        self.context = context
        self.names = ModuleNames(tree)
        self.aliases = self._aliases()

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
                aliases.update((name, origin) for name, origin in _imported(node) if name != STAR)
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
        if isinstance(node, ast.Call) and node.args:
            owner = self._path_of_call(node, aliases)
        return ".".join([owner, *attributes]) if owner else None

    def _path_of_call(self, call: ast.Call, aliases: Mapping[str, str]) -> str | None:
        """``vars(m)`` -> "m.__dict__", ``getattr(m, "x")`` -> "m.x",
        ``importlib.import_module("m")`` -> "m"; None for any other call."""
        function = call.func.id if isinstance(call.func, ast.Name) else None
        owner = self.path(call.args[0], aliases)
        if function == "vars" and owner:
            return f"{owner}.__dict__"
        if function == "getattr" and owner and len(call.args) > 1:
            return f"{owner}.{_constant(call.args[1])}"
        if self.path(call.func, aliases) == "importlib.import_module":
            return _constant(call.args[0], None)
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
        origins = {origin for bound, origin in _imported(node) if bound == name}
        return bool(origins) and origins <= self.context.imports.get(name, frozenset())

    def _families_of(self, node: ast.AST) -> Iterator[str]:
        for patched in self._patched_paths(node):
            family = _patch_family(patched)
            if family:
                yield family
        used = self._used_path(node)
        if used and any(_under(used, hook) for hook in INTERPRETER_HOOKS):
            yield TOUCHES_INTERPRETER
        if "get_ipython" in _names(node):
            yield HOOKS_IPYTHON
        if isinstance(node, ast.Name) and node.id in STRING_RUNNERS:
            yield RUNS_STRING_CODE
        if used in {f"builtins.{runner}" for runner in STRING_RUNNERS}:
            yield RUNS_STRING_CODE

    def _used_path(self, node: ast.AST) -> str | None:
        """The path a name, attribute or imported name refers to."""
        if isinstance(node, ast.Name | ast.Attribute | ast.Call):
            return self.path(node)
        if isinstance(node, ast.Import | ast.ImportFrom):
            hooks = [o for _, o in _imported(node) if any(_under(o, h) for h in INTERPRETER_HOOKS)]
            return hooks[0] if hooks else None
        return None

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

    def _namespace_entry(self, namespace: ast.AST, key: ast.AST | None) -> str | None:
        """``m.__dict__[key]`` -> "m.key"; ``__builtins__[key]`` -> "builtins.key"."""
        owner = self.path(namespace)
        if owner and owner.endswith(".__dict__"):
            owner = owner.removesuffix(".__dict__")
        elif owner != "builtins":
            return None
        return f"{owner}.{_constant(key)}"

    def _patched_by_call(self, call: ast.Call) -> list[str]:
        """setattr/delattr, mock.patch(...) and its variants, ``vars(m).update(...)``."""
        function = self.path(call.func)
        args = call.args
        if (isinstance(call.func, ast.Name) and call.func.id in {"setattr", "delattr"}) or (
                function in {"builtins.setattr", "builtins.delattr"}):
            owner = self.path(args[0]) if args else None
            return [f"{owner}.{_constant(args[1]) if len(args) > 1 else '*'}"] if owner else []
        if function == MOCK_PATCH or function == f"{MOCK_PATCH}.dict":
            target = (_constant(args[0], None) or self.path(args[0])) if args else None
            return [target] if target else []
        if function in {f"{MOCK_PATCH}.object", f"{MOCK_PATCH}.multiple"}:
            owner = self.path(args[0]) if args else None
            names = [_constant(args[1])] if len(args) > 1 else [k.arg or "*" for k in call.keywords]
            return [f"{owner}.{name}" for name in names] if owner else []
        if isinstance(call.func, ast.Attribute) and call.func.attr in DICT_MUTATORS:
            entry = self._namespace_entry(call.func.value, None)
            return [entry] if entry else []
        return []


def _patch_family(path: str) -> str | None:
    if _under(path, "course_utils"):
        return PATCHES_COURSE_UTILS
    if any(_under(path, helper) for helper in TEST_HELPERS):
        return PATCHES_TEST_HELPER
    if _under(path, "builtins"):
        return PATCHES_BUILTINS
    if _under(path, "sys") or _under(path, "importlib"):
        return TOUCHES_INTERPRETER
    if _under(path, "IPython"):
        return HOOKS_IPYTHON
    return None


def _under(path: str, prefix: str) -> bool:
    """Whether ``path`` is ``prefix`` or inside it."""
    return path == prefix or path.startswith(prefix + ".")


def _names(node: ast.AST) -> set[str]:
    """The identifiers ``node`` itself spells: a name, an attribute, an imported name."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Attribute):
        return {node.attr}
    if isinstance(node, ast.alias):
        return {node.asname or node.name, node.name.rsplit(".", 1)[-1]}
    return set()


def _constant(node: ast.AST | None, otherwise: str | None = "*") -> str | None:
    """The string a node spells literally (``"allclose"``), else ``otherwise``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return otherwise

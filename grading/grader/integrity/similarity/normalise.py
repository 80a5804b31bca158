"""Code as the fingerprints read it: its syntax tree with what does nothing left out and the
names it binds numbered, written out again (``ast.unparse``) as a token text.

Left out, so that statements slipped between pasted lines do not break its k-grams:

* docstrings and every statement that only names a value: a constant (``0``, ``...``, a
  string), a name, or a tuple, list, set or operation of those;
* ``pass`` (kept where a block would be left empty), annotations without a value
  (``x: int``), assignments of a thing to itself (``x = x``, ``a, b = a, b``);
* in a function, assignments to a local name that the function never reads (``unused = 1``),
  until none is left.

Every name the code binds (assigned, a parameter, a function, a class, a loop or ``with``
target, ``global``) is renamed ``v0``, ``v1``, ... in order of first appearance, so that
renaming changes nothing, a builtin's name used for a variable (``sum = 0``) included. Names
the code only reads (builtins, modules, the notebook's functions) and attributes stay.

The token text is what copydetect's filter makes of code (:func:`_stream`), but for
attributes: ``V`` for a name, ``F`` for a function's, builtins as written, each attribute a
character of its own.

The code is parsed as the kernel runs it (:func:`grader.integrity.tamper.cells.parse_cell`,
IPython's syntax turned into Python), or dedented (a method read out of its class); code that
does not parse at all is left to the text (:func:`normalised` returns None).

:class:`Layout` maps the token text back onto the code as written: each line of the
normalised code to the statement it comes from, so the parts found alike are shown on the
student's own text.
"""

import ast
import bisect
import builtins
import io
import keyword
import textwrap
import tokenize
import zlib
from dataclasses import dataclass

from grader.integrity.tamper.cells import parse_cell

BLOCKS = ("body", "orelse", "finalbody")
INERT = (ast.Constant, ast.Name)
GROUPS = (ast.Tuple, ast.List, ast.Set)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
           tokenize.ENDMARKER}
NAMED = {"def": "F", "class": "O"}
BUILTINS = frozenset(dir(builtins))
PRIVATE, PRIVATE_SIZE = 0xE000, 6400  # Unicode's private use area: no code's own character


@dataclass(frozen=True)
class Layout:
    """Where each line of the normalised code comes from in the code as written."""

    starts: tuple[int, ...]  # the offset of each normalised line in the token text
    places: tuple[tuple[tuple[int, int], ...], ...]  # each normalised line's spans as written

    def spans(self, start: int, end: int) -> list[tuple[int, int]]:
        """The spans as written of the token text's characters ``start`` to ``end``."""
        first = bisect.bisect_right(self.starts, start) - 1
        last = bisect.bisect_right(self.starts, max(start, end - 1)) - 1
        return [span for line in range(max(first, 0), last + 1) for span in self.places[line]]


def _inert(node: ast.expr) -> bool:
    if isinstance(node, INERT):
        return True
    if isinstance(node, GROUPS):
        return all(_inert(element) for element in node.elts)
    if isinstance(node, ast.UnaryOp):
        return _inert(node.operand)
    if isinstance(node, ast.BinOp):
        return _inert(node.left) and _inert(node.right)
    if isinstance(node, ast.BoolOp):
        return all(_inert(value) for value in node.values)
    if isinstance(node, ast.Compare):
        return _inert(node.left) and all(_inert(value) for value in node.comparators)
    return False


def _no_op(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Pass):
        return True
    if isinstance(statement, ast.Expr):
        return _inert(statement.value)
    if isinstance(statement, ast.AnnAssign):
        return statement.value is None
    if isinstance(statement, ast.Assign):
        value = ast.dump(statement.value)
        return all(ast.dump(target, include_attributes=False).replace("Store()", "Load()")
                   == value for target in statement.targets)
    return False


def _blocks(node: ast.AST):
    """The statement lists of ``node`` (bodies, else branches, handlers' and cases' bodies)."""
    for name in BLOCKS:
        block = getattr(node, name, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield node, name, block
    for child in getattr(node, "handlers", []) + getattr(node, "cases", []):
        yield child, "body", child.body


def _prune(node: ast.AST, dead) -> int:
    """Drop the statements ``dead`` says do nothing from every block under ``node``; a block
    left empty gets a ``pass`` where its first statement was. How many were dropped."""
    dropped = 0
    for owner, name, block in list(_blocks(node)):
        kept = [statement for statement in block if not dead(statement)]
        dropped += len(block) - len(kept)
        if not kept:
            kept = [ast.copy_location(ast.Pass(), block[0])]
            kept[0].end_lineno, kept[0].end_col_offset = kept[0].lineno, kept[0].col_offset
            dropped -= isinstance(block[0], ast.Pass)  # a lone pass put back is no change
        setattr(owner, name, kept)
        for statement in kept:
            dropped += _prune(statement, dead)
    return dropped


def _local_reads(function: ast.AST) -> set[str]:
    """The names ``function`` reads anywhere in it (nested functions included), and those it
    declares global or nonlocal."""
    names = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
    return names


def _unread_assignment(reads: set[str]):
    def dead(statement: ast.stmt) -> bool:
        if isinstance(statement, ast.Assign):
            targets = statement.targets
        elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)):
            targets = [statement.target]
        else:
            return False
        return all(isinstance(t, ast.Name) and t.id not in reads for t in targets)
    return dead


def _drop_unread_locals(tree: ast.Module) -> None:
    for function in [n for n in ast.walk(tree) if isinstance(n, FUNCTIONS[:2])]:
        while _prune(function, _unread_assignment(_local_reads(function))):
            pass


def _bound(tree: ast.Module) -> list[str]:
    """The names ``tree`` binds, in order of first appearance."""
    found = {}
    for node in _in_order(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.setdefault(node.id)
        elif isinstance(node, ast.arg):
            found.setdefault(node.arg)
        elif isinstance(node, (*FUNCTIONS[:2], ast.ClassDef)):
            found.setdefault(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            found.update(dict.fromkeys(node.names))
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found.setdefault(node.name)
    return list(found)


def _in_order(node: ast.AST):
    """``node`` and everything under it, depth first in the order of its fields."""
    yield node
    for child in ast.iter_child_nodes(node):
        yield from _in_order(child)


def _rename(tree: ast.Module) -> None:
    """Rename the names ``tree`` binds v0, v1, ... (skipping names it already uses)."""
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    fresh = (f"v{n}" for n in range(10**9))
    names = {}
    for name in _bound(tree):
        names[name] = next(new for new in fresh if new not in taken)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            node.id = names.get(node.id, node.id)
        elif isinstance(node, ast.arg):
            node.arg = names.get(node.arg, node.arg)
        elif isinstance(node, (*FUNCTIONS[:2], ast.ClassDef)):
            node.name = names.get(node.name, node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            node.names = [names.get(name, name) for name in node.names]
        elif isinstance(node, ast.ExceptHandler) and node.name:
            node.name = names.get(node.name, node.name)


def _parse(code: str) -> tuple[ast.Module, str] | None:
    """The tree of ``code`` and the text it was parsed from (``code``, or dedented)."""
    for text in dict.fromkeys((code, textwrap.dedent(code))):
        tree = parse_cell(text)
        if tree is not None:
            return tree, text
    return None


def _offset(lines: list[str], parsed: list[str], line: int, column: int) -> int:
    """The offset in the code as written (``lines``) of ``column`` (UTF-8 bytes, as ``ast``
    counts) of ``line`` (1-based) of the text parsed."""
    line = min(max(line, 1), len(lines))
    written, read = lines[line - 1], parsed[line - 1] if line <= len(parsed) else ""
    shift = len(written) - len(read) if written.endswith(read) else 0
    column = len(read.encode()[:column].decode(errors="ignore"))
    return sum(map(len, lines[:line - 1])) + min(shift + column, len(written.rstrip("\r\n")))


def _header_end(node: ast.stmt) -> int:
    """The last line of a compound statement's header, as written (before any pruning)."""
    first = [block[0].lineno for _, _, block in _blocks(node)]
    return max(node.lineno, min(first, default=node.end_lineno) - 1)


def normalised(code: str) -> tuple[str, Layout] | None:
    """``code`` normalised (see the module) as the token text that is fingerprinted, and
    where its lines come from; None when it does not parse."""
    parsed = _parse(code)
    if parsed is None:
        return None
    tree, text = parsed
    try:
        headers = {id(node): _header_end(node) for node in ast.walk(tree)
                   if isinstance(node, ast.stmt) and any(True for _ in _blocks(node))}
        _prune(tree, _no_op)
        _drop_unread_locals(tree)
        _rename(tree)
        if all(isinstance(statement, ast.Pass) for statement in tree.body):
            tree.body = []
        new = ast.unparse(tree)
        places = _places(code, text, tree, new, headers)
        stream, starts = _stream(new)
    except (SyntaxError, ValueError, RecursionError, tokenize.TokenError):
        return None  # a tree that unparse cannot write back
    return stream, Layout(starts, places)


def _symbol(name: str) -> str:
    """One character for an attribute's name, the same for the same name: one character, as
    copydetect's ``V``, so that the k-grams span as many tokens as copydetect's do."""
    return chr(PRIVATE + zlib.crc32(name.encode()) % PRIVATE_SIZE)


def _stream(code: str) -> tuple[str, tuple[int, ...]]:
    """The tokens of normalised ``code`` as copydetect's filter writes them (no comments nor
    layout, a string ``"S"``, a name ``V``, a function's ``F``, a class's ``O``, builtins
    the code does not bind as written), but for attributes, which a rename cannot change:
    each name its own character (``rng.normal`` is not ``rng.standard_cauchy``). With the
    offset in it of each line of ``code``."""
    out, starts, previous = [], [], ""
    size = 0
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type in SKIPPED:
            continue
        while len(starts) < token.start[0]:
            starts.append(size)
        if token.type == tokenize.STRING:
            text = '"S"'
        elif token.type != tokenize.NAME or keyword.iskeyword(token.string):
            text = token.string
        elif previous in NAMED:
            text = NAMED[previous]
        elif previous == ".":
            text = _symbol(token.string)
        elif token.string in BUILTINS:
            text = token.string
        else:
            text = "V"
        out.append(text)
        size += len(text)
        previous = token.string
    lines = code.count("\n") + 1
    starts += [size] * (lines - len(starts))
    return "".join(out), tuple(starts[:lines])


def _places(code: str, text: str, tree: ast.Module, new: str, headers: dict) -> tuple:
    """For each line of ``new``, unparsed from ``tree`` (``text`` parsed), the spans of
    ``code`` its statement comes from: a simple statement's whole text, a compound one's
    header."""
    lines, parsed = code.splitlines(keepends=True), text.splitlines(keepends=True)
    places: list[tuple] = [()] * (new.count("\n") + 1)
    written = [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]
    again = [n for n in ast.walk(ast.parse(new)) if isinstance(n, ast.stmt)]
    if len(written) == len(again):
        for old, copy in zip(written, again, strict=True):
            last = headers.get(id(old))
            start = _offset(lines, parsed, old.lineno, old.col_offset)
            if last is None:
                end = _offset(lines, parsed, old.end_lineno, old.end_col_offset)
                span_lines = range(copy.lineno, copy.end_lineno + 1)
            else:
                end = _offset(lines, parsed, last, 10**6)
                end = len(code[:end].rstrip())
                span_lines = range(copy.lineno, _header_end(copy) + 1)
            for line in span_lines:
                if line <= len(places):
                    places[line - 1] = ((start, max(start, end)),)
    return tuple(places)

"""Tamper flags: answer-cell lines that change what the tests rely on, for a TA to look at.

A test cell trusts a few things: the checks of ``course_utils.checks`` and the library they
compare with, numpy's and torch's comparison helpers, Python's builtins, the import system,
IPython, and the notebook's names it reads (``checks``, ``W_T``, ``torch``...). An answer
cell can change any of them, so that a wrong answer passes or a failing test looks like it
passed. This package reads the code of every answer cell (nbgrader ``solution`` code cells)
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

Modules: ``families`` (the families' names and what each covers), ``cells`` (a notebook's
answer and test cells, a cell's code as the kernel runs it), ``names`` (what a cell binds
and reads in the notebook's namespace), ``context`` (what the test cells rely on),
``scanner`` (the findings of one cell) and ``scan`` (the flags of a notebook or a cell).
"""

from grader.tamper.cells import answer_cells, autograder_tests, parse_cell
from grader.tamper.context import ScanContext, read_scan_context
from grader.tamper.families import (
    BUILTIN_NAMES,
    DICT_MUTATORS,
    FAMILIES,
    HOOKS_IPYTHON,
    INTERPRETER_HOOKS,
    MOCK_PATCH,
    PATCHES_BUILTINS,
    PATCHES_COURSE_UTILS,
    PATCHES_TEST_HELPER,
    REBINDS_TEST_NAME,
    RUNS_STRING_CODE,
    STRING_RUNNERS,
    TEST_HELPERS,
    TOUCHES_INTERPRETER,
)
from grader.tamper.names import STAR, ModuleNames
from grader.tamper.scan import Flag, scan_cell, scan_notebook
from grader.tamper.scanner import MODULE_NAMES, Scanner

__all__ = [
    "BUILTIN_NAMES",
    "DICT_MUTATORS",
    "FAMILIES",
    "HOOKS_IPYTHON",
    "INTERPRETER_HOOKS",
    "MOCK_PATCH",
    "MODULE_NAMES",
    "PATCHES_BUILTINS",
    "PATCHES_COURSE_UTILS",
    "PATCHES_TEST_HELPER",
    "REBINDS_TEST_NAME",
    "RUNS_STRING_CODE",
    "STAR",
    "STRING_RUNNERS",
    "TEST_HELPERS",
    "TOUCHES_INTERPRETER",
    "Flag",
    "ModuleNames",
    "ScanContext",
    "Scanner",
    "answer_cells",
    "autograder_tests",
    "parse_cell",
    "read_scan_context",
    "scan_cell",
    "scan_notebook",
]

"""Tamper flags: answer-cell lines that change what the tests rely on, for a TA to look at.

A test cell trusts a few things: the checks of ``course_utils.checks`` and the library they
compare with, numpy's and torch's comparison helpers and dispatch, Python's builtins, the
import system, IPython, the objects an answer returns, and the notebook's names it reads
(``checks``, ``W_T``, ``torch``...). An answer cell can change any of them, so that a wrong
answer passes or a failing test looks like it passed. This package reads the code of every
answer cell (nbgrader ``solution`` code cells) with ``ast``, without running it, and flags
each line that does one of these things, by family (a line may get several):

``patches course_utils``
    assigning, deleting or ``setattr`` of an attribute of any ``course_utils`` module,
    however imported (``checks.check_close = ...``, ``setattr(c, ...)``,
    ``course_utils.checks.__dict__[...] = ...``): the checks and the library they compare
    with.
``patches a numpy/torch test helper``
    the same for ``numpy.testing``, ``torch.testing``, ``allclose``, ``isclose``,
    ``array_equal``, ``array_equiv``, ``equal``, the methods of ``torch.Tensor`` and
    ``numpy.ndarray``, and any ``unittest.mock.patch`` of them.
``patches builtins``
    patching ``builtins`` or ``__builtins__``, and binding a builtin's name in the
    notebook's namespace (``abs = ...``, ``def isinstance``, ``AssertionError = Exception``
    at the cell's top level).
``touches sys.modules or a hook``
    any use of ``sys.modules``, ``sys.meta_path``, ``sys.path_hooks``, ``sys.excepthook``,
    ``sys.displayhook``, ``sys.settrace``, ``sys.setprofile``, ``sys.addaudithook``,
    ``sys.unraisablehook``, ``sys.monitoring`` or ``importlib.reload``, and patching
    ``sys`` or ``importlib``.
``reaches the IPython kernel``
    any use of ``get_ipython`` (``showtraceback``, ``events``, ``run_cell``, input and AST
    transformers, custom exception handlers...) or ``InteractiveShell``, any import or use
    of ``IPython`` (but its display helpers, ``IPython.display``), ``ipykernel``,
    ``jupyter_client``, ``zmq``, ``traitlets`` or ``comm``, any use of ``builtins`` or
    ``__builtins__`` (where IPython keeps ``get_ipython``), of IPython's history of the
    cells (``In``, ``Out``, ``_ih``, ``_oh``..., which hold their source), any ``%`` magic
    or ``!`` shell line.
``rebinds a name the test cells use``
    binding, at the notebook's top level, a name a test cell reads without setting it
    (``checks = ...``, ``W_T = ...``, ``import numpy as torch``, ``del device``, another
    exercise's ``def embed``, a ``global`` name assigned in a function), and ``from module
    import *``.
``runs code from a string``
    any use of ``exec``, ``eval``, ``compile`` or ``__import__``, however reached
    (``builtins.exec``, ``__builtins__["exec"]``, ``vars(builtins).get("eval")``, an
    alias), which would hide the rest; ``pdb``, ``doctest``, ``trace``, ``cProfile.run``
    and ``timeit`` given a statement that is not a function.
``loads code by hand``
    any use of ``importlib`` (``import_module`` included), ``runpy``, ``imp``,
    ``zipimport``, ``pkgutil``, ``pydoc``, the ``code`` module's interpreters, ``pickle`` and
    ``marshal`` loads, ``types.ModuleType`` (a module made by hand), ``__loader__``,
    ``__spec__``.
``reads frames or code objects``
    ``sys._getframe``, ``sys._current_frames``, ``sys.exc_info``, ``sys.exception``,
    ``inspect``, ``traceback``, ``dis``, ``linecache`` (the cells' source),
    ``types.FunctionType``, ``CodeType``,
    ``MethodType``, ``FrameType``; the attributes of frames, tracebacks, generators and
    code objects (``f_back``, ``f_locals``, ``f_globals``, ``f_code``, ``tb_frame``,
    ``tb_next``, ``gi_frame``, ``cr_frame``, ``co_code``, ``co_consts``..., also as
    ``.replace(co_consts=...)``); the introspection dunders ``__traceback__``, ``__code__``,
    ``__closure__``, ``__globals__``, ``__defaults__``, ``__kwdefaults__``,
    ``__wrapped__``, ``__self__``, ``__func__``, ``__subclasses__``, ``__mro__``,
    ``__bases__``, ``__dict__`` (on anything); and the namespaces as dictionaries,
    ``globals()``, ``locals()``, ``vars()``.
``uses gc or ctypes``
    any import or use of ``gc``, ``ctypes``, ``_ctypes`` or ``cffi``: every object, and
    memory, within reach.
``starts something that runs later (thread, process, signal, atexit, finaliser)``
    any use of ``threading``, ``_thread``, ``concurrent``, ``multiprocessing`` (torch's
    too), ``asyncio``, ``sched``, ``signal``, ``atexit``, ``subprocess``, ``pty``,
    ``os.fork``, ``os.system``, ``os.popen``, ``os.spawn*``, ``os.kill``,
    ``os.register_at_fork``, ``weakref.finalize`` or ``weakref.ref(obj, callback)``, and a
    ``__del__`` the cell defines: code that runs beside the tests or after them.
``changes how torch/numpy dispatch``
    any use of ``torch.overrides``, ``torch.utils._python_dispatch``, ``torch._C``,
    ``torch.library``, ``torch.ops``, ``torch._dynamo`` and torch's other dispatch
    internals, the global module hooks (``register_module_forward_hook``...),
    ``numpy.core``, ``numpy._core``, ``numpy.lib.mixins``; ``TorchFunctionMode``,
    ``TorchDispatchMode``, and the protocols ``__torch_function__``,
    ``__torch_dispatch__``, ``__array_ufunc__``, ``__array_function__``, ``__array__``,
    ``__array_priority__``... wherever spelled (``torch.compile`` is not flagged).
``defines an object that answers comparisons itself``
    a class, or ``type(...)`` or ``setattr`` on one, that defines ``__eq__``, ``__ne__``,
    ``__lt__``, ``__le__``, ``__gt__``, ``__ge__``, ``__bool__``, ``__len__``,
    ``__contains__``, ``__hash__``, ``__float__``, ``__int__``, ``__index__``,
    ``__complex__``, ``__round__``, ``__trunc__``, ``__floor__``, ``__ceil__``, ``__abs__``,
    ``__instancecheck__``, ``__subclasscheck__``, ``__getattr__`` or ``__getattribute__``
    (any spelling of these names is flagged); an assignment of ``__class__``; a class built
    on a builtin value type (``float``, ``list``, ``dict``, ``type``...), on
    ``torch.Tensor``, ``nn.Parameter``, ``numpy.ndarray`` or a numpy scalar, or on
    ``Counter``, ``defaultdict``, ``OrderedDict`` or ``collections.User*``.
``reaches into a library's private parts``
    an import of a private module or name (``from tiktoken import _tiktoken``,
    ``import torch._C``) and any ``_private`` attribute (also by ``getattr``) of anything
    but the cell's own classes and their instances (``reference._core_bpe``,
    ``enc._core_bpe``, ``np._core``; ``self._cache`` and ``cls._make`` in a class the cell
    defines are its own). Not flagged: a namedtuple's ``_replace``, ``_asdict``...,
    ``os._exit``, and the course's library, ``course_utils``, whose private helpers that
    answer an exercise are twins, with their own check ("imports a twin").
``hides what it uses (a name computed or decoded at run time)``
    a name that is not a literal string where a function takes the name of what it
    reaches: ``getattr``, ``setattr``, ``delattr``, ``hasattr``, ``operator.attrgetter``,
    ``methodcaller``, ``object.__setattr__``...; ``__import__``, ``import_module``,
    ``pydoc.locate``; ``mock.patch``; the key of a namespace (``vars(x)[key]``,
    ``x.__dict__.get(key)``, ``globals()``, ``sys.modules``, ``__builtins__``); the names
    of ``type(name, bases, namespace)`` and of ``**{key: value}``. One of those functions
    handed on instead of called (``g = getattr``). A module reached as another module's
    attribute (``torch.sys``, ``np.os.environ``, ``from torch import sys``; the path is
    also read from that module on: ``torch.sys.modules`` is ``sys.modules``). The decoders
    ``codecs``, ``base64``, ``binascii``, ``zlib``, ``bz2``, ``lzma`` and ``fromhex``.
    Not flagged: building or decoding strings as data (``"".join(pieces)``,
    ``text[::-1]``, ``bytes(ids).decode("utf-8")``, ``chr``): a name built that way is
    flagged where it is used as a name.

What an honest answer does is not flagged: reading ``np.allclose(...)``, defining a local
``sum`` inside a function, binding the names the official answer of that cell binds (the
function the exercise asks for), importing a module under the name the notebook itself
gives it (``import numpy as np`` where the notebook has ``import numpy as np``), the
everyday modules (``math``, ``re``, ``collections``, ``itertools``, ``functools``,
``dataclasses``, ``torch.nn.functional``...), a helper class or an ``nn.Module`` with
``__init__``, ``forward``, ``__getitem__``, ``__iter__`` or ``__repr__``, a dataclass.

Modules are followed however they are named: imported under another name (``import gc as
g``, ``from sys import _getframe as frame``), through an alias (``t = torch.testing``),
``vars(m)``, ``getattr(m, "x")``, a namespace's entry (``vars(m)["x"]``,
``sys.modules["m"]``, ``__builtins__["exec"]``), ``importlib.import_module("m")``,
``__import__("m")``, ``pydoc.locate("m")``, or another module's attribute (``torch.sys``).
An attribute chain is one use, whole: ``IPython.display.display`` is the display helper,
not a use of ``IPython``.

A flag means "look at this line", not "this student cheated": the scan sees the code only,
and a curious student may well write ``sys.modules``, ``%timeit`` or ``gc.collect()``, or
recompute a test input (``W_T = ...``) with the very same value to try an answer out. It
also does not try to out-guess every trick (an object that pretends to be a module): it
flags the families above, and the families "runs code from a string", "loads code by
hand" and "hides what it uses" catch the common ways to hide the others.

IPython syntax (``%time``, ``%%capture``, ``!ls``, ``x?``) is first turned into Python the
way the kernel does it (``get_ipython().run_line_magic(...)``), so a magic cannot hide a
cell from the scan; the result then falls under "reaches the IPython kernel". A cell that
is not valid Python even so gets no flags: the kernel refuses it with a ``SyntaxError``
before running any of it, so it changed nothing, and its tests fail on their own.

Only answer cells are read, as nbgrader marks them; cells a student adds, or notebook code
cells without nbgrader metadata (which nbgrader runs but does not restore), are not.

Modules: ``families`` (the families' names and what each covers), ``cells`` (a notebook's
answer and test cells, a cell's code as the kernel runs it), ``names`` (what a cell binds
and reads in the notebook's namespace), ``context`` (what the test cells rely on),
``spelling`` (dotted paths, the identifiers a node writes, private names), ``members``
(what the cell's own classes define), ``uses`` (the families of what a cell reaches),
``hidden`` (what a cell reaches by names it computes),
``scanner`` (the findings of one cell: bindings, patches, uses) and ``scan`` (the flags of
a notebook or a cell).
"""

from grader.integrity.tamper.cells import answer_cells, autograder_tests, parse_cell
from grader.integrity.tamper.context import ScanContext, read_scan_context
from grader.integrity.tamper.families import (
    ANSWERS_COMPARISONS,
    BUILTIN_NAMES,
    CHANGES_DISPATCH,
    DICT_MUTATORS,
    FAMILIES,
    HIDES_NAMES,
    INTERPRETER_HOOKS,
    LOADS_CODE,
    MOCK_PATCH,
    PATCHES_BUILTINS,
    PATCHES_COURSE_UTILS,
    PATCHES_TEST_HELPER,
    PRIVATE_PARTS,
    REACHES_IPYTHON,
    READS_FRAMES,
    REBINDS_TEST_NAME,
    RUNS_LATER,
    RUNS_STRING_CODE,
    SPELLED,
    STRING_RUNNERS,
    TEST_HELPERS,
    TOUCHES_INTERPRETER,
    USED,
    USES_GC_CTYPES,
)
from grader.integrity.tamper.names import STAR, ModuleNames
from grader.integrity.tamper.scan import Flag, scan_cell, scan_notebook
from grader.integrity.tamper.scanner import MODULE_NAMES, Scanner
from grader.integrity.tamper.twins import imported_twins

__all__ = [
    "ANSWERS_COMPARISONS",
    "BUILTIN_NAMES",
    "CHANGES_DISPATCH",
    "DICT_MUTATORS",
    "FAMILIES",
    "HIDES_NAMES",
    "INTERPRETER_HOOKS",
    "LOADS_CODE",
    "MOCK_PATCH",
    "MODULE_NAMES",
    "PATCHES_BUILTINS",
    "PATCHES_COURSE_UTILS",
    "PATCHES_TEST_HELPER",
    "PRIVATE_PARTS",
    "REACHES_IPYTHON",
    "READS_FRAMES",
    "REBINDS_TEST_NAME",
    "RUNS_LATER",
    "RUNS_STRING_CODE",
    "SPELLED",
    "STAR",
    "STRING_RUNNERS",
    "TEST_HELPERS",
    "TOUCHES_INTERPRETER",
    "USED",
    "USES_GC_CTYPES",
    "Flag",
    "ModuleNames",
    "ScanContext",
    "Scanner",
    "answer_cells",
    "autograder_tests",
    "imported_twins",
    "parse_cell",
    "read_scan_context",
    "scan_cell",
    "scan_notebook",
]

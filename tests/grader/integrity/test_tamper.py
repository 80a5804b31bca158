"""Tamper flags: every family flagged on the line that does it, honest work never flagged."""

import copy
import functools

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import grader.integrity.tamper
from grader.integrity.tamper import (
    ANSWERS_COMPARISONS,
    CHANGES_DISPATCH,
    FAMILIES,
    HIDES_NAMES,
    LOADS_CODE,
    PATCHES_BUILTINS,
    PATCHES_COURSE_UTILS,
    PATCHES_TEST_HELPER,
    PRIVATE_PARTS,
    REACHES_IPYTHON,
    READS_FRAMES,
    REBINDS_TEST_NAME,
    RUNS_LATER,
    RUNS_STRING_CODE,
    TOUCHES_INTERPRETER,
    USES_GC_CTYPES,
    Flag,
    read_scan_context,
    scan_cell,
    scan_notebook,
)
from tests.conftest import REPO
from tests.grading_cases import all_cases

SOLUTIONS = sorted(REPO.glob("solutions/*/*.ipynb"))


def graded_cell(source: str, grade_id: str, solution: bool, grade: bool):
    return new_code_cell(source, metadata={"nbgrader": {
        "grade_id": grade_id, "solution": solution, "grade": grade, "locked": not solution,
        "schema_version": 3, **({"points": 1} if grade else {}),
    }})


# A small instructor notebook: the test cell reads checks, scores, Q, K, torch and print.
SETUP = "import numpy as np\nimport torch\n\nfrom course_utils import checks\n\ndevice = 'cpu'"
OFFICIAL_SCORES = (
    "def scores(q, k):\n    ### BEGIN SOLUTION\n    return q @ k.T / 2\n    ### END SOLUTION"
)
TEST_SCORES = (
    "expected = Q @ K.T / 2\n"
    "checks.check_close(checks.own_work(scores, 'scores')(Q, K), expected, 'scores(Q, K)')\n"
    "print([n for n in range(3)], torch.ones(1))\n"
    "def helper(a):\n"
    "    return a\n"
)


def source_notebook():
    return new_notebook(cells=[
        new_markdown_cell("# Scores"),
        new_code_cell(SETUP),
        new_code_cell("Q = torch.ones(2, 4, device=device)\nK = torch.ones(3, 4, device=device)"),
        graded_cell(OFFICIAL_SCORES, "scores", solution=True, grade=False),
        graded_cell(TEST_SCORES, "test_scores", solution=False, grade=True),
    ])


@pytest.fixture(scope="module")
def context():
    return read_scan_context(source_notebook())


def findings(code: str, context) -> list[tuple[int, str]]:
    return [(flag.line, flag.family) for flag in scan_cell(code, "scores", context)]


# --- what the instructor notebook tells the scan -------------------------------------------

def test_context_reads_the_test_cells_free_names_and_the_official_bindings(context):
    # expected, n and a are set by the test cell itself; helper is its own function
    assert context.test_names == {"checks", "scores", "Q", "K", "torch", "print", "range"}
    assert context.answers == {"scores": {"scores"}}
    assert context.imports == {
        "np": {"numpy"}, "torch": {"torch"}, "checks": {"course_utils.checks"}
    }


# --- honest work: no flags ------------------------------------------------------------------

def test_every_solution_notebook_is_read():
    folders = [path for path in (REPO / "solutions").iterdir() if path.is_dir()]
    assert len(SOLUTIONS) == len(folders) >= 9


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.parent.name)
def test_a_solution_notebook_scanned_against_itself_has_no_flags(path):
    notebook = nbformat.read(path, as_version=4)
    assert scan_notebook(notebook, notebook) == []


@functools.cache
def solution(assignment: str) -> nbformat.NotebookNode:
    return nbformat.read(REPO / "solutions" / assignment / f"{assignment}.ipynb", as_version=4)


HONEST = [
    pytest.param(assignment, answers, id=f"{assignment}-{kind}-{student}")
    for assignment, cases in sorted(all_cases().items())
    for kind in ("WRONG", "CORRECT")
    for student, answers in getattr(cases, kind).items()
]


@pytest.mark.parametrize("assignment, answers", HONEST)
def test_honest_right_and_wrong_answers_have_no_flags(assignment, answers):
    source = solution(assignment)
    submitted = copy.deepcopy(source)
    filled = set()
    for cell in submitted.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.metadata.get("nbgrader", {}).get("solution") and grade_id in answers:
            cell.source = answers[grade_id]
            filled.add(grade_id)
    assert filled == set(answers), "every answer of the case went into its cell"
    assert scan_notebook(submitted, source) == []


# --- each family: a tampering line flagged, a near miss not ----------------------------------

TAMPERING = {
    # patches course_utils, however it was imported
    "checks attribute": (
        "from course_utils import checks\nchecks.check_close = lambda *args, **kwargs: None",
        [(2, PATCHES_COURSE_UTILS)]),
    "checks imported as c": (
        "import course_utils.checks as c\nc.check_close = print", [(2, PATCHES_COURSE_UTILS)]),
    "setattr of checks": (
        "setattr(checks, 'check_close', print)", [(1, PATCHES_COURSE_UTILS)]),
    "checks' __dict__": (
        "course_utils.checks.__dict__['check_close'] = print",
        [(1, PATCHES_COURSE_UTILS), (1, READS_FRAMES)]),
    "vars of checks updated": (
        "vars(checks).update(check_close=print)", [(1, PATCHES_COURSE_UTILS), (1, READS_FRAMES)]),
    "checks patched inside the answer": (
        "def scores(q, k):\n    checks.own_work = lambda f: f\n    return q @ k.T",
        [(2, PATCHES_COURSE_UTILS)]),
    "checks' function deleted": ("del checks.check_close", [(1, PATCHES_COURSE_UTILS)]),
    "checks by import_module": (
        "import importlib\n"
        "c = importlib.import_module('course_utils.checks')\nc.check_close = print",
        [(1, LOADS_CODE), (2, LOADS_CODE), (3, PATCHES_COURSE_UTILS)]),
    "the library the checks compare with": (
        "import course_utils.models.attention as attention\nattention.attention_weights = print",
        [(2, PATCHES_COURSE_UTILS)]),
    # patches a numpy/torch test helper
    "np.testing": ("np.testing.assert_allclose = print", [(1, PATCHES_TEST_HELPER)]),
    "numpy.allclose": (
        "import numpy\n\nnumpy.allclose = lambda *args, **kwargs: True",
        [(3, PATCHES_TEST_HELPER)]),
    "torch helpers": (
        "torch.testing.assert_close = print\ntorch.allclose = lambda *args, **kwargs: True",
        [(1, PATCHES_TEST_HELPER), (2, PATCHES_TEST_HELPER)]),
    "setattr of np": (
        "setattr(np, 'allclose', lambda *args, **kwargs: True)", [(1, PATCHES_TEST_HELPER)]),
    "an alias of torch.testing": (
        "t = torch.testing\nt.assert_close = print", [(2, PATCHES_TEST_HELPER)]),
    "a Tensor method": ("torch.Tensor.allclose = print", [(1, PATCHES_TEST_HELPER)]),
    "mock.patch": (
        "from unittest import mock\nmock.patch('torch.allclose', return_value=True).start()",
        [(2, PATCHES_TEST_HELPER)]),
    "patch.object as a decorator": (
        "from unittest.mock import patch\n\n"
        "@patch.object(np, 'isclose', return_value=True)\n"
        "def scores(q, k, _):\n    return q @ k.T",
        [(3, PATCHES_TEST_HELPER)]),
    # patches builtins
    "builtins module": (
        "import builtins\nbuiltins.print = lambda *args: None",
        [(1, REACHES_IPYTHON), (2, PATCHES_BUILTINS), (2, REACHES_IPYTHON)]),
    "__builtins__ item": (
        "__builtins__['isinstance'] = lambda *args: True",
        [(1, PATCHES_BUILTINS), (1, REACHES_IPYTHON)]),
    "__builtins__ attribute": (
        "__builtins__.abs = print", [(1, PATCHES_BUILTINS), (1, REACHES_IPYTHON)]),
    "AssertionError rebound": ("AssertionError = Exception", [(1, PATCHES_BUILTINS)]),
    "isinstance defined": (
        "def isinstance(obj, kind):\n    return True", [(1, PATCHES_BUILTINS)]),
    "two builtins on one line": ("abs = round = None", [(1, PATCHES_BUILTINS)]),
    "a builtin as a loop variable": ("for round in range(3):\n    pass", [(1, PATCHES_BUILTINS)]),
    "a builtin declared global": (
        "def scores(q, k):\n    global max\n    max = min\n    return q @ k.T",
        [(3, PATCHES_BUILTINS)]),
    # touches sys.modules or an interpreter hook
    "sys.modules item": (
        "import sys\nsys.modules['course_utils.checks'] = None",
        [(2, PATCHES_COURSE_UTILS), (2, TOUCHES_INTERPRETER)]),
    "sys.modules read": (
        "import sys\n\ndef scores(q, k):\n    real = sys.modules['torch']\n    return q @ k.T",
        [(4, TOUCHES_INTERPRETER)]),
    "modules imported from sys": ("from sys import modules", [(1, TOUCHES_INTERPRETER)]),
    "excepthook": ("import sys\nsys.excepthook = print", [(2, TOUCHES_INTERPRETER)]),
    "settrace and setprofile": (
        "import sys\nsys.settrace(None)\nsys.setprofile(None)",
        [(2, TOUCHES_INTERPRETER), (3, TOUCHES_INTERPRETER)]),
    "importlib.reload": (
        "import importlib\nimportlib.reload(checks)",
        [(1, LOADS_CODE), (2, TOUCHES_INTERPRETER), (2, LOADS_CODE)]),
    "getattr of sys": ("hooks = getattr(sys, 'modules')", [(1, TOUCHES_INTERPRETER)]),
    # reaches the IPython kernel
    "showtraceback": (
        "get_ipython().showtraceback = lambda *args, **kwargs: None", [(1, REACHES_IPYTHON)]),
    "events": (
        "shell = get_ipython()\nshell.events.register('post_run_cell', print)",
        [(1, REACHES_IPYTHON)]),
    "get_ipython imported": (
        "from IPython import get_ipython\nget_ipython().set_custom_exc((AssertionError,), print)",
        [(1, REACHES_IPYTHON), (2, REACHES_IPYTHON)]),
    "line magics": (
        "%load_ext autoreload\n%autoreload 2", [(1, REACHES_IPYTHON), (2, REACHES_IPYTHON)]),
    "a cell magic hides its body": (
        "%%capture\nchecks.check_close = print", [(1, REACHES_IPYTHON)]),
    "shell after blank lines": (
        "\n\n!pip install something\ndef scores(q, k):\n    return q @ k.T",
        [(3, REACHES_IPYTHON)]),
    "the shell's class": (
        "IPython.core.interactiveshell.InteractiveShell.instance().showtraceback = print",
        [(1, REACHES_IPYTHON)]),
    "the shell's class imported under another name": (
        "from IPython.core.interactiveshell import InteractiveShell as S\nshell = S.instance()",
        [(1, REACHES_IPYTHON), (2, REACHES_IPYTHON)]),
    "the kernel and its messaging": (
        "import ipykernel\nfrom jupyter_client import session\nimport zmq as z\n"
        "from traitlets import config",
        [(1, REACHES_IPYTHON), (2, REACHES_IPYTHON), (3, REACHES_IPYTHON), (4, REACHES_IPYTHON)]),
    "IPython itself": ("import IPython\nIPython.get_ipython()",
                       [(1, REACHES_IPYTHON), (2, REACHES_IPYTHON)]),
    "get_ipython from the builtins' namespace": (
        "shell = __builtins__.__dict__['get_ipython']()",
        [(1, REACHES_IPYTHON), (1, READS_FRAMES)]),
    # rebinds a name the test cells use
    "checks rebound": ("checks = None", [(1, REBINDS_TEST_NAME)]),
    "a test input rebound": ("Q = torch.zeros(2, 4)", [(1, REBINDS_TEST_NAME)]),
    "another module as torch": ("import numpy as torch", [(1, REBINDS_TEST_NAME)]),
    "a test name deleted": ("del K", [(1, REBINDS_TEST_NAME)]),
    "a test name declared global": (
        "def scores(q, k):\n    global K\n    K = k\n    return q @ k.T",
        [(3, REBINDS_TEST_NAME)]),
    "a walrus in a comprehension": ("[(K := k) for k in range(2)]", [(1, REBINDS_TEST_NAME)]),
    "a class named like a test name": ("class checks:\n    pass", [(1, REBINDS_TEST_NAME)]),
    "star import": ("from course_utils.checks import *", [(1, REBINDS_TEST_NAME)]),
    # runs code from a string
    "exec": ("exec('checks.check_close = print')", [(1, RUNS_STRING_CODE)]),
    "eval kept for later": ("run = eval\nrun('1')", [(1, RUNS_STRING_CODE)]),
    "compile": ("code = compile('x = 1', 'cell', 'exec')", [(1, RUNS_STRING_CODE)]),
    "__import__": ("__import__('sys')", [(1, RUNS_STRING_CODE)]),
    "exec from builtins": (
        "import builtins\nbuiltins.exec('1')",
        [(1, REACHES_IPYTHON), (2, REACHES_IPYTHON), (2, RUNS_STRING_CODE)]),
    # loads code by hand
    "import_module of any module": (
        "import importlib\n\nmath = importlib.import_module('math')",
        [(1, LOADS_CODE), (3, LOADS_CODE)]),
    "import_module imported under another name": (
        "from importlib import import_module as load\nload('course_utils.checks')",
        [(1, LOADS_CODE), (2, LOADS_CODE)]),
    "runpy, pickle, marshal": (
        "import runpy\nimport pickle as p\np.loads(b'')\nimport marshal\nmarshal.loads(b'')\n"
        "runpy.run_path('x.py')",
        [(1, LOADS_CODE), (3, LOADS_CODE), (5, LOADS_CODE), (6, LOADS_CODE)]),
    "an interpreter of its own": (
        "import code\ncode.InteractiveInterpreter().runsource('1')",
        [(1, LOADS_CODE), (2, LOADS_CODE)]),
    "a module made by hand": (
        "import types\nfake = types.ModuleType('course_utils.checks')", [(2, LOADS_CODE)]),
    # reads frames or code objects
    "the caller's frame": (
        "import sys\n\ndef scores(q, k):\n    sys._getframe(1).f_globals['K'] = None\n"
        "    return q @ k.T",
        [(4, READS_FRAMES), (4, PRIVATE_PARTS)]),
    "_getframe imported under another name": (
        "from sys import _getframe as frame\ncaller = frame(1).f_back",
        [(1, READS_FRAMES), (1, PRIVATE_PARTS), (2, READS_FRAMES)]),
    "inspect": (
        "import inspect as ins\nins.currentframe().f_back.f_locals",
        [(1, READS_FRAMES), (2, READS_FRAMES)]),
    "a traceback's frames": (
        "try:\n    checks.check_close(1, 2, 'x')\nexcept AssertionError as error:\n"
        "    error.__traceback__.tb_next.tb_frame.f_locals.clear()",
        [(4, READS_FRAMES)]),
    "the traceback module and exc_info": (
        "import traceback\nimport sys\ntraceback.extract_stack()\nsys.exc_info()",
        [(1, READS_FRAMES), (3, READS_FRAMES), (4, READS_FRAMES)]),
    "a function's code replaced": (
        "scores.__code__ = scores.__code__.replace(co_consts=(1,))", [(1, READS_FRAMES)]),
    "a function's globals by getattr": (
        "getattr(checks.check_close, '__globals__')['np'] = None", [(1, READS_FRAMES)]),
    "a function's globals by a match pattern": (
        "match checks.check_close:\n    case object(__globals__=namespace):\n"
        "        namespace['np'] = None",
        [(2, READS_FRAMES)]),
    "every subclass of object": ("().__class__.__mro__[1].__subclasses__()", [(1, READS_FRAMES)]),
    "the notebook's namespace as a dict": ("globals()['K'] = None", [(1, READS_FRAMES)]),
    "a function made from code": (
        "import types\nf = types.FunctionType(scores.__code__, {})", [(2, READS_FRAMES)]),
    # uses gc or ctypes
    "gc": ("import gc\ngc.get_objects()", [(1, USES_GC_CTYPES), (2, USES_GC_CTYPES)]),
    "gc under another name": (
        "import gc as g\n\ndef scores(q, k):\n    g.get_referrers(q)\n    return q @ k.T",
        [(1, USES_GC_CTYPES), (4, USES_GC_CTYPES)]),
    "ctypes": (
        "from ctypes import pythonapi as api\napi.PyObject_SetAttr",
        [(1, USES_GC_CTYPES), (2, USES_GC_CTYPES)]),
    "gc by import_module": (
        "importlib.import_module('gc').collect()", [(1, LOADS_CODE), (1, USES_GC_CTYPES)]),
    "gc by __import__": (
        "__import__('gc').collect()", [(1, RUNS_STRING_CODE), (1, USES_GC_CTYPES)]),
    # starts something that runs later
    "a thread": (
        "import threading\nthreading.Thread(target=print).start()",
        [(1, RUNS_LATER), (2, RUNS_LATER)]),
    "a timer under another name": (
        "from threading import Timer as T\nT(1.0, print).start()",
        [(1, RUNS_LATER), (2, RUNS_LATER)]),
    "signal, atexit, subprocess": (
        "import signal\nimport atexit\nimport subprocess\nsignal.signal(signal.SIGALRM, print)\n"
        "atexit.register(print)\nsubprocess.Popen(['sleep', '1'])",
        [(1, RUNS_LATER), (2, RUNS_LATER), (3, RUNS_LATER), (4, RUNS_LATER), (5, RUNS_LATER),
         (6, RUNS_LATER)]),
    "os.fork and os.system": (
        "import os\nos.fork()\nos.system('true')\nos.register_at_fork(after_in_child=print)",
        [(2, RUNS_LATER), (3, RUNS_LATER), (4, RUNS_LATER)]),
    "finalisers": (
        "import weakref\nweakref.finalize(checks, print)\nweakref.ref(checks, print)",
        [(2, RUNS_LATER), (3, RUNS_LATER)]),
    "a class with __del__": (
        "class Later:\n    def __del__(self):\n        print('after the tests')",
        [(2, RUNS_LATER)]),
    "asyncio and concurrent": (
        "import asyncio\nfrom concurrent.futures import ThreadPoolExecutor",
        [(1, RUNS_LATER), (2, RUNS_LATER)]),
    # changes how torch/numpy dispatch
    "a torch function mode": (
        "from torch.overrides import TorchFunctionMode\n\nclass Mode(TorchFunctionMode):\n"
        "    def __torch_function__(self, func, types, args=(), kwargs=None):\n"
        "        return func(*args, **(kwargs or {}))",
        [(1, CHANGES_DISPATCH), (3, CHANGES_DISPATCH), (4, CHANGES_DISPATCH)]),
    "a dispatch mode": (
        "from torch.utils._python_dispatch import TorchDispatchMode as M",
        [(1, CHANGES_DISPATCH), (1, PRIVATE_PARTS)]),
    "torch._C": ("torch._C._set_grad_enabled(True)", [(1, CHANGES_DISPATCH), (1, PRIVATE_PARTS)]),
    "torch.library and torch.ops": (
        "lib = torch.library.Library('aten', 'IMPL')\ntorch.ops.aten.add",
        [(1, CHANGES_DISPATCH), (2, CHANGES_DISPATCH)]),
    "numpy's core": ("np.core.umath.add", [(1, CHANGES_DISPATCH)]),
    "array protocols": (
        "class Always:\n    __array_priority__ = 1000\n\n"
        "    def __array_ufunc__(self, *args, **kwargs):\n        return True",
        [(2, CHANGES_DISPATCH), (4, CHANGES_DISPATCH)]),
    "a global module hook": (
        "from torch.nn.modules.module import register_module_forward_hook\n"
        "register_module_forward_hook(print)",
        [(1, CHANGES_DISPATCH), (2, CHANGES_DISPATCH)]),
    # defines an object that answers comparisons itself
    "__eq__ and __bool__": (
        "class Liar:\n    def __eq__(self, other):\n        return True\n\n"
        "    def __bool__(self):\n        return True",
        [(2, ANSWERS_COMPARISONS), (5, ANSWERS_COMPARISONS)]),
    "a builtin's subclass": ("class Close(float):\n    pass", [(1, ANSWERS_COMPARISONS)]),
    "a Tensor's subclass": (
        "class T(torch.Tensor):\n    pass\nimport numpy\nclass A(numpy.ndarray):\n    pass",
        [(1, ANSWERS_COMPARISONS), (4, ANSWERS_COMPARISONS)]),
    "a class made by type": (
        "Liar = type('Liar', (), {'__eq__': lambda self, other: True})\n"
        "Close = type('Close', (float,), {})",
        [(1, ANSWERS_COMPARISONS), (2, ANSWERS_COMPARISONS)]),
    "__class__ assigned": (
        "q = torch.ones(1)\nq.__class__ = Liar\nsetattr(q, '__class__', Liar)",
        [(2, ANSWERS_COMPARISONS), (3, ANSWERS_COMPARISONS)]),
    "a metaclass's isinstance": (
        "class Meta(type):\n    def __instancecheck__(cls, obj):\n        return True",
        [(1, ANSWERS_COMPARISONS), (2, ANSWERS_COMPARISONS)]),
    "__getattr__ and __len__ set on a class": (
        "Liar.__getattr__ = lambda self, name: 0\nsetattr(Liar, '__len__', lambda self: 3)",
        [(1, ANSWERS_COMPARISONS), (2, ANSWERS_COMPARISONS)]),
    # reaches into a library's private parts
    "a private attribute of a notebook object": (
        "def encode(text):\n    return reference._core_bpe.encode(text, set())",
        [(2, PRIVATE_PARTS)]),
    "a private attribute of a library object the cell made": (
        "import tiktoken\nenc = tiktoken.get_encoding('cl100k_base')\nenc._core_bpe",
        [(3, PRIVATE_PARTS)]),
    "a private module": (
        "from tiktoken import _tiktoken\nimport torch._C as C\nnp._core",
        [(1, PRIVATE_PARTS), (2, CHANGES_DISPATCH), (2, PRIVATE_PARTS), (3, CHANGES_DISPATCH),
         (3, PRIVATE_PARTS)]),
    "a private attribute by getattr": (
        "getattr(reference, '_core_bpe')", [(1, PRIVATE_PARTS)]),
    # hides what it uses: a name computed where a name is expected
    "getattr of a name in a variable": (
        "name = 'check' + '_close'\nreal = getattr(checks, name)", [(2, HIDES_NAMES)]),
    "getattr of an f-string, a join, a reversed string": (
        "part = 'close'\ngetattr(checks, f'check_{part}')\n"
        "getattr(checks, ''.join(['check', '_close']))\ngetattr(checks, 'esolc_kcehc'[::-1])",
        [(2, HIDES_NAMES), (3, HIDES_NAMES), (4, HIDES_NAMES)]),
    "getattr of a decoded string": (
        "getattr(checks, bytes([99, 104]).decode())\ngetattr(np, chr(97) + 'llclose')",
        [(1, HIDES_NAMES), (2, HIDES_NAMES)]),
    "setattr, delattr and hasattr of a computed name": (
        "setattr(np, 'all' + 'close', print)\ndelattr(checks, name)\nhasattr(torch, name)",
        [(1, PATCHES_TEST_HELPER), (1, HIDES_NAMES), (2, PATCHES_COURSE_UTILS), (2, HIDES_NAMES),
         (3, HIDES_NAMES)]),
    "getattr from builtins, and by its arguments unpacked": (
        "import builtins\nbuiltins.getattr(checks, name)\ngetattr(*pair)",
        [(1, REACHES_IPYTHON), (2, REACHES_IPYTHON), (2, HIDES_NAMES), (3, HIDES_NAMES)]),
    "getattr handed on instead of called": (
        "look = getattr\nlook(checks, 'check_close')\nimport functools\n"
        "functools.reduce(getattr, ['check_close', '__globals__'], checks)",
        [(1, HIDES_NAMES), (4, READS_FRAMES), (4, HIDES_NAMES)]),
    "attrgetter and methodcaller of computed names": (
        "from operator import attrgetter, methodcaller\nattrgetter(name)(checks)\n"
        "methodcaller(name)(checks)\nattrgetter('check_close', name)",
        [(2, HIDES_NAMES), (3, HIDES_NAMES), (4, HIDES_NAMES)]),
    "attrgetter of written names, followed": (
        "import operator\noperator.attrgetter('check_close.__globals__')(checks)\n"
        "operator.attrgetter('_core_bpe')(reference)",
        [(2, READS_FRAMES), (3, PRIVATE_PARTS)]),
    "the attribute methods with a computed name": (
        "object.__setattr__(checks, name, print)\ntype.__delattr__(checks, name)",
        [(1, HIDES_NAMES), (2, HIDES_NAMES)]),
    "a namespace read or written by a computed key": (
        "vars(checks)[name] = print\nchecks.__dict__.get(name)\nglobals()[name]\n"
        "sys.modules[name]\nmodules = sys.modules\nmodules[name]",
        [(1, PATCHES_COURSE_UTILS), (1, READS_FRAMES), (1, HIDES_NAMES), (2, READS_FRAMES),
         (2, HIDES_NAMES), (3, READS_FRAMES), (3, HIDES_NAMES), (4, TOUCHES_INTERPRETER),
         (4, HIDES_NAMES), (5, TOUCHES_INTERPRETER), (6, TOUCHES_INTERPRETER), (6, HIDES_NAMES)]),
    "a namespace read through operator": (
        "import operator\noperator.getitem(vars(checks), name)\n"
        "operator.itemgetter(name)(sys.modules)",
        [(2, READS_FRAMES), (2, HIDES_NAMES), (3, TOUCHES_INTERPRETER), (3, HIDES_NAMES)]),
    "a module imported by a computed name": (
        "__import__(name)\nimportlib.import_module(name)\nimport pydoc\npydoc.locate(name)",
        [(1, RUNS_STRING_CODE), (1, HIDES_NAMES), (2, LOADS_CODE), (2, HIDES_NAMES),
         (3, LOADS_CODE), (4, LOADS_CODE), (4, HIDES_NAMES)]),
    "a module by a written name, followed": (
        "import pydoc\npydoc.locate('gc').collect()\nimport pkgutil\n"
        "pkgutil.resolve_name('gc:collect')()\nsys.modules['gc'].get_objects()",
        [(1, LOADS_CODE), (2, LOADS_CODE), (2, USES_GC_CTYPES), (3, LOADS_CODE), (4, LOADS_CODE),
         (4, USES_GC_CTYPES), (5, TOUCHES_INTERPRETER), (5, USES_GC_CTYPES)]),
    "mock.patch of a computed target": (
        "from unittest import mock\nmock.patch(target, return_value=True).start()\n"
        "mock.patch.object(np, name, print).start()",
        [(2, HIDES_NAMES), (3, PATCHES_TEST_HELPER), (3, HIDES_NAMES)]),
    "a class whose names are computed": (
        "Liar = type('Liar', (), {name: lambda self, other: True})\n"
        "Box = type('Box', (), dict(zip(names, methods)))",
        [(1, HIDES_NAMES), (2, HIDES_NAMES)]),
    "keyword names computed": (
        "from unittest import mock\nmock.patch.multiple(np, **{name: print})\n"
        "mock.patch.multiple(np, **{k: v for k, v in pairs})",
        [(2, PATCHES_TEST_HELPER), (2, HIDES_NAMES), (3, PATCHES_TEST_HELPER),
         (3, HIDES_NAMES)]),
    # hides what it uses: a module reached through another module
    "a module through another module": (
        "torch.sys.modules['x'] = None\nnp.os.environ\nfrom torch import sys\n"
        "torch.os.system('true')\nnp.builtins.print = None\ngetattr(torch, 'sys').modules",
        [(1, TOUCHES_INTERPRETER), (1, HIDES_NAMES), (2, HIDES_NAMES), (3, HIDES_NAMES),
         (4, RUNS_LATER), (4, HIDES_NAMES), (5, PATCHES_BUILTINS), (5, REACHES_IPYTHON),
         (5, HIDES_NAMES), (6, TOUCHES_INTERPRETER), (6, HIDES_NAMES)]),
    "a module's loader": ("import math\nmath.__loader__.load_module('gc')", [(2, LOADS_CODE)]),
    # hides what it uses: a string decoded at run time
    "decoders": (
        "import codecs\ncodecs.decode('tp', 'rot13')\nimport base64\n"
        "base64.b64decode(b'Z2M=')\nimport binascii, zlib\nbytes.fromhex('6763').decode()",
        [(1, HIDES_NAMES), (2, HIDES_NAMES), (3, HIDES_NAMES), (4, HIDES_NAMES), (5, HIDES_NAMES),
         (6, HIDES_NAMES)]),
    # runs code from a string, in every spelling
    "exec and eval from the builtins' namespace": (
        "__builtins__['exec']('1')\nvars(builtins)['eval']('1')\n"
        "sys.modules['builtins'].exec('1')\nbuiltins.__dict__.get('compile')",
        [(1, REACHES_IPYTHON), (1, RUNS_STRING_CODE), (2, REACHES_IPYTHON), (2, RUNS_STRING_CODE),
         (2, READS_FRAMES), (3, TOUCHES_INTERPRETER), (3, REACHES_IPYTHON),
         (3, RUNS_STRING_CODE), (4, REACHES_IPYTHON), (4, RUNS_STRING_CODE), (4, READS_FRAMES)]),
    "eval imported under another name": (
        "from builtins import eval as run\nrun('1')",
        [(1, REACHES_IPYTHON), (1, RUNS_STRING_CODE), (2, REACHES_IPYTHON),
         (2, RUNS_STRING_CODE)]),
    "timeit, a profiler, pdb and doctest given code": (
        "import timeit\ntimeit.timeit('checks.check_close = print', number=1)\n"
        "statement = 'pass'\ntimeit.Timer(statement).timeit(1)\nimport cProfile\n"
        "cProfile.run('1')\nimport pdb\nimport doctest",
        [(2, RUNS_STRING_CODE), (4, RUNS_STRING_CODE), (6, RUNS_STRING_CODE), (7, RUNS_STRING_CODE),
         (8, RUNS_STRING_CODE)]),
    # several families on one line, each once
    "two families": ("sys.modules['x'] = exec", [(1, TOUCHES_INTERPRETER), (1, RUNS_STRING_CODE)]),
}

NEAR_MISSES = {
    "reads checks": (
        "def scores(q, k):\n    checks.check_shape(q @ k.T, (2, 3))\n    return q @ k.T"),
    "calls the library": (
        "from course_utils.models.attention import attention_weights\n\n"
        "def scores(q, k):\n    return attention_weights(q, k)"),
    "reads np.allclose and torch.allclose": (
        "def scores(q, k):\n    result = q @ k.T\n"
        "    assert torch.allclose(result, result) and np.allclose(1.0, 1.0)\n    return result"),
    "a torch setting": "torch.backends.cudnn.deterministic = True",
    "a local sum": (
        "def scores(q, k):\n    sum = 0\n    for row in q:\n        sum = sum + row\n"
        "    return q @ k.T"),
    "builtins called": "def scores(q, k):\n    return round(abs(float(q.sum())), 2) * q @ k.T",
    "a builtin's name as a class attribute": "class Settings:\n    max = 3",
    "sys.path and sys.version": "import sys\n\nsys.path.append('.')\nprint(sys.version)",
    "IPython's display": (
        "from IPython.display import display\n\n"
        "def scores(q, k):\n    display(q)\n    return q @ k.T"),
    "test names as locals": "def scores(q, k):\n    Q, K = q, k\n    return Q @ K.T",
    "a test name as a parameter": (
        "def scores(q, k):\n    return q @ k.T\n\n\ndef helper(Q):\n    return Q"),
    "the notebook's own imports": (
        "import torch\nimport numpy as np\nfrom course_utils import checks"),
    "compile and eval as methods": (
        "import re\n\ndef scores(q, k):\n    re.compile('x')\n    torch.nn.Linear(2, 2).eval()\n"
        "    return q @ k.T"),
    "the official answer's own name": "def scores(q, k):\n    return q @ k.T",
    "not Python: the kernel runs none of it": "def scores(q, k)\n    checks.check_close = print",
    "an attribute of an object of its own": (
        "class Box:\n    pass\n\nbox = Box()\nbox.allclose = 1\nbox.modules = {}"),
    "everyday imports": (
        "import numpy as np\nimport math\nimport re\nimport regex\nimport itertools\n"
        "import heapq\nimport time\nfrom functools import reduce, lru_cache\n"
        "from collections import Counter, defaultdict, namedtuple\n"
        "from dataclasses import dataclass, field\nimport torch.nn.functional as F\n"
        "from torch import nn\nfrom typing import NamedTuple\nfrom __future__ import annotations"),
    "tensor attributes and methods": (
        "def scores(q, k):\n    x = q @ k.T\n    n = x.shape[0] + len(x) + x.T.size(0)\n"
        "    return F.softmax(x, dim=-1) * math.sqrt(n)"),
    "a dataclass that orders itself": (
        "@dataclass(order=True)\nclass Pair:\n    count: int\n"
        "    pair: tuple = field(compare=False)"),
    "a helper class with private members of its own": (
        "class Vocab:\n    def __init__(self, words):\n"
        "        self._index = {w: i for i, w in enumerate(words)}\n\n"
        "    def _lookup(self, word):\n        return self._index[word]\n\n"
        "    @classmethod\n    def _empty(cls):\n        return cls._make_empty()\n\n"
        "vocab = Vocab(['a'])\nvocab._lookup('a')"),
    "an nn.Module": (
        "class Block(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n"
        "        self.proj = nn.Linear(d, d)\n\n    def forward(self, x):\n"
        "        return self.proj(x)"),
    "a Dataset with __getitem__, __iter__ and __repr__": (
        "class Pairs(torch.utils.data.Dataset):\n    def __getitem__(self, i):\n"
        "        return i\n\n"
        "    def __iter__(self):\n        return iter([])\n\n    def __repr__(self):\n"
        "        return 'Pairs'"),
    "an exception and a NamedTuple of its own": (
        "class ShapeError(ValueError):\n    pass\n\nclass P(NamedTuple):\n    x: int"),
    "a namedtuple's underscored API": (
        "Point = namedtuple('Point', 'x y')\np = Point(1, 2)._replace(x=3)\np._asdict()"),
    "variables named like modules": (
        "code = 'abc'\nsignal = torch.sin(torch.arange(3.0))\ninspect = 3\ntraceback = None"),
    "os and sys for ordinary things": (
        "import os\nimport sys\nos.environ.get('X')\nos.path.join('a', 'b')\n"
        "sys.getsizeof(1)"),
    "torch.compile, no_grad, vmap": (
        "fast = torch.compile(lambda x: x)\nwith torch.no_grad():\n    pass\n"
        "torch.func.vmap(lambda x: x)"),
    "names of types and functions": (
        "def f(x):\n    return type(x).__name__, x.__class__.__name__, f.__name__"),
    "IPython's display helpers": (
        "from IPython.display import HTML, display\nimport IPython.display\n"
        "display(HTML('<b>x</b>'))\nIPython.display.display(1)"),
    "a progress bar and a context manager": (
        "from tqdm.auto import tqdm\nimport contextlib\n"
        "with contextlib.suppress(ValueError):\n    for _ in tqdm(range(3)):\n        pass"),
    "private names of its own": (
        "_helper = 3\n\ndef _private_helper(x):\n    return x\n\n_private_helper(_helper)"),
    "a private helper of the course's library (a twin: its own check)": (
        "from course_utils.tokens.byte_merges import _byte_pair_merge"),
    "getattr, setattr and hasattr of written names": (
        "class Block(nn.Module):\n    def forward(self, x):\n"
        "        setattr(self, 'last', x)\n        if hasattr(self, 'bias'):\n"
        "            x = x + self.bias\n        return getattr(self, 'weight') * x"),
    "strings built and decoded as data": (
        "def decode(tokens, pieces, text):\n    joined = ''.join(pieces)\n"
        "    backwards = text[::-1]\n    raw = joined.encode('utf-8')\n"
        "    return bytes(tokens).decode('utf-8', errors='replace'), backwards, raw"),
    "chr, translate and a tokenizer's decode": (
        "table = {b: chr(b) for b in range(256)}\nword = ''.join(map(chr, [104, 105]))\n"
        "clean = 'a-b'.translate(str.maketrans('-', ' '))\nids = enc.encode('hello')\n"
        "enc.decode(ids)"),
    "dictionaries of its own": (
        "counts = {}\ncounts.get(key)\ncounts[key] = 1\nmerged = {**counts, 'a': 1}\n"
        "def call(f, **kwargs):\n    return f(**kwargs)"),
    "operator for sorting": (
        "from operator import itemgetter, attrgetter\n"
        "pairs = sorted(pairs, key=itemgetter(1))\nsorted(words, key=attrgetter('count'))"),
    "type of a value, and a class made with written names": (
        "kind = type(x)\nPoint = type('Point', (), {'x': 1})"),
    "timeit of a function": (
        "import timeit\n\ndef step():\n    pass\n\n"
        "timeit.timeit(lambda: step(), number=3)\ntimeit.timeit(step, number=3)"),
    "modules of the same names as their own": (
        "import os\nfrom os import path\nos.path.join('a', 'b')\ntorch.trace(torch.eye(2))\n"
        "np.trace(np.eye(2))"),
}


@pytest.mark.parametrize("code, expected", TAMPERING.values(), ids=TAMPERING.keys())
def test_tampering_is_flagged_on_its_line(code, expected, context):
    assert findings(code, context) == expected


@pytest.mark.parametrize("code", NEAR_MISSES.values(), ids=NEAR_MISSES.keys())
def test_near_misses_are_not_flagged(code, context):
    assert findings(code, context) == []


def test_every_family_is_flagged_by_some_case_and_documented():
    flagged = {family for _, expected in TAMPERING.values() for _, family in expected}
    assert flagged == set(FAMILIES)
    table = " ".join(grader.integrity.tamper.__doc__.split())  # the docstring's table, one line
    assert all(family in table for family in FAMILIES), [f for f in FAMILIES if f not in table]


# --- the flags as the autograder gets them -----------------------------------------------

def test_scan_notebook_names_the_cell_line_and_code():
    source = source_notebook()
    submitted = copy.deepcopy(source)
    submitted.cells[3].source = (
        "def scores(q, k):\n"
        "    checks.check_close = lambda *args, **kwargs: None\n"
        "    return q @ k.T\n"
    )
    line = "checks.check_close = lambda *args, **kwargs: None"  # indented in the cell
    flag = Flag("scores", 2, PATCHES_COURSE_UTILS, line)
    assert scan_notebook(submitted, source) == [flag]
    assert str(flag) == f"cell scores line 2: patches course_utils: {line}"


def test_only_answer_code_cells_are_scanned():
    source = source_notebook()
    submitted = copy.deepcopy(source)
    submitted.cells[2].source = "checks = None"  # a code cell without nbgrader metadata
    written = new_markdown_cell("checks = None", metadata={"nbgrader": {
        "grade_id": "why", "solution": True, "grade": True, "points": 1, "locked": False,
        "schema_version": 3}})  # a written answer, graded by hand
    submitted.cells.append(written)
    assert scan_notebook(submitted, source) == []


def test_bad_input_is_refused(context):
    with pytest.raises(TypeError, match="expected a notebook"):
        scan_notebook({"not": "a notebook"}, source_notebook())
    with pytest.raises(TypeError, match="expected the cell's source as str"):
        scan_cell(["checks = None"], "scores", context)


def test_a_source_notebook_whose_test_is_not_python_is_refused():
    source = source_notebook()
    source.cells[4].source = "checks.check_close(("
    with pytest.raises(ValueError, match="test_scores"):
        read_scan_context(source)


def test_a_very_long_expression_is_scanned_not_crashed_on(context):
    chain = "checks" + ".inner" * 1200 + " = 1"  # deeper than Python's recursion limit
    assert findings(chain, context) == [(1, PATCHES_COURSE_UTILS)]


@pytest.mark.parametrize("code, family", [
    ("source = In[-1]", REACHES_IPYTHON),
    ("x = _ih[-2]", REACHES_IPYTHON),
    ("import linecache\nx = linecache.cache", READS_FRAMES),
])
def test_reading_the_cells_source_is_flagged(code, family, context):
    assert family in {found for _, found in findings(code, context)}

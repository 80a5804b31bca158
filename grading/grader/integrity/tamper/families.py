"""The names of the tamper families, and what each one covers."""

import builtins

PATCHES_COURSE_UTILS = "patches course_utils"
PATCHES_TEST_HELPER = "patches a numpy/torch test helper"
PATCHES_BUILTINS = "patches builtins"
TOUCHES_INTERPRETER = "touches sys.modules or a hook"
REACHES_IPYTHON = "reaches the IPython kernel"
REBINDS_TEST_NAME = "rebinds a name the test cells use"
RUNS_STRING_CODE = "runs code from a string"
LOADS_CODE = "loads code by hand"
READS_FRAMES = "reads frames or code objects"
USES_GC_CTYPES = "uses gc or ctypes"
RUNS_LATER = "starts something that runs later (thread, process, signal, atexit, finaliser)"
CHANGES_DISPATCH = "changes how torch/numpy dispatch"
ANSWERS_COMPARISONS = "defines an object that answers comparisons itself"
PRIVATE_PARTS = "reaches into a library's private parts"
HIDES_NAMES = "hides what it uses (a name computed or decoded at run time)"

FAMILIES = (
    PATCHES_COURSE_UTILS,
    PATCHES_TEST_HELPER,
    PATCHES_BUILTINS,
    TOUCHES_INTERPRETER,
    REACHES_IPYTHON,
    REBINDS_TEST_NAME,
    RUNS_STRING_CODE,
    LOADS_CODE,
    READS_FRAMES,
    USES_GC_CTYPES,
    RUNS_LATER,
    CHANGES_DISPATCH,
    ANSWERS_COMPARISONS,
    PRIVATE_PARTS,
    HIDES_NAMES,
)

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
    "sys.addaudithook",
    "sys.unraisablehook",
    "sys.breakpointhook",
    "sys.monitoring",
    "sys.path_importer_cache",
)

STRING_RUNNERS = frozenset({"exec", "eval", "compile", "__import__"})

# Builtins that take an attribute's name as their second argument.
ATTRIBUTE_FUNCTIONS = frozenset({"getattr", "setattr", "delattr", "hasattr"})

# Python's own builtins; not the helpers `site` adds for the prompt (`exit`, `help`...) or
# IPython's (`display`; `get_ipython` has its own family), nor the module's own dunders.
BUILTIN_NAMES = frozenset(
    name for name in dir(builtins)
    if not name.startswith("_")
    and name not in {"copyright", "credits", "exit", "help", "license", "quit", "display",
                     "get_ipython"}
) | {"__builtins__", "__import__", "__build_class__"}

# Modules that libraries import for themselves and so hold as attributes (``torch.sys``,
# ``np.os``, ``math.__builtins__``): reached that way they hide their import, and a path is
# read from them on (``torch.sys.modules`` is ``sys.modules``). Not ``signal`` nor
# ``types``: torch has modules of its own by those names.
CARRIED_MODULES = {name: name for name in (
    "sys", "os", "builtins", "importlib", "gc", "ctypes", "inspect", "subprocess",
    "threading", "_thread", "pickle", "marshal", "codecs", "base64", "pydoc", "runpy",
    "pkgutil", "operator", "atexit", "weakref", "traceback", "dis")} | {"__builtins__": "builtins"}

# Methods that change a namespace dictionary (``vars(m).update(...)``).
DICT_MUTATORS = frozenset({"update", "setdefault", "pop", "popitem", "clear", "__setitem__",
                           "__delitem__"})

MOCK_PATCH = "unittest.mock.patch"

# Any use of a module or attribute under one of these (a name or attribute that stands for
# it however it was imported or aliased, an import of it, getattr or import_module of it)
# is flagged with the family.
USED = {
    TOUCHES_INTERPRETER: INTERPRETER_HOOKS,
    # IPython puts get_ipython among the builtins: builtins are a way to the shell too
    REACHES_IPYTHON: ("IPython", "ipykernel", "jupyter_client", "zmq", "traitlets", "comm",
                      "builtins"),
    # pdb, doctest and the profilers run the code they are given as a string
    RUNS_STRING_CODE: (*(f"builtins.{runner}" for runner in sorted(STRING_RUNNERS)),
                       "pdb", "bdb", "doctest", "trace", "cProfile.run", "cProfile.runctx",
                       "profile.run", "profile.runctx"),
    LOADS_CODE: ("importlib", "runpy", "imp", "zipimport", "pkgutil", "code", "codeop", "pydoc",
                 "pickle.load", "pickle.loads", "pickle.Unpickler", "_pickle", "marshal.load",
                 "marshal.loads", "dill.load", "dill.loads", "cloudpickle.load",
                 "cloudpickle.loads", "types.ModuleType"),
    READS_FRAMES: ("sys._getframe", "sys._getframemodulename", "sys._current_frames",
                   "sys._current_exceptions", "sys.exc_info", "sys.exception", "sys.last_exc",
                   "sys.last_traceback", "sys.last_type", "sys.last_value", "inspect",
                   "traceback", "dis", "types.FunctionType", "types.LambdaType",
                   "types.CodeType", "types.MethodType", "types.FrameType",
                   "types.TracebackType", "types.CellType", "linecache"),
    USES_GC_CTYPES: ("gc", "ctypes", "_ctypes", "cffi"),
    RUNS_LATER: ("threading", "_thread", "concurrent", "multiprocessing",
                 "torch.multiprocessing", "asyncio", "sched", "signal", "atexit", "subprocess",
                 "_posixsubprocess", "pty", "weakref.finalize",
                 *(f"os.{name}" for name in (
                     "fork", "forkpty", "system", "popen", "kill", "killpg", "register_at_fork",
                     "posix_spawn", "posix_spawnp", "spawnl", "spawnle", "spawnlp", "spawnlpe",
                     "spawnv", "spawnve", "spawnvp", "spawnvpe"))),
    CHANGES_DISPATCH: ("torch.overrides", "torch.utils._python_dispatch", "torch._C",
                       "torch.library", "torch.ops", "torch._ops", "torch._dynamo",
                       "torch._subclasses", "torch._decomp", "torch._prims", "torch._refs",
                       "torch._higher_order_ops", "torch._functorch", "numpy.core",
                       "numpy._core", "numpy.lib.mixins",
                       *(f"torch.nn.modules.module.register_module_{hook}" for hook in (
                           "forward_hook", "forward_pre_hook", "backward_hook",
                           "full_backward_hook", "full_backward_pre_hook",
                           "buffer_registration_hook", "module_registration_hook",
                           "parameter_registration_hook"))),
    # modules whose only use in an answer is to turn a string nobody can read into a name
    HIDES_NAMES: ("codecs", "_codecs", "base64", "binascii", "zlib", "bz2", "lzma",
                  "gzip.decompress", "quopri", "uu"),
}

# ...except these: IPython's display helpers only show things (``display`` is a builtin of
# the notebook anyway).
NOT_USED = {REACHES_IPYTHON: ("IPython.display",)}

# Names flagged with the family wherever the cell spells them: as a name, an attribute, an
# imported name, a function or class it defines, a keyword argument or a string
# (``getattr(f, "__code__")``, ``type("X", (), {"__eq__": ...})``).
SPELLED = {
    # with IPython's history of the cells (In, Out, _ih, _oh...), which holds their source
    REACHES_IPYTHON: frozenset({"get_ipython", "InteractiveShell", "__builtins__", "In", "Out",
                                "_ih", "_oh", "_ii", "_iii", "_dh"}),
    LOADS_CODE: frozenset({"__loader__", "__spec__"}),
    READS_FRAMES: frozenset({
        "f_back", "f_builtins", "f_code", "f_globals", "f_lasti", "f_locals", "f_trace",
        "tb_frame", "tb_next", "gi_code", "gi_frame", "cr_code", "cr_frame", "ag_code",
        "ag_frame", "cell_contents", "__traceback__", "__code__", "__closure__", "__globals__",
        "__defaults__", "__kwdefaults__", "__wrapped__", "__self__", "__func__",
        "__subclasses__", "__mro__", "__bases__", "__base__", "__dict__",
        "co_argcount", "co_cellvars", "co_code", "co_consts", "co_exceptiontable",
        "co_filename", "co_firstlineno", "co_flags", "co_freevars", "co_kwonlyargcount",
        "co_linetable", "co_lines", "co_lnotab", "co_name", "co_names", "co_nlocals",
        "co_positions", "co_posonlyargcount", "co_qualname", "co_stacksize", "co_varnames",
    }),
    RUNS_LATER: frozenset({"__del__"}),
    HIDES_NAMES: frozenset({"fromhex"}),  # bytes.fromhex("6763").decode() is "gc"
    CHANGES_DISPATCH: frozenset({
        "__torch_function__", "__torch_dispatch__", "__array_ufunc__", "__array_function__",
        "__array__", "__array_priority__", "__array_wrap__", "__array_finalize__",
        "__array_prepare__", "__array_interface__", "__array_struct__",
        "__array_namespace__", "__cuda_array_interface__", "TorchFunctionMode",
        "TorchDispatchMode",
    }),
    ANSWERS_COMPARISONS: frozenset({
        "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__", "__len__",
        "__contains__", "__hash__", "__float__", "__int__", "__index__", "__complex__",
        "__round__", "__trunc__", "__floor__", "__ceil__", "__abs__", "__instancecheck__",
        "__subclasscheck__", "__getattr__", "__getattribute__",
    }),
}

# The namespaces as dictionaries: reading the frame's globals or locals.
NAMESPACE_READERS = frozenset({"globals", "locals", "vars"})

# weakref objects that call a function when their object is collected (given one).
WEAKREF_CALLBACKS = frozenset({"weakref.ref", "weakref.proxy", "weakref.WeakMethod"})

# A class built on one of these answers ``==``, ``len()``, ``float()``... as its base does
# unless it says otherwise, and an answer cell has no need to: the builtin value types (as
# bare names or under ``builtins``) and these paths.
VALUE_TYPES = frozenset({"bool", "bytearray", "bytes", "complex", "dict", "float",
                         "frozenset", "int", "list", "memoryview", "range", "set", "slice",
                         "str", "tuple", "type"})
ARRAY_TYPES = frozenset({
    "torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer",
    "torch.nn.parameter.Buffer", "numpy.ndarray", "numpy.matrix", "numpy.recarray",
    "numpy.memmap", "numpy.ma.MaskedArray", "numpy.generic", "numpy.number",
    "numpy.integer", "numpy.floating", "numpy.complexfloating", "numpy.float16",
    "numpy.float32", "numpy.float64", "numpy.int32", "numpy.int64", "numpy.bool_",
    "collections.Counter", "collections.defaultdict", "collections.OrderedDict",
    "collections.UserDict", "collections.UserList", "collections.UserString",
})

# Names that start with an underscore but are public: the API of a namedtuple, and os._exit.
PUBLIC_UNDERSCORED = frozenset({"_asdict", "_field_defaults", "_fields", "_make", "_replace"})
PUBLIC_UNDERSCORED_PATHS = frozenset({"os._exit"})
# The course's own library is not "a library's private parts": its private helpers that
# answer an exercise are twins (checks.TWINS), refused while the tests run and named
# ("imports a twin") by the autograder; patching it is "patches course_utils".
OWN_LIBRARY = "course_utils"

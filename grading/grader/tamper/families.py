"""The names of the tamper families, and what each one covers."""

import builtins

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

"""While an answer runs, only what its exercise allows may compute: the interpreter's hooks.

A *region* is a stretch of the answer's own work: each call of the answer by a test
(``own_work``), and, while nbgrader grades, the whole answer cell (``answer_cell``). In a
region, three of the interpreter's own hooks refuse what the exercise's ``Allowance``
(``allowances.py``) does not name, where it is called, with ``NotAllowed``:

* ``sys.setprofile`` sees every Python function that starts (refused unless it is the
  notebook's own code, the guards', or from an allowed module: judged by the file its code
  was compiled from, so a function rebuilt from a library's code object is still the
  library's) and every C function the notebook's code calls (``getattr``, ``exec``,
  ``sys.*``, ``gc.*``, ``_thread.*``... are not allowed);
* ``sys.addaudithook`` (permanent, process-wide, acting in the region's thread only) sees
  what C code does on its own: frames (``tb_frame``, ``gi_frame``, ``sys._getframe``),
  code objects (``__code__``, ``types.FunctionType``), ``gc``, ``ctypes``, processes,
  ``exec``/``compile`` and imports of modules the exercise does not allow;
* ``sys.settrace`` puts the profile hook back if a refusal removed it (CPython drops a
  profile function that raises), before the notebook's next line runs.

torch functions are judged by name in ``TorchWatch`` (``refuse.py``), which sees them
however they are reached. A region that was refused stays refused: an answer that catches
``NotAllowed`` and goes on still fails (``own_work`` raises when the region ends).

Not covered: C code calling C code (``map(f, ...)`` with a C ``f``) is seen only through
what it does (torch calls, audited events); objects an answer leaves for later (a
``__del__``, a generator) run outside any region. The tamper scan flags those spellings.
"""

import contextlib
import os
import sys
import threading
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .allowances import Allowance, allowance_of
from .refuse import ALLOWLIST, RECORD, LibraryTwinError, refuse

__all__ = ["NotAllowed", "Region", "answer_region", "cell_region", "is_own", "kind_of"]

GUARDS = str(Path(__file__).parent) + os.sep
COURSE = str(Path(__file__).parents[2]) + os.sep  # course_utils/
PREFIXES = (sys.prefix, sys.base_prefix, sys.exec_prefix)
# What the guards' own work may run (torch's dispatch modes, when called by the guards).
GUARD_LIBRARIES = ("torch.utils", "torch._ops", "torch._subclasses", "torch._C", "torch._library",
                   "torch.compiler", "torch._compile", "torch._dynamo.eval_frame")
# Types whose methods open the interpreter up: code, frames, functions, modules, classes.
CLOSED_TYPES = (types.CodeType, types.FrameType, types.TracebackType, types.FunctionType,
                types.ModuleType, types.GeneratorType, types.CoroutineType)
CLOSED_METHODS = {"__subclasses__", "mro", "__getattribute__", "__setattr__", "__delattr__",
                  "__reduce__", "__reduce_ex__", "__dir__", "__init_subclass__"}
# Audited events refused in a region whoever raises them (but the guards).
ALWAYS = ("gc.", "ctypes.", "subprocess.", "os.system", "os.exec", "os.fork", "os.posix_spawn",
          "os.spawn", "os.kill", "os.putenv", "sys.addaudithook", "sys.setprofile",
          "sys.settrace", "sys._current_frames", "sys.monitoring", "function.__new__",
          "code.__new__", "cpython.", "socket.", "signal.", "pty.", "pickle.",
          "sqlite3.", "webbrowser.", "shutil.", "os.remove", "os.rename", "os.rmdir",
          "os.mkdir", "os.chdir", "os.link", "os.symlink")

OWN, GUARD = "the notebook's own code", "the guards"
# What the import system asks of a finder or a loader (importlib's protocol).
IMPORT_PROTOCOL = {"find_spec", "find_module", "create_module", "exec_module", "get_code",
                   "get_data", "get_source", "get_filename", "is_package", "invalidate_caches"}
# The import finders of packages installed in editable mode (course_utils, the grader).
EDITABLE_FINDERS = "__editable___"


def installed() -> tuple[str, ...]:
    """Where installed code lives: Python's prefixes and every site folder on ``sys.path``
    (a ``.pth`` may add one outside the prefixes)."""
    sites = [path for path in sys.path if "site-packages" in path or "dist-packages" in path]
    return (*PREFIXES, *sites)


class NotAllowed(LibraryTwinError):
    """An answer called something its exercise does not allow."""


@dataclass
class Region:
    """One stretch of an answer's work, in one thread."""

    exercise: str | None
    allowance: Allowance
    thread: int = field(default_factory=threading.get_ident)
    cell: bool = False  # an answer cell: only the frames of its own code are the region
    loading: object = None  # a module a library imports while the answer runs, being loaded
    given: frozenset = frozenset()  # the code of functions the test hands the answer
    frame: object = None  # the cell's frame while it runs
    refused: str | None = None
    verdicts: dict = field(default_factory=dict)  # {kind: allowed by module}

    @property
    def active(self) -> bool:
        return not self.cell or self.frame is not None


_region: list[Region] = []  # the region in force (at most one)
_busy = threading.local()  # set while the hooks themselves act (their own events pass)
_modules_by_file: dict[str, str] = {}
_kinds: dict[types.CodeType, str] = {}


def _module_of_file(filename: str) -> str | None:
    """The module compiled from ``filename``: its path below the folder of ``sys.path`` it
    lies in (``.../site-packages/torch/nn/functional.py`` -> ``torch.nn.functional``)."""
    if filename.startswith("<frozen "):
        return filename[len("<frozen "):-1]
    module = _modules_by_file.get(filename)
    if module is None:
        folders = {os.path.abspath(p) for p in sys.path if p} | {os.path.dirname(COURSE[:-1])}
        roots = sorted({os.path.join(folder, "") for folder in folders}, key=len, reverse=True)
        root = next((root for root in roots if filename.startswith(root)), None)
        if root is None or not filename.endswith(".py"):
            return None
        parts = filename[len(root):-len(".py")].split(os.sep)
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        _modules_by_file[filename] = module
    return module


def kind_of(code: types.CodeType, namespace: dict | None = None) -> str:
    """``OWN``, ``GUARD``, or the module (``"module.Class.method"``) the code comes from.

    Code made by ``exec`` (its file is ``"<string>"``: a dataclass's ``__init__``, a named
    tuple's ``__new__``) belongs to the module whose ``namespace`` (its globals) it runs in,
    when that module is installed; else it is the notebook's own."""
    kind = _kinds.get(code)
    if kind is None:
        filename = code.co_filename
        if filename == "<string>" and namespace is not None:
            module = sys.modules.get(str(namespace.get("__name__")))
            filename = getattr(module, "__file__", None) or filename
        if filename.startswith(GUARDS):
            kind = GUARD
        elif not filename.startswith((*installed(), COURSE, "<frozen")):
            kind = OWN  # a notebook cell, code made by exec, the student's own file
        elif (module := _module_of_file(filename)) is not None:
            kind = f"{module}.{code.co_qualname}"
        else:
            kind = f"{filename}:{code.co_qualname}"
        _kinds[code] = kind
    return kind


def is_own(function) -> bool:
    """Whether ``function`` is a Python function of the notebook's own code."""
    return type(function) is types.FunctionType \
        and kind_of(function.__code__, function.__globals__) == OWN


def _under(path: str, prefixes: tuple[str, ...]) -> bool:
    return any(path == prefix or path.startswith(prefix + ".") for prefix in prefixes)


def _python_refusal(frame, region: Region) -> str | None:
    """Why the Python function that starts in ``frame`` may not run, or None."""
    kind = kind_of(frame.f_code, frame.f_globals)
    if kind in (OWN, GUARD) or frame.f_code in region.given:
        return None
    allowed = region.verdicts.get(kind)
    if allowed is None:
        allowance = region.allowance
        allowed = (_under(kind, allowance.modules) or kind.startswith(EDITABLE_FINDERS)) \
            and not _under(kind, allowance.never)
        region.verdicts[kind] = allowed
    if allowed:
        return None
    caller = frame.f_back
    if caller is not None and _under(kind, GUARD_LIBRARIES):
        caller_kind = kind_of(caller.f_code, caller.f_globals)
        if caller_kind == GUARD or _under(caller_kind, GUARD_LIBRARIES):
            return None
    return kind


def _import_work(frame) -> bool:
    """Whether ``frame`` is the import system's work rather than the answer's: a finder or
    loader of installed code that the import system asks, or the body of an installed module
    that installed code imports (torch importing sympy the first time it needs it). The body
    of a module the notebook's code imports is the answer's."""
    if kind_of(frame.f_code, frame.f_globals) == OWN:
        return False
    caller = frame.f_back
    if frame.f_code.co_name != "<module>":  # only a finder's or loader's own methods
        return frame.f_code.co_name in IMPORT_PROTOCOL and caller is not None \
            and kind_of(caller.f_code).startswith("importlib._bootstrap")
    while caller is not None and kind_of(caller.f_code).startswith("importlib._bootstrap"):
        caller = caller.f_back
    return caller is not None and kind_of(caller.f_code, caller.f_globals) != OWN


def _c_name(function) -> tuple[str, str]:
    """(module, name) of a C function as called: ``("builtins", "getattr")``,
    ``("builtins", "list.append")``, ``("torch", "Tensor.sum")``."""
    owner = getattr(function, "__self__", None)
    name = getattr(function, "__name__", "?")
    if isinstance(owner, types.ModuleType):
        return owner.__name__, name
    if owner is None:
        return getattr(function, "__module__", None) or "", name
    klass = owner if isinstance(owner, type) else type(owner)
    return klass.__module__, f"{klass.__qualname__}.{name}"


def _c_refusal(function, region: Region) -> str | None:
    """Why the notebook's code may not call the C function ``function``, or None."""
    module, name = _c_name(function)
    owner = getattr(function, "__self__", None)
    method = name.rpartition(".")[2]
    allowance = region.allowance
    if module == "builtins":
        if isinstance(owner, types.ModuleType) or owner is None:
            allowed = name in allowance.builtins
        else:
            allowed = not isinstance(owner, CLOSED_TYPES) and method not in CLOSED_METHODS \
                and owner not in (type, object)
    else:
        private = method.startswith("_") and not method.endswith("__")
        allowed = _under(module, allowance.c_modules) and not private \
            and method not in CLOSED_METHODS
    return None if allowed else f"{module}.{name}"


def _message(region: Region, what: str) -> str:
    exercise = region.exercise or "this answer"
    return (f"{what} is not yours: while the tests run {exercise}, it may use "
            f"{region.allowance.says}, and your own code")


def _refuse(region: Region, what: str) -> None:
    """Refuse ``what`` (``refuse``: raise, or write down while an instructor records)."""
    error = NotAllowed(_message(region, what))
    if not RECORD:
        region.refused = region.refused or str(error)
    refuse(error)


def _profile(frame, event, arg):
    if not _region or getattr(_busy, "on", False):
        return
    region = _region[-1]
    if threading.get_ident() != region.thread:
        return
    if region.cell:  # an answer cell: only while its own code runs, not IPython's around it
        if event == "call" and region.frame is None:
            if frame.f_code.co_name == "<module>" and kind_of(frame.f_code, frame.f_globals) == OWN:
                region.frame = frame
            return
        if event == "return" and frame is region.frame:
            region.frame = None
            return
        if region.frame is None:
            return
    if region.loading is not None:
        if event == "return" and frame is region.loading:
            region.loading = None
        return
    if event == "call" and _import_work(frame):
        region.loading = frame  # runs as the import system's, whatever it calls
        return
    if event == "call":
        what = _python_refusal(frame, region)
    elif event == "c_call" and kind_of(frame.f_code, frame.f_globals) == OWN:
        what = _c_refusal(arg, region)
    else:
        return
    if what is not None:
        _busy.dropped = not RECORD  # CPython drops a profile function that raises: let it
        _refuse(region, what)


def _rearm(frame, event, arg):
    """The trace function: the profile hook back in place before the next line runs."""
    if sys.getprofile() is not _profile and _region:
        _busy.on = True
        try:
            sys.setprofile(_profile)
        finally:
            _busy.on = False
    return _rearm if kind_of(frame.f_code, frame.f_globals) == OWN else None


def _audit(event: str, args: tuple) -> None:
    if not _region or getattr(_busy, "on", False):
        return
    region = _region[-1]
    if threading.get_ident() != region.thread or not region.active:
        return
    _busy.on = True
    try:
        caller = sys._getframe(1)
        kind = kind_of(caller.f_code, caller.f_globals)
    finally:
        _busy.on = False
    if kind == GUARD:
        return
    if event == "sys.setprofile" and getattr(_busy, "dropped", False):
        _busy.dropped = False  # the refusal above: ``_rearm`` puts the hook back
        return
    if event.startswith(ALWAYS):
        _refuse(region, f"{event} {_shown(args)}")
    if kind != OWN:
        return
    if event == "import" and _under(str(args[0]), region.allowance.modules):
        return
    _refuse(region, f"{event} {_shown(args)}")


def _shown(args: tuple) -> str:
    """The first name an audited event carries (``import`` of what, ``open`` of what)."""
    names = [a for a in args[:2] if isinstance(a, str)]
    return f"({names[0]})" if names else ""


_installed: list[bool] = []


def _install_audit_hook() -> None:
    if not _installed:
        sys.addaudithook(_audit)
        _installed.append(True)


@contextlib.contextmanager
def _in_force(region: Region) -> Iterator[Region]:
    """The hooks on for ``region`` in this thread, and as they were afterwards."""
    if _region:  # a region inside a region (an answer calling a checked answer): the outer one
        yield _region[-1]
        return
    if not ALLOWLIST:
        yield region
        return
    _install_audit_hook()
    profile, trace = sys.getprofile(), sys.gettrace()
    _busy.on = True
    _region.append(region)
    sys.settrace(_rearm)
    sys.setprofile(_profile)
    _busy.on = False
    try:
        yield region
    finally:
        _busy.on = True
        sys.setprofile(profile)
        sys.settrace(trace)
        _region.clear()
        _busy.on = False


def answer_region(exercise: str | None, arguments=()) -> contextlib.AbstractContextManager[Region]:
    """The region of one call of an answer to ``exercise``: active at once. The functions
    among ``arguments`` (a feature map the test hands the answer) are part of its input."""
    given = frozenset(value.__code__ for value in arguments if type(value) is types.FunctionType)
    return _in_force(Region(exercise, allowance_of(exercise), given=given))


def cell_region(exercise: str | None) -> contextlib.AbstractContextManager[Region]:
    """The region of an answer cell: active while the cell's own code runs (IPython runs a
    cell as one or more ``<module>`` code objects; its machinery around them is not the
    answer's)."""
    return _in_force(Region(exercise, allowance_of(exercise), cell=True))

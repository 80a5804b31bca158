"""While an answer runs, only what its exercise allows may compute: the interpreter's hooks.

A *region* is a stretch of the answer's own work: each call of the answer by a test
(``own_work``), and, while nbgrader grades, the whole answer cell (``answer_cell``). In a
region the allowlist judges what the answer's own code asks for, against its exercise's
``Allowance`` (its record's, ``course_utils.exercises``), and refuses what that does not
name with ``NotAllowed``, where it is called:

* each call the answer's code makes: a Python function (by the module its code was compiled
  from, so a function rebuilt from a library's code object is still the library's) or a C
  function (``getattr``, ``exec``, ``sys.*``, ``gc.*`` are not allowed);
* each function it hands to another to call: to a C function (``map``, ``sorted``,
  ``functools.reduce``), to an allowed library function (an argument, a ``map`` object);
* every torch function called in the answer's thread, whoever calls it, C code too
  (``map(torch.layer_norm, ...)``): a torch function mode judges it by name;
* every thread started in the answer's thread: refused, whoever starts it
  (``threading``, ``concurrent.futures``, a logging ``QueueListener``).

What an allowed function does inside is not the answer's: ``print`` may write through
IPython's stream, ``@dataclass`` and ``@torch.no_grad()`` may read signatures with
``inspect``, ``np.random.default_rng`` may take a lock.

The answer's own code is the code compiled from the notebook's cells, which IPython gives
names that are no file on disk (with the code made from a string in the notebook's own
namespace: a dataclass's ``__init__``). Code compiled from a file is a module's, wherever
the file lies: a module imported from the notebook's folder is a library like any other,
allowed only by name.

The interpreter's hooks: ``sys.setprofile`` sees every function that starts and every C
function called; ``sys.addaudithook`` (permanent, process-wide, acting in the region's
thread only) sees what C code does on its own: frames, code objects, ``gc``, ``ctypes``,
processes, ``exec``/``compile``, opening files and imports of modules the exercise does not
allow; ``sys.settrace`` puts the profile hook back if a refusal removed it (CPython drops a
profile function that raises). A region that was refused stays refused: an answer that
catches ``NotAllowed`` and goes on still fails (``own_work`` raises when the region ends).

The guard keeps its state to itself: the regions in force (one per thread, under a token
only the guard holds), the switches read once from the kernel's start environment
(``course_utils.grading_kernel``) and its caches live in the closures of its functions, not
in module attributes a notebook could edit.
"""

import _thread
import contextlib
import functools
import itertools
import os
import sys
import sysconfig
import threading
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from torch.overrides import TorchFunctionMode

from course_utils.exercises.allowance import Allowance

from .records import TORCH_TWINS, allowance_of
from .refuse import ALLOWLIST, RECORD, LibraryTwinError, op_name, refuse, twin_message

__all__ = ["NotAllowed", "Region", "answer_region", "cell_region", "is_own", "kind_of"]

GUARDS = str(Path(__file__).parent) + os.sep
COURSE = str(Path(__file__).parents[2]) + os.sep  # course_utils/
STAND_IN = "<library twin>"  # the file of the code refuse.py swaps into a twin
# Types whose methods open the interpreter up: code, frames, functions, modules, classes.
CLOSED_TYPES = (types.CodeType, types.FrameType, types.TracebackType, types.FunctionType,
                types.ModuleType, types.GeneratorType, types.CoroutineType)
CLOSED_METHODS = frozenset({"__subclasses__", "mro", "__getattribute__", "__setattr__",
                            "__delattr__", "__reduce__", "__reduce_ex__", "__dir__",
                            "__init_subclass__"})
# Audited events refused in a region whoever raises them (but the guards).
ALWAYS = ("gc.", "ctypes.", "subprocess.", "os.system", "os.exec", "os.fork", "os.posix_spawn",
          "os.spawn", "os.kill", "os.putenv", "sys.addaudithook", "sys.setprofile",
          "sys.settrace", "sys._current_frames", "sys.monitoring", "function.__new__",
          "code.__new__", "cpython.", "socket.", "signal.", "pty.", "pickle.",
          "sqlite3.", "webbrowser.", "shutil.", "os.remove", "os.rename", "os.rmdir",
          "os.mkdir", "os.chdir", "os.link", "os.symlink")
# C functions whose own work may call Python code that is theirs, not the answer's: print
# writes through the notebook's stream, repr and format call an object's methods, NumPy and
# torch lock, seed, convert. (Any other C function may be calling what the answer handed
# it: map, sorted, sum over a map object, functools.reduce.)
TRUSTING_BUILTINS = frozenset({
    "print", "repr", "format", "ascii", "hash", "len", "isinstance", "issubclass", "hasattr",
    "callable", "round", "abs", "divmod", "pow", "bin", "hex", "oct", "chr", "ord", "id"})
TRUSTING_MODULES = ("numpy", "torch", "decimal", "_decimal")
ITERATING = frozenset({"fromiter"})  # NumPy's C functions that run through an iterator
LAZY = (map, filter, itertools.starmap)  # objects that call a function they were given
THREADS = "a new thread"
IMPORT_SYSTEM = "importlib._bootstrap."

OWN, GUARD = "the notebook's own code", "the guards"


class NotAllowed(LibraryTwinError):
    """An answer called something its exercise does not allow."""


@dataclass(eq=False)
class Region:
    """One stretch of an answer's work, in one thread."""

    exercise: str | None
    allowance: Allowance
    thread: int = field(default_factory=threading.get_ident)
    cell: bool = False  # an answer cell: only the frames of its own code are the region
    given: frozenset = frozenset()  # the ids of the code of the functions the test hands it
    frame: object = None  # the cell's frame while it runs
    entry: object = None  # the guard's frame about to call the answer (own_work's, guarded's)
    refused: str | None = None
    keep: list = field(default_factory=list)  # the functions given, alive while it runs
    verdicts: dict = field(default_factory=dict)  # {kind: allowed}
    pending: dict = field(default_factory=dict)  # {frame of own code: the C function it runs}

    @property
    def active(self) -> bool:
        return not self.cell or self.frame is not None


def _under(path: str, prefixes: tuple[str, ...]) -> bool:
    return any(path == prefix or path.startswith(prefix + ".") for prefix in prefixes)


def _importable(name: str, allowed: tuple[str, ...]) -> bool:
    """Whether the module ``name`` holds something ``allowed`` names (``statistics`` for
    ``statistics.mean``) or is under an allowed module."""
    return _under(name, allowed) or any(entry.startswith(name + ".") for entry in allowed)


def _c_name(function) -> tuple[str, str]:
    """(module, name) of a C function as called: ``("builtins", "getattr")``,
    ``("builtins", "list.append")``, ``("torch", "Tensor.sum")``, ``("builtins",
    "str.lower")`` for a method taken from its class."""
    owner = getattr(function, "__self__", None)
    name = getattr(function, "__name__", "?")
    if owner is None and isinstance(getattr(function, "__objclass__", None), type):
        owner = function.__objclass__
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
    if owner is None:
        owner = getattr(function, "__objclass__", None)
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


def _trusting(function) -> bool:
    """Whether the Python code the C function ``function`` calls is its own work (``print``
    writing through the notebook's stream), not something the answer handed it."""
    module, name = _c_name(function)
    if module == "builtins":
        return name in TRUSTING_BUILTINS
    return _under(module, TRUSTING_MODULES) and name not in ITERATING


def _message(region: Region, what: str) -> str:
    exercise = region.exercise or "this answer"
    return (f"{what} is not yours: while the tests run {exercise}, it may use "
            f"{region.allowance.says}, and your own code")


def _guard():
    """The allowlist's state and hooks, in closures: ``(kind_of, in_force)``."""
    allowlist, record = ALLOWLIST, RECORD  # the kernel's start environment, read once
    regions: dict[int, tuple[object, Region]] = {}  # {thread: (its token, its region)}
    busy: set[int] = set()  # threads whose hooks are acting (their own events pass)
    dropped: set[int] = set()  # threads whose profile hook CPython dropped after a refusal
    kinds: dict[int, tuple[types.CodeType, str]] = {}  # by id: equal code may be another's
    modules_by_file: dict[str, str | None] = {}
    get_ident, getprofile, setprofile = threading.get_ident, sys.getprofile, sys.setprofile
    gettrace, settrace, getframe, isfile = sys.gettrace, sys.settrace, sys._getframe, os.path.isfile
    # Where installed code lives, as Python started: the standard library, the site folders
    # (a .pth may add one to sys.path), and course_utils (installed in place).
    here, base = sysconfig.get_paths(), sysconfig.get_paths(
        vars={"base": sys.base_prefix, "platbase": sys.base_prefix})
    folders = {here[name] for name in ("stdlib", "platstdlib", "purelib", "platlib")}
    folders |= {base[name] for name in ("stdlib", "platstdlib")}
    folders |= {path for path in sys.path if "site-packages" in path or "dist-packages" in path}
    folders = {os.path.join(os.path.abspath(folder), "") for folder in folders if folder}
    installed = (*folders, COURSE)
    roots = sorted(folders | {os.path.dirname(COURSE[:-1]) + os.sep}, key=len, reverse=True)

    def current(ident: int) -> Region | None:
        entry = regions.get(ident)
        return entry[1] if entry is not None else None

    def module_of_file(filename: str) -> str | None:
        """The module compiled from ``filename``, an installed file: its path below the
        folder of ``sys.path`` it lies in (``.../torch/nn/functional.py``:
        ``torch.nn.functional``)."""
        if filename not in modules_by_file:
            root = next((root for root in roots if filename.startswith(root)), None)
            module = None
            if root is not None and filename.endswith(".py"):
                parts = filename[len(root):-len(".py")].split(os.sep)
                module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            modules_by_file[filename] = module
        return modules_by_file[filename]

    def of_file(filename: str, qualname: str) -> str:
        """The kind of code compiled from the file ``filename``."""
        if filename.startswith(installed):
            module = module_of_file(filename)
            if module is not None:
                return f"{module}.{qualname}"
        return f"{filename}:{qualname}"  # no module's name: allowed by none

    def is_cell(filename: str) -> bool:
        """Whether IPython compiled a cell under ``filename`` (a cell its debugger wrote)."""
        shell_module = sys.modules.get("IPython.core.interactiveshell")
        shell = getattr(getattr(shell_module, "InteractiveShell", None), "_instance", None)
        names = getattr(getattr(shell, "compile", None), "_filename_map", None)
        return isinstance(names, dict) and filename in names \
            and os.path.basename(os.path.dirname(filename)).startswith("ipykernel_")

    def kind_of(code: types.CodeType, namespace: dict | None = None) -> str:
        """``OWN``, ``GUARD``, or where the code comes from: ``"module.Class.method"``, or
        ``"file:Class.method"`` for a file that is no installed module."""
        known = kinds.get(id(code))
        if known is not None and known[0] is code:
            return known[1]
        filename, qualname = code.co_filename, code.co_qualname
        if filename.startswith(GUARDS) or filename == STAND_IN:
            kind = GUARD
        elif filename.startswith("<frozen "):
            kind = f"{filename[len('<frozen '):-1]}.{qualname}"
        elif isfile(filename):
            kind = OWN if is_cell(filename) else of_file(filename, qualname)
        else:  # a cell, or code made from a string (a dataclass's __init__): whose namespace?
            module = sys.modules.get(str((namespace or {}).get("__name__")))
            file = getattr(module, "__file__", None)
            if getattr(module, "__dict__", None) is namespace and isinstance(file, str):
                kind = GUARD if file.startswith(GUARDS) else of_file(file, qualname)
            else:
                kind = OWN
        kinds[id(code)] = (code, kind)
        return kind

    def allowed(kind: str, region: Region) -> bool:
        verdict = region.verdicts.get(kind)
        if verdict is None:
            allowance = region.allowance
            verdict = _under(kind, allowance.modules) and not _under(kind, allowance.never)
            region.verdicts[kind] = verdict
        return verdict

    def handed_refusal(value, region: Region, depth: int = 0) -> str | None:
        """Why ``value``, handed by the answer to a library function, may not be called, or
        None: a function, a method, a ``functools.partial``, a class, a ``map`` object."""
        kind = type(value)
        if depth > 3:
            return None
        if kind is types.FunctionType:
            code = value.__code__
            what = kind_of(code, value.__globals__)
            if what in (OWN, GUARD) or id(code) in region.given or allowed(what, region):
                return None
            return what
        if kind is types.MethodType:
            return handed_refusal(value.__func__, region, depth + 1)
        if kind is functools.partial:
            return handed_refusal(value.func, region, depth + 1)
        if kind in LAZY:
            return handed_refusal(value.__reduce__()[1][0], region, depth + 1)
        if kind in (types.BuiltinFunctionType, types.MethodDescriptorType,
                    types.ClassMethodDescriptorType):
            return _c_refusal(value, region)
        if isinstance(value, type):
            return class_refusal(value, region)
        return None

    def class_refusal(value: type, region: Region) -> str | None:
        """Why the class ``value``, handed to a library function, may not be made, or None: a
        class of the notebook's own (a method of its code, or no module file) may."""
        methods = [item for item in vars(value).values() if type(item) is types.FunctionType]
        if any(kind_of(item.__code__, item.__globals__) == OWN for item in methods):
            return None
        name = str(getattr(value, "__module__", ""))
        file = getattr(sys.modules.get(name), "__file__", None)
        if not isinstance(file, str) or _under(name, region.allowance.c_modules):
            return None  # the notebook's (__main__), a builtin type, NumPy's, torch's
        kind = of_file(file, value.__qualname__)
        return None if allowed(kind, region) else kind

    def arguments_refusal(frame, region: Region) -> str | None:
        """Why a function handed to the allowed library function that starts in ``frame``
        may not be called, or None."""
        code = frame.f_code
        positional = code.co_argcount + code.co_kwonlyargcount
        starred = bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)  # *args, **kwargs
        if not positional + starred:
            return None
        values = frame.f_locals
        names = code.co_varnames[:positional + starred]
        for index, name in enumerate(names):
            value = values.get(name)
            if index >= positional and isinstance(value, tuple | dict):
                items = value.values() if isinstance(value, dict) else value
            else:
                items = (value,)
            for item in items:
                if callable(item) and (what := handed_refusal(item, region)) is not None:
                    return what
        return None

    def call_refusal(frame, region: Region) -> str | None:
        """Why the Python function that starts in ``frame`` may not run, or None: judged
        only when the answer's own code calls it, or hands it to a C function."""
        caller = frame.f_back
        if caller is None:
            return None
        code = frame.f_code
        kind = kind_of(code, frame.f_globals)
        if caller is region.entry:  # the guard calls the answer: is it the notebook's own?
            region.entry = None
            return None if kind in (OWN, GUARD) or allowed(kind, region) else kind
        if kind_of(caller.f_code, caller.f_globals) != OWN:
            return None  # an allowed function at work, or the guards at theirs
        if kind in (OWN, GUARD) or id(code) in region.given:
            return None
        running = region.pending.get(caller)
        if running is not None and _trusting(running):
            return None  # print's stream, a lock NumPy takes: the C function's own work
        if not allowed(kind, region):
            return kind
        if kind.startswith(IMPORT_SYSTEM):  # an import statement's work (handed __import__)
            return None
        return arguments_refusal(frame, region)

    def refuse_in(region: Region, what: str, error: type[LibraryTwinError] = NotAllowed,
                  message: str | None = None) -> None:
        """Refuse ``what`` (raise, or write down while an instructor records)."""
        failure = error(message or _message(region, what))
        if not record:
            region.refused = region.refused or str(failure)
        refuse(failure)

    def profile(frame, event, arg):
        ident = get_ident()
        if ident in busy:
            return
        region = current(ident)
        if region is None:
            return
        if region.cell:  # an answer cell: only while its own code runs, not IPython's around it
            if event == "call" and region.frame is None:
                if frame.f_code.co_name == "<module>" \
                        and kind_of(frame.f_code, frame.f_globals) == OWN:
                    region.frame = frame
                return
            if event == "return" and frame is region.frame:
                region.frame = None
                return
            if region.frame is None:
                return
        if event == "call":
            what = call_refusal(frame, region)
        elif event == "c_call":
            if id(arg) in starters:
                what = THREADS
            elif frame is region.entry:  # the answer is a C function
                region.entry = None
                what = _c_refusal(arg, region)
            elif kind_of(frame.f_code, frame.f_globals) == OWN:
                what = _c_refusal(arg, region)
                if what is None:
                    region.pending[frame] = arg
            else:
                return
        elif event in ("c_return", "c_exception"):
            if region.pending.get(frame) is arg:
                del region.pending[frame]
            return
        else:
            return
        if what is not None:
            if not record:
                dropped.add(ident)  # CPython drops a profile function that raises
            refuse_in(region, what)

    def rearm(frame, event, arg):
        """The trace function: the profile hook back in place before the next line runs."""
        ident = get_ident()
        region = current(ident)
        if region is not None and getprofile() is not profile:
            busy.add(ident)
            try:
                region.pending.clear()
                setprofile(profile)
            finally:
                busy.discard(ident)
        return rearm if kind_of(frame.f_code, frame.f_globals) == OWN else None

    def audit(event: str, args: tuple) -> None:
        ident = get_ident()
        if ident in busy:
            return
        region = current(ident)
        if region is None or not region.active:
            return
        busy.add(ident)
        try:
            caller = getframe(1)
            kind = kind_of(caller.f_code, caller.f_globals)
        except ValueError:  # no Python frame: the interpreter's own
            kind = GUARD
        finally:
            busy.discard(ident)
        if kind == GUARD:
            return
        if event == "sys.setprofile" and ident in dropped:
            dropped.discard(ident)  # the refusal above: ``rearm`` puts the hook back
            return
        if event.startswith(ALWAYS):
            refuse_in(region, f"{event} {_shown(args)}")
        if kind != OWN:
            return
        if event == "import" and _importable(str(args[0]), region.allowance.modules):
            return
        refuse_in(region, f"{event} {_shown(args)}")

    class RegionOps(TorchFunctionMode):
        """Every torch function called in the region's thread while the region is in force
        (whoever calls it): refused unless the exercise allows its op, and refused as the
        library's answer when its name holds one of the exercise's ``TORCH_TWINS``."""

        def __init__(self, region: Region):
            super().__init__()
            self.__region = region
            self.__fragments = TORCH_TWINS.get(region.exercise or "", ())

        def __torch_function__(self, func, types, args=(), kwargs=None):
            region = self.__region
            if current(get_ident()) is region and region.active:
                name = op_name(func)
                if any(fragment in name for fragment in self.__fragments):
                    what = f"torch's {name}"
                    refuse_in(region, what, LibraryTwinError,
                              twin_message(region.exercise or "this answer", what))
                elif not region.allowance.allows_op(name):
                    refuse_in(region, f"torch's {name}")
            return func(*args, **(kwargs or {}))

    audit_installed: list[bool] = []

    @contextlib.contextmanager
    def in_force(region: Region) -> Iterator[Region]:
        """The hooks on for ``region`` in this thread, and as they were afterwards."""
        ident = get_ident()
        outer = current(ident)
        if outer is not None:  # a region inside a region (an answer calling a checked answer)
            yield outer
            return
        if not allowlist:
            yield region
            return
        if not audit_installed:
            sys.addaudithook(audit)
            audit_installed.append(True)
        token = object()
        mode = RegionOps(region)
        entry = getframe(1)  # past contextlib's frames, to the guard that entered the region
        while entry is not None and (entry.f_code.co_filename == __file__
                                     or kind_of(entry.f_code, entry.f_globals) != GUARD):
            entry = entry.f_back
        region.entry = None if region.cell else entry
        busy.add(ident)
        try:
            profile_before, trace_before = getprofile(), gettrace()
            regions[ident] = (token, region)
            mode.__enter__()
            settrace(rearm)
            setprofile(profile)
        finally:
            busy.discard(ident)
        try:
            yield region
        finally:
            busy.add(ident)
            try:
                setprofile(profile_before)
                settrace(trace_before)
                mode.__exit__(None, None, None)
                if regions.get(ident, (None,))[0] is token:
                    del regions[ident]
                dropped.discard(ident)
            finally:
                busy.discard(ident)

    def start_new_thread(function, args, kwargs=None, /):
        """``_thread.start_new_thread``, refused while a region is in force in this thread
        (threading, concurrent.futures and logging's listeners all start threads with it)."""
        region = current(get_ident())
        if region is not None and region.active:
            refuse_in(region, THREADS)
        return start(function, args) if kwargs is None else start(function, args, kwargs)

    start = _thread.start_new_thread
    starters = {id(start), id(getattr(_thread, "start_new", start)), id(start_new_thread)}
    if allowlist:
        _thread.start_new_thread = threading._start_new_thread = start_new_thread
        if hasattr(_thread, "start_new"):
            _thread.start_new = start_new_thread
    return kind_of, in_force


def _shown(args: tuple) -> str:
    """The first name an audited event carries (``import`` of what, ``open`` of what)."""
    names = [a for a in args[:2] if isinstance(a, str)]
    return f"({names[0]})" if names else ""


kind_of, _in_force = _guard()


def is_own(function) -> bool:
    """Whether ``function`` is a Python function of the notebook's own code."""
    return type(function) is types.FunctionType \
        and kind_of(function.__code__, function.__globals__) == OWN


def answer_region(exercise: str | None, arguments=()) -> contextlib.AbstractContextManager[Region]:
    """The region of one call of an answer to ``exercise``: active at once. The functions
    among ``arguments`` (a feature map the test hands the answer) are part of its input."""
    functions = [value for value in arguments if type(value) is types.FunctionType]
    given = frozenset(id(function.__code__) for function in functions)
    return _in_force(Region(exercise, allowance_of(exercise), given=given, keep=functions))


def cell_region(exercise: str | None) -> contextlib.AbstractContextManager[Region]:
    """The region of an answer cell: active while the cell's own code runs (IPython runs a
    cell as one or more ``<module>`` code objects; its machinery around them is not the
    answer's)."""
    return _in_force(Region(exercise, allowance_of(exercise), cell=True))

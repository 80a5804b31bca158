"""The guards that keep a test cell's verdict honest, one module each.

A test cell calls the student's function through ``own_work``::

    weights = checks.own_work(causal_softmax)(S)

and every ``check_...`` of ``course_utils.checks`` looks at plain values only. Together:

1. ``leftovers``: before the answer runs, after it returns, and before any check compares,
   nothing the notebook's answers left behind (a torch mode, a trace hook, an IPython hook,
   a thread, a patched builtin or assertion helper) is active.
2. ``copies``: the answer gets copies of the test's inputs, so one that works in place is
   graded on what it returns.
3. ``allowlist`` (with ``allowances``, and ``answer_cells`` for whole answer cells while
   nbgrader grades): while it runs, only what its exercise allows may compute.
   ``refuse`` and ``rules``: the library's answer to the exercise (``twins``) is refused
   where it is computed (Python twins by their code, torch functions by a function mode),
   and the rules the exercise states ("no autograd", "no N × N matrix") are enforced.
4. ``plain``: what it returns is rebuilt from exact built-in types before any check looks
   at it; a check never calls a method, operator or ``bool()`` of a student's object.
5. ``report``: while nbgrader grades, each checked answer, made plain, leaves the kernel as
   data; the grader decides the score on it against answers the kernel never holds
   (``grader.scoring.outside``). Everything above is best effort that flags: code in the
   kernel can undo it; it cannot make a wrong value score.
"""

import contextlib
import functools
import inspect
import sys
import warnings
from collections.abc import Callable

from course_utils.exercises.allowance import RuleBroken

from . import report as reporting
from .allowlist import NotAllowed, answer_region
from .answer_cells import refused_cell
from .copies import fresh
from .cost import check_cost
from .leftovers import LeftBehind, check_nothing_left_behind, record_baseline, seal_baseline
from .plain import plain
from .refuse import LibraryTwinError, library_twins_unavailable, watching

__all__ = [
    "LeftBehind",
    "LibraryTwinError",
    "NotAllowed",
    "RuleBroken",
    "check_named",
    "check_nothing_left_behind",
    "checked_plainly",
    "library_twins_unavailable",
    "own_work",
    "plain",
    "record_baseline",
    "seal_baseline",
]

CHECKS = __name__.rpartition(".")[0] + "."  # "course_utils.checks.": the checks' own modules


def own_work(function: Callable, exercise: str, namespace: dict | None = None) -> Callable:
    """``function``, the answer to ``exercise`` (its grade id: its record says what the
    answer may use, what answers it and the rules it keeps), wrapped so that each call is
    graded fairly (the four guards above).

    ``namespace`` is the notebook's globals, where the twins its record names as
    ``notebook.<name>`` live (``checks.check`` and ``checks.grade`` give it; by default the
    caller's globals). Warnings the answer raises are silenced: nbgrader counts any warning
    in a test cell's output as a failure, and a right answer that warns still deserves its
    points.
    """
    if not isinstance(exercise, str):
        raise TypeError(f"own_work needs the exercise's grade id as a str, got {exercise!r}")
    namespace = sys._getframe(1).f_globals if namespace is None else namespace
    label = getattr(function, "__name__", "the answer")

    @functools.wraps(function)
    def call(*args, **kwargs):
        check_nothing_left_behind()
        if refused := refused_cell():
            raise NotAllowed(f"an answer cell went on after a refusal: {refused}")
        args, kwargs = fresh(args), fresh(kwargs)
        with contextlib.ExitStack() as stack:
            stack.enter_context(warnings.catch_warnings())
            warnings.simplefilter("ignore")
            stack.enter_context(library_twins_unavailable(exercise, namespace))
            stack.enter_context(watching(exercise, args, kwargs))
            given = [*args, *kwargs.values()]
            region = stack.enter_context(answer_region(exercise, given))
            result = function(*args, **kwargs)
            check_cost(exercise, function, args, kwargs)  # a LinearWork rule (07)
        if region.refused:  # a refusal the answer caught and went on after
            raise NotAllowed(region.refused)
        check_nothing_left_behind()
        return plain(result, f"what {label} returned")

    return call


_BY_NAME: dict[str, Callable] = {}  # every check, undecorated, by its name


def check_named(name: str) -> Callable:
    """The check ``name`` of the topic modules (an exercise record's ``check``), as written:
    for a caller that has made the answer plain already (``course_utils.exercises.checking``)."""
    if name not in _BY_NAME:
        raise ValueError(f"no check named {name!r} in course_utils.checks: expected one of "
                         f"{sorted(_BY_NAME)}")
    return _BY_NAME[name]


def checked_plainly(check: Callable) -> Callable:
    """Decorator of every ``check_...`` function (and ``as_tensor``) of the topic modules,
    whose first argument is the answer: run it only when nothing is left behind, and on the
    answer made plain.

    A call from another check (code of ``course_utils.checks``) passes values the check has
    already made plain, so it goes straight to ``check``: the guards run once per test.
    """

    signature = inspect.signature(check)
    _BY_NAME[check.__name__] = check

    @functools.wraps(check)
    def run(answer, *args, **kwargs):
        if sys._getframe(1).f_globals.get("__name__", "").startswith(CHECKS):
            return check(answer, *args, **kwargs)
        check_nothing_left_behind()
        name = signature.bind(answer, *args, **kwargs).arguments.get("name", "your answer")
        answer = plain(answer, name)
        reporting.report(answer)
        return check(answer, *args, **kwargs)

    return run

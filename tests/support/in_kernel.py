"""The kernel's side of ``tests.support.pasted``: run an exercise's test cell on a candidate.

This file is sent to the notebook's kernel as source (:func:`tests.support.pasted.Probe`
runs it in a module of its own there, ``__probe``), so it imports only what the kernel has.
:func:`run` binds the exercise's name to the candidate, as a student who pasted it into
the answer cell would, runs the test cell's whole source (visible and hidden tests), and
puts the solution's function back, whatever happened; :func:`switch_guards_off` has
switched the guards off as the kernel started::

    __probe.run(globals(), "merge_pair", "course_utils.tokens.bpe", "corpus_from_text", False,
                test_source, 20.0)

A method of a class that needs arguments is called on an instance built, at each call,
from the arguments ``tests.support.shipped_functions.ARGUMENTS`` declares for its class:
values, or what to read off the call's own inputs (:data:`SIZE`, :data:`COUNT`), or
what a function makes (:func:`made_by`), e.g. ``MultiHeadAttention(
embed_dim=x.shape[-1], num_heads=2).forward(x, 2)`` for ``split_heads(x, 2)``.

The cell raises what the test raised; the values the hidden tests reported (under
``NBGRADER_EXECUTION=autograde``) are its display outputs, for the grader's comparison.
"""

import importlib
import signal

SOLUTION = "<solution>"  # the candidate that is the solution's own function
STUCK = "<stuck>"  # a wrong candidate: the solution's first answer, whatever the inputs
IMPORTING = "<frozen importlib"  # the code file of the import system's frames


# An argument read off the inputs of the call: the last size of the first input that has a
# shape (8 when none has), the first whole number after the first input (1 when there is
# none), the first input itself
SIZE, COUNT = "<the last size of an input>", "<a whole-number input>"
MADE_BY = "<made by>"

# {class: its instance built without arguments} and {made_by(...): what it made}, shared by
# the methods tried on one exercise (MiniLM's encoder takes half a second to build)
BUILT: dict = {}


class OutOfTime(Exception):
    """The candidate ran past its time limit."""


def made_by(function: str, **arguments) -> tuple:
    """What ``function`` (``module.name``, e.g. ``"course_utils.tokens.cl100k.cl100k"``)
    returns, called with ``arguments``: an argument, or a whole instance, to build."""
    return (MADE_BY, function, tuple(sorted(arguments.items())))


def run(namespace: dict, exercise: str, module: str, qualname: str, built: bool,
        test_source: str, limit: float, arguments=()) -> None:
    """Run ``test_source`` with ``namespace[exercise]`` bound to the candidate
    ``module.qualname`` (on an instance built when ``built``: from ``arguments``, else
    without any; the solution's own function for :data:`SOLUTION`, a wrong one for
    :data:`STUCK`), for at most ``limit`` seconds."""
    solution = namespace.get(exercise)
    previous = signal.signal(signal.SIGALRM, _out_of_time)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        namespace[exercise] = candidate(module, qualname, built, solution, arguments)
        exec(compile(test_source, f"<test_{exercise}>", "exec"), namespace)  # noqa: S102
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        namespace[exercise] = solution


def candidate(module: str, qualname: str, built: bool, solution, arguments=()):
    """The function a student would have pasted: imported from where it is shipped; a
    method, of an instance its class built for this exercise (from ``arguments`` at each
    call, else once without arguments)."""
    if module == SOLUTION:  # the first probe of each exercise: instances are built anew
        BUILT.clear()
        return solution
    if module == STUCK:
        return stuck(solution)
    owner = importlib.import_module(module)
    *path, name = qualname.split(".")
    for part in path:
        owner = getattr(owner, part)
    if built and arguments:
        cls = owner

        def method(*args, **kwargs):
            return getattr(instance(cls, arguments, args), name)(*args, **kwargs)

        return method
    if built:
        if owner not in BUILT:
            BUILT[owner] = owner()
        owner = BUILT[owner]
    return getattr(owner, name)


def instance(cls, arguments, inputs: tuple):
    """``cls`` built from ``arguments`` (a ``made_by`` tuple: what it makes; else pairs
    (name, value or what to read off ``inputs``)), with the seeded draws of a fork of
    torch's random state, so that the notebook's own draws go on as they would."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        if arguments[0] == MADE_BY:
            return made(arguments)
        return cls(**{name: value(spec, inputs) for name, spec in arguments})


def value(spec, inputs: tuple):
    """The argument ``spec`` stands for, for a call with ``inputs``."""
    if spec == SIZE:
        shaped = [x for x in inputs if len(getattr(x, "shape", ())) > 0]
        return int(shaped[0].shape[-1]) if shaped else 8
    if spec == COUNT:
        whole = [x for x in inputs[1:] if isinstance(x, int) and not isinstance(x, bool)]
        return whole[0] if whole else 1
    if isinstance(spec, tuple) and spec and spec[0] == MADE_BY:
        return made(spec)
    return spec


def made(spec: tuple):
    """What ``made_by``'s function returns (once per exercise)."""
    if spec not in BUILT:
        _, function, arguments = spec
        module, _, name = function.rpartition(".")
        BUILT[spec] = getattr(importlib.import_module(module), name)(**dict(arguments))
    return BUILT[spec]


def stuck(function):
    """``function``, but giving its first answer again whatever it is asked next."""
    answers = []

    def call(*args, **kwargs):
        if not answers:
            answers.append(function(*args, **kwargs))
        return answers[0]

    return call


def switch_guards_off() -> None:
    """From now on the test cells' checks call the answer unguarded: no allowlist, no twin
    refused, no rule, no cost check, no leftovers check; it still gets copies of the inputs,
    and what it returns is made plain for the checks and the reports
    (``checks.guards.copies``, ``checks.guards.plain``), as the grader needs. Run before the
    notebook's first cell; the leftovers' baseline is recorded again (outside a grading
    kernel, which seals it, a new one may be), so the switch is not taken for a patch."""
    from course_utils.checks.guards import record_baseline
    from course_utils.checks.guards.copies import fresh
    from course_utils.checks.guards.plain import plain
    from course_utils.exercises import checking

    def unguarded(function, exercise=None, namespace=None):
        def call(*args, **kwargs):
            return plain(function(*fresh(args), **fresh(kwargs)), "what the candidate returned")

        return call

    checking.own_work = unguarded
    record_baseline()


def _out_of_time(_, frame):
    """Stop the candidate, unless it is importing a module: a module stopped half-way
    through its import would break every later import of it (then, a moment later)."""
    while frame is not None:
        if frame.f_code.co_filename.startswith(IMPORTING):
            signal.setitimer(signal.ITIMER_REAL, 0.1)
            return
        frame = frame.f_back
    raise OutOfTime("the candidate ran past its time limit")

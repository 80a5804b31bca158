"""One-line test cells: ``check`` runs a visible test, ``grade`` hands a hidden one over.

A test cell (``from course_utils import checks`` in the notebook's first cell, which
re-exports both) names its exercise once and its inputs once::

    check("attention_update", E, E, W_Q, W_K, W_V)
    ### BEGIN HIDDEN TESTS
    grade("attention_update", e_test, s_test, w_q, w_k, w_v)
    ### END HIDDEN TESTS

``check`` calls the student's function (the notebook's global of the exercise's name)
through the guards (``own_work``; once, or as its record's ``run`` says, ``run_answer``:
07's ``recurrent_step`` token after token), checks what it returned with the exercise's
check (its record's ``check``: an ``Oracle`` declared in the record, or a check of
``course_utils.checks``; either names the likely mistake), and says so in one line::

    ✓ attention_update(E, E, W_Q, W_K, W_V) passed

A visible test whose expected value is plain data anyone may read (06's ``is_causal``: the
causal block is causal) states it, ``check("is_causal", f, x, expected=True)``: the check
gets it, the student's function does not. A failure shows the check's message first,
without the checks' own frames. ``grade``
calls the function the same way and only reports what it returned: the grader compares it,
in its own process, with the stored answer (``grader.scoring.outside``); no expected value of
a hidden test is ever in the notebook. A hidden test makes its own inputs (seeded), never
from the notebook's globals, which an answer's own code may have changed.
"""

import sys
from collections.abc import Callable

import torch

from course_utils.checks.guards import check_named, own_work
from course_utils.checks.guards.report import report
from course_utils.exercises import exercise as record_of
from course_utils.exercises.record import Exercise, Oracle, Recurrence

__all__ = ["TestFailed", "check", "grade", "run_answer"]


class TestFailed(AssertionError):
    """A visible test failed: its message names the call and the likely mistake."""


_NOT_STATED = object()


def check(exercise: str, *inputs, expected=_NOT_STATED, **keyword_inputs) -> None:
    """Run ``exercise``'s function on ``inputs`` and check the result (a visible test), against
    ``expected`` where the test states it."""
    __tracebackhide__ = True
    record = record_of(exercise)
    if not record.check:
        raise ValueError(f"the record of {exercise} names no check: give it one "
                         "(course_utils/exercises)")
    caller = sys._getframe(1)  # the test cell: the notebook's globals are its globals
    label = _call_label(exercise, caller, inputs, keyword_inputs)
    result = run_answer(record, own_work(_answer(exercise, caller.f_globals), exercise,
                                   caller.f_globals), inputs, keyword_inputs)
    stated = {} if expected is _NOT_STATED else {"expected": expected}
    try:
        _check_of(record)(result, *inputs, name=label, **stated, **keyword_inputs)
    except AssertionError as failure:
        raise TestFailed(str(failure)) from None
    print(f"✓ {label} passed")


def grade(exercise: str, *inputs, **keyword_inputs) -> None:
    """Run ``exercise``'s function on ``inputs`` and report the result to the grader (a
    hidden test: the grader decides)."""
    __tracebackhide__ = True
    record = record_of(exercise)
    namespace = sys._getframe(1).f_globals  # the test cell's: the notebook's globals
    report(run_answer(record, own_work(_answer(exercise, namespace), exercise, namespace), inputs,
                keyword_inputs), record.compare.feature_map)


def run_answer(record: Exercise, answer: Callable, inputs: tuple, keyword_inputs: dict):
    """What a test of ``record`` checks: one call of ``answer`` on the inputs, or, for a
    step of a ``Recurrence``, the list of what its calls returned over the sequence."""
    if record.run is None:
        return answer(*inputs, **keyword_inputs)
    return _recurrence(record.run, answer, inputs, keyword_inputs)


def _recurrence(run: Recurrence, answer: Callable, inputs: tuple, keyword_inputs: dict) -> list:
    state = list(inputs[:run.state])
    rows, rest = inputs[run.state:run.state + run.sequences], inputs[run.state + run.sequences:]
    steps = []
    for i in range(len(rows[0])):
        result = answer(*state, *(row[i] for row in rows), *rest, **keyword_inputs)
        steps.append(result)
        if not isinstance(result, tuple | list) or len(result) <= run.state:
            break
        try:
            given = [torch.as_tensor(part, dtype=old.dtype, device=old.device)
                     for part, old in zip(result, state, strict=False)]
        except (TypeError, ValueError, RuntimeError):
            break
        if [part.shape for part in given] != [old.shape for old in state]:
            break
        state = given
    return steps


def _check_of(record: Exercise) -> Callable:
    """The check of ``record``, called as ``check(answer, *inputs, name=..., **keywords)``
    on the answer already made plain."""
    if not isinstance(record.check, Oracle):
        return check_named(record.check)
    oracle = record.check

    def by_oracle(actual, *inputs, name: str, **keyword_inputs) -> None:
        expected = oracle.expected(*inputs, **keyword_inputs)
        mistakes = {text: slip(expected, *inputs, **keyword_inputs)
                    for text, slip in oracle.mistakes.items()}
        check_named("check_close")(actual, expected, name, atol=oracle.atol, mistakes=mistakes,
                                   reveal=oracle.reveal)

    return by_oracle


def _answer(exercise: str, namespace: dict):
    function = namespace.get(exercise)
    if not callable(function):
        raise TestFailed(f"{exercise} is not defined as a function yet: run its answer cell "
                         "(above this test) first")
    return function


def _call_label(exercise: str, frame, inputs: tuple, keyword_inputs: dict) -> str:
    """``exercise(<the inputs as the test cell writes them>)``, or described by type."""
    try:
        import executing  # IPython's own dependency: it reads the calling expression

        call = executing.Source.executing(frame).node
        source = executing.Source.for_frame(frame)
        written = [source.asttokens().get_text(node) for node in call.args[1:]]
        written += [f"{k.arg}={source.asttokens().get_text(k.value)}" for k in call.keywords]
    except Exception:  # no source (a plain script): describe the inputs instead
        written = [_describe(value) for value in inputs]
        written += [f"{key}={_describe(value)}" for key, value in keyword_inputs.items()]
    return f"{exercise}({', '.join(written)})"


def _describe(value) -> str:
    shape = getattr(value, "shape", None)
    if shape is not None:
        return f"{type(value).__name__} of shape {tuple(shape)}"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."

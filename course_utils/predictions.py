"""Predictions written before a measurement, then confronted with it.

A notebook asks for a prediction in a plain cell *before* the cell that measures it::

    my_prediction = ...  # your number, before you run the next cell

and the measuring cell ends with ``confront(my_prediction, measured, what="...")``, which
prints both side by side. A prediction is not graded: it is there to be wrong and find out
why. Left as ``...``, the line says that no prediction was written, and the cell goes on.
A measurement may be a list of numbers (rows of weights, nested; NaN where there is no
number): the prediction is then a list of the same shape, and any entry of it that is no
number (None, NaN, a word) stands for "no number".
"""

import math
import numbers

from course_utils.student import student_id

NOT_WRITTEN = Ellipsis
# The id of the instructor's copy (``make lab``, the committed solutions run with
# ``COURSE_STUDENT=instructor``): its measurements print without a prediction, for the page.
INSTRUCTOR = "instructor"


def confront(prediction, measured, *, what: str, unit: str = "") -> str:
    """Print and return one line: ``what`` as predicted and as measured.

    ``prediction`` and ``measured`` are numbers (or ``prediction`` is ``...``, not written
    yet); ``what`` names the quantity ("the ratio of the two times"), ``unit`` follows each
    number ("ms"). With two numbers, the line also says how far apart they are, as a ratio
    when both are positive.
    """
    if not isinstance(what, str) or not what:
        raise TypeError(f"what: expected the quantity's name as a string, got {what!r}")
    if isinstance(measured, list):
        return _confront_values(prediction, measured, what)
    if not _is_number(measured):
        raise TypeError(f"measured: expected a number, got {type(measured).__name__}")
    if prediction is NOT_WRITTEN:
        line = (f"{what}: measured {_show(measured, unit)}; you wrote no prediction above "
                "(write it before you run this cell, then run it again)")
    elif not _is_number(prediction):
        raise TypeError(f"your prediction of {what}: expected a number (or ... for none yet), "
                        f"got {type(prediction).__name__} {prediction!r}")
    else:
        line = f"{what}: you predicted {_show(prediction, unit)}, measured {_show(measured, unit)}"
        if prediction > 0 and measured > 0:
            line += f" (measured / predicted = {measured / prediction:.3g})"
    print(line)
    return line


def predicted(prediction, *, name: str = "my_prediction") -> bool:
    """Whether ``prediction`` has been written; if not, print where to write it. A cell whose
    every line would give the prediction away runs its measurement only when this is True.
    The instructor's copy (student id ``INSTRUCTOR``) measures without one, and says so."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"name: expected the prediction's variable name, got {name!r}")
    if prediction is not NOT_WRITTEN:
        return True
    if student_id() == INSTRUCTOR:
        print(f"({name} is not written: the instructor's copy measures anyway)")
        return True
    print(f"write your prediction first ({name}, above), then run this cell again")
    return False


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def _show(value, unit: str) -> str:
    return f"{value:.4g}{' ' + unit if unit else ''}"


def _confront_values(prediction, measured: list, what: str) -> str:
    """``confront`` for a list of numbers (nested; NaN where there is no number)."""
    wanted = _flat(measured, strict=True)
    if wanted is None:
        raise TypeError(f"measured: expected a list of numbers, got {measured!r}")
    if prediction is NOT_WRITTEN:
        line = (f"{what}: measured {_shown(measured)}; you wrote no prediction above "
                "(write it before you run this cell, then run it again)")
    else:
        if not _like(prediction, measured):
            raise TypeError(f"your prediction of {what}: expected a list shaped as "
                            f"{_shape(measured)}, got {prediction!r}")
        given = _flat(prediction, strict=False)
        missing = [(a is None) != (b is None) for a, b in zip(given, wanted, strict=True)]
        gaps = [abs(a - b) for a, b in zip(given, wanted, strict=True)
                if a is not None and b is not None]
        line = f"{what}: you predicted {_shown(prediction)}, measured {_shown(measured)}"
        if any(missing):
            line += " (they differ on which entries have a number)"
        elif gaps:
            line += f" (largest difference {max(gaps):.2g})"
    print(line)
    return line


def _like(value, shape) -> bool:
    """Whether ``value`` is a list or tuple nested as the list ``shape`` is."""
    if isinstance(shape, list):
        return (isinstance(value, list | tuple) and len(value) == len(shape)
                and all(_like(v, s) for v, s in zip(value, shape, strict=True)))
    return not isinstance(value, list | tuple)


def _flat(values, strict: bool) -> list | None:
    """The entries of a nested list, None for each that is no number (NaN included); when
    ``strict``, None for the whole list unless each entry is a number or NaN."""
    if isinstance(values, list | tuple):
        flat = []
        for value in values:
            inner = _flat(value, strict)
            if inner is None:
                return None
            flat += inner
        return flat
    if _is_number(values):
        return [values]
    nan = isinstance(values, float) and math.isnan(values)
    return None if strict and not nan else [None]


def _shape(values) -> str:
    """"2 lists of 3 numbers", "3 numbers"."""
    if values and isinstance(values[0], list):
        return f"{len(values)} lists of {_shape(values[0])}"
    return f"{len(values)} numbers"


def _shown(values) -> str:
    if isinstance(values, list | tuple):
        return "[" + ", ".join(_shown(value) for value in values) + "]"
    if _is_number(values):
        return f"{values:.4g}"
    return "nan" if isinstance(values, float) else repr(values)

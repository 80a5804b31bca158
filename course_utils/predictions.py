"""Predictions written before a measurement, then confronted with it.

A notebook asks for a prediction in a plain cell *before* the cell that measures it::

    my_prediction = ...  # your number, before you run the next cell

and the measuring cell ends with ``confront(my_prediction, measured, what="...")``, which
prints both side by side. A prediction is not graded: it is there to be wrong and find out
why. Left as ``...``, the line says that no prediction was written, and the cell goes on.
"""

import math
import numbers

NOT_WRITTEN = Ellipsis


def confront(prediction, measured, *, what: str, unit: str = "") -> str:
    """Print and return one line: ``what`` as predicted and as measured.

    ``prediction`` and ``measured`` are numbers (or ``prediction`` is ``...``, not written
    yet); ``what`` names the quantity ("the ratio of the two times"), ``unit`` follows each
    number ("ms"). With two numbers, the line also says how far apart they are, as a ratio
    when both are positive.
    """
    if not isinstance(what, str) or not what:
        raise TypeError(f"what: expected the quantity's name as a string, got {what!r}")
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


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def _show(value, unit: str) -> str:
    return f"{value:.4g}{' ' + unit if unit else ''}"

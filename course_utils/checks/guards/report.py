"""While nbgrader grades, every checked answer leaves the kernel as plain data.

The grade is decided in the grader's process (``grader.scoring.outside``), not here: each
``check_...`` of a test cell shows the answer it checks, made plain, as one display output
of the MIME type :data:`MIME`, and the grader compares those values with the answers it
stored from the instructor's solution (``make answers``), which no kernel ever holds. The
kernel's own verdict (the check's ``AssertionError``) stays what students read; a test cell
scores only when both agree.

Reporting happens only under nbgrader's autograde (``NBGRADER_EXECUTION=autograde`` in the
kernel's start environment, as ``course_utils.grading_kernel`` read it once): a student's
Validate shows nothing of it.

:func:`encode` turns a plain value into JSON the grader compares without running any of
the student's code::

    encode(3.5)                      -> 3.5
    encode(float("nan"))             -> {"float": "nan"}
    encode(torch.ones(2, 2))   -> {"array": {"shape": [2, 2], "kind": "f", "values": [1.0, ...]}}
    encode({"a": 1})                 -> {"dict": [["a", 1]]}
    encode({1, 2})                   -> {"set": [1, 2]}

An array of more than :data:`FULL` values is summarised: its shape, its sums,
:data:`PROJECTIONS` fixed random projections and its values at :data:`SAMPLED` fixed
positions (``summary``). That tells a wrong formula (wrong everywhere, or in a whole row or
block) from the right one while keeping a notebook's outputs small; a few single entries off
in a large array can pass unseen.
"""

import json
import math

import numpy as np
import torch

from course_utils.switches import start_switch

__all__ = ["FULL", "MIME", "PROJECTIONS", "encode", "projections", "report", "reporting",
           "summary"]

MIME = "application/vnd.course.checked+json"
FULL = 4096  # arrays up to this many values are reported whole
PROJECTIONS = 16
SAMPLED = 1024  # values a summary keeps, at fixed positions
_GRADING = start_switch("NBGRADER_EXECUTION") == "autograde"  # the kernel's start environment


def reporting() -> bool:
    """Whether this kernel reports checked answers (started by nbgrader's autograde)."""
    return _GRADING


def report(value, whole: bool = False) -> None:
    """Show ``value`` (already plain) to the grader, when grading; else do nothing. A large
    array goes ``whole`` when its comparison needs every value (random features)."""
    if not _GRADING:
        return
    from IPython.display import publish_display_data

    publish_display_data({MIME: {"value": encode(value, whole)}})


def encode(value, whole: bool = False):
    """``value`` (plain: built-in types, NumPy arrays and scalars, tensors) as JSON data;
    arrays of more than :data:`FULL` values summarised unless ``whole``."""
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return value
    if kind is float:
        return value if math.isfinite(value) else {"float": repr(value)}
    if kind is complex:
        return {"complex": [encode(value.real), encode(value.imag)]}
    if kind is bytes:
        return {"bytes": value.hex()}
    if value is Ellipsis:
        return {"ellipsis": True}
    if isinstance(value, torch.Tensor):
        return _array(_numpy(value), whole)
    if isinstance(value, np.ndarray):
        return _array(value, whole)
    if isinstance(value, np.generic):
        return encode(value.item())
    if kind in (list, tuple):
        return [encode(item, whole) for item in value]
    if kind in (set, frozenset):
        return {"set": sorted((encode(item) for item in value), key=_order)}
    if isinstance(value, dict):
        return {"dict": sorted(([encode(k), encode(v)] for k, v in value.items()),
                               key=lambda pair: _order(pair[0]))}
    raise TypeError(f"expected a plain value (number, str, list, dict, array, tensor), "
                    f"got {kind.__name__}")


def projections(size: int) -> np.ndarray:
    """The (PROJECTIONS, size) fixed random directions a large array is summarised by."""
    return np.random.default_rng(size).standard_normal((PROJECTIONS, size)) / math.sqrt(size)


def _order(encoded) -> str:
    return json.dumps(encoded, sort_keys=True)


def _numpy(tensor: torch.Tensor) -> np.ndarray:
    tensor = tensor.detach().cpu()
    if tensor.is_complex():
        return tensor.to(torch.complex128).numpy()
    if tensor.is_floating_point():
        return tensor.to(torch.float64).numpy()
    return tensor.numpy()


def _array(array: np.ndarray, whole: bool = False) -> dict:
    kind = array.dtype.kind
    if kind in "US":
        return {"array": {"shape": list(array.shape), "kind": kind,
                          "values": [encode(item) for item in array.ravel().tolist()]}}
    if kind == "c":
        return {"array": {"shape": list(array.shape), "kind": "c",
                          "values": [encode(complex(item)) for item in array.ravel()]}}
    kind = "b" if kind == "b" else "i" if kind in "iu" else "f"
    flat = array.astype(np.float64).ravel()
    if flat.size <= FULL or whole:
        return {"array": {"shape": list(array.shape), "kind": kind,
                          "values": [encode(item) for item in flat.tolist()]}}
    return {"array": {"shape": list(array.shape), "kind": kind, "summary": summary(flat)}}


def summary(flat: np.ndarray) -> dict:
    """What a large array (flat, float64) is reported by: where it is not finite, its sum,
    its sum of squares, its :func:`projections` (of the finite part) and its values at
    :data:`SAMPLED` fixed positions (:func:`sampled_positions`)."""
    finite = np.isfinite(flat)
    clean = np.where(finite, flat, 0.0)
    return {"not_finite": [[int(i), repr(float(flat[i]))] for i in np.flatnonzero(~finite)[:64]],
            "count_not_finite": int((~finite).sum()),
            "sum": float(clean.sum()), "squares": float((clean**2).sum()),
            "projections": (projections(flat.size) @ clean).tolist(),
            "sample": [encode(item) for item in flat[sampled_positions(flat.size)].tolist()]}


def sampled_positions(size: int) -> np.ndarray:
    """The :data:`SAMPLED` positions, fixed by ``size``, whose values a summary keeps."""
    return np.sort(np.random.default_rng(size + 1).choice(size, SAMPLED, replace=False))

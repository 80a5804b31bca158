"""Whether a value an answer returned is the stored answer: a comparison on plain data.

Both sides are JSON as ``course_utils.checks.guards.report.encode`` writes it; nothing of
the student's runs here. Numbers compare within a tolerance (``atol + rtol·|expected|``),
whatever their container: a list of lists, a NumPy array and a tensor of the same shape and
values are the same value, and so are ``True`` and ``1``, float32 and float64. Strings,
``None`` and the keys of dicts and sets compare exactly. ``unordered`` accepts a list in any
order (as a multiset); ``distribution`` compares random draws as samples of one law.

    same([1.0, 2.0], {"array": {"shape": [2], "kind": "f", "values": [1.0, 2.0]}}, Compare())
    -> True

Arrays of more than ``report.FULL`` values are compared by their summaries (shape, the
values at fixed positions, sum, norm and fixed random projections), with a tolerance that
an array within the elementwise tolerance always meets (each bound below is the elementwise
one carried through the sum).
"""

import json
import math
import numpy as np

from course_utils.checks.guards.report import FULL, projections, summary
from course_utils.exercises import Compare

__all__ = ["same"]


def same(got, expected, rule: Compare) -> bool:
    """Whether ``got`` (what the student's answer returned) is ``expected``."""
    return _same(_canonical(got), _canonical(expected), rule, top=True)


# --- canonical forms: ("array", shape, values | summary), ("list", [...]), ("dict", ...),
# ("set", ...), ("exact", json) --------------------------------------------------------


def _canonical(encoded):
    array = _as_array(encoded)
    if array is not None:
        return array
    if isinstance(encoded, list):
        return ("list", [_canonical(item) for item in encoded])
    if isinstance(encoded, dict) and "dict" in encoded:
        return ("dict", {_key(k): _canonical(v) for k, v in encoded["dict"]})
    if isinstance(encoded, dict) and "set" in encoded:
        return ("set", sorted(_key(item) for item in encoded["set"]))
    if isinstance(encoded, dict) and "array" in encoded:  # strings, bytes, complex
        spec = encoded["array"]
        return ("list", [("shape", tuple(spec["shape"]))]
                + [_canonical(item) for item in spec.get("values", [])])
    return ("exact", _key(encoded))


def _key(encoded) -> str:
    return json.dumps(encoded, sort_keys=True)


def _number(encoded) -> float | None:
    if isinstance(encoded, bool | int | float):
        return float(encoded)
    if isinstance(encoded, dict) and set(encoded) == {"float"}:
        return float(encoded["float"])
    return None


def _as_array(encoded):
    """("array", shape, flat float64 values or a summary dict), or None: not numbers."""
    if isinstance(encoded, dict) and "summary" in encoded.get("array", {}):
        spec = encoded["array"]
        return ("array", tuple(spec["shape"]), spec["summary"]) if spec["kind"] in "bif" else None
    whole = _whole(encoded)
    return None if whole is None else _sized(*whole)


def _whole(encoded):
    """(shape, flat float64 values) of a number, an array reported whole, or a list of
    them all of one shape, at any depth: a list of rows is summarised as a whole, however
    long each row; None for anything else (not numbers, ragged, or summarised inside)."""
    number = _number(encoded)
    if number is not None:
        return (), np.array([number])
    if isinstance(encoded, dict) and "array" in encoded:
        spec = encoded["array"]
        if spec["kind"] not in "bif" or "values" not in spec:
            return None
        return tuple(spec["shape"]), np.array([_number(v) for v in spec["values"]], dtype=float)
    if isinstance(encoded, list):
        items = [_whole(item) for item in encoded]
        if not items or any(item is None for item in items):
            return None
        shapes = {shape for shape, _ in items}
        if len(shapes) != 1:
            return None
        return (len(items), *shapes.pop()), np.concatenate([values for _, values in items])
    return None


def _sized(shape, flat):
    """A flat array as reported: summarised, as the kernel does, when it is large."""
    return ("array", shape, flat if flat.size <= FULL else summary(flat))


# --- comparison --------------------------------------------------------------------------


def _same(got, expected, rule: Compare, top: bool = False) -> bool:
    if got[0] != expected[0]:
        return False
    kind = got[0]
    if kind == "array":
        return _same_array(got, expected, rule)
    if kind == "exact":
        return got[1] == expected[1]
    if kind == "set":
        return got[1] == expected[1]
    if kind == "dict":
        return got[1].keys() == expected[1].keys() and all(
            _same(got[1][k], expected[1][k], rule) for k in expected[1])
    mine, theirs = got[1], expected[1]
    if len(mine) != len(theirs):
        return False
    if rule.unordered and top:
        return _same_multiset(mine, theirs, rule)
    return all(_same(a, b, rule) for a, b in zip(mine, theirs, strict=True))


def _same_multiset(mine: list, theirs: list, rule: Compare) -> bool:
    """Each expected item matched by a different item of ``mine`` (greedy: the items of an
    unordered answer are distinct tokens, pairs or numbers far apart)."""
    left = list(mine)
    for item in theirs:
        match = next((i for i, candidate in enumerate(left) if _same(candidate, item, rule)),
                     None)
        if match is None:
            return False
        left.pop(match)
    return True


def _same_array(got, expected, rule: Compare) -> bool:
    (_, shape, values), (_, expected_shape, expected_values) = got, expected
    if shape != expected_shape and math.prod(shape) == math.prod(expected_shape) == 1:
        shape = expected_shape  # a number and a one-element array: the same value
    if shape != expected_shape:
        return False
    if rule.distribution:
        return _same_distribution(values, expected_values, rule.significance)
    if isinstance(expected_values, dict) or isinstance(values, dict):
        if not (isinstance(expected_values, dict) and isinstance(values, dict)):
            return False
        return _same_summary(values, expected_values, math.prod(shape), rule)
    return bool(np.allclose(values, expected_values, rtol=rule.rtol, atol=rule.atol,
                            equal_nan=True))


def _same_distribution(values, expected_values, significance: float) -> bool:
    """Two samples of one law: a two-sample Kolmogorov–Smirnov test does not reject it."""
    from scipy.stats import ks_2samp

    draws = [np.array([_number(v) for v in side["sample"]]) if isinstance(side, dict)
             else side for side in (values, expected_values)]
    if any(not np.isfinite(draw).all() for draw in draws):
        return False
    return bool(ks_2samp(*draws).pvalue >= significance)


def _same_summary(got: dict, expected: dict, size: int, rule: Compare) -> bool:
    """Sums and projections within what the elementwise tolerance allows them."""
    if (got["count_not_finite"], got["not_finite"]) != (
            expected["count_not_finite"], expected["not_finite"]):
        return False
    sample = [[_number(value) for value in side["sample"]] for side in (got, expected)]
    if not np.allclose(*sample, rtol=rule.rtol, atol=rule.atol, equal_nan=True):
        return False
    norm = math.sqrt(expected["squares"])
    if abs(math.sqrt(got["squares"]) - norm) > rule.atol * math.sqrt(size) + rule.rtol * norm:
        return False
    if abs(got["sum"] - expected["sum"]) > rule.atol * size + rule.rtol * math.sqrt(size) * norm:
        return False
    directions = projections(size)
    slack = rule.atol * np.abs(directions).sum(axis=1) + rule.rtol * np.linalg.norm(
        directions, axis=1) * norm
    difference = np.abs(np.array(got["projections"]) - np.array(expected["projections"]))
    return bool((difference <= slack + 1e-12 * (1 + norm)).all())

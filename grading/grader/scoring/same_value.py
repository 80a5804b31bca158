"""Whether a value an answer returned is the stored answer: a comparison on plain data.

Both sides are JSON as ``course_utils.checks.guards.report.encode`` writes it; nothing of
the student's runs here. Numbers compare within a tolerance (``atol + rtol·|expected|``),
whatever their container: a list of lists, a NumPy array and a tensor of the same shape and
values are the same value, and so are ``True`` and ``1``, float32 and float64. Strings,
``None`` and the keys of dicts and sets compare exactly. ``unordered`` accepts a list in any
order (as a multiset); ``distribution`` compares random draws as samples of one law;
``feature_map`` compares random features by the kernel they estimate (:func:`kept`).

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

__all__ = ["kept", "same"]


def same(got, expected, rule: Compare) -> bool:
    """Whether ``got`` (what the student's answer returned) is ``expected`` (what
    :func:`kept` made of the solution's value)."""
    if rule.feature_map:
        return _same_kernel_estimate(got, expected, rule)
    return _same(_canonical(got), _canonical(expected), rule, top=True)


def kept(value, rule: Compare):
    """What ``make answers`` stores of the solution's reported ``value``: the value, or for
    random features Z (n, R) the kernel estimate they make, ``{"gram": Z Zᵀ, "features": R}``."""
    if not rule.feature_map:
        return value
    features = _features(value)
    if features is None:
        raise ValueError("a feature map's value must be a whole (n, R) array of numbers")
    return {"gram": (features @ features.T).tolist(), "features": features.shape[1]}


def _features(encoded) -> np.ndarray | None:
    array = _as_array(encoded, summarise=False)
    if array is None or isinstance(array[2], dict) or len(array[1]) != 2:
        return None
    return array[2].reshape(array[1])


def _same_kernel_estimate(got, expected: dict, rule: Compare) -> bool:
    """Z Zᵀ of ``got`` within ``rule.sigmas`` standard errors of the stored estimate: each
    estimate's entries are means of R products bounded by max |K|, so two unbiased designs
    differ by at most about 2 max |K| / √R per standard error."""
    features = _features(got)
    if features is None or features.shape[1] != expected["features"]:
        return False
    gram, want = features @ features.T, np.array(expected["gram"], dtype=float)
    if gram.shape != want.shape or not np.isfinite(gram).all():
        return False
    scale = max(np.abs(want).max(initial=0.0), 1e-12)
    return bool((np.abs(gram - want) <= rule.sigmas * 2 * scale / math.sqrt(
        expected["features"])).all())


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


def _as_array(encoded, summarise: bool = True):
    """("array", shape, flat float64 values or a summary dict), or None: not numbers; large
    arrays summarised as the kernel summarises them, unless not ``summarise``."""
    number = _number(encoded)
    if number is not None:
        return ("array", (), np.array([number]))
    if isinstance(encoded, dict) and "array" in encoded:
        spec = encoded["array"]
        if spec["kind"] not in "bif":
            return None
        shape = tuple(spec["shape"])
        if "summary" in spec:
            return ("array", shape, spec["summary"])
        return _sized(shape, np.array([_number(v) for v in spec["values"]], dtype=float),
                      summarise)
    if isinstance(encoded, list):
        items = [_as_array(item, summarise=False) for item in encoded]
        if not items or any(item is None or isinstance(item[2], dict) for item in items):
            return None
        shapes = {item[1] for item in items}
        if len(shapes) != 1:
            return None
        return _sized((len(items), *shapes.pop()), np.concatenate([item[2] for item in items]),
                      summarise)
    return None


def _sized(shape, flat, summarise: bool = True):
    """A flat array as reported: summarised, as the kernel does, when it is large."""
    return ("array", shape, summary(flat) if summarise and flat.size > FULL else flat)


# --- comparison --------------------------------------------------------------------------


def _same(got, expected, rule: Compare, top: bool = False) -> bool:
    if got[0] != expected[0]:
        return False
    kind = got[0]
    if kind == "array":
        if rule.unordered and top:
            return _same_rows(got, expected, rule)
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


def _same_rows(got, expected, rule: Compare) -> bool:
    """An unordered list of numbers, or of rows of numbers (02's pairs of word ids come as
    one array): its rows as a multiset, each within the tolerance. A summarised (large)
    array is compared in order."""
    (_, shape, values), (_, expected_shape, expected_values) = got, expected
    if (not shape or shape != expected_shape or rule.distribution
            or isinstance(values, dict) or isinstance(expected_values, dict)):
        return _same_array(got, expected, rule)
    mine, theirs = ([("array", shape[1:], row) for row in np.reshape(side, (shape[0], -1))]
                    for side in (values, expected_values))
    return _same_multiset(mine, theirs, rule)


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

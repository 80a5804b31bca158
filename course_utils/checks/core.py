"""Diagnostic assertions shared by every notebook's test cells, and ``comparing`` for its
plain cells.

A bare ``assert`` tells a student only that something is wrong. These checks say
what is expected, what came, and, where the answer matches a known mistake, which
mistake. Each raises ``AssertionError`` so that nbgrader counts the test as failed.

A plain cell that compares a student's function with the library's runs on the blank
release and on wrong answers too: it must say what it could not do and let the notebook go
on (nbgrader runs every cell; a student's Run All must not stop there)::

    with checks.comparing("exercise 5"):
        print("your updated_embeddings agrees:", torch.allclose(updated_embeddings(E, Q, V), ref))
"""

import contextlib

import numpy as np
import torch

from .guards import checked_plainly, plain

__all__ = ["Unfinished", "as_tensor", "check_close", "check_rows_sum_to_one", "check_shape",
           "comparing"]

# What ``comparing`` prints before the error of an answer that failed while compared
NOT_COMPARED = "your code could not be compared"

QUERY_AXIS = (
    "you took the softmax over the queries (dim=0) instead of over the keys "
    "(the last axis): each ROW must sum to 1"
)


@checked_plainly
def as_tensor(value, name: str = "answer") -> torch.Tensor:
    """A float64 CPU tensor of ``value`` (a tensor, NumPy array, list or number).

    A read-only NumPy array (``np.broadcast_to`` gives one) is copied first: torch warns
    on those, and nbgrader counts any warning in a test cell's output as a failure.
    """
    if value is None:
        raise AssertionError(f"{name} is None: did you forget to return or assign it?")
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu", torch.float64)
    if isinstance(value, (list, tuple)) and any(item is Ellipsis for item in value):
        raise AssertionError(f"{name} still holds `...`: replace each `...` with your number")
    if isinstance(value, np.ndarray) and not value.flags.writeable:
        value = np.array(value)
    try:
        return torch.as_tensor(value, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError) as error:
        raise AssertionError(
            f"{name} must be numbers; got {type(value).__name__}: {error}"
        ) from None


def _same(a: torch.Tensor, b: torch.Tensor, atol: float) -> bool:
    return a.shape == b.shape and torch.allclose(a, b, rtol=0.0, atol=atol, equal_nan=True)


def _round(t: torch.Tensor) -> list:
    return torch.round(t * 1e4).div(1e4).tolist()


@checked_plainly
def check_shape(actual, expected_shape, name: str = "answer") -> None:
    """Fail unless ``actual`` has shape ``expected_shape``."""
    got = tuple(as_tensor(actual, name).shape)
    if got != tuple(expected_shape):
        raise AssertionError(f"{name} should have shape {tuple(expected_shape)}; got {got}")


@checked_plainly
def check_close(
    actual, expected, name: str = "answer", atol: float = 1e-4, mistakes=None, reveal: bool = True,
    nan_hint: str = "",
) -> None:
    """Fail unless ``actual`` equals ``expected`` within ``atol``.

    ``mistakes`` maps a message to the value a known mistake would give; when the
    answer matches one of them, that message is the diagnosis. ``reveal=False`` (for
    values worked out by hand, checked by a visible test) keeps the expected values out
    of the message: it names the entries that are off instead. ``nan_hint``: where the
    check's own exercise can say where a NaN or inf comes from (a mistake and where to
    look, never the fix), added to the symptom when the answer holds one.
    """
    actual_t = as_tensor(actual, name)
    expected_t = as_tensor(expected, "expected")
    if actual_t.shape != expected_t.shape:
        raise AssertionError(
            f"{name} should have shape {tuple(expected_t.shape)}; got {tuple(actual_t.shape)}"
        )
    if _same(actual_t, expected_t, atol):
        return
    for message, wrong in (mistakes or {}).items():
        if _same(actual_t, as_tensor(wrong), atol):
            raise AssertionError(f"{name} is not right: {message}.")
    hint = ""
    if not torch.isfinite(actual_t).all() and torch.isfinite(expected_t).all():
        hint = "\n  It contains NaN or inf where every expected value is finite"
        hint += f": {nan_hint}." if nan_hint else "."
    if not reveal:
        off = (actual_t - expected_t).abs() > atol
        off |= torch.isnan(actual_t)
        entries = [tuple(i + 1 for i in index) for index in off.nonzero().tolist()]
        entries = [e[0] if len(e) == 1 else e for e in entries]
        raise AssertionError(
            f"{name} is not right (tolerance {atol}): entries {entries} (counting from 1) "
            f"are off.\n  got: {_round(actual_t)}.{hint}"
        )
    raise AssertionError(
        f"{name} is not right (tolerance {atol}).\n  expected: {_round(expected_t)}\n"
        f"  got:      {_round(actual_t)}.{hint}"
    )


@checked_plainly
def check_rows_sum_to_one(weights, name: str = "attention weights", atol: float = 1e-4) -> None:
    """Fail unless every row of ``weights`` is a probability distribution (≥ 0, sums to 1)."""
    w = as_tensor(weights, name)
    if torch.isnan(w).any():
        raise AssertionError(
            f"{name} contain NaN: a row where every position is masked has no softmax (0/0)"
        )
    if (w < -atol).any():
        raise AssertionError(f"{name} have negative entries: softmax gives values in [0, 1]")
    row_sums = w.sum(dim=-1)
    if torch.allclose(row_sums, torch.ones_like(row_sums), atol=atol):
        return
    if w.dim() >= 2:
        col_sums = w.sum(dim=-2)
        if torch.allclose(col_sums, torch.ones_like(col_sums), atol=atol):
            raise AssertionError(f"{name}: {QUERY_AXIS}")
    raise AssertionError(
        f"the rows of {name} do not sum to 1 (they sum to {_round(row_sums)}): "
        "did you take the softmax over the key axis (the last one)?"
    )


@contextlib.contextmanager
def comparing(exercises: str):
    """Run the block; if ``exercises`` (e.g. ``"exercise 5"``) is not done yet, print
    ``(finish exercise 5 to compare)``, and if the answer fails, print its error."""
    try:
        yield
    except NotImplementedError:
        print(f"(finish {exercises} to compare)")
    except Exception as error:  # a wrong answer may fail here too: say so, and go on
        print(f"({NOT_COMPARED}: {type(error).__name__}: {error})")


def counterexample_parts(counterexample, unwritten: str, parts: str) -> tuple:
    """The two parts of a counterexample pair, made plain; fails naming what is wrong when
    it is still ``...`` (``unwritten`` says what to write) or not a pair (``parts`` names
    the pair's parts, "(a, b) of matrices")."""
    given = plain(counterexample, "counterexample")
    if given is Ellipsis:
        raise AssertionError(f"counterexample is still `...`: {unwritten}")
    if not isinstance(given, list | tuple) or len(given) != 2:
        raise AssertionError(f"counterexample must be a pair {parts}; got "
                             f"{type(given).__name__}")
    return tuple(given)


class Unfinished:
    """Stands for what an exercise's function returns until the exercise is done, in a
    plain cell whose later cells use the result: ``byte_level = checks.Unfinished("exercise
    4")``. Any use of it (an attribute, an item, ``in``, a loop, ``len``, a call) raises
    ``NotImplementedError``, which ``comparing`` reports as "finish exercise 4"."""

    def __init__(self, exercise: str):
        self.exercise = exercise

    def _not_yet(self, *_):
        raise NotImplementedError(f"{self.exercise} is not done yet")

    def __getattr__(self, name: str):
        self._not_yet()

    __getitem__ = __contains__ = __iter__ = __len__ = __call__ = _not_yet

    def __repr__(self) -> str:
        return f"Unfinished({self.exercise!r})"

"""Inputs handed to an answer are copies, so an answer is graded on what it returns.

An answer that updates its inputs in place (``S += update``, ``x -= mu``,
``W -= lr * grad``) is right when it returns the right values; but a test that then builds
its reference from the same, now changed, input would fail it. The test's own inputs stay
as they were: the answer gets copies.

    fresh((W, ids, [1, 2]))  -> (a clone of W, a clone of ids, [1, 2] as a new list)
"""

import copy

import numpy as np
import torch

__all__ = ["fresh"]


def fresh(value):
    """A copy of ``value`` that shares nothing mutable with it: tensors are cloned (detached),
    arrays copied, lists, tuples, sets and dicts rebuilt around copies of their items,
    ``nn.Module``s deep-copied. Numbers, strings, functions and other objects are passed
    as they are."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, torch.nn.Module):
        return copy.deepcopy(value)
    if type(value) in (list, tuple, set, frozenset):
        return type(value)(fresh(item) for item in value)
    if type(value) is dict:
        return {key: fresh(item) for key, item in value.items()}
    return value

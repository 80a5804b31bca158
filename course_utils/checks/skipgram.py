"""Diagnostic checks for the skipgram notebook's test cells.

Each check computes the right answer its own way (plain loops, ``F.cross_entropy``,
``F.binary_cross_entropy_with_logits``) and, when the student's answer matches a typical
mistake instead, names that mistake.
"""

from collections import Counter

import torch
import torch.nn.functional as F

from .core import as_tensor, check_close

__all__ = ["check_negative_sampling_loss", "check_window_loss", "check_window_pairs"]


def _pairs(words, c, include_center=False, wrap=False):
    words = list(words)
    n = len(words)
    pairs = []
    for t in range(n):
        for j in range(-c, c + 1):
            if j == 0 and not include_center:
                continue
            if 0 <= t + j < n:
                pairs.append((words[t], words[t + j]))
            elif wrap:
                pairs.append((words[t], words[(t + j) % n]))
    return pairs


def check_window_pairs(actual, words, c: int, expected=None, name: str = "window_pairs") -> None:
    """Fail unless ``actual`` holds the (center, context) pairs with 0 < |j| <= c (any order)."""
    if actual is None:
        raise AssertionError(f"{name} is None: did you forget to return the list of pairs?")
    try:
        got = Counter(tuple(pair) for pair in actual)
    except TypeError:
        raise AssertionError(f"{name} must be a list of (center, context) pairs") from None
    right = Counter(_pairs(words, c) if expected is None else map(tuple, expected))
    if got == right:
        return
    mistakes = {
        "it pairs each word with itself (j = 0); the context is 0 < |j| <= c": _pairs(
            words, c, True
        ),
        "windows wrap around the ends of the text; offsets before the first word or after "
        "the last are skipped": _pairs(words, c, wrap=True),
    }
    for other in {1, 2, 3, len(words)} - {c}:
        mistakes[f"these are the pairs for c = {other}, not c = {c}: use the argument c"] = _pairs(
            words, other
        )
    for message, pairs in mistakes.items():
        if got == Counter(pairs):
            raise AssertionError(f"{name} is not right: {message}.")
    missing, extra = list((right - got).elements()), list((got - right).elements())
    raise AssertionError(
        f"{name} is not right for c = {c} on {list(words)}: expected {sum(right.values())} pairs, "
        f"got {sum(got.values())}.\n  missing: {missing[:6]}\n  unexpected: {extra[:6]}"
    )


def _window_loss_variants(W, ids, t, c):
    n = ids.numel()
    center = W[ids[t]]
    logits = (W @ center)[None, :]  # (1, N)
    inside = [t + j for j in range(-c, c + 1) if j != 0 and 0 <= t + j < n]
    wrapped = [(t + j) % n for j in range(-c, c + 1) if j != 0 and (t + j) < n]

    def nll(positions):
        targets = ids[positions]
        return F.cross_entropy(logits.expand(len(positions), -1), targets, reduction="sum")

    right = nll(inside)
    mistakes = {
        "the log-sum-exp (the softmax's denominator) is missing: -log P(b|a) is "
        "-v_a.v_b + log sum_i exp(v_a.v_i)": -(W[ids[inside]] @ center).sum(),
        "it includes j = 0, the center word predicting itself": nll(inside + [t]),
        "it averages over the context words; L_t is their sum": right / len(inside),
        "a negative index wraps around to the end of the text: skip t + j < 0": nll(wrapped),
        "the sign is wrong: the loss is MINUS the sum of log-probabilities": -right,
    }
    return right, mistakes


def check_window_loss(actual, W, ids, t: int, c: int, name: str = "window_loss") -> None:
    """Fail unless ``actual`` is L_t = -sum_{0<|j|<=c} log P(w_{t+j} | w_t) (one matrix W)."""
    W = as_tensor(W, "W")
    ids = torch.as_tensor(ids).long().cpu()
    value = as_tensor(actual, name)
    if value.numel() != 1:
        raise AssertionError(
            f"{name} must be one number (a scalar tensor); got shape {tuple(value.shape)}"
        )
    right, mistakes = _window_loss_variants(W, ids, t, c)
    check_close(
        value.reshape(()), right, name, atol=1e-4 * max(1.0, abs(float(right))), mistakes=mistakes
    )


def check_negative_sampling_loss(
    actual, v_center, u_context, u_negatives, name: str = "loss"
) -> None:
    """Fail unless ``actual`` is mean_b [-log sigma(u_b.v_a) - sum_k log sigma(-u_k.v_a)]."""
    v, u, un = (
        as_tensor(x, n)
        for x, n in ((v_center, "v_center"), (u_context, "u_context"), (u_negatives, "u_negatives"))
    )
    value = as_tensor(actual, name)
    if value.numel() != 1:
        raise AssertionError(
            f"{name} must be one number (the mean over the batch); got shape {tuple(value.shape)}"
        )
    positive = (u * v).sum(-1)  # (B,)
    negative = torch.einsum("bkd,bd->bk", un, v)  # (B, K)
    bce = F.binary_cross_entropy_with_logits

    def loss(neg_sign=1.0, reduce="mean"):
        per_pair = bce(positive, torch.ones_like(positive), reduction="none") + bce(
            neg_sign * negative, torch.zeros_like(negative), reduction="none"
        ).sum(-1)
        return per_pair.mean() if reduce == "mean" else per_pair.sum()

    right = loss()
    mistakes = {
        "the negatives have the wrong sign: they enter as log sigma(-u_k.v_a), pushing "
        "their dot products down": loss(neg_sign=-1.0),
        "it sums over the batch; return the mean": loss(reduce="sum"),
        "the sign is wrong: the loss is MINUS the log-likelihood": -right,
        "the negative words are missing": bce(positive, torch.ones_like(positive)),
    }
    check_close(
        value.reshape(()), right, name, atol=1e-4 * max(1.0, abs(float(right))), mistakes=mistakes
    )

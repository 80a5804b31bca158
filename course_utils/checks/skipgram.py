"""Diagnostic checks for the skipgram notebook's test cells.

Each check computes the right answer its own way (plain loops, ``F.cross_entropy``,
``F.binary_cross_entropy_with_logits``, autograd) and, when the student's answer matches a
typical mistake instead, names that mistake.
"""

from collections import Counter

import torch
import torch.nn.functional as F

from .core import as_tensor, check_close
from .guards import checked_plainly

__all__ = [
    "check_negative_sampling_loss",
    "check_sgd_step",
    "check_window_loss",
    "check_window_pairs",
]


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


def _item(x):
    """A plain Python value for a 0-d tensor or NumPy scalar (they hash like the value)."""
    return x.item() if getattr(x, "ndim", None) == 0 and hasattr(x, "item") else x


def _as_pairs(pairs, name: str) -> Counter:
    """The multiset of pairs: tuples or lists, rows of an array or tensor, any order."""
    try:
        got = Counter(tuple(_item(x) for x in pair) for pair in pairs)
    except TypeError:
        raise AssertionError(f"{name} must be a list of (center, context) pairs") from None
    if any(len(pair) != 2 for pair in got):
        raise AssertionError(f"{name} must be a list of (center, context) pairs, two words each")
    return got


@checked_plainly
def check_window_pairs(actual, words, c: int, expected=None, name: str = "window_pairs") -> None:
    """Fail unless ``actual`` holds the (center, context) pairs with 0 < |j| <= c.

    Compared as multisets: any order, tuples or lists, rows of an array or tensor.
    """
    if actual is None:
        raise AssertionError(f"{name} is None: did you forget to return the list of pairs?")
    words = [_item(w) for w in words]
    got = _as_pairs(actual, name)
    right = Counter(_pairs(words, c)) if expected is None else _as_pairs(expected, "expected")
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


@checked_plainly
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


def _window_gradient(W, ids, t, c):
    """dL_t/dW by autograd on this module's own L_t (F.cross_entropy), and the closed-form
    parts that the typical mistakes keep or drop: {message: wrong gradient}.

    With p = P(. | a) (N,), m context words and n_i the number of times word i is one of
    them, L_t = sum_b [-v_a.v_b + log sum_i exp(v_a.v_i)] has
    dL_t/dv_i = (m p_i - n_i) v_a (word i as a context word) plus, on the center's row a,
    sum_i (m p_i - n_i) v_i (word a as the center).
    """
    n = ids.numel()
    inside = [t + j for j in range(-c, c + 1) if j != 0 and 0 <= t + j < n]
    a = int(ids[t])
    with torch.enable_grad():
        leaf = W.detach().clone().requires_grad_()
        logits = (leaf @ leaf[a])[None, :].expand(len(inside), -1)
        F.cross_entropy(logits, ids[inside], reduction="sum").backward()
    right = leaf.grad
    W = W.detach()
    p = torch.softmax(W @ W[a], dim=0)
    observed = torch.bincount(ids[inside], minlength=W.shape[0]).to(W.dtype)
    expected = len(inside) * p

    def gradient(error, center=True, context=True, overwrite=False):
        grad = torch.zeros_like(W)
        if context:
            grad += error[:, None] * W[a][None, :]
        if overwrite:
            grad[a] = error @ W
        elif center:
            grad[a] += error @ W
        return grad

    error = expected - observed
    mistakes = {
        "the sign is flipped: dL_t/dW is expected minus observed, (m p_i - n_i), "
        "not observed minus expected": -right,
        "the expected term is missing: besides -v_b for the observed words, every word i "
        "contributes m P(i|a) (the softmax's denominator has a gradient too)": gradient(-observed),
        "only the center row is there: every word i also gets (m P(i|a) - n_i) v_a "
        "as a context (output) vector, so all N rows change": gradient(error, context=False),
        "the center row's own part is missing: the center word's vector v_a is also "
        "in every score v_a.v_i, so row a gets sum_i (m P(i|a) - n_i) v_i too": gradient(
            error, center=False
        ),
        "row a holds only its part as the center: with one matrix the center word's vector "
        "is also a context (output) vector, so its two parts ADD (+=, not =)": gradient(
            error, overwrite=True
        ),
        "it is averaged over the context words; L_t is their sum": right / len(inside),
    }
    return right, mistakes


def _as_step(result, name):
    if result is None:
        raise AssertionError(f"{name} is None: did you forget to return (loss, grad, W_new)?")
    if not isinstance(result, tuple | list) or len(result) != 3:
        got = f"{len(result)} values" if isinstance(result, tuple | list) else type(result).__name__
        raise AssertionError(f"{name} must return three values (loss, grad, W_new); got {got}")
    return result


@checked_plainly
def check_sgd_step(result, W, ids, t: int, c: int, lr: float, name: str = "sgd_step") -> None:
    """Fail unless ``result`` is (L_t(W), dL_t/dW, W - lr dL_t/dW), checked against autograd.

    ``W`` is the matrix as it was BEFORE the call (pass the student's function a clone).
    """
    loss, grad, W_new = _as_step(result, name)
    W = as_tensor(W, "W")
    ids = torch.as_tensor(ids).long().cpu()
    check_window_loss(loss, W, ids, t, c, f"the loss of {name}")
    right, mistakes = _window_gradient(W, ids, t, c)
    scale = 1e-4 * max(1.0, float(right.abs().max()))
    check_close(grad, right, f"the gradient of {name}", atol=scale, mistakes=mistakes)
    step_mistakes = {
        "the step goes uphill (gradient ascent): descent SUBTRACTS, W - lr * grad": W + lr * right,
        "the learning rate is missing: W_new = W - lr * grad": W - right,
        "W_new is W unchanged: return W - lr * grad": W,
        "W_new is the step lr * grad, not the new matrix W - lr * grad": -lr * right,
    }
    check_close(
        W_new, W - lr * right, f"W_new of {name}", atol=scale * max(1.0, lr), mistakes=step_mistakes
    )


@checked_plainly
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

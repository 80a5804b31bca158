"""Diagnostic checks for the skipgram notebook's test cells.

The expected values come from libraries and from properties, never from an exercise
written again:

* the pairs of a text are judged by what the exercise asks of them: every pair (a, b) occurs
  as often as some word a stands within c words of some word b, and there are as many
  pairs as the windows hold, sum_t min(c, t) + min(c, T - 1 - t) (or the pairs the visible
  test states, the lectures' worked example); each slip is the same property on a
  transformed text (the text three times over, for windows that wrap around) or for another
  c, or the answer without the pairs of each word with itself. A failure names which
  property fails, never the pairs or the count (finding them is exercise 1's bug hunt);
* the loss of one window is PyTorch's ``F.cross_entropy`` of the center's scores at the
  context words, summed; each slip is that call on other targets, or its value changed as
  the slip changes it;
* a gradient is autograd's, of that loss; each slip is autograd's gradient with the part of
  W the slip forgets detached, or of the loss a slip computes;
* the negative-sampling loss is PyTorch's ``F.binary_cross_entropy_with_logits`` (label 1
  for the context word, 0 for the noise words), changed as each slip changes it.
"""

from collections import Counter

import torch
import torch.nn.functional as F

from .core import as_tensor, check_close
from .guards import checked_plainly

__all__ = [
    "check_lse_factor",
    "check_negative_sampling_loss",
    "check_sgd_step",
    "check_window_loss",
    "check_window_pairs",
]


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


def _window_problems(got: Counter, words: list, c: int, centers: range) -> list[str]:
    """What keeps ``got`` from being the pairs of the words at ``centers`` with their
    neighbours within ``c`` words in ``words`` (empty: it is them), in words that name the
    property, not the pairs or the count.

    Two properties: every pair (a, b) occurs as often as an a at one of the centers stands
    within c words of a b, and there are as many pairs as the windows hold. Together they
    leave one multiset of pairs."""
    where: dict = {}
    for position, word in enumerate(words):
        where.setdefault(word, []).append(position)
    too_often = too_rarely = False
    for (a, b), count in got.items():
        near = sum(0 < abs(s - t) <= c for s in where.get(a, ()) if s in centers
                   for t in where.get(b, ()))
        too_often |= count > near
        too_rarely |= count < near
    problems = []
    if too_often:
        problems.append(f"some of your pairs are not within c = {c} words of each other in "
                        "the text (or occur more often than they are)")
    if too_rarely:
        problems.append("some pairs occur less often than their words stand within c of "
                        "each other")
    total = sum(min(c, t) + min(c, len(words) - 1 - t) for t in centers)
    if sum(got.values()) != total:
        problems.append("the number of your pairs is not the number the windows hold")
    return problems


@checked_plainly
def check_window_pairs(actual, words, c: int, expected=None, name: str = "window_pairs") -> None:
    """Fail unless ``actual`` holds the (center, context) pairs with 0 < |j| <= c.

    Compared as multisets: any order, tuples or lists, rows of an array or tensor.
    ``expected``: the pairs, where the visible test states them.
    """
    if actual is None:
        raise AssertionError(f"{name} is None: did you forget to return the list of pairs?")
    words = [_item(w) for w in words]
    got = _as_pairs(actual, name)
    everywhere = range(len(words))
    problems = _window_problems(got, words, c, everywhere)
    if expected is not None:
        problems = [] if got == _as_pairs(expected, "expected") else problems or ["expected"]
    if not problems:
        return
    mistakes = {
        "it pairs each word with itself (j = 0); the context is 0 < |j| <= c":
            _window_problems(got - Counter((w, w) for w in words), words, c, everywhere),
    }
    if c <= len(words):
        mistakes["windows wrap around the ends of the text; offsets before the first word or "
                 "after the last are skipped"] = _window_problems(
                     got, words * 3, c, range(len(words), 2 * len(words)))
    for other in sorted({1, 2, 3, len(words)} - {c}):
        mistakes[f"these are the pairs for c = {other}, not c = {c}: use the argument c"] = (
            _window_problems(got, words, other, everywhere))
    for message, wrong in mistakes.items():
        if not wrong and sum(got.values()):
            raise AssertionError(f"{name} is not right: {message}.")
    if expected is not None:
        right = _as_pairs(expected, "expected")
        problems = [what for what, there in (("some pairs are missing", right - got),
                                             ("some pairs should not be there", got - right))
                    if there]
    raise AssertionError(f"{name} is not right for c = {c} on {words}:\n  "
                         + "\n  ".join(problems))


@checked_plainly
def check_lse_factor(actual, name: str = "lse_factor") -> None:
    """Fail unless ``actual`` is one positive number: the factor of the log-sum-exp in a
    window's loss. Never whether it is right.

    The factor of the lectures' window is the same for every student, so a check that said
    whether it is right would be an oracle a loop over candidates could query. This one fails
    only on what no right answer is (not one finite number; zero or negative, which a loss
    that is the negative log of a probability cannot give). Whether it is right is decided
    when the work is graded: the value it reports is compared with the stored answer
    (``grader.scoring.outside``).
    """
    factor = as_tensor(actual, name)
    if factor.numel() != 1 or not torch.isfinite(factor).all():
        raise AssertionError(f"{name} should be one number, the factor; got shape "
                             f"{tuple(factor.shape)}")
    if factor.item() <= 0:
        raise AssertionError(f"{name} is {factor.item():g}: L_t is the negative log of a "
                             "probability, so the log-sum-exp enters it with a positive "
                             "factor; look at the sign of each term of your derivation")
    print(f"✓ {name}: one positive number; whether it is right is checked when your work is "
          "graded")


def _context(ids: torch.Tensor, t: int, c: int) -> torch.Tensor:
    """The ids of the context words of position t, 0 < |j| <= c inside the text."""
    return torch.cat([ids[max(0, t - c) : t], ids[t + 1 : t + c + 1]])


def _cross_entropy(W: torch.Tensor, a, targets: torch.Tensor) -> torch.Tensor:
    """PyTorch's summed cross-entropy of the center a's scores W v_a at the targets."""
    scores = (W @ W[a])[None, :].expand(len(targets), -1)
    return F.cross_entropy(scores, targets, reduction="sum")


@checked_plainly
def check_window_loss(actual, W, ids, t: int, c: int, name: str = "window_loss") -> None:
    """Fail unless ``actual`` is L_t, the loss of the window centred at t (one matrix W)."""
    W = as_tensor(W, "W")
    ids = torch.as_tensor(ids).long().cpu()
    value = as_tensor(actual, name)
    if value.numel() != 1:
        raise AssertionError(
            f"{name} must be one number (a scalar tensor); got shape {tuple(value.shape)}"
        )
    a, context = int(ids[t]), _context(ids, t, c)
    right = _cross_entropy(W, a, context)
    wrapped = _context(torch.cat([ids, ids]), len(ids) + t, c)  # ids[t + j] for t + j < 0
    mistakes = {
        "the log-sum-exp (the softmax's denominator) is missing: look at what P(b|a) divides "
        "by (Key Equation 16)": right - len(context) * torch.logsumexp(W @ W[a], 0),
        "the log-sum-exp (the softmax's denominator) appears the wrong number of times: "
        "count the terms of your derivation":
            right - (len(context) - 1) * torch.logsumexp(W @ W[a], 0),
        "it includes j = 0, the center word predicting itself": _cross_entropy(
            W, a, torch.cat([context, ids[t : t + 1]])),
        "it averages over the context words; L_t is their sum": right / len(context),
        "near the start of the text your window wraps around to words from its end: look "
        "at the positions your window takes when t - c < 0": _cross_entropy(W, a, wrapped),
        "the sign is wrong: the loss is MINUS the sum of log-probabilities": -right,
    }
    check_close(
        value.reshape(()), right, name, atol=1e-4 * max(1.0, abs(float(right))), mistakes=mistakes
    )


def _autograd(W, a: int, context, as_center=True, as_context=True, normalised=True):
    """Autograd's dL/dW of the summed cross-entropy of the window, or of what a slip
    computes: v_a detached as the center (``as_center=False``), the rows detached as
    context vectors (``as_context=False``), the log-sum-exp left out (``normalised=False``)."""
    with torch.enable_grad():
        leaf = W.detach().clone().requires_grad_()
        center = leaf[a] if as_center else leaf[a].detach()
        rows = leaf if as_context else leaf.detach()
        scores = rows @ center
        loss = F.cross_entropy(scores[None, :].expand(len(context), -1), context, reduction="sum")
        if not normalised:
            loss = loss - len(context) * torch.logsumexp(scores, 0)
        (grad,) = torch.autograd.grad(loss, leaf)
    return grad


def _as_step(result, name):
    if result is None:
        raise AssertionError(f"{name} is None: did you forget to return (loss, grad, W_new)?")
    if not isinstance(result, tuple | list) or len(result) != 3:
        got = f"{len(result)} values" if isinstance(result, tuple | list) else type(result).__name__
        raise AssertionError(f"{name} must return three values (loss, grad, W_new); got {got}")
    return result


@checked_plainly
def check_sgd_step(result, W, ids, t: int, c: int, lr: float, name: str = "sgd_step") -> None:
    """Fail unless ``result`` is (L_t(W), dL_t/dW, one step of gradient descent), checked
    against autograd.

    ``W`` is the matrix as it was BEFORE the call (pass the student's function a clone).
    """
    loss, grad, W_new = _as_step(result, name)
    W = as_tensor(W, "W")
    ids = torch.as_tensor(ids).long().cpu()
    check_window_loss(loss, W, ids, t, c, f"the loss of {name}")
    a, context = int(ids[t]), _context(ids, t, c)
    right = _autograd(W, a, context)
    overwritten = _autograd(W, a, context, as_center=False)
    overwritten[a] = _autograd(W, a, context, as_context=False)[a]
    mistakes = {
        "your gradient is autograd's with the sign flipped: look at the sign of each term "
        "of your two derivatives": -right,
        "your gradient is what it would be without the log-sum-exp: look at what the "
        "normaliser contributes to your derivatives":
            _autograd(W, a, context, normalised=False),
        "rows of your gradient other than the center's differ from autograd's: look at your "
        "derivative with respect to the output vectors": _autograd(W, a, context,
                                                                  as_context=False),
        "row a, the center word's, differs from autograd's and every other row agrees: "
        "look at every score of the window that v_a enters": _autograd(
            W, a, context, as_center=False),
        "row a, the center word's, differs from autograd's and every other row agrees: look "
        "at whether anything your code writes into row a replaces what is there": overwritten,
        "it is averaged over the context words; L_t is their sum": right / len(context),
    }
    scale = 1e-4 * max(1.0, float(right.abs().max()))
    check_close(grad, right, f"the gradient of {name}", atol=scale, mistakes=mistakes)
    step_mistakes = {
        "the step goes uphill (gradient ascent): look at the sign of the step": W + lr * right,
        "the learning rate is missing from the step": W - right,
        "W_new is W unchanged: one step moves W against its gradient": W,
        "W_new is the step alone, not the new matrix after the step": -lr * right,
    }
    check_close(
        W_new, W - lr * right, f"W_new of {name}", atol=scale * max(1.0, lr), mistakes=step_mistakes
    )


@checked_plainly
def check_negative_sampling_loss(
    actual, v_center, u_context, u_negatives, name: str = "loss"
) -> None:
    """Fail unless ``actual`` is the mean over the batch of the negative-sampling loss of
    each pair (exercise 4), PyTorch's logistic loss of its 1 + K scores."""
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
        "the noise words' terms have the wrong sign: your loss rewards large dot products "
        "with them; look at the probability of a 'no' in your derivation": loss(neg_sign=-1.0),
        "it sums over the batch; return the mean": loss(reduce="sum"),
        "the sign is wrong: the loss is MINUS the log-likelihood": -right,
        "the negative words are missing": bce(positive, torch.ones_like(positive)),
    }
    check_close(
        value.reshape(()), right, name, atol=1e-4 * max(1.0, abs(float(right))), mistakes=mistakes
    )

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
* a negative-sampling step is autograd's, of PyTorch's ``F.binary_cross_entropy_with_logits``
  summed over the batch (label 1 for the context word, 0 for the noise words); each slip is
  autograd's step on that loss with the part the slip forgets detached or its sign changed;
  a step that gets every row right but those the batch names more than once is named too;
* the objective at W = 0, a formula in T, c and N, is judged by its form only (one positive
  number): the grader compares the values of its hidden tests with the stored answers.
"""

from collections import Counter

import torch
import torch.nn.functional as F

from .core import as_tensor, check_close
from .guards import checked_plainly

__all__ = [
    "check_j_at_zero",
    "check_ns_step",
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
def check_j_at_zero(actual, T: int, c: int, N: int, name: str = "j_at_zero") -> None:
    """Fail unless ``actual``, what ``j_at_zero(T, c, N)`` returned, is one positive number:
    J(theta) at W = 0 for a text of T words, the maximum skip distance c and N words. Never
    whether it is right.

    A check that said whether it is right would be an oracle a loop over candidate formulas
    could query. This one fails only on what no right answer is (not one number; a number
    that is not finite and positive). Whether it is right is decided when the work is graded:
    the values its hidden tests report, for other T, c and N, are compared with the stored
    answers (``grader.scoring.outside``).
    """
    for value, what in ((T, "T"), (c, "c"), (N, "N")):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{what} must be a positive int; got {value!r}")
    value = as_tensor(actual, name)
    if value.numel() != 1 or not torch.isfinite(value).all() or value.item() <= 0:
        raise AssertionError(f"{name} should return one positive number, J(theta) at W = 0; "
                             f"got {actual!r}")


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


def _as_step(result, name, what="(loss, grad, W_new)"):
    if result is None:
        raise AssertionError(f"{name} is None: did you forget to return {what}?")
    if not isinstance(result, tuple | list) or len(result) != 3:
        got = f"{len(result)} values" if isinstance(result, tuple | list) else type(result).__name__
        raise AssertionError(f"{name} must return three values {what}; got {got}")
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


def _ns_step(inputs: tuple, noise_sign=1.0, noise_rows=True, center_noise=True, scale=1.0):
    """On ``inputs`` = (V, U, centers, contexts, noise, lr), autograd's step on L, the sum
    over the batch of each pair's PyTorch logistic loss of its 1 + K scores (one tuple, so
    that no call of the exercise's own fits it), or on what a slip computes: the noise
    words' scores with their sign changed (``noise_sign=-1``), the noise words' rows of U
    detached (``noise_rows=False``), v_a detached in the noise words' scores
    (``center_noise=False``), L scaled (``scale``).
    Returns (L, V - lr dL/dV, U - lr dL/dU)."""
    V, U, centers, contexts, noise, lr = inputs
    with torch.enable_grad():
        V_leaf, U_leaf = (M.detach().clone().requires_grad_() for M in (V, U))
        v = V_leaf[centers]
        positive = (U_leaf[contexts] * v).sum(-1)  # (B,)
        u_noise = U_leaf[noise] if noise_rows else U_leaf.detach()[noise]
        v_noise = v if center_noise else v.detach()
        negative = noise_sign * torch.einsum("bkd,bd->bk", u_noise, v_noise)  # (B, K)
        bce = F.binary_cross_entropy_with_logits
        loss = scale * (bce(positive, torch.ones_like(positive), reduction="sum")
                        + bce(negative, torch.zeros_like(negative), reduction="sum"))
        grad_V, grad_U = torch.autograd.grad(loss, (V_leaf, U_leaf))
    return loss.detach(), V - lr * grad_V, U - lr * grad_U


def _only_repeated_rows_off(actual, right, ids, atol) -> bool:
    """Whether ``actual`` differs from ``right`` only in rows whose id occurs more than once
    in ``ids`` (a step that writes each pair's gradient over the last instead of adding)."""
    got = as_tensor(actual, "rows")
    if got.shape != right.shape:
        return False
    off = ((got - right).abs() > atol).any(dim=1)
    repeated = torch.bincount(ids.reshape(-1), minlength=len(right)) > 1
    return bool(off.any() and repeated[off].all())


@checked_plainly
def check_ns_step(result, V, U, centers, contexts, noise, lr: float,
                  name: str = "ns_step") -> None:
    """Fail unless ``result`` is (L, V_new, U_new): L the sum over the batch of each pair's
    negative-sampling loss, and one step of gradient descent on it, checked against autograd.

    ``V`` and ``U`` are the tables as they were BEFORE the call.
    """
    loss, V_new, U_new = _as_step(result, name, "(loss, V_new, U_new)")
    V, U = as_tensor(V, "V"), as_tensor(U, "U")
    centers, contexts, noise = (torch.as_tensor(x).long().cpu() for x in (centers, contexts, noise))
    args = (V, U, centers, contexts, noise, lr)
    right, V_right, U_right = _ns_step(args)
    value = as_tensor(loss, f"the loss of {name}")
    if value.numel() != 1:
        raise AssertionError(f"the loss of {name} must be one number, L summed over the batch; "
                             f"got shape {tuple(value.shape)}")
    check_close(value.reshape(()), right, f"the loss of {name}",
                atol=1e-4 * max(1.0, abs(float(right))), mistakes={
                    "the noise words' terms have the wrong sign: your loss rewards large dot "
                    "products with them; look at the probability of a 'no' in your derivation":
                        _ns_step(args, noise_sign=-1.0)[0],
                    "it is the mean over the batch; L is the sum of the pairs' losses":
                        right / len(centers),
                    "the sign is wrong: the loss is MINUS the log-likelihood": -right,
                })
    slips = {
        "the noise words' terms have the wrong sign: look at the label of a 'no' in your "
        "derivatives": _ns_step(args, noise_sign=-1.0),
        "the noise words' context vectors u_n do not move: look at your derivative with "
        "respect to u_n": _ns_step(args, noise_rows=False),
        "the center vectors miss the noise words' part: look at every term of l that v_a "
        "enters": _ns_step(args, center_noise=False),
        "the step follows the gradient of the batch's mean; L is the sum of the pairs' "
        "losses": _ns_step(args, scale=1 / len(centers)),
        "the step goes uphill (gradient ascent): look at the sign of the step":
            (None, 2 * V - V_right, 2 * U - U_right),
        "the learning rate is missing from the step":
            (None, V - (V - V_right) / lr, U - (U - U_right) / lr) if lr else (None, V, U),
    }
    atol = 1e-4 * max(1.0, float((V - V_right).abs().max()), float((U - U_right).abs().max()))
    repeated = ("a word that the batch names in several pairs gets the sum of their "
                "gradients: look at how your step writes the rows of a word that occurs "
                "more than once")
    for index, (table, answer, right_table, ids) in enumerate((
            ("V_new", V_new, V_right, centers),
            ("U_new", U_new, U_right, torch.cat([contexts[:, None], noise], dim=1)))):
        mistakes = {message: slip[index + 1] for message, slip in slips.items()}
        if _only_repeated_rows_off(answer, right_table, ids, atol):
            mistakes[repeated] = answer
        check_close(answer, right_table, f"{table} of {name}", atol=atol, mistakes=mistakes)

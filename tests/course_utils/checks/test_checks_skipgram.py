"""Every diagnostic of course_utils.checks.skipgram: the modelled mistake triggers its
message, right answers written in other ways (any order, lists, arrays, tensors, float32
or float64, loops) trigger none."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from course_utils import checks
from tests.support.skipgram_example import SAMPLE_PAIRS_C2, SENTENCE

FOX = "the quick brown fox jumps over the lazy dog".split()


def pairs(words, c, center=False, wrap=False, right_first=False):
    offsets = [j for j in range(-c, c + 1) if center or j != 0]
    if right_first:
        offsets = sorted(offsets, key=lambda j: (j < 0, abs(j)))
    n = len(words)
    return [
        (words[t], words[(t + j) % n]) for t in range(n) for j in offsets if wrap or 0 <= t + j < n
    ]


def fails(message_part, check, *args, **kwargs):
    with pytest.raises(AssertionError, match=message_part):
        check(*args, **kwargs)


# ---------------------------------------------------------------------------- window pairs
@pytest.mark.parametrize(
    "answer",
    [
        pairs(FOX, 2),
        pairs(FOX, 2, right_first=True),
        list(reversed(pairs(FOX, 2))),
        [list(p) for p in pairs(FOX, 2)],
        np.array(pairs(FOX, 2)),
        tuple(pairs(FOX, 2)),
    ],
    ids=["text order", "right-hand first", "reversed", "lists", "numpy", "tuple"],
)
def test_window_pairs_accepts_any_order_and_container(answer):
    checks.check_window_pairs(answer, FOX, 2)


def test_a_generator_is_refused_with_what_to_return_instead():
    """A generator runs the student's code later, inside the check: it is not plain data."""
    with pytest.raises(AssertionError, match="is a generator: return a plain tensor.*list"):
        checks.check_window_pairs((p for p in pairs(FOX, 2)), FOX, 2)


def test_window_pairs_accepts_ids_as_numpy_ints_and_tensors():
    ids = [3, 1, 4, 1, 5, 9]
    as_numpy = [(np.int64(a), np.int64(b)) for a, b in pairs(ids, 2)]
    checks.check_window_pairs(as_numpy, ids, 2)
    checks.check_window_pairs(torch.tensor(pairs(ids, 2)), ids, 2)
    checks.check_window_pairs(pairs(ids, 2), torch.tensor(ids), 2)
    checks.check_window_pairs(pairs(FOX, 1), FOX, 1, expected=[list(p) for p in pairs(FOX, 1)])


def test_window_pairs_diagnoses_each_mistake():
    fails("is None", checks.check_window_pairs, None, FOX, 2)
    fails(
        "must be a list of \\(center, context\\) pairs$", checks.check_window_pairs, [1, 2], FOX, 2
    )
    fails("two words each", checks.check_window_pairs, [("the", "quick", "brown")], FOX, 2)
    fails(
        "pairs each word with itself", checks.check_window_pairs, pairs(FOX, 2, center=True), FOX, 2
    )
    fails("wrap around", checks.check_window_pairs, pairs(FOX, 2, wrap=True), FOX, 2)
    fails("pairs for c = 2, not c = 3", checks.check_window_pairs, pairs(FOX, 2), FOX, 3)
    fails("pairs for c = 9, not c = 2", checks.check_window_pairs, pairs(FOX, 9), FOX, 2)
    fails("the number of your pairs is not the number the windows hold$",
          checks.check_window_pairs, pairs(FOX, 2)[1:], FOX, 2)  # fmt: skip
    fails("not within c = 2 words of each other", checks.check_window_pairs,
          pairs(FOX, 2) + [("fox", "dog")], FOX, 2)  # fmt: skip
    # one pair swapped for another that a window holds twice: the count is right, a pair is not
    fails("more often than they are\\)$", checks.check_window_pairs,
          pairs(FOX, 2)[1:] + [("the", "lazy")], FOX, 2)  # fmt: skip
    # a pair the windows hold three times, given twice
    abab = list("abab")
    fails("some pairs occur less often", checks.check_window_pairs,
          pairs(abab, 2)[1:], abab, 2)  # fmt: skip


def test_window_pairs_messages_name_the_property_never_the_pairs_or_the_count():
    """Exercise 1 is a bug hunt: the count and the wrong pairs are what the student finds."""
    draft = [(SENTENCE[t], SENTENCE[t + j]) for t in range(5) for j in (-2, -1, 1, 2) if t + j < 5]
    with pytest.raises(AssertionError) as failure:
        checks.check_window_pairs(draft, SENTENCE, 2)
    said = str(failure.value)
    assert "not within c = 2 words" in said and "number of your pairs" in said
    assert "14" not in said and "17" not in said and "'sample')" not in said
    with pytest.raises(AssertionError) as failure:
        checks.check_window_pairs(draft, SENTENCE, 2, expected=SAMPLE_PAIRS_C2)
    assert "should not be there" in str(failure.value) and "'sample')" not in str(failure.value)




def test_window_pairs_by_their_properties_agree_with_the_lectures_worked_example():
    checks.check_window_pairs(SAMPLE_PAIRS_C2, SENTENCE, 2)
    checks.check_window_pairs(SAMPLE_PAIRS_C2, SENTENCE, 2, expected=SAMPLE_PAIRS_C2)
    for dropped in range(len(SAMPLE_PAIRS_C2)):
        fails("not right", checks.check_window_pairs,
              SAMPLE_PAIRS_C2[:dropped] + SAMPLE_PAIRS_C2[dropped + 1:], SENTENCE, 2)  # fmt: skip
    fails("some pairs are missing$", checks.check_window_pairs, SAMPLE_PAIRS_C2[1:],
          SENTENCE, 2, expected=SAMPLE_PAIRS_C2)  # fmt: skip
    fails("pairs each word with itself", checks.check_window_pairs,
          SAMPLE_PAIRS_C2 + [(w, w) for w in SENTENCE], SENTENCE, 2,
          expected=SAMPLE_PAIRS_C2)  # fmt: skip


# ----------------------------------------------------------------------------- window loss
def window_setup(dtype=torch.float64, seed=0):
    generator = torch.Generator().manual_seed(seed)
    W = torch.randn(7, 4, generator=generator, dtype=dtype)
    ids = torch.tensor([0, 3, 1, 3, 5, 2, 6, 3, 4])
    return W, ids


def window_loss(W, ids, t, c, center=False, wrap=False, average=False, no_lse=False):
    n = len(ids)
    offsets = [j for j in range(-c, c + 1) if center or j != 0]
    positions = [t + j for j in offsets if (0 <= t + j < n) or (wrap and t + j < n)]
    scores = W @ W[ids[t]]
    log_p = scores if no_lse else scores - torch.logsumexp(scores, dim=0)
    loss = -log_p[ids[positions]].sum()
    return loss / len(positions) if average else loss


@pytest.mark.parametrize("t", [0, 1, 4, 8])
def test_window_loss_accepts_float32_float64_numbers_and_a_hand_written_log_sum_exp(t):
    W, ids = window_setup()
    checks.check_window_loss(window_loss(W, ids, t, 2), W, ids, t, 2)
    checks.check_window_loss(window_loss(W.float(), ids, t, 2), W.float(), ids, t, 2)
    scores = W @ W[ids[t]]
    hand = scores.max() + torch.log(torch.exp(scores - scores.max()).sum())
    context = [t + j for j in (-2, -1, 1, 2) if 0 <= t + j < len(ids)]
    manual = sum(hand - scores[ids[p]] for p in context)
    checks.check_window_loss(float(manual), W, ids, t, 2)
    checks.check_window_loss(window_loss(W, ids, t, 2).reshape(1), W, ids, t, 2)


def test_window_loss_diagnoses_each_mistake():
    W, ids = window_setup()
    t, c = 1, 2
    fails("one number", checks.check_window_loss, torch.zeros(3), W, ids, t, c)
    fails(
        "log-sum-exp",
        checks.check_window_loss,
        window_loss(W, ids, t, c, no_lse=True),
        W,
        ids,
        t,
        c,
    )
    fails(
        "includes j = 0",
        checks.check_window_loss,
        window_loss(W, ids, t, c, center=True),
        W,
        ids,
        t,
        c,
    )
    fails(
        "averages", checks.check_window_loss, window_loss(W, ids, t, c, average=True), W, ids, t, c
    )
    fails(
        "wraps around", checks.check_window_loss, window_loss(W, ids, t, c, wrap=True), W, ids, t, c
    )
    fails("sign is wrong", checks.check_window_loss, -window_loss(W, ids, t, c), W, ids, t, c)
    scores = W @ W[ids[t]]
    context = ids[[p for p in range(t - c, t + c + 1) if p != t and 0 <= p < len(ids)]]
    lse_once = torch.logsumexp(scores, dim=0) - scores[context].sum()
    fails("appears the wrong number of times", checks.check_window_loss, lse_once, W, ids, t, c)
    fails("tolerance", checks.check_window_loss, window_loss(W, ids, t, c) + 1, W, ids, t, c)


# -------------------------------------------------------------------------------- SGD step
def sgd_step_by_loop(W, ids, t, c, lr):
    """The closed form written pair by pair, with no autograd (the test runs under no_grad)."""
    grad = torch.zeros_like(W)
    loss = 0.0
    a = int(ids[t])
    for j in range(-c, c + 1):
        if j == 0 or not 0 <= t + j < len(ids):
            continue
        b = int(ids[t + j])
        p = torch.softmax(W @ W[a], dim=0)
        loss = loss - torch.log(p[b])
        grad[a] += -W[b] + p @ W  # v_a as the center
        grad += p[:, None] * W[a]  # every v_i as a context word ...
        grad[b] -= W[a]  # ... minus the observed one
    return loss, grad, W - lr * grad


@pytest.mark.parametrize("t, c", [(0, 2), (2, 2), (3, 1), (8, 3), (4, 10)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_sgd_step_accepts_the_closed_form_and_matches_autograd(t, c, dtype):
    W, ids = window_setup(dtype)
    with torch.no_grad():
        result = sgd_step_by_loop(W.clone(), ids, t, c, 0.5)
    checks.check_sgd_step(result, W, ids, t, c, 0.5)
    checks.check_sgd_step(
        tuple(x.tolist() if torch.is_tensor(x) else x for x in result), W, ids, t, c, 0.5
    )
    leaf = W.clone().requires_grad_()
    window_loss(leaf, ids, t, c).backward()
    torch.testing.assert_close(result[1], leaf.grad)


def test_sgd_step_diagnoses_each_mistake():
    W, ids = window_setup()
    t, c, lr = 3, 2, 0.1  # the center word ids[3] = 3 is also its own context word (ids[1])
    loss, right, _ = sgd_step_by_loop(W, ids, t, c, lr)
    a = int(ids[t])
    context = [int(ids[t + j]) for j in (-2, -1, 1, 2)]
    p = torch.softmax(W @ W[a], dim=0)
    observed = torch.bincount(torch.tensor(context), minlength=7).to(W.dtype)
    error = len(context) * p - observed
    as_context = error[:, None] * W[a]
    as_center = torch.zeros_like(W)
    as_center[a] = error @ W
    overwritten = as_context.clone()
    overwritten[a] = error @ W
    no_expected = -observed[:, None] * W[a]
    no_expected[a] += -observed @ W

    def step(grad, new=None):
        return loss, grad, W - lr * grad if new is None else new

    cases = {
        "sign flipped": step(-right),
        "without the log-sum-exp": step(no_expected),
        "other than the center's differ": step(as_center),
        "every score of the window that v_a enters": step(as_context),
        "replaces what is there": step(overwritten),
        "averaged over the context words": step(right / 4),
        "uphill": step(right, W + lr * right),
        "learning rate is missing": step(right, W - right),
        "W_new is W unchanged": step(right, W),
        "not the new matrix": step(right, -lr * right),
        "the loss of sgd_step is not right: the sign is wrong": (-loss, right, W - lr * right),
    }
    for message, result in cases.items():
        fails(message, checks.check_sgd_step, result, W, ids, t, c, lr)
    fails("is None", checks.check_sgd_step, None, W, ids, t, c, lr)
    fails("three values .* got 2 values", checks.check_sgd_step, (loss, right), W, ids, t, c, lr)
    fails("three values .* got Tensor", checks.check_sgd_step, right, W, ids, t, c, lr)
    fails(
        "gradient of sgd_step is not right \\(tolerance",
        checks.check_sgd_step,
        step(right + 1),
        W,
        ids,
        t,
        c,
        lr,
    )


# ---------------------------------------------------------------------- negative sampling
def ns_setup(dtype=torch.float64, N=7, B=9, K=3, d=4):
    """Tables and a batch in which words repeat: as centers, as context words, as noise."""
    generator = torch.Generator().manual_seed(1)
    V, U = (torch.randn(N, d, generator=generator, dtype=dtype) for _ in range(2))
    centers = torch.tensor([0, 2, 2, 5, 1, 2, 6, 0, 3])[:B]
    contexts = torch.tensor([1, 1, 3, 0, 4, 6, 6, 2, 5])[:B]
    noise = torch.randint(0, N, (B, K), generator=generator)
    return V, U, centers, contexts, noise


def ns_step(V, U, centers, contexts, noise, lr, noise_sign=1.0, noise_rows=True,
            center_noise=True, mean=False, overwrite=False, ascent=False, no_lr=False):
    """The closed form, (sigma(s) - label) times the other vector, or a slip of it."""
    words = torch.cat([contexts[:, None], noise], dim=1)
    v, u = V[centers], U[words]
    scores = torch.einsum("bkd,bd->bk", u, v)
    scores = torch.cat([scores[:, :1], noise_sign * scores[:, 1:]], dim=1)
    labels = torch.zeros_like(scores)
    labels[:, 0] = 1.0
    loss = -(F.logsigmoid(scores[:, 0]) + F.logsigmoid(-scores[:, 1:]).sum(-1)).sum()
    error = torch.sigmoid(scores) - labels
    error = torch.cat([error[:, :1], noise_sign * error[:, 1:]], dim=1)
    for_v = error if center_noise else torch.cat([error[:, :1], 0 * error[:, 1:]], dim=1)
    for_u = error if noise_rows else torch.cat([error[:, :1], 0 * error[:, 1:]], dim=1)
    rows_v, rows_u = (for_v[:, :, None] * u).sum(1), (for_u[:, :, None] * v[:, None, :])
    scale = (1 / len(centers) if mean else 1.0) * (1.0 if no_lr else lr) * (-1 if ascent else 1)
    V_new, U_new = V.clone(), U.clone()
    if overwrite:
        V_new[centers] = V[centers] - scale * rows_v
        U_new[words.reshape(-1)] = U[words.reshape(-1)] - scale * rows_u.reshape(-1, V.shape[1])
    else:
        V_new.index_add_(0, centers, -scale * rows_v)
        U_new.index_add_(0, words.reshape(-1), -scale * rows_u.reshape(-1, V.shape[1]))
    return (loss / len(centers) if mean else loss), V_new, U_new


def ns_by_loop(V, U, centers, contexts, noise, lr):
    """Pair by pair, each pair's gradient added to a gradient table (right, another way)."""
    grad_V, grad_U, loss = torch.zeros_like(V), torch.zeros_like(U), 0.0
    for a, b, negatives in zip(centers.tolist(), contexts.tolist(), noise.tolist(), strict=True):
        positive = torch.sigmoid(U[b] @ V[a])
        loss = loss - torch.log(positive)
        grad_V[a] += (positive - 1) * U[b]
        grad_U[b] += (positive - 1) * V[a]
        for n in negatives:
            p = torch.sigmoid(U[n] @ V[a])
            loss = loss - torch.log(1 - p)
            grad_V[a] += p * U[n]
            grad_U[n] += p * V[a]
    return loss, V - lr * grad_V, U - lr * grad_U


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_ns_step_accepts_the_closed_form_and_a_loop(dtype):
    V, U, centers, contexts, noise = ns_setup(dtype)
    checks.check_ns_step(ns_step(V, U, centers, contexts, noise, 0.3), V, U, centers, contexts,
                         noise, 0.3)
    checks.check_ns_step(ns_by_loop(V, U, centers, contexts, noise, 0.3), V, U, centers,
                         contexts, noise, 0.3)
    result = [x.numpy() for x in ns_step(V, U, centers, contexts, noise, 0.3)]
    checks.check_ns_step(result, V.numpy(), U.numpy(), centers.numpy(), contexts.numpy(),
                         noise.numpy(), 0.3)


@pytest.mark.parametrize(("slip", "words"), [
    (dict(noise_sign=-1.0), "noise words' terms have the wrong sign"),
    (dict(noise_rows=False), "u_n do not move"),
    (dict(center_noise=False), "miss the noise words' part"),
    (dict(mean=True), "mean over the batch"),
    (dict(overwrite=True), "several pairs gets the sum"),
    (dict(ascent=True), "uphill"),
    (dict(no_lr=True), "learning rate is missing"),
])
def test_ns_step_diagnoses_each_mistake(slip, words):
    V, U, centers, contexts, noise = ns_setup()
    fails(words, checks.check_ns_step, ns_step(V, U, centers, contexts, noise, 0.3, **slip),
          V, U, centers, contexts, noise, 0.3)


def test_ns_step_names_a_loss_of_the_wrong_sign_or_shape_and_a_missing_result():
    V, U, centers, contexts, noise = ns_setup()
    loss, V_new, U_new = ns_step(V, U, centers, contexts, noise, 0.3)
    args = (V, U, centers, contexts, noise, 0.3)
    fails("MINUS the log-likelihood", checks.check_ns_step, (-loss, V_new, U_new), *args)
    fails("one number", checks.check_ns_step, (torch.zeros(3), V_new, U_new), *args)
    fails("three values", checks.check_ns_step, (loss, V_new), *args)
    fails("forget to return", checks.check_ns_step, None, *args)
    fails("tolerance", checks.check_ns_step, (loss, V_new + 1, U_new), *args)


# --- J(theta) at W = 0 (exercise 2): the form only, never whether it is right -------------

@pytest.mark.parametrize("answer", [
    14 * math.log(5) / 5, 20 * math.log(5) / 5, np.float32(4.5),
    torch.tensor(4.5, dtype=torch.float64), torch.tensor([4.5]), 7,
])
def test_the_j_at_zero_check_passes_every_positive_number(answer):
    """Right (14 log 5 / 5 for the lecture's sentence) and wrong numbers alike: a loop over
    candidate formulas learns nothing from it."""
    checks.check_j_at_zero(answer, 5, 2, 5, name="j_at_zero")


@pytest.mark.parametrize(("answer", "words"), [
    (None, "did you forget to return"),
    (-1.6, "one positive number"),
    (0.0, "one positive number"),
    (float("inf"), "one positive number"),
    ([4.5, 4.5], "one positive number"),
])
def test_each_malformed_j_at_zero_is_named(answer, words):
    with pytest.raises(AssertionError, match=words):
        checks.check_j_at_zero(answer, 5, 2, 5, name="j_at_zero")


@pytest.mark.parametrize("inputs", [(0, 2, 5), (5, 2.0, 5), (5, 2, True)])
def test_the_j_at_zero_check_refuses_a_text_it_cannot_describe(inputs):
    with pytest.raises(ValueError, match="must be a positive int"):
        checks.check_j_at_zero(4.5, *inputs, name="j_at_zero")

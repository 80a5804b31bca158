from tests.grading_cases import Cheat

ASSIGNMENT = "02_skipgram"

INCLUDES_CENTER = """
def window_pairs(words, c):
    return [(words[t], words[t + j]) for t in range(len(words))
            for j in range(-c, c + 1) if 0 <= t + j < len(words)]
"""

# Right on the visible example (c = 2) but not in general: only the hidden tests catch it.
IGNORES_C = """
def window_pairs(words, c):
    return [(words[t], words[t + j]) for t in range(len(words))
            for j in (-2, -1, 1, 2) if 0 <= t + j < len(words)]
"""

NO_LOG_SUM_EXP = """
def window_loss(W, ids, t, c):
    context = [t + j for j in range(-c, c + 1) if j != 0 and 0 <= t + j < len(ids)]
    return -(W[ids[context]] @ W[ids[t]]).sum()
"""

# Python's negative indices wrap to the end of the text instead of being skipped.
WRAPS_AROUND = """
def window_loss(W, ids, t, c):
    scores = W @ W[ids[t]]
    context = [t + j for j in range(-c, c + 1) if j != 0 and t + j < len(ids)]
    return len(context) * torch.logsumexp(scores, dim=0) - scores[ids[context]].sum()
"""

# The vocabulary's log-sum-exp once for the window, not once per context word.
LOG_SUM_EXP_ONCE = """
def window_loss(W, ids, t, c):
    scores = W @ W[ids[t]]
    context = [t + j for j in range(-c, c + 1) if j != 0 and 0 <= t + j < len(ids)]
    return torch.logsumexp(scores, dim=0) - scores[ids[context]].sum()
"""

NEGATIVES_WRONG_SIGN = """
def negative_sampling_loss(v_center, u_context, u_negatives):
    positive = F.logsigmoid((u_context * v_center).sum(dim=-1))
    negative = F.logsigmoid((u_negatives @ v_center.unsqueeze(-1)).squeeze(-1))
    return -(positive + negative.sum(dim=-1)).mean()
"""

SUMS_OVER_BATCH = """
def negative_sampling_loss(v_center, u_context, u_negatives):
    positive = F.logsigmoid((u_context * v_center).sum(dim=-1))
    negative = F.logsigmoid(-(u_negatives @ v_center.unsqueeze(-1)).squeeze(-1))
    return -(positive + negative.sum(dim=-1)).sum()
"""

# The build exercise (sgd_step): the typical mistakes of the closed-form gradient and the step.
_SGD_HEAD = """
def sgd_step(W, ids, t, c, lr):
    context = [t + j for j in range(-c, c + 1) if j != 0 and 0 <= t + j < len(ids)]
    a, b = ids[t], ids[context]
    log_p = torch.log_softmax(W @ W[a], dim=0)
    loss = -log_p[b].sum()
    observed = torch.bincount(b, minlength=W.shape[0]).to(W.dtype)
    expected = len(context) * log_p.exp()
"""

GRADIENT_SIGN_FLIPPED = _SGD_HEAD + """
    error = observed - expected
    grad = error[:, None] * W[a][None, :]
    grad[a] += error @ W
    return loss, grad, W - lr * grad
"""

NO_EXPECTED_TERM = _SGD_HEAD + """
    error = -observed
    grad = error[:, None] * W[a][None, :]
    grad[a] += error @ W
    return loss, grad, W - lr * grad
"""

ONLY_CENTER_ROW = _SGD_HEAD + """
    grad = torch.zeros_like(W)
    grad[a] = (expected - observed) @ W
    return loss, grad, W - lr * grad
"""

# Two roles, one row: the center's part overwrites its part as an output vector.
CENTER_ROW_OVERWRITTEN = _SGD_HEAD + """
    error = expected - observed
    grad = error[:, None] * W[a][None, :]
    grad[a] = error @ W
    return loss, grad, W - lr * grad
"""

GRADIENT_ASCENT = _SGD_HEAD + """
    error = expected - observed
    grad = error[:, None] * W[a][None, :]
    grad[a] += error @ W
    return loss, grad, W + lr * grad
"""

# Right, but written with autograd: the test runs it under torch.no_grad().
AUTOGRAD_INSTEAD = """
def sgd_step(W, ids, t, c, lr):
    W = W.clone().requires_grad_()
    context = [t + j for j in range(-c, c + 1) if j != 0 and 0 <= t + j < len(ids)]
    loss = -torch.log_softmax(W @ W[ids[t]], dim=0)[ids[context]].sum()
    loss.backward()
    return loss.detach(), W.grad, (W - lr * W.grad).detach()
"""

# Exercise 2 answered by PyTorch's cross-entropy, which holds the derived form already: it
# loses its points.
CROSS_ENTROPY_LOSS = """
def window_loss(W, ids, t, c):
    context = torch.tensor([t + j for j in range(-c, c + 1) if j != 0 and 0 <= t + j < len(ids)],
                           dtype=torch.long, device=ids.device)
    scores = (W @ W[ids[t]]).expand(len(context), -1)
    return F.cross_entropy(scores, ids[context], reduction="sum")
"""

# Exercise 4 answered by PyTorch's logistic loss, which its text does not offer: it loses its
# point.
TWIN_NEGATIVE_SAMPLING = """
def negative_sampling_loss(v_center, u_context, u_negatives):
    positive = (u_context * v_center).sum(-1)
    negative = (u_negatives @ v_center[:, :, None]).squeeze(-1)
    logistic = F.binary_cross_entropy_with_logits
    return (logistic(positive, torch.ones_like(positive), reduction="none")
            + logistic(negative, torch.zeros_like(negative), reduction="none").sum(-1)).mean()
"""

# Mistakes in different exercises share a student (each submission costs a notebook run):
# every listed answer must lose its own exercise's points and leave the others whole.
WRONG = {
    "includes_center_no_log_sum_exp_sign_flipped": {
        "window_pairs": INCLUDES_CENTER,
        "window_loss": NO_LOG_SUM_EXP,
        "sgd_step": GRADIENT_SIGN_FLIPPED,
        "negative_sampling_loss": NEGATIVES_WRONG_SIGN,
    },
    "ignores_c_wraps_around_no_expected_term": {
        "window_pairs": IGNORES_C,
        "window_loss": WRAPS_AROUND,
        "sgd_step": NO_EXPECTED_TERM,
        "negative_sampling_loss": SUMS_OVER_BATCH,
    },
    # exercise 2's factor: the log-sum-exp counted once for the window (passes the visible
    # check, which looks at the form only); and with the loss's sign flipped (it does not)
    "only_center_row": {"lse_factor": "lse_factor = 1", "window_loss": LOG_SUM_EXP_ONCE,
                        "sgd_step": ONLY_CENTER_ROW},
    "center_row_overwritten": {"sgd_step": CENTER_ROW_OVERWRITTEN},
    "gradient_ascent": {"lse_factor": "lse_factor = -4.0", "sgd_step": GRADIENT_ASCENT},
    "autograd_instead": {"sgd_step": AUTOGRAD_INSTEAD},
    "library_twin": {"window_loss": CROSS_ENTROPY_LOSS,
                     "negative_sampling_loss": TWIN_NEGATIVE_SAMPLING},
}

# ------------------------------------------------------------------ right, another way
# Right-hand context first, nested loops over offsets; a hand-written log-sum-exp in float64;
# the gradient pair by pair in a loop; the negatives' loss in a loop with log(sigmoid(.)).
RIGHT_FIRST_PAIRS = """
def window_pairs(words, c):
    pairs = []
    for t, center in enumerate(words):
        for j in list(range(1, c + 1)) + list(range(-1, -c - 1, -1)):
            if 0 <= t + j < len(words):
                pairs.append([center, words[t + j]])
    return pairs
"""

HAND_LOG_SUM_EXP = """
def window_loss(W, ids, t, c):
    W = W.double()
    scores = W @ W[ids[t]]
    top = scores.max()
    log_normaliser = top + torch.log(torch.exp(scores - top).sum())
    loss = 0.0
    for j in range(-c, c + 1):
        if j != 0 and 0 <= t + j < len(ids):
            loss = loss + log_normaliser - scores[ids[t + j]]
    return loss
"""

SGD_STEP_PAIR_BY_PAIR = """
def sgd_step(W, ids, t, c, lr):
    a = int(ids[t])
    p = torch.softmax(W @ W[a], dim=0)
    loss, grad = 0.0, torch.zeros_like(W)
    for j in range(-c, c + 1):
        if j == 0 or not 0 <= t + j < len(ids):
            continue
        b = int(ids[t + j])
        loss = loss - torch.log(p[b])
        grad[a] += p @ W - W[b]          # v_a as the center: expected minus observed
        grad += torch.outer(p, W[a])     # every v_i as an output vector ...
        grad[b] -= W[a]                  # ... minus the one observed
    W_new = W.clone()
    W_new -= lr * grad
    return loss, grad, W_new
"""

LOOP_NEGATIVES = """
def negative_sampling_loss(v_center, u_context, u_negatives):
    losses = []
    for v, u, negatives in zip(v_center, u_context, u_negatives):
        loss = -torch.log(torch.sigmoid(u @ v))
        for n in negatives:
            loss = loss - torch.log(torch.sigmoid(-(n @ v)))
        losses.append(loss)
    return torch.stack(losses).mean()
"""

# zip-based pairs as a tuple-returning generator of tuples; L_t from one-hot counts;
# the gradient from one-hot matrices; the negatives with einsum.
ZIP_PAIRS = """
def window_pairs(words, c):
    pairs = []
    for j in range(1, c + 1):
        pairs += list(zip(words[j:], words[:-j]))    # (w_t, w_{t-j})
        pairs += list(zip(words[:-j], words[j:]))    # (w_t, w_{t+j})
    return pairs
"""

# The derived form with one-hot counts: m log-sum-exp minus the counted context scores.
ONE_HOT_LOSS = """
def window_loss(W, ids, t, c):
    N = W.shape[0]
    positions = [t + j for j in range(-c, c + 1) if j != 0 and 0 <= t + j < len(ids)]
    counts = F.one_hot(ids[positions], N).sum(dim=0).to(W.dtype)   # n_i, (N,)
    scores = F.one_hot(ids[t], N).to(W.dtype) @ W @ W.T             # v_a . v_i, (N,)
    return counts.sum() * torch.logsumexp(scores, dim=0) - counts @ scores
"""

SGD_STEP_ONE_HOT = """
def sgd_step(W, ids, t, c, lr):
    N = W.shape[0]
    positions = [t + j for j in range(-c, c + 1) if j != 0 and 0 <= t + j < len(ids)]
    center = F.one_hot(ids[t], N).to(W.dtype)                  # I(a), (N,)
    targets = F.one_hot(ids[positions], N).to(W.dtype)         # one row per context word, (m, N)
    v_a = center @ W
    log_p = torch.log_softmax(W @ v_a, dim=0)
    p = log_p.exp()
    loss = -(targets @ log_p).sum()
    error = p[None, :] - targets                               # (m, N): expected minus observed
    grad = torch.outer(error.sum(0), v_a) + torch.outer(center, error.sum(0) @ W)
    return loss, grad, W - lr * grad
"""

EINSUM_NEGATIVES = """
def negative_sampling_loss(v_center, u_context, u_negatives):
    positive = torch.nn.functional.logsigmoid(torch.einsum("bd,bd->b", u_context, v_center))
    negative = torch.nn.functional.logsigmoid(-torch.einsum("bkd,bd->bk", u_negatives, v_center))
    return -(positive.sum() + negative.sum()) / v_center.shape[0]
"""

CORRECT = {
    "loops_and_hand_written": {
        "lse_factor": "lse_factor = len([j for j in range(-2, 3) if j != 0 and 0 <= 2 + j < 5])",
        "window_pairs": RIGHT_FIRST_PAIRS,
        "window_loss": HAND_LOG_SUM_EXP,
        "sgd_step": SGD_STEP_PAIR_BY_PAIR,
        "negative_sampling_loss": LOOP_NEGATIVES,
    },
    "zip_and_one_hot": {
        "lse_factor": "import numpy as np\nlse_factor = np.float32(4.0)   # m, a count",
        "window_pairs": ZIP_PAIRS,
        "window_loss": ONE_HOT_LOSS,
        "sgd_step": SGD_STEP_ONE_HOT,
        "negative_sampling_loss": EINSUM_NEGATIVES,
    },
}

# --- answers that update their inputs in place: graded on what they return ------------------

CORRECT["works_in_place"] = {
    "window_pairs": """
def window_pairs(words, c):
    pairs = []
    for t in range(len(words)):
        for j in range(-c, c + 1):
            if j != 0 and 0 <= t + j < len(words):
                pairs.append((words[t], words[t + j]))
    words.clear()                    # done with the sentence
    return pairs
""",
    "window_loss": """
def window_loss(W, ids, t, c):
    scores = W @ W[ids[t]]
    scores -= torch.logsumexp(scores, dim=0)          # log P(b | w_t), in place
    context = [t + j for j in range(-c, c + 1) if j != 0 and 0 <= t + j < len(ids)]
    loss = -scores[ids[context]].sum()
    W.zero_()                                         # W is not needed any more
    return loss
""",
    "sgd_step": """
def sgd_step(W, ids, t, c, lr):
    context = [t + j for j in range(-c, c + 1) if j != 0 and 0 <= t + j < len(ids)]
    a, b = ids[t], ids[context]
    log_p = torch.log_softmax(W @ W[a], dim=0)
    loss = -log_p[b].sum()
    error = len(context) * log_p.exp() - torch.bincount(b, minlength=W.shape[0]).to(W.dtype)
    grad = error[:, None] * W[a][None, :]
    grad[a] += error @ W
    W -= lr * grad                   # the step, in place
    return loss, grad, W
""",
    "negative_sampling_loss": """
def negative_sampling_loss(v_center, u_context, u_negatives):
    positive = F.logsigmoid((u_context * v_center).sum(dim=-1))
    u_negatives.neg_()               # -u_n, in place
    negative = F.logsigmoid((u_negatives @ v_center.unsqueeze(-1)).squeeze(-1))
    return -(positive + negative.sum(dim=-1)).mean()
""",
}

# --- cheats: each scores 0 on its exercise, or is flagged, or both ----------------------------

CHEAT = {
    "lazy_and_autograd": {
        # the pairs computed only when the check looks at them: refused as not plain data
        "window_pairs": Cheat("""
def window_pairs(words, c):
    return ((words[t], words[t + j]) for t in range(len(words)) for j in range(-c, c + 1)
            if j != 0 and 0 <= t + j < len(words))
""", zero=True),
        "sgd_step": Cheat("""
def sgd_step(W, ids, t, c, lr):
    with torch.enable_grad():
        leaf = W.detach().clone().requires_grad_()
        context = [t + j for j in range(-c, c + 1) if j != 0 and 0 <= t + j < len(ids)]
        loss = -torch.log_softmax(leaf @ leaf[ids[t]], dim=0)[ids[context]].sum()
        loss.backward()
    return loss.detach(), leaf.grad, W - lr * leaf.grad
""", zero=True),
    },
}

# --- cheats through doors the function mode and the twin list do not watch (each family:
# TorchScript, another thread, another library, a fresh copy, a failure silenced) --------------

CHEAT.update({
    "scripted_autograd_and_other_doors": {
        # autograd compiled to TorchScript: no torch function call for the rule to see
        "sgd_step": Cheat("""
@torch.jit.script
def _loss_and_gradient(W: torch.Tensor, a: int, b: torch.Tensor):
    leaf = W.detach().clone().requires_grad_(True)
    loss = -torch.log_softmax(leaf @ leaf[a], dim=0)[b].sum()
    gradient = torch.autograd.grad([loss], [leaf])[0]
    assert gradient is not None
    return loss.detach(), gradient


def sgd_step(W, ids, t, c, lr):
    context = [t + j for j in range(-c, c + 1) if j != 0 and 0 <= t + j < len(ids)]
    with torch.enable_grad():
        loss, gradient = _loss_and_gradient(W, int(ids[t]), ids[context])
    return loss, gradient, W - lr * gradient
""", zero=True),
        # the pairs found in another thread
        "window_pairs": Cheat("""
import threading


def _pairs(words, c, found):
    for t in range(len(words)):
        for j in range(-c, c + 1):
            if j != 0 and 0 <= t + j < len(words):
                found.append((words[t], words[t + j]))


def window_pairs(words, c):
    found = []
    worker = threading.Thread(target=_pairs, args=(words, c, found))
    worker.start()
    worker.join()
    return found
""", zero=True),
        # the check's module loaded again from its file (a copy no swap has touched): its
        # oracle, PyTorch's cross-entropy at the window's context words
        "window_loss": Cheat("""
import importlib.util

import course_utils.checks.skipgram

_spec = importlib.util.spec_from_file_location("course_utils.skipgram_again",
                                               course_utils.checks.skipgram.__file__)
_again = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_again)


def window_loss(W, ids, t, c):
    return _again._cross_entropy(W, int(ids[t]), _again._context(ids, t, c))
""", zero=True),
    },
    # autograd through torch.func (functorch), which the rule's list of calls does not name
    "functorch_gradient": {
        "sgd_step": Cheat("""
def sgd_step(W, ids, t, c, lr):
    context = [t + j for j in range(-c, c + 1) if j != 0 and 0 <= t + j < len(ids)]

    def loss_of(weights):
        return -torch.log_softmax(weights @ weights[ids[t]], dim=0)[ids[context]].sum()

    gradient, loss = torch.func.grad_and_value(loss_of)(W)
    return loss, gradient, W - lr * gradient
""", zero=True),
    },
    # a custom exception handler installed on the shell: a failing test prints nothing and
    # its reply carries no error output; the answer underneath is wrong
    "custom_exception_handler": {
        "window_loss": Cheat("""
get_ipython().set_custom_exc((Exception,), lambda shell, etype, value, tb, tb_offset=None: None)


def window_loss(W, ids, t, c):
    return torch.tensor(0.0)
""", zero=True, flagged=True),
    },
})

# --- a correct answer that prints while debugging: print's own work is not the answer's ------

CORRECT["prints_while_debugging"] = {
    "window_loss": """
def window_loss(W, ids, t, c):
    lo, hi = max(0, t - c), min(len(ids), t + c + 1)
    neighbours = torch.cat([ids[lo:t], ids[t + 1:hi]])
    logits = W.matmul(W[ids[t]])
    log_probs = logits - logits.logsumexp(0)
    print("neighbours", neighbours.tolist(), "log probs", log_probs[:3])   # debugging
    return -log_probs.index_select(0, neighbours).sum()
""",
}

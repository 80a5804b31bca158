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

# Exercise 4, negative sampling's step: the typical mistakes of its gradient and its update.
_NS_HEAD = """
def ns_step(V, U, centers, contexts, noise, lr):
    words = torch.cat([contexts[:, None], noise], dim=1)
    v, u = V[centers], U[words]
    scores = (u @ v[:, :, None]).squeeze(-1)
    labels = torch.zeros_like(scores)
    labels[:, 0] = 1.0
    error = torch.sigmoid(scores) - labels
    rows_v = (error[:, :, None] * u).sum(dim=1)
    rows_u = (error[:, :, None] * v[:, None, :]).reshape(-1, V.shape[1])
"""
_NS_LOSS = """
    loss = -(F.logsigmoid(scores[:, 0]) + F.logsigmoid(-scores[:, 1:]).sum(dim=-1)).sum()
"""
_NS_ADD = """
    grad_V = torch.zeros_like(V).index_add_(0, centers, rows_v)
    grad_U = torch.zeros_like(U).index_add_(0, words.reshape(-1), rows_u)
"""

# Exercise 2's J at W = 0 written with the typical slips of its formula.
J_DRAFT_PAIRS = """
def j_at_zero(T, c, N):
    return (2 * c * T - c * (c + 1) / 2) * math.log(N) / T
"""
J_NO_ENDS = """
def j_at_zero(T, c, N):
    return 2 * c * math.log(N)
"""
J_NOT_AVERAGED = """
def j_at_zero(T, c, N):
    return (2 * c * T - c * (c + 1)) * math.log(N)
"""

# Every answer a "yes": the noise words' terms with the wrong sign.
NS_NOISE_SAID_YES = _NS_HEAD + _NS_ADD + """
    loss = -F.logsigmoid(scores).sum()
    return loss, V - lr * grad_V, U - lr * grad_U
"""

NS_MEAN_GRADIENT = _NS_HEAD + _NS_LOSS + _NS_ADD + """
    return loss, V - lr * grad_V / len(centers), U - lr * grad_U / len(centers)
"""

# Rows written by assignment: a word named by several pairs keeps one pair's step.
NS_OVERWRITES_REPEATS = _NS_HEAD + _NS_LOSS + """
    V_new, U_new = V.clone(), U.clone()
    V_new[centers] = V[centers] - lr * rows_v
    U_new[words.reshape(-1)] = U[words.reshape(-1)] - lr * rows_u
    return loss, V_new, U_new
"""

# Only u_b moves: the noise words' context vectors are left as they were.
NS_NOISE_ROWS_FIXED = _NS_HEAD + _NS_LOSS + """
    grad_V = torch.zeros_like(V).index_add_(0, centers, rows_v)
    grad_U = torch.zeros_like(U).index_add_(0, contexts, error[:, 0, None] * v)
    return loss, V - lr * grad_V, U - lr * grad_U
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

# Exercise 4's loss by PyTorch's logistic loss, which its text does not offer: it loses its
# points.
TWIN_NEGATIVE_SAMPLING = _NS_HEAD + _NS_ADD + """
    loss = F.binary_cross_entropy_with_logits(scores, labels, reduction="sum")
    return loss, V - lr * grad_V, U - lr * grad_U
"""

# Mistakes in different exercises share a student (each submission costs a notebook run):
# every listed answer must lose its own exercise's points and leave the others whole.
WRONG = {
    "includes_center_no_log_sum_exp_sign_flipped": {
        "window_pairs": INCLUDES_CENTER,
        "window_loss": NO_LOG_SUM_EXP,
        "sgd_step": GRADIENT_SIGN_FLIPPED,
        "ns_step": NS_NOISE_SAID_YES,
    },
    "ignores_c_wraps_around_no_expected_term": {
        "window_pairs": IGNORES_C,
        "window_loss": WRAPS_AROUND,
        "sgd_step": NO_EXPECTED_TERM,
        "ns_step": NS_MEAN_GRADIENT,
    },
    # exercise 2's J at W = 0 as a formula: the draft's pairs (the left end kept); 2c pairs at
    # every position (no ends); the sum over windows, not divided by T. Each passes the visible
    # check (the form only) and loses the point on the hidden T, c, N.
    "only_center_row": {"j_at_zero": J_DRAFT_PAIRS,
                        "window_loss": LOG_SUM_EXP_ONCE, "sgd_step": ONLY_CENTER_ROW,
                        "ns_step": NS_OVERWRITES_REPEATS},
    "center_row_overwritten": {"j_at_zero": J_NO_ENDS,
                               "sgd_step": CENTER_ROW_OVERWRITTEN,
                               "ns_step": NS_NOISE_ROWS_FIXED},
    "gradient_ascent": {"j_at_zero": J_NOT_AVERAGED,
                        "sgd_step": GRADIENT_ASCENT},
    "autograd_instead": {"sgd_step": AUTOGRAD_INSTEAD},
    "library_twin": {"window_loss": CROSS_ENTROPY_LOSS, "ns_step": TWIN_NEGATIVE_SAMPLING},
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

# Pair by pair, each pair's gradients added into gradient tables, log(sigmoid(.)) for the loss.
NS_STEP_BY_LOOP = """
def ns_step(V, U, centers, contexts, noise, lr):
    grad_V, grad_U, loss = torch.zeros_like(V), torch.zeros_like(U), 0.0
    for a, b, negatives in zip(centers.tolist(), contexts.tolist(), noise.tolist()):
        yes = torch.sigmoid(U[b] @ V[a])
        loss = loss - torch.log(yes)
        grad_V[a] += (yes - 1) * U[b]
        grad_U[b] += (yes - 1) * V[a]
        for n in negatives:
            no = torch.sigmoid(-(U[n] @ V[a]))
            loss = loss - torch.log(no)
            grad_V[a] += (1 - no) * U[n]
            grad_U[n] += (1 - no) * V[a]
    return loss, V - lr * grad_V, U - lr * grad_U
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

# The gradient tables as products with one-hot matrices (no index_add_), einsum for the scores.
NS_STEP_ONE_HOT = """
def ns_step(V, U, centers, contexts, noise, lr):
    N = V.shape[0]
    v = V[centers]
    s_b = torch.einsum("bd,bd->b", U[contexts], v)
    s_n = torch.einsum("bkd,bd->bk", U[noise], v)
    loss = -(torch.nn.functional.logsigmoid(s_b).sum() + torch.nn.functional.logsigmoid(-s_n).sum())
    g_b, g_n = torch.sigmoid(s_b) - 1, torch.sigmoid(s_n)          # sigma(s) - label
    rows_v = g_b[:, None] * U[contexts] + torch.einsum("bk,bkd->bd", g_n, U[noise])
    grad_V = F.one_hot(centers, N).to(V.dtype).T @ rows_v
    grad_U = (F.one_hot(contexts, N).to(V.dtype).T @ (g_b[:, None] * v)
              + torch.einsum("bkn,bk,bd->nd", F.one_hot(noise, N).to(V.dtype), g_n, v))
    return loss, V - lr * grad_V, U - lr * grad_U
"""

CORRECT = {
    "loops_and_hand_written": {
        "j_at_zero": """
def j_at_zero(T, c, N):
    pairs = sum(min(c, t) + min(c, T - 1 - t) for t in range(T))   # counted window by window
    return pairs * -math.log(1 / N) / T
""",
        "window_pairs": RIGHT_FIRST_PAIRS,
        "window_loss": HAND_LOG_SUM_EXP,
        "sgd_step": SGD_STEP_PAIR_BY_PAIR,
        "ns_step": NS_STEP_BY_LOOP,
    },
    "zip_and_one_hot": {
        "j_at_zero": """
import numpy as np
def j_at_zero(T, c, N):
    return np.float32(2 * c - c * (c + 1) / T) * np.log(np.float32(N))   # per word, in float32
""",
        "window_pairs": ZIP_PAIRS,
        "window_loss": ONE_HOT_LOSS,
        "sgd_step": SGD_STEP_ONE_HOT,
        "ns_step": NS_STEP_ONE_HOT,
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
    "ns_step": """
def ns_step(V, U, centers, contexts, noise, lr):
    words = torch.cat([contexts[:, None], noise], dim=1)
    v, u = V[centers], U[words]
    scores = torch.bmm(u, v.unsqueeze(-1)).squeeze(-1)
    labels = torch.zeros_like(scores)
    labels[:, 0] = 1
    loss = -(F.logsigmoid(scores[:, 0]).sum() + F.logsigmoid(-scores[:, 1:]).sum())
    error = torch.sigmoid(scores) - labels
    V.index_add_(0, centers, -lr * (error[:, :, None] * u).sum(dim=1))       # the step, in place
    U.index_add_(0, words.flatten(), -lr * (error[:, :, None] * v[:, None]).flatten(0, 1))
    return loss, V, U
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
        "j_at_zero": Cheat("""
checks.check_j_at_zero = lambda *args, **kwargs: None   # the visible check silenced


class Anything(float):
    def __eq__(self, other):   # equal to every stored answer
        return True


def j_at_zero(T, c, N):
    return Anything(1.0)
""", zero=True),
        "ns_step": Cheat("""
def ns_step(V, U, centers, contexts, noise, lr):
    with torch.enable_grad():
        V_leaf, U_leaf = V.detach().clone().requires_grad_(), U.detach().clone().requires_grad_()
        v, u = V_leaf[centers], U_leaf[torch.cat([contexts[:, None], noise], dim=1)]
        scores = (u @ v[:, :, None]).squeeze(-1)
        loss = -(F.logsigmoid(scores[:, 0]) + F.logsigmoid(-scores[:, 1:]).sum(-1)).sum()
        loss.backward()
    return loss.detach(), V - lr * V_leaf.grad, U - lr * U_leaf.grad
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

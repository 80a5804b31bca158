"""Skip-gram word2vec: context windows, the full-softmax objective, negative sampling.

Notation of the skip-gram lecture notes (11.1.5-11.1.9). The text is w_1 ... w_T; the
center word w_t has the context words w_{t+j}, 0 < |j| <= c, where c is the maximum skip
distance (windows stop at the ends of a sentence). Every word b has a row vector v_b; the
rows of ``W`` (shape (N, d)) are the N vectors of the vocabulary (the notes' W^T stores
them as columns). The model predicts

    P(b | a) = exp(v_a . v_b) / sum_i exp(v_a . v_i)                    (Key Equation 16)

and is trained by minimising

    L_t(theta) = - sum_{0 < |j| <= c} log P(w_{t+j} | w_t)              (Key Equation 21)
    J(theta)   = 1/T sum_t L_t(theta)                                   (Key Equation 22)

The notes use one vector per word. word2vec (and gensim) keep two: v_a for the word as
center, u_b for the word as context (``W_out`` below); every function here accepts both.

The sum over all N words in the softmax is what makes J expensive. Negative sampling
replaces it, for one (center a, context b) pair, by K words n_k drawn from the unigram
distribution raised to 3/4:

    -log sigma(u_b . v_a) - sum_k log sigma(-u_{n_k} . v_a)

The vocabulary and the corpus as ids are :mod:`course_utils.words.vocabulary`'s; the
fast trainer, :func:`course_utils.words.skipgram_training.train_skipgram`, trains the
negative-sampling objective.
"""

import torch
import torch.nn.functional as F

from course_utils.validation import float_tensor, integer

__all__ = [
    "context_pairs",
    "keep_probability",
    "negative_sampling_loss",
    "noise_distribution",
    "objective",
    "objective_gradient",
    "predicted_probabilities",
    "window_loss",
    "window_pairs",
]


# ---------------------------------------------------------------------------- windows
def _window(name: str, c) -> int:
    return integer(f"{name} (the maximum skip distance)", c, minimum=1)


def window_pairs(words, c: int) -> list[tuple]:
    """Every (center w_t, context w_{t+j}) pair with 0 < |j| <= c, in text order.

    Positions run t = 1..T, and for each t the offsets j = -c, ..., -1, 1, ..., c;
    offsets that fall outside the text are skipped. ``words`` is a sequence of words
    (or ids). ``window_pairs("the quick brown".split(), 1)`` ->
    ``[('the', 'quick'), ('quick', 'the'), ('quick', 'brown'), ('brown', 'quick')]``.
    """
    c = _window("c", c)
    if isinstance(words, str):
        raise TypeError("words must be a sequence of words, not one str: split it first")
    words = list(words)
    offsets = [j for j in range(-c, c + 1) if j != 0]
    return [
        (words[t], words[t + j])
        for t in range(len(words))
        for j in offsets
        if 0 <= t + j < len(words)
    ]


def _ids_tensor(name: str, ids) -> torch.Tensor:
    if not isinstance(ids, torch.Tensor) or ids.dtype != torch.long or ids.dim() != 1:
        got = (
            f"{ids.dtype} tensor of shape {tuple(ids.shape)}"
            if isinstance(ids, torch.Tensor)
            else type(ids).__name__
        )
        raise TypeError(f"{name} must be a 1-D torch.long tensor of word ids; got {got}")
    if ids.numel() == 0:
        raise ValueError(f"{name} must not be empty: there is no text to take windows from")
    return ids


def _offsets(c: int, device=None) -> torch.Tensor:
    """The skip distances j = -c, ..., -1, 1, ..., c, shape (2c,)."""
    return torch.tensor([j for j in range(-c, c + 1) if j != 0], device=device)


def _window_positions(
    positions: torch.Tensor, offsets: torch.Tensor, length: int, sentence_ids=None
) -> tuple[torch.Tensor, torch.Tensor]:
    """The positions p + j of the windows of ``positions`` (P,), shape (P, len(offsets)),
    clamped into the text, and which of them count: inside the text of ``length`` words
    and, with ``sentence_ids``, inside p's sentence. Shared by ``context_pairs`` and the
    trainer."""
    context = positions[:, None] + offsets
    valid = (context >= 0) & (context < length)
    context = context.clamp(0, length - 1)
    if sentence_ids is not None:
        valid &= sentence_ids[context] == sentence_ids[positions, None]
    return context, valid


def context_pairs(
    ids: torch.Tensor, c: int, sentence_ids: torch.Tensor | None = None
) -> torch.Tensor:
    """All (center, context) id pairs of ``ids``, shape (P, 2), vectorised.

    Same pairs and order as :func:`window_pairs`. With ``sentence_ids`` (shape (T,), one
    sentence number per word) windows do not cross sentence boundaries.
    """
    ids = _ids_tensor("ids", ids)
    c = _window("c", c)
    if sentence_ids is not None and sentence_ids.shape != ids.shape:
        raise ValueError(
            f"sentence_ids must have the shape of ids {tuple(ids.shape)}; "
            f"got {tuple(sentence_ids.shape)}"
        )
    positions = torch.arange(ids.numel(), device=ids.device)
    context, valid = _window_positions(
        positions, _offsets(c, ids.device), ids.numel(), sentence_ids
    )  # (T, 2c)
    centers = ids[:, None].expand_as(context)
    return torch.stack([centers[valid], ids[context][valid]], dim=1)


# ------------------------------------------------------------------ full softmax model
def _embeddings(W, W_out):
    W = float_tensor("W", W, min_dim=2)
    if W.dim() != 2:
        raise ValueError(f"W must have shape (N words, d); got {tuple(W.shape)}")
    if W_out is None:
        return W, W
    W_out = float_tensor("W_out", W_out, min_dim=2)
    if W_out.shape != W.shape:
        raise ValueError(
            f"W_out must have the shape of W {tuple(W.shape)}; got {tuple(W_out.shape)}"
        )
    return W, W_out


def _check_ids_in_vocabulary(ids: torch.Tensor, n_words: int) -> None:
    if ids.min() < 0 or ids.max() >= n_words:
        raise ValueError(
            f"word ids must be in [0, {n_words - 1}] (rows of W); got {ids.min()}..{ids.max()}"
        )


def predicted_probabilities(W: torch.Tensor, a, W_out: torch.Tensor | None = None) -> torch.Tensor:
    """P(b | a) = softmax_b(v_a . v_b) for every word b (Key Equation 16).

    ``a`` is one id (result shape (N,)) or a tensor of ids (result shape (len(a), N)).
    """
    W, W_out = _embeddings(W, W_out)
    a_t = torch.as_tensor(a, device=W.device)
    _check_ids_in_vocabulary(a_t.reshape(-1), W.shape[0])
    return torch.softmax(W[a_t] @ W_out.T, dim=-1)


def window_loss(W: torch.Tensor, ids: torch.Tensor, t: int, c: int, W_out=None) -> torch.Tensor:
    """L_t = -sum_{0<|j|<=c} log P(w_{t+j} | w_t) for the window centred at t (0-based).

    ``ids`` (shape (T,)) is the text as word ids; a scalar tensor comes back.
    """
    ids = _ids_tensor("ids", ids)
    if not 0 <= t < ids.numel():
        raise ValueError(f"t must be a position in [0, {ids.numel() - 1}]; got {t}")
    c = _window("c", c)
    context = [t + j for j in range(-c, c + 1) if j != 0 and 0 <= t + j < ids.numel()]
    W, W_out = _embeddings(W, W_out)
    _check_ids_in_vocabulary(ids, W.shape[0])
    log_p = torch.log_softmax(W[ids[t]] @ W_out.T, dim=-1)
    return -log_p[ids[context]].sum()


def _pair_log_probabilities(W, W_out, ids, c, sentence_ids):
    pairs = context_pairs(ids, c, sentence_ids)
    log_p = torch.log_softmax(W[pairs[:, 0]] @ W_out.T, dim=-1)  # (P, N)
    return pairs, log_p


def objective(
    W: torch.Tensor, ids: torch.Tensor, c: int, W_out=None, sentence_ids=None
) -> torch.Tensor:
    """J(theta) = -1/T sum_t sum_{0<|j|<=c} log P(w_{t+j} | w_t) (Key Equation 22)."""
    ids = _ids_tensor("ids", ids)
    W, W_out = _embeddings(W, W_out)
    _check_ids_in_vocabulary(ids, W.shape[0])
    pairs, log_p = _pair_log_probabilities(W, W_out, ids, c, sentence_ids)
    return -log_p.gather(1, pairs[:, 1:]).sum() / ids.numel()


def objective_gradient(W: torch.Tensor, ids: torch.Tensor, c: int, W_out=None, sentence_ids=None):
    """The gradient of J(theta), by hand.

    For one pair (a, b): d/dv_a [-log P(b|a)] = -u_b + sum_i P(i|a) u_i and
    d/du_i [-log P(b|a)] = (P(i|a) - [i = b]) v_a. Returns dJ/dW when ``W_out`` is None
    (one matrix, both roles: the two parts add up), else (dJ/dW, dJ/dW_out).
    """
    ids = _ids_tensor("ids", ids)
    W_in, U = _embeddings(W, W_out)
    _check_ids_in_vocabulary(ids, W_in.shape[0])
    pairs, log_p = _pair_log_probabilities(W_in, U, ids, c, sentence_ids)
    error = log_p.exp()
    error[torch.arange(len(pairs), device=error.device), pairs[:, 1]] -= 1.0  # P - one-hot(b)
    grad_in = torch.zeros_like(W_in).index_add_(0, pairs[:, 0], error @ U) / ids.numel()
    grad_out = error.T @ W_in[pairs[:, 0]] / ids.numel()
    return grad_in + grad_out if W_out is None else (grad_in, grad_out)


# ------------------------------------------------------------------ negative sampling
def negative_sampling_loss(
    v_center: torch.Tensor, u_context: torch.Tensor, u_negatives: torch.Tensor
) -> torch.Tensor:
    """Mean over a batch of -log sigma(u_b . v_a) - sum_k log sigma(-u_{n_k} . v_a).

    Shapes: ``v_center`` (B, d), ``u_context`` (B, d), ``u_negatives`` (B, K, d).
    """
    v_center = float_tensor("v_center", v_center, min_dim=2)
    u_context = float_tensor("u_context", u_context, min_dim=2)
    u_negatives = float_tensor("u_negatives", u_negatives, min_dim=3)
    if u_context.shape != v_center.shape or u_negatives.shape[::2] != v_center.shape:
        raise ValueError(
            "expected v_center (B, d), u_context (B, d) and u_negatives (B, K, d); got "
            f"{tuple(v_center.shape)}, {tuple(u_context.shape)} and {tuple(u_negatives.shape)}"
        )
    positive = F.logsigmoid((u_context * v_center).sum(-1))  # (B,)
    negative = F.logsigmoid(-(u_negatives @ v_center[:, :, None]).squeeze(-1)).sum(-1)  # (B,)
    return -(positive + negative).mean()


def _counts_tensor(counts) -> torch.Tensor:
    counts = torch.as_tensor(counts)
    if counts.dim() != 1 or counts.numel() == 0:
        raise ValueError(f"counts must be a non-empty 1-D tensor; got shape {tuple(counts.shape)}")
    if (counts <= 0).any():
        raise ValueError("counts must all be > 0 (every word of the vocabulary occurs)")
    return counts.double()


def noise_distribution(counts, power: float = 0.75) -> torch.Tensor:
    """The negatives' distribution P_n(w) = count(w)^power / sum_i count(i)^power, shape (N,)."""
    if not 0.0 <= power <= 1.0:
        raise ValueError(f"power must be in [0, 1]; got {power}")
    weights = _counts_tensor(counts) ** power
    return (weights / weights.sum()).float()


def keep_probability(counts, sample: float = 1e-3) -> torch.Tensor:
    """The probability of keeping each occurrence of a word when frequent words are subsampled.

    With f the word's share of the corpus and s = ``sample``, word2vec keeps it with
    probability (sqrt(f / s) + 1) s / f, capped at 1 (gensim's rule): words rarer than
    about 2.6 s are always kept, "the" is kept about one time in six. ``sample=0`` keeps all.
    """
    if sample < 0:
        raise ValueError(f"sample must be >= 0; got {sample}")
    counts = _counts_tensor(counts)
    if sample == 0:
        return torch.ones(counts.shape, dtype=torch.float32, device=counts.device)
    share = counts / counts.sum()
    return ((torch.sqrt(share / sample) + 1) * sample / share).clamp(max=1.0).float()

"""Scaled dot-product attention, written out step by step.

Notation of the lectures, with row vectors: for a sequence of n tokens the queries,
keys and values are the rows of Q = E W_Q, K = E W_K and V = E W_V, and

    score(x_i, x_j) = q_i · k_j / √d_k                  (9.11)
    α_ij = softmax_j(score(x_i, x_j))                    (9.12)
    a_i = Σ_j α_ij v_j                                   (9.13)

In causal (masked) attention, the sum runs over j ≤ i only: a position sees itself
and the past, never the future. In full (bidirectional) attention it runs over all j.

Shapes: q is (..., n_q, d_k), k is (..., n_k, d_k), v is (..., n_k, d_v); any leading
batch or head axes broadcast as in ``torch.matmul``. Everything runs on the device of
its inputs.

Masks follow ``torch.nn.functional.scaled_dot_product_attention``: a boolean mask is
True where position i MAY attend to position j. ``nn.MultiheadAttention`` and
``nn.Transformer`` use the opposite convention (True = blocked): pass ``~mask`` there.
"""

import math

import torch

from .validation import bool_tensor, float_tensor, positive_int, same_device


def attention_scores(q: torch.Tensor, k: torch.Tensor, scale: float | None = None) -> torch.Tensor:
    """All scores q_i · k_j / √d_k at once: Q Kᵀ / √d_k, shape (..., n_q, n_k).

    ``scale`` replaces 1/√d_k when given (``scale=1.0`` gives the raw dot products).
    """
    float_tensor("q", q, min_dim=2)
    float_tensor("k", k, min_dim=2)
    same_device(q=q, k=k)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            "q and k must have the same last dimension d_k; "
            f"got q of shape {tuple(q.shape)} and k of shape {tuple(k.shape)}"
        )
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    return (q @ k.transpose(-2, -1)) * scale


def causal_mask(n_q: int, n_k: int | None = None, device=None) -> torch.Tensor:
    """Boolean (n_q, n_k) mask, True where j ≤ i: position i sees itself and the past.

    With n_k > n_q the mask is aligned top-left, as ``is_causal=True`` in
    ``scaled_dot_product_attention``.
    """
    positive_int("n_q", n_q)
    n_k = n_q if n_k is None else positive_int("n_k", n_k)
    return torch.ones(n_q, n_k, dtype=torch.bool, device=device).tril()


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Softmax over the last axis (the keys j), ignoring positions where ``mask`` is False.

    α_ij = exp(s_ij − m_i) / Σ_{j allowed} exp(s_ij − m_i), with m_i the largest allowed
    score of row i: subtracting it changes nothing mathematically but keeps exp from
    overflowing for large scores. Masked entries get exactly 0 (their score becomes −∞).
    A row in which nothing is allowed has no distribution (0/0) and comes out as NaN,
    as in ``torch.softmax``.
    """
    float_tensor("scores", scores)
    if mask is not None:
        bool_tensor("mask", mask)
        same_device(scores=scores, mask=mask)
        try:
            torch.broadcast_shapes(mask.shape, scores.shape)
        except RuntimeError:
            raise ValueError(
                f"mask of shape {tuple(mask.shape)} does not broadcast to the scores' "
                f"shape {tuple(scores.shape)}"
            ) from None
        scores = scores.masked_fill(~mask, float("-inf"))
    row_max = scores.amax(dim=-1, keepdim=True)
    exps = torch.exp(scores - row_max)
    return exps / exps.sum(dim=-1, keepdim=True)


def attention_weights(
    q: torch.Tensor,
    k: torch.Tensor,
    mask: torch.Tensor | None = None,
    causal: bool = False,
    scale: float | None = None,
) -> torch.Tensor:
    """The matrix α = softmax(Q Kᵀ / √d_k) of shape (..., n_q, n_k); row i holds α_i.

    ``causal=True`` keeps j ≤ i only; ``mask`` (True = may attend) is combined with it.
    """
    scores = attention_scores(q, k, scale=scale)
    if causal:
        allowed = causal_mask(scores.shape[-2], scores.shape[-1], device=scores.device)
        mask = allowed if mask is None else mask & allowed
    return masked_softmax(scores, mask)


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    causal: bool = False,
    scale: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention outputs a_i = Σ_j α_ij v_j and the weights α.

    Returns ``(a, alpha)``: a is (..., n_q, d_v), alpha is (..., n_q, n_k). The output
    a equals ``scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)``.
    """
    float_tensor("k", k, min_dim=2)
    float_tensor("v", v, min_dim=2)
    same_device(q=q, v=v)
    if v.shape[-2] != k.shape[-2]:
        raise ValueError(
            "k and v must have one row per key position (the same n_k); "
            f"got k of shape {tuple(k.shape)} and v of shape {tuple(v.shape)}"
        )
    alpha = attention_weights(q, k, mask=mask, causal=causal, scale=scale)
    return alpha @ v, alpha

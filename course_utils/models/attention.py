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
import torch.nn.functional as F
from torch import nn

from course_utils.validation import (
    bool_tensor,
    float_tensor,
    float_tensors,
    number,
    positive_int,
    same_device,
    same_size,
)


def attention_scores(q: torch.Tensor, k: torch.Tensor, scale: float | None = None) -> torch.Tensor:
    """All scores q_i · k_j / √d_k at once: Q Kᵀ / √d_k, shape (..., n_q, n_k).

    ``scale`` replaces 1/√d_k when given (``scale=1.0`` gives the raw dot products).
    """
    float_tensors(q=q, k=k, min_dim=2)
    same_size(-1, "must have the same last dimension d_k", q=q, k=k)
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
    float_tensors(q=q, k=k, v=v, min_dim=2)
    same_size(-2, "must have one row per key position (the same n_k)", k=k, v=v)
    alpha = attention_weights(q, k, mask=mask, causal=causal, scale=scale)
    return alpha @ v, alpha


class MultiHeadAttention(nn.Module):
    """Multi-head attention, batch-first, with ``nn.MultiheadAttention``'s parameters.

    Notation of the lectures, with row vectors. For queries from E (n_q × d) and keys and
    values from M (n_k × d; M = E in self-attention), with d = ``embed_dim`` and h =
    ``num_heads`` heads of d_h = d / h features each, head r computes

        Q_r = E W_Q^r,  K_r = M W_K^r,  V_r = M W_V^r        (W_·^r is d × d_h)
        A_r = softmax(Q_r K_rᵀ / √d_h)  row by row           (n_q × n_k)
        head_r = A_r V_r                                     (n_q × d_h)

    and the heads are concatenated side by side and mixed by W_O (d × d):

        MultiHead(E, M) = [head_1 | head_2 | … | head_h] W_O + b_O.

    Stacking the heads' W_Q^r side by side gives one d × d matrix W_Q = [W_Q^1 | … | W_Q^h]:
    Q = E W_Q + b_Q is computed once and split into h column blocks of d_h.

    Parameters, as in ``nn.MultiheadAttention(embed_dim, num_heads, bias=bias,
    batch_first=True)`` (same names, shapes and initialisation, so ``load_state_dict``
    works both ways): ``in_proj_weight`` (3d × d) holds W_Qᵀ, W_Kᵀ and W_Vᵀ stacked
    (PyTorch stores the transposes, as ``nn.Linear`` does: Q = E W_Q = F.linear(E,
    W_Qᵀ)), ``in_proj_bias`` (3d) holds b_Q, b_K, b_V, and ``out_proj`` is the linear
    layer of W_O and b_O. With ``bias=False`` there are no biases. ``dropout``
    (keyword-only, default 0) drops attention weights in training, as
    ``nn.MultiheadAttention``'s ``dropout``.

    ``forward(query, key=None, value=None, mask=None, causal=False, need_weights=False)``

    - query is (batch, n_q, d), key and value are (batch, n_k, d); (n, d) without the
      batch axis also works. ``key`` defaults to ``query`` (self-attention) and
      ``value`` to ``key``.
    - ``mask`` is boolean, True where query i MAY attend to key j (as in
      ``scaled_dot_product_attention`` and the rest of this module; ``nn.MultiheadAttention``
      uses True = blocked), broadcastable to (batch, heads, n_q, n_k): (n_q, n_k) for
      every sequence, (batch, 1, 1, n_k) for a padding mask. ``causal=True`` also keeps
      j ≤ i only.
    - Returns ``(output, weights)``: output is (batch, n_q, d); weights are the A_r,
      (batch, heads, n_q, n_k), one map per head (``nn.MultiheadAttention``'s
      ``average_attn_weights=False``), when ``need_weights=True``, else None.

    Two paths compute the same thing: with ``need_weights=True`` the step-by-step one
    (split heads, scores, masked softmax, weighted sum, concatenate, W_O, see
    ``forward_steps``); without, PyTorch's fused ``scaled_dot_product_attention`` kernel.
    A query row with no allowed key at all gets zero weights and the output b_O on both
    paths (the fused kernel's convention; ``masked_softmax`` alone gives NaN there).
    """

    def __init__(self, embed_dim: int, num_heads: int, bias: bool = True, *, dropout: float = 0.0):
        super().__init__()
        positive_int("embed_dim", embed_dim)
        positive_int("num_heads", num_heads)
        if embed_dim % num_heads:
            raise ValueError(
                f"embed_dim must be divisible by num_heads; got embed_dim={embed_dim} and "
                f"num_heads={num_heads} (embed_dim / num_heads = {embed_dim / num_heads:g})"
            )
        if not isinstance(bias, bool):
            raise TypeError(f"bias must be a bool; got {bias!r}")
        if not 0.0 <= number("dropout", dropout) < 1.0:
            raise ValueError(f"dropout must be in [0, 1); got {dropout}")
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.dropout = float(dropout)
        self.in_proj_weight = nn.Parameter(torch.empty(3 * embed_dim, embed_dim))
        if bias:
            self.in_proj_bias = nn.Parameter(torch.empty(3 * embed_dim))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """``nn.MultiheadAttention``'s initialisation: Xavier-uniform W_Q, W_K, W_V, zero biases."""
        nn.init.xavier_uniform_(self.in_proj_weight)
        self.out_proj.reset_parameters()
        if self.in_proj_bias is not None:
            nn.init.zeros_(self.in_proj_bias)
            nn.init.zeros_(self.out_proj.bias)

    def extra_repr(self) -> str:
        bias = self.in_proj_bias is not None
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, bias={bias}"

    # -- the pieces, each a line of the formula ------------------------------------------

    def project(self, query, key, value):
        """Q = E W_Q + b_Q, K = M W_K + b_K, V = M W_V + b_V, each (batch, n, d)."""
        w, b = self.in_proj_weight, self.in_proj_bias
        if key is query and value is query:  # self-attention: one matrix product
            return F.linear(query, w, b).chunk(3, dim=-1)
        w_q, w_k, w_v = w.chunk(3)
        b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
        return F.linear(query, w_q, b_q), F.linear(key, w_k, b_k), F.linear(value, w_v, b_v)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        """(batch, n, d) → (batch, heads, n, d_h): head r gets the columns r·d_h … (r+1)·d_h − 1."""
        batch, n, _ = x.shape
        return x.view(batch, n, self.num_heads, self.head_dim).transpose(1, 2)

    def merge_heads(self, x: torch.Tensor) -> torch.Tensor:
        """(batch, heads, n, d_h) → (batch, n, d): [head_1 | … | head_h], side by side."""
        batch, _, n, _ = x.shape
        return x.transpose(1, 2).reshape(batch, n, self.embed_dim)

    def forward_steps(self, query, key, value, mask=None):
        """The step-by-step path on checked batched inputs: ``(output, weights)``."""
        q, k, v = (self.split_heads(t) for t in self.project(query, key, value))
        weights = attention_weights(q, k, mask=mask)  # (batch, heads, n_q, n_k)
        if mask is not None:  # a query with no allowed key: zeros, as the fused kernel
            weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
        if self.training and self.dropout > 0:
            weights = F.dropout(weights, p=self.dropout)
        heads = weights @ v  # (batch, heads, n_q, d_h)
        return self.out_proj(self.merge_heads(heads)), weights

    def forward_fused(self, query, key, value, mask=None, causal=False):
        """The fused path on checked batched inputs: the output only."""
        q, k, v = (self.split_heads(t) for t in self.project(query, key, value))
        heads = F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, is_causal=causal,
            dropout_p=self.dropout if self.training else 0.0,
        )  # fmt: skip
        return self.out_proj(self.merge_heads(heads))

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor | None = None,
        value: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
        causal: bool = False,
        need_weights: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        key = query if key is None else key
        value = key if value is None else value
        unbatched = self._check_inputs(query, key, value)
        if unbatched:
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
        batch, n_q, n_k = query.shape[0], query.shape[1], key.shape[1]
        if not isinstance(causal, bool):
            raise TypeError(f"causal must be a bool; got {causal!r}")
        if mask is not None:
            mask = self._check_mask(mask, (batch, self.num_heads, n_q, n_k), unbatched)
        if causal and (mask is not None or need_weights):
            allowed = causal_mask(n_q, n_k, device=query.device)
            mask = allowed if mask is None else mask & allowed
            causal = False
        if need_weights:
            output, weights = self.forward_steps(query, key, value, mask)
        else:
            output, weights = self.forward_fused(query, key, value, mask, causal), None
        if unbatched:
            output = output.squeeze(0)
            weights = None if weights is None else weights.squeeze(0)
        return output, weights

    # -- input checks --------------------------------------------------------------------

    def _check_inputs(self, query, key, value) -> bool:
        """Check shapes and devices; True when the inputs have no batch axis."""
        for name, x in (("query", query), ("key", key), ("value", value)):
            float_tensor(name, x, min_dim=2)
            if x.dim() > 3:
                raise ValueError(
                    f"{name} must be (batch, n, embed_dim) or (n, embed_dim); "
                    f"got shape {tuple(x.shape)}"
                )
            if x.shape[-1] != self.embed_dim:
                raise ValueError(
                    f"{name} must have embed_dim={self.embed_dim} features in its last "
                    f"dimension; got shape {tuple(x.shape)}"
                )
        same_device(query=query, key=key, value=value, weights=self.in_proj_weight)
        if not query.dim() == key.dim() == value.dim():
            raise ValueError(
                "query, key and value must all be batched (3-D) or all unbatched (2-D); got "
                f"shapes {tuple(query.shape)}, {tuple(key.shape)} and {tuple(value.shape)}"
            )
        if key.shape[:-1] != value.shape[:-1]:
            raise ValueError(
                "key and value must have the same batch size and number of positions n_k; "
                f"got key of shape {tuple(key.shape)} and value of shape {tuple(value.shape)}"
            )
        if query.dim() == 3 and query.shape[0] != key.shape[0]:
            raise ValueError(
                "query and key must have the same batch size; "
                f"got query of shape {tuple(query.shape)} and key of shape {tuple(key.shape)}"
            )
        return query.dim() == 2

    def _check_mask(self, mask, target: tuple[int, ...], unbatched: bool) -> torch.Tensor:
        bool_tensor("mask", mask)
        same_device(mask=mask, weights=self.in_proj_weight)
        expected = target[1:] if unbatched else target
        try:
            fits = torch.broadcast_shapes(mask.shape, expected) == torch.Size(expected)
        except RuntimeError:
            fits = False
        if not fits:
            names = "(heads, n_q, n_k)" if unbatched else "(batch, heads, n_q, n_k)"
            raise ValueError(
                f"mask must broadcast to {names} = {tuple(expected)}; got shape {tuple(mask.shape)}"
            )
        return mask

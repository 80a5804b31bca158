"""Attention from PyTorch's own ops: the weights to draw, and a multi-head layer to train.

Notation of the lectures, with row vectors: for a sequence of n tokens the queries, keys
and values are the rows of Q = E W_Q, K = E W_K and V = E W_V. Notebooks 04 and 05 ask
for the computation itself as exercises; the course holds no version of its own.

- ``attention_weights(q, k, mask=None, causal=False, scale=None)`` returns the matrix of
  attention weights of PyTorch's ``F.scaled_dot_product_attention``, which returns only
  outputs: called with the identity matrix as its values, row i of its output is query
  i's weights over the keys. Masks follow that function (True where query i MAY attend
  to key j; ``causal=True`` is its ``is_causal``, and both may be given), and so does a
  query with no allowed key (a row of zeros).
- ``MultiHeadAttention`` is ``nn.MultiheadAttention(embed_dim, num_heads, bias=bias,
  batch_first=True)`` with the mask convention of ``attention_weights``
  (``nn.MultiheadAttention`` blocks where its mask is True) and one map of weights per
  head. It computes with PyTorch's ``F.multi_head_attention_forward``, which runs
  ``F.scaled_dot_product_attention`` on the heads when the weights are not asked for.

Shapes: q is (..., n_q, d_k), k is (..., n_k, d_k). Everything runs on the device of its
inputs.
"""

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


def attention_weights(
    q: torch.Tensor,
    k: torch.Tensor,
    mask: torch.Tensor | None = None,
    causal: bool = False,
    scale: float | None = None,
) -> torch.Tensor:
    """The weights α (..., n_q, n_k) that ``F.scaled_dot_product_attention(q, k, v,
    attn_mask=mask, is_causal=causal, scale=scale)`` gives the rows of any v: its output
    for v = the identity matrix (n_k × n_k). ``scale`` replaces its 1/√d_k when given."""
    float_tensors(q=q, k=k, min_dim=2)
    same_size(-1, "must have the same last dimension d_k", q=q, k=k)
    if mask is not None:
        bool_tensor("mask", mask)
        same_device(q=q, mask=mask)
        scores = (*torch.broadcast_shapes(q.shape[:-2], k.shape[:-2]), q.shape[-2], k.shape[-2])
        try:
            torch.broadcast_shapes(mask.shape, scores)
        except RuntimeError:
            raise ValueError(
                f"mask of shape {tuple(mask.shape)} does not broadcast to the weights' shape "
                f"{scores}"
            ) from None
    if not isinstance(causal, bool):
        raise TypeError(f"causal must be a bool; got {causal!r}")
    identity = torch.eye(k.shape[-2], dtype=q.dtype, device=q.device)
    identity = identity.expand(*k.shape[:-1], k.shape[-2])
    if mask is not None and causal:  # the function takes one of the two
        allowed = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device)
        mask, causal = mask & allowed.tril(), False
    return F.scaled_dot_product_attention(q, k, identity, attn_mask=mask, is_causal=causal,
                                          scale=scale)


class MultiHeadAttention(nn.MultiheadAttention):
    """``nn.MultiheadAttention(embed_dim, num_heads, bias=bias, dropout=dropout,
    batch_first=True)``: its parameters (``in_proj_weight`` holds W_Qᵀ, W_Kᵀ, W_Vᵀ
    stacked, as ``nn.Linear`` stores transposes; ``in_proj_bias``; ``out_proj``), its
    initialisation, then W_O drawn once more and b_O = 0 (the draws this layer always made:
    a seed gives the weights it always gave), and its computation (see the module's
    docstring).

    ``forward(query, key=None, value=None, mask=None, causal=False, need_weights=False)``

    - query is (batch, n_q, d), key and value are (batch, n_k, d); (n, d) without the
      batch axis also works. ``key`` defaults to ``query`` (self-attention) and
      ``value`` to ``key``.
    - ``mask`` is boolean, True where query i MAY attend to key j (as in
      ``scaled_dot_product_attention``; ``nn.MultiheadAttention`` uses True = blocked),
      broadcastable to (batch, heads, n_q, n_k): (n_q, n_k) for every sequence, (batch, 1,
      1, n_k) for a padding mask. ``causal=True`` also keeps j ≤ i only.
    - Returns ``(output, weights)``: output is (batch, n_q, d); weights (batch, heads,
      n_q, n_k), one map per head (``average_attn_weights=False``), when
      ``need_weights=True``, else None. A query with no allowed key gets the output b_O
      (zero weights, the fused kernel's convention), or NaN when the weights are asked
      for (``nn.MultiheadAttention``'s).
    """

    def __init__(self, embed_dim: int, num_heads: int, bias: bool = True, *, dropout: float = 0.0):
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
        super().__init__(embed_dim, num_heads, dropout=float(dropout), bias=bias,
                         batch_first=True)
        # W_O drawn once more after W_Q, W_K, W_V, as this layer always did
        self.out_proj.reset_parameters()
        if bias:
            nn.init.zeros_(self.out_proj.bias)

    def extra_repr(self) -> str:
        bias = self.in_proj_bias is not None
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, bias={bias}"

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
        if not isinstance(causal, bool):
            raise TypeError(f"causal must be a bool; got {causal!r}")
        if mask is not None:
            shape = (query.shape[0], self.num_heads, query.shape[1], key.shape[1])
            mask = self._check_mask(mask, shape, unbatched)
        if causal and (mask is not None or need_weights):
            allowed = torch.ones(query.shape[1], key.shape[1], dtype=torch.bool,
                                 device=query.device).tril()
            mask, causal = allowed if mask is None else mask & allowed, False
        output, weights = self._computed(query, key, value, mask, causal, need_weights)
        if unbatched:
            output = output.squeeze(0)
            weights = None if weights is None else weights.squeeze(0)
        return output, weights

    def _computed(self, query, key, value, mask, causal, need_weights):
        """``F.multi_head_attention_forward`` on checked batched inputs: (output, weights or
        None). With ``causal`` and no mask it passes PyTorch's ``is_causal`` hint, so the
        fused kernel skips the masked half."""
        shape = (query.shape[0], self.num_heads, query.shape[1], key.shape[1])
        if causal:
            blocked = torch.ones(shape[2:], dtype=torch.bool, device=query.device).triu(1)
        else:
            blocked = None if mask is None else ~mask.expand(shape).reshape(-1, *shape[2:])
        output, weights = F.multi_head_attention_forward(
            *(x.transpose(0, 1) for x in (query, key, value)), self.embed_dim, self.num_heads,
            self.in_proj_weight, self.in_proj_bias, None, None, False, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            need_weights=need_weights, attn_mask=blocked, average_attn_weights=False,
            is_causal=causal,
        )  # fmt: skip
        return output.transpose(0, 1), weights

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

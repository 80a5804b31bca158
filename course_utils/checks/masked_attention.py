"""Diagnostic checks for notebook 05: the E′ = E + A V update of one sentence reading another,
masks, heads, multi-head attention.

The references here are written out in float64 from the formulas (and PyTorch's own
``nn.MultiheadAttention`` for the build exercise),
independently of ``course_utils.models.attention``.
"""

import math

import torch
from torch import nn

from .core import QUERY_AXIS, as_tensor, check_close
from .guards import checked_plainly

__all__ = [
    "MASK_MISTAKES",
    "check_attention_update",
    "check_multi_head_attention",
    "check_padding_mask",
    "check_split_heads",
]

MASK_MISTAKES = {
    "no_residual": "you returned A V without the residual: the update is E′ = E + A V",
    "embeddings_weighted": "you weighted the source's embeddings S themselves: what the "
    "weights average are the values, which have E's size",
    "source_ignored": "your tokens of E read E itself: in this update the keys and the values "
    "come from the other sentence S",
    "no_scale": "you did not divide the scores by √n_Q",
    "scale_by_n_E": "you divided by √n_E (the embedding size) instead of √n_Q (the size of "
    "the queries and keys)",
    "query_axis": QUERY_AXIS,
    "unwanted_causal": "you applied a causal mask, but this update lets every token see every "
    "other (no mask)",
    "mask_inverted": "your mask is True where attention is BLOCKED (nn.MultiheadAttention's "
    "convention); here True means query i MAY attend to key j",
    "off_by_one": "you kept one key too many: a sentence of length L has the keys 1 … L, and "
    "Python counts them from 0: check the last key you keep",
    "query_padding": "you masked the padded QUERIES (rows) instead of the padded KEYS "
    "(columns): no query may attend to a padding key",
    "no_causal": "you did not combine it with the causal mask: with causal=True keep only j ≤ i",
    "unwanted_causal_mask": "you applied the causal mask although causal=False",
    "diagonal_masked": "you masked the diagonal as well (j ≥ i): position i must still see "
    "itself, so mask only j > i",
    "no_query_axis": "your mask has no query axis: return (batch, n, n), one row per query "
    "(repeat the key mask for every query i)",
    "heads_interleaved": "you gave index r the columns r, r + h, r + 2h, … (a view as "
    "(…, d_h, h)); index r gets the consecutive block x[..., r·d_h : (r + 1)·d_h]",
    "no_transpose": "you reshaped (batch, n, d) straight to (batch, h, n, d_h): a head then "
    "mixes numbers of several tokens. Print x_demo beside your answer and follow which row of "
    "x each number of head 1 comes from",
    "head_axis_last": "the head axis is in the wrong place: the shape asked for is (batch, h, "
    "n, d_h), with the heads before the tokens",
    "scale_by_d": "you divided by √d (the whole embedding) instead of √d_h (one head's size)",
    "no_output_projection": "you did not multiply the concatenated heads by W_O",
    "one_head": "you computed one head over all d features: split Q, K, V into num_heads "
    "heads of d_h = d / num_heads columns",
}


def _softmax_rows(scores: torch.Tensor, keep: torch.Tensor | None, dim: int = -1) -> torch.Tensor:
    if keep is not None:
        scores = scores.masked_fill(~keep, float("-inf"))
    return torch.softmax(scores, dim=dim)


def _update(e, s, w_q, w_k, w_v, scale, causal=False, dim=-1, values=True, residual=True):
    """E + softmax(E W_Q (S W_K)ᵀ · scale) S W_V, or one of the slips the switches name."""
    q, k, v = e @ w_q, s @ w_k, s @ w_v
    keep = torch.ones(len(e), len(s), dtype=torch.bool).tril() if causal else None
    a = _softmax_rows(q @ k.transpose(-2, -1) * scale, keep, dim)
    out = a @ (v if values else s)
    return e + out if residual else out


@checked_plainly
def check_attention_update(actual, e, s, w_q, w_k, w_v, name="E′", atol=1e-4) -> None:
    """Fail unless ``actual`` is E′ = E + A V where the n tokens of E read the m tokens of S.

    E is (n, n_E), S is (m, n_S); W_Q is (n_E, n_Q), W_K (n_S, n_Q), W_V (n_S, n_E); Q = E W_Q,
    K = S W_K, V = S W_V and A = softmax(Q Kᵀ / √n_Q) over the keys, (n, m). No mask. With
    S = E it is self-attention. Slips that the shapes allow are named (with S = E, or n_S = n_E).
    """
    e, s, w_q, w_k, w_v = (as_tensor(t, label) for t, label in
                           ((e, "E"), (s, "S"), (w_q, "W_Q"), (w_k, "W_K"), (w_v, "W_V")))
    n_e, n_q = w_q.shape
    scale = 1 / math.sqrt(n_q)
    mistakes = {
        MASK_MISTAKES["no_residual"]: _update(e, s, w_q, w_k, w_v, scale, residual=False),
        MASK_MISTAKES["no_scale"]: _update(e, s, w_q, w_k, w_v, 1.0),
        MASK_MISTAKES["query_axis"]: _update(e, s, w_q, w_k, w_v, scale, dim=-2),
        MASK_MISTAKES["unwanted_causal"]: _update(e, s, w_q, w_k, w_v, scale, causal=True),
    }
    if n_e != n_q:
        mistakes[MASK_MISTAKES["scale_by_n_E"]] = _update(e, s, w_q, w_k, w_v, 1 / math.sqrt(n_e))
    if s.shape[-1] == n_e:
        mistakes[MASK_MISTAKES["embeddings_weighted"]] = _update(e, s, w_q, w_k, w_v, scale,
                                                                 values=False)
        if not torch.equal(s, e):
            mistakes[MASK_MISTAKES["source_ignored"]] = _update(e, e, w_q, w_k, w_v, scale)
    expected = _update(e, s, w_q, w_k, w_v, scale)
    check_close(actual, expected, name, atol=atol, mistakes=mistakes, reveal=False)


def _key_mask(lengths: torch.Tensor, n: int, extra: int = 0) -> torch.Tensor:
    return torch.arange(n)[None, :] < (lengths[:, None] + extra)


@checked_plainly
def check_padding_mask(actual, lengths, n: int, causal: bool = False, name="padding_mask") -> None:
    """Fail unless ``actual`` is the (batch, n, n) mask, True where query i may attend key j.

    Key index k is allowed for query index q when k < lengths[b] (indices from 0: positions
    1 … L_b are real) and, with ``causal``, k ≤ q.
    Booleans, or 0/1 numbers, are accepted.
    """
    lengths = torch.as_tensor(lengths).long().cpu()
    batch = len(lengths)
    keys = _key_mask(lengths, n)[:, None, :].expand(batch, n, n)
    past = torch.ones(n, n, dtype=torch.bool).tril()
    expected = keys & past if causal else keys
    got = as_tensor(actual, name)
    if got.shape == (batch, n):
        raise AssertionError(f"{name} is not right: {MASK_MISTAKES['no_query_axis']}.")
    if got.shape != (batch, n, n):
        raise AssertionError(f"{name} should have shape {(batch, n, n)}; got {tuple(got.shape)}")
    past_if = past if causal else torch.ones(n, n, dtype=torch.bool)
    queries = _key_mask(lengths, n)[:, :, None].expand(batch, n, n)
    mistakes = {
        MASK_MISTAKES["mask_inverted"]: ~expected,
        MASK_MISTAKES["off_by_one"]: _key_mask(lengths, n, 1)[:, None, :] & past_if,
        MASK_MISTAKES["query_padding"]: queries & past_if,
    }
    if causal:
        mistakes[MASK_MISTAKES["no_causal"]] = keys
        mistakes[MASK_MISTAKES["diagonal_masked"]] = keys & past.tril(diagonal=-1)
    else:
        mistakes[MASK_MISTAKES["unwanted_causal_mask"]] = keys & past
    check_close(got, expected.double(), name, atol=1e-6,
                mistakes={m: w.double() for m, w in mistakes.items()}, reveal=False)


@checked_plainly
def check_split_heads(actual, x, num_heads: int, name="split_heads") -> None:
    """Fail unless ``actual`` is x (batch, n, d) split into (batch, h, n, d_h).

    Index r of the head axis holds the consecutive columns x[..., r·d_h : (r + 1)·d_h].
    """
    x = as_tensor(x, "x")
    batch, n, d = x.shape
    d_h = d // num_heads
    expected = x.reshape(batch, n, num_heads, d_h).permute(0, 2, 1, 3)
    got = as_tensor(actual, name)
    if got.shape == (batch, n, num_heads, d_h) and got.shape != expected.shape:
        if torch.allclose(got, expected.permute(0, 2, 1, 3)):
            raise AssertionError(f"{name} is not right: {MASK_MISTAKES['head_axis_last']}.")
    mistakes = {
        MASK_MISTAKES["no_transpose"]: x.reshape(batch, num_heads, n, d_h),
        MASK_MISTAKES["heads_interleaved"]: x.reshape(batch, n, d_h, num_heads).permute(0, 3, 1, 2),
    }
    check_close(got, expected, name, atol=1e-6, mistakes=mistakes, reveal=False)


def _multi_head(x, w_q, w_k, w_v, w_o, num_heads, causal, scale_by=None, output=True,
                heads=None, dim=-1):
    """Multi-head attention written out (a model of the answer and of its mistakes)."""
    heads = num_heads if heads is None else heads
    batch, n, d = x.shape
    d_h = d // heads

    def split(t):
        return t.reshape(batch, n, heads, d_h).transpose(1, 2)

    q, k, v = split(x @ w_q), split(x @ w_k), split(x @ w_v)
    keep = torch.ones(n, n, dtype=torch.bool).tril() if causal else None
    a = _softmax_rows(q @ k.transpose(-2, -1) / math.sqrt(scale_by or d_h), keep, dim)
    concat = (a @ v).transpose(1, 2).reshape(batch, n, d)
    return concat @ w_o if output else concat


def _pytorch_reference(x, w_q, w_k, w_v, w_o, num_heads, causal):
    d = x.shape[-1]
    layer = nn.MultiheadAttention(d, num_heads, bias=False, batch_first=True).double()
    with torch.no_grad():
        layer.in_proj_weight.copy_(torch.cat([w_q.T, w_k.T, w_v.T]))
        layer.out_proj.weight.copy_(w_o.T)
    n = x.shape[1]
    blocked = torch.ones(n, n, dtype=torch.bool).triu(1) if causal else None
    with torch.no_grad():
        return layer(x, x, x, attn_mask=blocked, need_weights=False)[0]


@checked_plainly
def check_multi_head_attention(actual, x, w_q, w_k, w_v, w_o, num_heads: int, causal: bool = False,
                               name="multi_head_attention", atol=1e-4) -> None:
    """Fail unless ``actual`` equals ``nn.MultiheadAttention`` (no biases) with these weights.

    x is (batch, n, d); W_Q, W_K, W_V, W_O are (d, d) acting on row vectors (Q = x W_Q);
    ``causal`` keeps j ≤ i only.
    """
    x, w_q, w_k, w_v, w_o = (as_tensor(t, label) for t, label in
                             ((x, "x"), (w_q, "W_Q"), (w_k, "W_K"), (w_v, "W_V"), (w_o, "W_O")))
    args = (x, w_q, w_k, w_v, w_o, num_heads)
    mistakes = {
        MASK_MISTAKES["no_output_projection"]: _multi_head(*args, causal, output=False),
        MASK_MISTAKES["query_axis"]: _multi_head(*args, causal, dim=-2),
        MASK_MISTAKES["no_causal" if causal else "unwanted_causal_mask"]:
            _multi_head(*args, not causal),
    }
    if num_heads > 1:
        mistakes[MASK_MISTAKES["scale_by_d"]] = _multi_head(*args, causal, scale_by=x.shape[-1])
        mistakes[MASK_MISTAKES["one_head"]] = _multi_head(*args, causal, heads=1)
    expected = _pytorch_reference(*args, causal)
    check_close(actual, expected, name, atol=atol, mistakes=mistakes, reveal=False)

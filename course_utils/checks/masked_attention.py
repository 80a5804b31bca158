"""Diagnostic checks for notebook 05: the E′ = E + A V update of one sentence reading another,
masks, heads, multi-head attention.

Expected values come from PyTorch: the update from ``F.scaled_dot_product_attention`` (and
its weights, ``course_utils.models.attention.attention_weights``), a padding mask from
``pad_sequence`` (the positions it fills) and ``nn.Transformer``'s causal mask, the heads
from their stated property (head r holds the columns r·d_h … (r + 1)·d_h − 1), and
multi-head attention from ``nn.MultiheadAttention`` loaded with the answer's matrices, and
notebook 06's ``my_attention`` (the same with biases, each head's queries and keys turned to
their positions) from plain float64 data: the layer's projections, Hugging Face GPT-J's
rotation with DistilBERT's sines and cosines (``checks.transformer_blocks``), PyTorch's
scaled dot-product attention.
Each named mistake is the same oracle on transformed inputs (another scale, source,
length, mask, number of heads, W_O = I, no biases, heads read in another order) or a
transformation of its output.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pad_sequence

from course_utils.models.attention import attention_weights

from .core import QUERY_AXIS, as_tensor, check_close
from .guards import checked_plainly
from .transformer_blocks import _rotated, _sinusoids

__all__ = [
    "MASK_MISTAKES",
    "check_attention_layer",
    "check_attention_update",
    "check_multi_head_attention",
    "check_padding_mask",
    "check_split_heads",
]

MASK_MISTAKES = {
    "no_residual": "your output is only what the tokens read: the residual is missing "
    "(look at what section 2's update adds it to)",
    "embeddings_weighted": "you weighted the source's embeddings S themselves: look at what "
    "the weights average in section 2's update, and at the size it must have",
    "source_ignored": "your tokens of E read E itself: look at which sentence the keys and "
    "the values come from in this update",
    "no_scale": "your scores are not scaled: look at the denominator of A in section 2",
    "scale_by_n_E": "your scale uses the embedding size: look at which size section 2 puts "
    "under the square root",
    "query_axis": QUERY_AXIS,
    "unwanted_causal": "you applied a causal mask, but this update lets every token see every "
    "other (no mask)",
    "mask_inverted": "your mask is True where attention is BLOCKED (nn.MultiheadAttention's "
    "convention): look at what True means in this notebook (section 4)",
    "off_by_one": "you kept one key too many: a sentence of length L has L keys, and Python "
    "counts them from 0: check the last key you keep",
    "query_padding": "you masked the padded QUERIES (rows): look again at which of the two "
    "axes can change a real token's output",
    "padded_rows_empty": "the rows of your padding queries keep no key at all: the cell before "
    "exercise 2 printed what the softmax gives in such a row (requirement 3)",
    "no_causal": "with causal=True your mask still lets a query see later keys: look at what "
    "section 4's mask keeps",
    "unwanted_causal_mask": "you applied the causal mask although causal=False",
    "diagonal_masked": "you masked the diagonal as well: query i lost key i (notebook 04's "
    "written question shows what that does to row 1)",
    "no_query_axis": "your mask has no query axis: the shape asked for is (batch, n, n), one "
    "row per query",
    "heads_interleaved": "your head r holds columns spread over the whole row (r, r + h, "
    "r + 2h, …): the exercise asks for a run of consecutive columns; print x_demo beside "
    "your answer",
    "no_transpose": "a head of yours mixes numbers of several tokens. Print x_demo beside "
    "your answer and follow which row of x each number of head 1 comes from",
    "head_axis_last": "the head axis is in the wrong place: the shape asked for is (batch, h, "
    "n, d_h), with the heads before the tokens",
    "scale_by_d": "every score of yours is too small by one common factor, so your weights "
    "are flatter than nn.MultiheadAttention's: look at the scale in section 6's formula",
    "no_output_projection": "your output skips the last step of section 6's formula, the mix "
    "of the concatenated heads",
    "one_head": "your answer attends once over all d features: look at how many heads the "
    "exercise asks for, and their size",
    # notebook 06's my_attention: 05's multi-head attention with the layer's biases, each
    # head's queries and keys turned to their positions
    "layer_no_rotation": "your outputs do not depend on where the tokens sit: shuffle the "
    "tokens of a sentence and your outputs are only shuffled, as notebook 05's were, so the "
    "GPT of section 5 would have no positions",
    "layer_values_turned": "your outputs carry the positions even with the attention weights "
    "held fixed: the mix of the tokens changes with where they sit. Look at which vectors "
    "your layer turns, against what exercise 2's requirement concerns",
    "layer_absolute": "your scores depend on the absolute positions of the query and the key, "
    "not only on their offset m − n: exercise 2's requirement fails for the vectors your "
    "layer scores",
    "layer_turned_whole": "your heads after the first barely tell neighbouring tokens apart: "
    "their scores hardly change from one offset to the next. Look at the width at which "
    "your layer turns, with the fastest turns printed in exercise 4, part 2",
    "layer_no_biases": "none of the layer's biases reaches your output: look at what the "
    "attention layer holds besides its weight matrices",
    "layer_no_in_bias": "your queries, keys and values miss their biases (in_proj_bias)",
    "layer_no_out_bias": "your output misses the bias of the output projection (out_proj)",
    "layer_no_output_projection": "your output skips the output projection (out_proj), the "
    "mix of the concatenated heads",
    "layer_scale_by_d": "every score of yours is too small by one common factor, so your "
    "weights are flatter than PyTorch's: look at which size the scale of notebook 05's "
    "multi-head attention takes",
    "layer_one_head": "your answer attends once over all d features: look at the layer's "
    "num_heads",
    "layer_heads_interleaved": "your head r holds columns spread over the whole row (r, r + h, "
    "r + 2h, …): notebook 05's heads are runs of consecutive columns",
    "layer_heads_merged": "your heads are put back together in another order than they were "
    "split: follow where head 1's output for token 1 lands before the output projection",
    "layer_mask_transposed": "with causal=True your token i sees the tokens after it, not "
    "those before it: look at which side of the diagonal your mask blocks",
    "layer_no_causal": "with causal=True your token i still sees the tokens after it",
    "layer_diagonal_masked": "with causal=True your token i does not see itself: look at "
    "whether your mask blocks the diagonal",
}


def _reads(e, s, w_q, w_k, w_v, values=None, scale=None, causal=False):
    """What E's tokens read from S by the oracle (no residual): SDPA(E W_Q, S W_K, S W_V);
    ``values`` replaces S W_V."""
    values = s @ w_v if values is None else values
    return F.scaled_dot_product_attention(e @ w_q, s @ w_k, values, scale=scale, is_causal=causal)


@checked_plainly
def check_attention_update(actual, e, s, w_q, w_k, w_v, name="E′", atol=1e-4) -> None:
    """Fail unless ``actual`` is the updated E′ of notebook 05's exercise 1, in which the n
    tokens of E (n, n_E) read the m tokens of S (m, n_S) through the weights given, with no
    mask: PyTorch's ``scaled_dot_product_attention`` plus the residual. With S = E it is
    self-attention. Slips that the shapes allow are named (with S = E, or n_S = n_E).
    """
    e, s, w_q, w_k, w_v = (as_tensor(t, label) for t, label in
                           ((e, "E"), (s, "S"), (w_q, "W_Q"), (w_k, "W_K"), (w_v, "W_V")))
    n_e, n_q = w_q.shape
    # each key's softmax over the queries: the keys' weights over the queries, transposed
    over_queries = attention_weights(s @ w_k, e @ w_q, scale=1 / math.sqrt(n_q)).mT
    mistakes = {
        MASK_MISTAKES["no_residual"]: _reads(e, s, w_q, w_k, w_v),
        MASK_MISTAKES["no_scale"]: e + _reads(e, s, w_q, w_k, w_v, scale=1.0),
        MASK_MISTAKES["query_axis"]: e + over_queries @ (s @ w_v),
        MASK_MISTAKES["unwanted_causal"]: e + _reads(e, s, w_q, w_k, w_v, causal=True),
    }
    if n_e != n_q:
        mistakes[MASK_MISTAKES["scale_by_n_E"]] = e + _reads(e, s, w_q, w_k, w_v,
                                                             scale=1 / math.sqrt(n_e))
    if s.shape[-1] == n_e:
        mistakes[MASK_MISTAKES["embeddings_weighted"]] = e + _reads(e, s, w_q, w_k, w_v,
                                                                    values=s)
        if not torch.equal(s, e):
            mistakes[MASK_MISTAKES["source_ignored"]] = e + _reads(e, e, w_q, w_k, w_v)
    expected = e + _reads(e, s, w_q, w_k, w_v)
    check_close(actual, expected, name, atol=atol, mistakes=mistakes, reveal=False)


def _real(lengths: torch.Tensor, n: int) -> torch.Tensor:
    """(batch, n): True at the positions ``pad_sequence`` fills from sequences of these
    lengths (the rest is its padding)."""
    filled = [torch.ones(int(length), dtype=torch.bool) for length in lengths]
    return pad_sequence([*filled, torch.zeros(n, dtype=torch.bool)], batch_first=True)[:-1, :n]


@checked_plainly
def check_padding_mask(actual, lengths, n: int, causal: bool = False, name="padding_mask") -> None:
    """Fail unless ``actual`` is the (batch, n, n) mask, True where query i may attend key j.

    Key index k is allowed for query index q when k < lengths[b] (indices from 0: positions
    1 … L_b are real) and, with ``causal``, k ≤ q.
    Booleans, or 0/1 numbers, are accepted.
    """
    lengths = torch.as_tensor(lengths).long().cpu()
    batch = len(lengths)
    keys = _real(lengths, n)[:, None, :].expand(batch, n, n)
    past = nn.Transformer.generate_square_subsequent_mask(n) == 0  # PyTorch's: 0 = may attend
    expected = keys & past if causal else keys
    got = as_tensor(actual, name)
    if got.shape == (batch, n):
        raise AssertionError(f"{name} is not right: {MASK_MISTAKES['no_query_axis']}.")
    if got.shape != (batch, n, n):
        raise AssertionError(f"{name} should have shape {(batch, n, n)}; got {tuple(got.shape)}")
    past_if = past if causal else torch.ones(n, n, dtype=torch.bool)
    mistakes = {
        MASK_MISTAKES["mask_inverted"]: ~expected,
        MASK_MISTAKES["off_by_one"]: _real(lengths + 1, n)[:, None, :] & past_if,
        MASK_MISTAKES["query_padding"]: keys.mT & past_if,
        MASK_MISTAKES["padded_rows_empty"]: keys & keys.mT & past_if,
    }
    if causal:
        mistakes[MASK_MISTAKES["no_causal"]] = keys
        mistakes[MASK_MISTAKES["diagonal_masked"]] = expected & ~torch.eye(n, dtype=torch.bool)
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
    got = as_tensor(actual, name)
    blocks = x.split(d_h, dim=-1)  # the property: index r holds block r of the columns
    if got.shape == (batch, n, num_heads, d_h) != (batch, num_heads, n, d_h):
        if all(torch.allclose(got[:, :, r], block) for r, block in enumerate(blocks)):
            raise AssertionError(f"{name} is not right: {MASK_MISTAKES['head_axis_last']}.")
    if got.shape != (batch, num_heads, n, d_h):
        raise AssertionError(f"{name} should have shape {(batch, num_heads, n, d_h)}; got "
                             f"{tuple(got.shape)}")
    mistakes = {  # the input read in another order
        MASK_MISTAKES["no_transpose"]: x.reshape(batch, num_heads, n, d_h),
        MASK_MISTAKES["heads_interleaved"]: x.reshape(batch, n, d_h, num_heads).permute(0, 3, 1, 2),
    }
    for r, block in enumerate(blocks):
        check_close(got[:, r], block, f"{name}(x, {num_heads})[:, {r}] (head {r + 1})",
                    atol=1e-6, mistakes={m: w[:, r] for m, w in mistakes.items()}, reveal=False)


def _pytorch_layer(x, in_weight, in_bias, out_weight, out_bias, num_heads, blocked=None):
    """``nn.MultiheadAttention`` holding these parameters (PyTorch's layout: ``in_weight``
    stacks W_Qᵀ, W_Kᵀ, W_Vᵀ, ``out_weight`` is W_Oᵀ), its self-attention of x (batch, n, d):
    its output. ``blocked`` (n, n) is added to the scores (−∞ or −1e9 where query i may not
    see key j)."""
    d = x.shape[-1]
    layer = nn.MultiheadAttention(d, num_heads, batch_first=True).to(x.dtype)
    with torch.no_grad():
        for parameter, value in ((layer.in_proj_weight, in_weight), (layer.in_proj_bias, in_bias),
                                 (layer.out_proj.weight, out_weight),
                                 (layer.out_proj.bias, out_bias)):
            parameter.copy_(value)
        return layer(x, x, x, attn_mask=blocked, need_weights=False)[0]


def _pytorch_reference(x, w_q, w_k, w_v, w_o, num_heads, causal):
    """``nn.MultiheadAttention`` (no biases) with these matrices, on x: its output."""
    n, d = x.shape[-2:]
    blocked = nn.Transformer.generate_square_subsequent_mask(n, dtype=x.dtype) if causal else None
    return _pytorch_layer(x, torch.cat([w_q.T, w_k.T, w_v.T]), x.new_zeros(3 * d), w_o.T,
                          x.new_zeros(d), num_heads, blocked)


@checked_plainly
def check_multi_head_attention(actual, x, w_q, w_k, w_v, w_o, num_heads: int, causal: bool = False,
                               name="multi_head_attention", atol=1e-4) -> None:
    """Fail unless ``actual`` equals ``nn.MultiheadAttention`` (no biases) with these weights.

    x is (batch, n, d); W_Q, W_K, W_V, W_O are (d, d) acting on row vectors (Q = x W_Q);
    ``causal`` keeps j ≤ i only.
    """
    x, w_q, w_k, w_v, w_o = (as_tensor(t, label) for t, label in
                             ((x, "x"), (w_q, "W_Q"), (w_k, "W_K"), (w_v, "W_V"), (w_o, "W_O")))
    d = x.shape[-1]
    mistakes = {
        MASK_MISTAKES["no_output_projection"]: _pytorch_reference(
            x, w_q, w_k, w_v, torch.eye(d, dtype=w_o.dtype), num_heads, causal),
        MASK_MISTAKES["no_causal" if causal else "unwanted_causal_mask"]:
            _pytorch_reference(x, w_q, w_k, w_v, w_o, num_heads, not causal),
    }
    if num_heads > 1:  # scores over √d: W_Q scaled by √(d_h / d)
        mistakes[MASK_MISTAKES["scale_by_d"]] = _pytorch_reference(
            x, w_q / math.sqrt(num_heads), w_k, w_v, w_o, num_heads, causal)
        mistakes[MASK_MISTAKES["one_head"]] = _pytorch_reference(x, w_q, w_k, w_v, w_o, 1, causal)
    expected = _pytorch_reference(x, w_q, w_k, w_v, w_o, num_heads, causal)
    check_close(actual, expected, name, atol=atol, mistakes=mistakes, reveal=False)


def _blocked(n: int, diagonal: int = 1, upper: bool = True) -> torch.Tensor:
    """(n, n), True where query i may not see key j: above the diagonal ``diagonal`` (below
    it if not ``upper``): the causal mask and its slips (its diagonal, its side)."""
    everywhere = torch.ones(n, n, dtype=torch.bool)
    return everywhere.triu(diagonal) if upper else everywhere.tril(-diagonal)


def _rotary_layer(h, w_in, b_in, w_out, b_out, heads, blocked=None, turned="qk"):
    """The self-attention of h (batch, n, d) by a layer holding these parameters (PyTorch's
    layout), each head's queries and keys turned to the positions 0 … n − 1 by Hugging Face
    GPT-J's rotation: float64, from plain data. ``blocked`` (n, n): True where query i may not
    see key j. For a mistake, ``turned`` names what turns instead of "qk": "q", "k", "qkv",
    "qkV" (the values too, at the full width d), "" (nothing), "x" (the input, before the
    projections) or "whole" (the queries and keys at the full width, before the split)."""
    h, w_in, b_in, w_out, b_out = (t.double() for t in (h, w_in, b_in, w_out, b_out))
    n, d = h.shape[-2:]

    def turn(t):                                       # (..., n, width): row j to position j
        table = _sinusoids(n, t.shape[-1])
        return _rotated(t, table[:, 0::2], table[:, 1::2])

    q, k, v = F.linear(turn(h) if turned == "x" else h, w_in, b_in).split(d, dim=-1)
    if turned == "whole":
        q, k = turn(q), turn(k)
    if "V" in turned:
        v = turn(v)
    q, k, v = (t.reshape(*t.shape[:-1], heads, d // heads).transpose(-3, -2) for t in (q, k, v))
    q, k, v = (turn(t) if name in turned and turned not in ("x", "whole") else t
               for name, t in zip("qkv", (q, k, v), strict=True))
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=None if blocked is None else ~blocked)
    return F.linear(out.transpose(-3, -2).reshape(h.shape), w_out, b_out)


@checked_plainly
def check_attention_layer(actual, h, self_attn, rotate, causal: bool = False,
                          name="my_attention", atol=1e-4) -> None:
    """Fail unless ``actual`` is the rotary multi-head self-attention of h (batch, n, d)
    with the weights and biases of the attention layer ``self_attn`` (``in_proj_weight``,
    ``in_proj_bias``, ``num_heads``, ``out_proj``): each head's queries and keys turned to
    their positions, by :func:`_rotary_layer`; ``causal`` keeps j ≤ i only. ``rotate``, the
    right rotation the test handed the answer, is not the oracle's."""
    h = as_tensor(h, "h")
    n, d = h.shape[-2:]
    heads = self_attn.num_heads
    w_in, b_in, w_out, b_out = (as_tensor(p, label) for p, label in (
        (self_attn.in_proj_weight, "in_proj_weight"), (self_attn.in_proj_bias, "in_proj_bias"),
        (self_attn.out_proj.weight, "out_proj.weight"), (self_attn.out_proj.bias, "out_proj.bias")))
    if (d // heads) % 2:
        raise ValueError(f"each head must have an even number of features (pairs turn); got "
                         f"d = {d} and {heads} heads")
    mask = _blocked(n) if causal else None

    def layer(w_in=w_in, b_in=b_in, w_out=w_out, b_out=b_out, heads=heads, mask=mask,
              turned="qk"):
        return _rotary_layer(h, w_in, b_in, w_out, b_out, heads, mask, turned)

    expected, got = layer(), as_tensor(actual, name)
    if got.shape == expected.shape and not torch.allclose(got, expected, atol=atol):
        for turned, key in (("x", "layer_absolute"), ("q", "layer_absolute"),
                            ("k", "layer_absolute"), ("whole", "layer_turned_whole"),
                            ("qkV", "layer_values_turned")):
            if torch.allclose(got, layer(turned=turned), atol=atol):
                raise AssertionError(f"{name} is not right: {MASK_MISTAKES[key]}.")
    concat = layer(w_out=torch.eye(d, dtype=h.dtype), b_out=torch.zeros_like(b_out))  # the heads
    mistakes = {
        MASK_MISTAKES["layer_no_biases"]: layer(b_in=torch.zeros_like(b_in),
                                                b_out=torch.zeros_like(b_out)),
        MASK_MISTAKES["layer_no_in_bias"]: layer(b_in=torch.zeros_like(b_in)),
        MASK_MISTAKES["layer_no_out_bias"]: layer(b_out=torch.zeros_like(b_out)),
        MASK_MISTAKES["layer_no_output_projection"]: concat,
        MASK_MISTAKES["layer_no_rotation"]: layer(turned=""),
        MASK_MISTAKES["layer_values_turned"]: layer(turned="qkv"),
        MASK_MISTAKES["layer_no_causal" if causal else "unwanted_causal_mask"]:
            layer(mask=None if causal else _blocked(n)),
    }
    if causal and n > 1:
        mistakes[MASK_MISTAKES["layer_mask_transposed"]] = layer(mask=_blocked(n, upper=False))
        # token 1 sees no key at all: its row depends on how the answer masks (NaN, a mean),
        # the later rows do not
        without_self = layer(mask=_blocked(n, 0))
        if (got.shape == expected.shape and not torch.allclose(got, expected, atol=atol)
                and torch.allclose(got[..., 1:, :], without_self[..., 1:, :], atol=atol)):
            raise AssertionError(f"{name} is not right: {MASK_MISTAKES['layer_diagonal_masked']}.")
    if heads > 1:
        d_h = d // heads
        # scores over √d: the queries (with their biases) scaled by √(d_h / d)
        scaled = torch.ones(3 * d, 1, dtype=h.dtype)
        scaled[:d] = 1 / math.sqrt(heads)
        # head r reading the columns r, r + h, …: the same layer with its columns permuted
        interleaved = torch.arange(d).reshape(d_h, heads).T.reshape(d)
        rows = torch.cat([interleaved + block * d for block in range(3)])
        # heads split right, (batch, h, n, d_h) put back as if it were (batch, n, h, d_h)
        merged = concat.reshape(*concat.shape[:-1], heads, d_h).transpose(-3, -2).reshape(
            concat.shape) @ w_out.T + b_out
        mistakes.update({
            MASK_MISTAKES["layer_scale_by_d"]: layer(w_in=w_in * scaled, b_in=b_in * scaled[:, 0]),
            MASK_MISTAKES["layer_one_head"]: layer(heads=1),
            MASK_MISTAKES["layer_heads_interleaved"]: layer(w_in=w_in[rows], b_in=b_in[rows],
                                                            w_out=w_out[:, interleaved]),
            MASK_MISTAKES["layer_heads_merged"]: merged,
        })
    check_close(actual, expected, name, atol=atol, mistakes=mistakes, reveal=False)

"""Each diagnostic of checks/masked_attention.py: its mistake names it, a right answer none."""

import math
import re

import pytest
import torch

from course_utils import checks
from course_utils.checks.masked_attention import MASK_MISTAKES


def raises(key):
    return pytest.raises(AssertionError, match=re.escape(MASK_MISTAKES[key]))


G = torch.Generator().manual_seed(0)
E = torch.randn(5, 6, generator=G, dtype=torch.float64)         # n = 5 tokens, n_E = 6
S = torch.randn(7, 4, generator=G, dtype=torch.float64)         # m = 7 source tokens, n_S = 4
W_Q = torch.randn(6, 3, generator=G, dtype=torch.float64)
W_K = torch.randn(4, 3, generator=G, dtype=torch.float64)
W_V = torch.randn(4, 6, generator=G, dtype=torch.float64)
S_SAME = torch.randn(7, 6, generator=G, dtype=torch.float64)    # a source with n_S = n_E
W_K_SAME = torch.randn(6, 3, generator=G, dtype=torch.float64)
W_V_SAME = torch.randn(6, 6, generator=G, dtype=torch.float64)


def reference(e, s, w_k, w_v, scale=None, dim=-1, values=True, residual=True, causal=False):
    """The update written from section 2's sums, one query at a time, as the oracle."""
    q, k, v = e @ W_Q, s @ w_k, s @ w_v
    rows = []
    for i in range(len(e)):
        scores = torch.stack([q[i] @ k[j] for j in range(len(s))]) / (scale or math.sqrt(3))
        if causal:
            scores[i + 1:] = float("-inf")
        rows.append(scores)
    a = torch.softmax(torch.stack(rows), dim=dim)
    out = a @ (v if values else s)
    return e + out if residual else out


def update(**switches):
    return reference(E, S, W_K, W_V, **switches)


def same(**switches):
    return reference(E, S_SAME, W_K_SAME, W_V_SAME, **switches)


def test_a_right_update_passes_in_float32_lists_and_numpy():
    right = update()
    checks.check_attention_update(right, E, S, W_Q, W_K, W_V)
    checks.check_attention_update(right.float(), E.float(), S, W_Q, W_K, W_V)
    checks.check_attention_update(right.tolist(), E, S, W_Q, W_K, W_V)
    checks.check_attention_update(right.numpy(), E, S, W_Q, W_K, W_V)


def test_self_attention_is_the_case_s_equals_e():
    right = reference(E, E, W_K_SAME, W_V_SAME)
    checks.check_attention_update(right, E, E, W_Q, W_K_SAME, W_V_SAME)


@pytest.mark.parametrize("wrong, key", [
    (update(residual=False), "no_residual"),
    (update(scale=1.0), "no_scale"),
    (update(scale=math.sqrt(6)), "scale_by_n_E"),
    (update(dim=0), "query_axis"),
    (update(causal=True), "unwanted_causal"),
])
def test_update_mistakes_are_named(wrong, key):
    with raises(key):
        checks.check_attention_update(wrong, E, S, W_Q, W_K, W_V)


@pytest.mark.parametrize("wrong, key", [
    (same(values=False), "embeddings_weighted"),
    (reference(E, E, W_K_SAME, W_V_SAME), "source_ignored"),
])
def test_mistakes_the_shapes_allow_only_when_n_s_is_n_e_are_named_then(wrong, key):
    with raises(key):
        checks.check_attention_update(wrong, E, S_SAME, W_Q, W_K_SAME, W_V_SAME)


LENGTHS, N = [3, 5, 1], 5


def mask(lengths=LENGTHS, n=N, causal=False, extra=0, queries=False, diagonal=0):
    lengths = torch.tensor(lengths)
    real = torch.arange(n)[None, :] < lengths[:, None] + extra
    m = real[:, :, None] if queries else real[:, None, :]
    m = m.expand(len(lengths), n, n)
    return m & torch.ones(n, n, dtype=torch.bool).tril(diagonal) if causal else m


@pytest.mark.parametrize("causal", [False, True])
def test_a_right_mask_passes_as_bool_int_numpy(causal):
    right = mask(causal=causal)
    checks.check_padding_mask(right, LENGTHS, N, causal)
    checks.check_padding_mask(right.int(), torch.tensor(LENGTHS), N, causal)
    checks.check_padding_mask(right.numpy(), LENGTHS, N, causal)


@pytest.mark.parametrize("causal", [False, True])
def test_mask_mistakes_are_named(causal):
    with raises("mask_inverted"):
        checks.check_padding_mask(~mask(causal=causal), LENGTHS, N, causal)
    with raises("off_by_one"):
        checks.check_padding_mask(mask(causal=causal, extra=1), LENGTHS, N, causal)
    with raises("query_padding"):
        checks.check_padding_mask(mask(causal=causal, queries=True), LENGTHS, N, causal)
    if not causal:  # under the causal mask the padding rows alone already block every padding key
        with raises("padded_rows_empty"):
            checks.check_padding_mask(mask() & mask(queries=True), LENGTHS, N, causal)
    with raises("no_query_axis"):
        checks.check_padding_mask(mask()[:, 0], LENGTHS, N, causal)
    with raises("unwanted_causal_mask" if not causal else "no_causal"):
        checks.check_padding_mask(mask(causal=not causal), LENGTHS, N, causal)
    if causal:
        with raises("diagonal_masked"):
            checks.check_padding_mask(mask(causal=True, diagonal=-1), LENGTHS, N, causal)


X = torch.randn(2, 3, 8, generator=G)


def test_right_split_passes_and_its_mistakes_are_named():
    right = X.reshape(2, 3, 4, 2).transpose(1, 2)
    checks.check_split_heads(right, X, 4)
    checks.check_split_heads(right.double().numpy(), X, 4)
    with pytest.raises(AssertionError, match="mixes"):
        checks.check_split_heads(X.reshape(2, 4, 3, 2), X, 4)
    with pytest.raises(AssertionError, match="consecutive columns"):
        checks.check_split_heads(X.reshape(2, 3, 2, 4).permute(0, 3, 1, 2), X, 4)
    with pytest.raises(AssertionError, match="wrong place"):
        checks.check_split_heads(X.reshape(2, 3, 4, 2), X, 4)


XM = torch.randn(2, 5, 8, generator=G, dtype=torch.float64)
WS = torch.randn(4, 8, 8, generator=G, dtype=torch.float64) / math.sqrt(8)


def mha(heads=2, causal=False, scale=None, output=True, dim=-1):
    b, n, d = XM.shape
    d_h = d // heads
    q, k, v = ((XM @ w).reshape(b, n, heads, d_h).transpose(1, 2) for w in WS[:3])
    s = q @ k.transpose(-2, -1) / math.sqrt(scale or d_h)
    if causal:
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), -1e9)
    concat = (torch.softmax(s, dim=dim) @ v).transpose(1, 2).reshape(b, n, d)
    return concat @ WS[3] if output else concat


@pytest.mark.parametrize("causal", [False, True])
def test_right_multi_head_attention_passes_and_its_mistakes_are_named(causal):
    def check(value):
        checks.check_multi_head_attention(value, XM, *WS, 2, causal)

    check(mha(causal=causal))
    check(mha(causal=causal).float())
    for wrong, key in ((mha(causal=causal, scale=8), "scale_by_d"),
                       (mha(causal=causal, output=False), "no_output_projection"),
                       (mha(heads=1, causal=causal), "one_head"),
                       (mha(causal=not causal), "no_causal" if causal else "unwanted_causal_mask")):
        with raises(key):
            check(wrong)


def test_the_reference_is_pytorchs_layer():
    from torch import nn

    layer = nn.MultiheadAttention(8, 2, bias=False, batch_first=True).double()
    with torch.no_grad():
        layer.in_proj_weight.copy_(torch.cat([w.T for w in WS[:3]]))
        layer.out_proj.weight.copy_(WS[3].T)
        expected = layer(XM, XM, XM, need_weights=False)[0]
    assert torch.allclose(expected, mha(), atol=1e-10)


def test_read_only_numpy_answers_pass_without_a_warning():
    import warnings

    import numpy as np

    right = np.broadcast_to(mask(causal=True).numpy()[:1], (1, N, N))  # read-only view
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checks.check_padding_mask(right, [3], N, True)
        checks.check_split_heads(np.broadcast_to(X.reshape(2, 3, 4, 2).transpose(1, 2).numpy(),
                                                 (2, 4, 3, 2)), X, 4)


CODE = re.compile(r"torch\.|transpose\(|reshape\(|view\(|permute\(|swap axes")


def test_no_message_writes_the_fix_as_code():
    """A message names the mistake and where to look, never the line to write."""
    assert not [key for key, message in MASK_MISTAKES.items() if CODE.search(message)]


def test_an_unknown_mistake_does_not_print_the_expected_values():
    right = X.reshape(2, 3, 4, 2).transpose(1, 2)
    with pytest.raises(AssertionError) as failure:
        checks.check_split_heads(right + 0.5, X, 4)
    assert "expected" not in str(failure.value)
    assert f"{right[0, 0, 0, 0].item():.4g}" not in str(failure.value).split("got:")[0]


# --- notebook 06's my_attention: the same layer with its biases, queries and keys turned ----

def biased_layer(d=12, heads=3):
    from course_utils.models.attention import MultiHeadAttention

    torch.manual_seed(3)
    layer = MultiHeadAttention(d, heads).double().eval()
    with torch.no_grad():
        layer.in_proj_bias.normal_()
        layer.out_proj.bias.normal_()
    return layer


LAYER, XL = biased_layer(), torch.randn(2, 5, 12, generator=G, dtype=torch.float64)


def turned(t, start=0):
    """t (..., n, width), each neighbouring pair of row j turned by the angle
    (start + j)·ω_i, ω_i = 10000^(−2i/width), counterclockwise: RoPE written out."""
    n, width = t.shape[-2:]
    angle = torch.arange(start, start + n, dtype=torch.float64)[:, None] * 10000.0 ** (
        -torch.arange(0, width, 2, dtype=torch.float64) / width)
    pairs = torch.complex(t[..., 0::2], t[..., 1::2]) * torch.polar(torch.ones_like(angle), angle)
    return torch.stack([pairs.real, pairs.imag], dim=-1).flatten(-2)


def attention(causal=False, in_bias=True, out_bias=True, width=False, heads=None, mask="triu",
              split="runs", merge="right", fill=-1e9, turn="qk", start=0):
    """The layer's self-attention of XL written out head by head, each head's queries and keys
    turned (``turn``: which of q, k, v turn), with one slip or none."""
    b, n, d = XL.shape
    h = heads or LAYER.num_heads
    d_h = d // h
    q, k, v = (XL @ LAYER.in_proj_weight.T + LAYER.in_proj_bias * in_bias).split(d, dim=-1)
    if split == "runs":
        q, k, v = (t.reshape(b, n, h, d_h).transpose(1, 2) for t in (q, k, v))
    else:  # head r reads the columns r, r + h, …
        q, k, v = (t.reshape(b, n, d_h, h).permute(0, 3, 1, 2) for t in (q, k, v))
    q, k, v = (turned(t, start) if name in turn else t
               for name, t in zip("qkv", (q, k, v), strict=True))
    s = q @ k.transpose(-2, -1) / math.sqrt(d if width else d_h)
    if causal:
        blocked = {"triu": torch.ones(n, n).triu(1), "diagonal": torch.ones(n, n).triu(0),
                   "tril": torch.ones(n, n).tril(-1)}[mask].bool()
        s = s.masked_fill(blocked, fill)
    heads_out = torch.softmax(s, dim=-1) @ v                   # (b, h, n, d_h)
    if split != "runs":
        concat = heads_out.permute(0, 2, 3, 1).reshape(b, n, d)
    elif merge == "right":
        concat = heads_out.transpose(1, 2).reshape(b, n, d)
    else:  # (b, h, n, d_h) read as if it were (b, n, h, d_h)
        concat = heads_out.reshape(b, n, d)
    return (concat @ LAYER.out_proj.weight.T + LAYER.out_proj.bias * out_bias).detach()


@pytest.mark.parametrize("causal", [False, True])
def test_a_right_attention_layer_passes_and_its_mistakes_are_named(causal):
    def check(value):
        checks.check_attention_layer(value, XL, LAYER, None, causal)

    check(attention(causal))
    check(attention(causal).float())
    check(attention(causal, fill=float("-inf")))
    check(attention(causal, start=7))          # positions from 7: the same offsets
    for slip, key in (({"in_bias": False, "out_bias": False}, "layer_no_biases"),
                      ({"in_bias": False}, "layer_no_in_bias"),
                      ({"out_bias": False}, "layer_no_out_bias"),
                      ({"width": True}, "layer_scale_by_d"),
                      ({"heads": 1}, "layer_one_head"),
                      ({"split": "interleaved"}, "layer_heads_interleaved"),
                      ({"merge": "as_if_tokens_first"}, "layer_heads_merged"),
                      ({"turn": ""}, "layer_no_rotation"),
                      ({"turn": "qkv"}, "layer_values_turned"),
                      ({"turn": "q"}, "layer_absolute"),
                      ({"turn": "k"}, "layer_absolute")):
        with raises(key):
            check(attention(causal, **slip))
    with raises("layer_no_causal" if causal else "unwanted_causal_mask"):
        check(attention(not causal))


@pytest.mark.parametrize("fill", [-1e9, float("-inf")])
def test_a_causal_mask_on_the_wrong_side_or_over_the_diagonal_is_named(fill):
    with raises("layer_mask_transposed"):
        checks.check_attention_layer(attention(True, mask="tril", fill=fill), XL, LAYER, None,
                                     True)
    with raises("layer_diagonal_masked"):   # token 1 sees no key: NaN or a mean, as masked
        checks.check_attention_layer(attention(True, mask="diagonal", fill=fill), XL, LAYER, None,
                                     True)


def test_the_layer_reference_is_pytorchs_forward_on_turned_queries_and_keys():
    from torch import nn

    from course_utils.checks.masked_attention import _rotary_layer

    parameters = (LAYER.in_proj_weight, LAYER.in_proj_bias, LAYER.out_proj.weight,
                  LAYER.out_proj.bias, LAYER.num_heads)
    with torch.no_grad():
        expected = nn.MultiheadAttention.forward(LAYER, XL, XL, XL, need_weights=False)[0]
        assert torch.allclose(_rotary_layer(XL, *parameters, turned=""), expected, atol=1e-10)
        assert torch.allclose(_rotary_layer(XL, *parameters), attention(), atol=1e-10)


def test_a_rotation_of_the_input_or_of_whole_rows_is_named():
    from course_utils.checks.masked_attention import _rotary_layer

    parameters = (LAYER.in_proj_weight, LAYER.in_proj_bias, LAYER.out_proj.weight,
                  LAYER.out_proj.bias, LAYER.num_heads)
    with torch.no_grad():
        for how, key in (("x", "layer_absolute"), ("whole", "layer_turned_whole"),
                         ("qkV", "layer_values_turned")):
            with raises(key):
                checks.check_attention_layer(_rotary_layer(XL, *parameters, turned=how), XL, LAYER,
                                             None)

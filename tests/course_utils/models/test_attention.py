"""course_utils.models.attention against hand-worked values and PyTorch's own attention."""

import math

import pytest
import torch
import torch.nn.functional as F

from course_utils.device import get_device
from course_utils.models.attention import MultiHeadAttention, attention_weights

DEVICE = get_device()

# "I am good" from notebook 04: q_3 and the three keys, worked out by hand.
Q3 = [-1.0, 1.0, 0.0, 0.0]
KEYS = [[0.0, -1.0, 1.0, 2.0], [2.0, -2.0, 0.0, 0.0], [-1.0, 1.0, 0.0, 0.0]]


def tensor(rows):
    return torch.tensor(rows, device=DEVICE)


def causal_mask(n_q, n_k=None):
    """True where j ≤ i (SDPA's convention: True = may attend)."""
    return torch.ones(n_q, n_q if n_k is None else n_k, dtype=torch.bool, device=DEVICE).tril()


def test_alpha_3_by_hand():
    # q_3 · k_j = -1, -4, 2 and sqrt(d_k) = 2: scores -0.5, -2, 1
    exps = [math.exp(-0.5), math.exp(-2.0), math.exp(1.0)]
    expected = [e / sum(exps) for e in exps]  # 0.1753, 0.0391, 0.7856
    got = attention_weights(tensor([Q3]), tensor(KEYS))[0]
    assert got.tolist() == pytest.approx(expected, abs=1e-6)
    raw = attention_weights(tensor([Q3]), tensor(KEYS), scale=1.0)[0]  # the dot products
    exps = [math.exp(-1.0), math.exp(-4.0), math.exp(2.0)]
    assert raw.tolist() == pytest.approx([e / sum(exps) for e in exps], abs=1e-6)


def test_first_row_of_causal_weights_is_one_hot():
    generator = torch.Generator().manual_seed(0)
    q, k = torch.randn(5, 3, generator=generator), torch.randn(5, 3, generator=generator)
    alpha = attention_weights(q.to(DEVICE), k.to(DEVICE), causal=True)
    assert alpha[0].tolist() == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert torch.all(alpha.triu(diagonal=1) == 0)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shape", [(4, 4, 8), (2, 3, 5, 5, 16), (1, 6, 6, 1)])
def test_weights_times_values_are_scaled_dot_product_attention(shape, causal):
    *lead, n, _, d = shape
    generator = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(*lead, n, d, generator=generator).to(DEVICE) for _ in range(3))
    alpha = attention_weights(q, k, causal=causal)
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    torch.testing.assert_close(alpha @ v, expected, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(alpha.sum(-1), torch.ones(*lead, n, device=DEVICE))


def test_the_weights_are_the_softmax_of_the_masked_scores():
    """The formula, written out here as the test's own oracle (float64)."""
    generator = torch.Generator().manual_seed(2)
    q = torch.randn(2, 3, 4, generator=generator, dtype=torch.float64).to(DEVICE)
    k = torch.randn(2, 5, 4, generator=generator, dtype=torch.float64).to(DEVICE)
    mask = torch.rand(3, 5, generator=generator).to(DEVICE) > 0.3
    mask[:, 0] = True  # every query keeps at least one key
    for kwargs, keep in ((dict(mask=mask), mask), (dict(causal=True), causal_mask(3, 5)),
                         (dict(mask=mask, causal=True), mask & causal_mask(3, 5))):
        scores = (q @ k.mT / 2).masked_fill(~keep, float("-inf"))
        torch.testing.assert_close(attention_weights(q, k, **kwargs), torch.softmax(scores, -1))


def test_weights_are_stable_for_large_scores():
    scores = torch.tensor([[1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 1000.0]], device=DEVICE)
    got = attention_weights(scores, torch.eye(3, device=DEVICE), scale=1.0)
    assert torch.isfinite(got).all()
    torch.testing.assert_close(got, torch.softmax(scores.double(), dim=-1).float())


def test_masked_entries_are_exactly_zero_and_an_empty_row_is_zero_as_in_sdpa():
    zeros = torch.zeros(3, 1, device=DEVICE)
    strictly_past = causal_mask(3).tril(diagonal=-1)
    got = attention_weights(zeros, zeros, mask=strictly_past)
    assert got[0].tolist() == [0.0, 0.0, 0.0]  # nothing to attend to: SDPA's zeros
    assert got[1].tolist() == [1.0, 0.0, 0.0]
    assert got[2].tolist() == [0.5, 0.5, 0.0]


def test_output_stays_on_the_input_device():
    q = torch.randn(3, 4, device=DEVICE)
    assert attention_weights(q, q, causal=True).device == q.device


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: attention_weights([[1.0]], torch.ones(1, 1)), TypeError,
         "q must be a torch.Tensor"),
        (lambda: attention_weights(torch.ones(2, 3, dtype=torch.long), torch.ones(2, 3)),
         TypeError, "floating-point"),
        (lambda: attention_weights(torch.ones(3), torch.ones(2, 3)), ValueError, "at least 2"),
        (lambda: attention_weights(torch.ones(0, 3), torch.ones(2, 3)), ValueError, "empty"),
        (lambda: attention_weights(torch.ones(2, 3), torch.ones(2, 4)), ValueError, "same last"),
        (lambda: attention_weights(torch.ones(2, 3), torch.ones(2, 3, device="meta")),
         ValueError, "same device"),
        (lambda: attention_weights(torch.ones(2, 2), torch.ones(2, 2), torch.ones(2, 2)),
         TypeError, "torch.bool"),
        (lambda: attention_weights(torch.ones(2, 2), torch.ones(2, 2),
                                   torch.ones(3, 3, dtype=torch.bool)),
         ValueError, "does not broadcast"),
        (lambda: attention_weights(torch.ones(2, 2), torch.ones(2, 2), causal=1), TypeError,
         "causal must be a bool"),
    ],
)  # fmt: skip
def test_bad_input_gets_a_clear_error(call, error, words):
    with pytest.raises(error, match=words):
        call()


# -- MultiHeadAttention against nn.MultiheadAttention -----------------------------------


def twins(embed_dim=16, num_heads=4, bias=True, seed=0):
    """Our module and PyTorch's with the same (random, non-zero) weights."""
    torch.manual_seed(seed)
    theirs = torch.nn.MultiheadAttention(embed_dim, num_heads, bias=bias, batch_first=True)
    if bias:  # PyTorch starts its biases at zero: give them values so they are tested
        with torch.no_grad():
            theirs.in_proj_bias.normal_()
            theirs.out_proj.bias.normal_()
    ours = MultiHeadAttention(embed_dim, num_heads, bias=bias)
    ours.load_state_dict(theirs.state_dict())
    return ours.to(DEVICE), theirs.to(DEVICE)


def random(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(DEVICE)


def blocked(mask, batch, heads):
    """Our mask (True = may attend) as nn.MultiheadAttention's attn_mask (True = blocked),
    of shape (batch * heads, n_q, n_k)."""
    n_q, n_k = mask.shape[-2:]
    return ~mask.expand(batch, heads, n_q, n_k).reshape(batch * heads, n_q, n_k)


@pytest.mark.parametrize("bias", [True, False])
def test_state_dict_has_exactly_pytorchs_keys_and_loads_both_ways(bias):
    ours, theirs = (
        MultiHeadAttention(12, 3, bias=bias),
        torch.nn.MultiheadAttention(12, 3, bias=bias, batch_first=True),
    )
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for key, value in theirs.state_dict().items():
        assert ours.state_dict()[key].shape == value.shape
    theirs.load_state_dict(ours.state_dict())
    ours.load_state_dict(theirs.state_dict())


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("need_weights", [False, True])
def test_self_attention_matches_pytorch(bias, causal, need_weights):
    ours, theirs = twins(bias=bias)
    x = random(3, 7, 16)
    out, weights = ours(x, causal=causal, need_weights=need_weights)
    mask = ~causal_mask(7) if causal else None
    expected, expected_weights = theirs(
        x, x, x, attn_mask=mask, need_weights=True, average_attn_weights=False
    )
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
    if need_weights:
        assert weights.shape == (3, 4, 7, 7)
        torch.testing.assert_close(weights, expected_weights, atol=1e-5, rtol=1e-5)
    else:
        assert weights is None


@pytest.mark.parametrize("need_weights", [False, True])
def test_cross_attention_with_a_mask_per_head_matches_pytorch(need_weights):
    ours, theirs = twins(embed_dim=24, num_heads=3, seed=1)
    query, key, value = random(2, 5, 24, seed=1), random(2, 9, 24, seed=2), random(2, 9, 24, seed=3)
    mask = torch.rand(2, 3, 5, 9, generator=torch.Generator().manual_seed(4)).to(DEVICE) > 0.4
    mask[..., 0] = True  # every query keeps a key
    out, weights = ours(query, key, value, mask=mask, need_weights=need_weights)
    expected, expected_weights = theirs(
        query, key, value, attn_mask=blocked(mask, 2, 3), average_attn_weights=False
    )
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
    if need_weights:
        torch.testing.assert_close(weights, expected_weights, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("need_weights", [False, True])
def test_padding_mask_with_causal_matches_pytorchs_key_padding_mask(need_weights):
    ours, theirs = twins(seed=2)
    x = random(3, 6, 16, seed=5)
    lengths = torch.tensor([6, 4, 2], device=DEVICE)
    real = torch.arange(6, device=DEVICE) < lengths[:, None]  # (batch, n): True = a token
    out, weights = ours(x, mask=real[:, None, None, :], causal=True, need_weights=need_weights)
    expected, expected_weights = theirs(
        x, x, x, key_padding_mask=~real, attn_mask=~causal_mask(6),
        average_attn_weights=False,
    )  # fmt: skip
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
    if need_weights:
        torch.testing.assert_close(weights, expected_weights, atol=1e-5, rtol=1e-5)
        assert torch.all(weights[1, :, :, 4:] == 0)


@pytest.mark.parametrize("need_weights", [False, True])
def test_gradients_match_pytorch_for_inputs_and_every_parameter(need_weights):
    ours, theirs = twins(seed=3)
    x = random(2, 5, 16, seed=6)
    x_ours, x_theirs = x.clone().requires_grad_(), x.clone().requires_grad_()
    out = ours(x_ours, causal=True, need_weights=need_weights)[0]
    expected = theirs(
        x_theirs, x_theirs, x_theirs, attn_mask=~causal_mask(5),
        need_weights=need_weights,
    )[0]  # fmt: skip
    target = random(2, 5, 16, seed=7)
    ((out - target) ** 2).sum().backward()
    ((expected - target) ** 2).sum().backward()
    torch.testing.assert_close(x_ours.grad, x_theirs.grad, atol=1e-5, rtol=1e-5)
    ours_grads = dict(ours.named_parameters())
    for name, parameter in theirs.named_parameters():
        torch.testing.assert_close(ours_grads[name].grad, parameter.grad, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("causal", [False, True])
def test_step_by_step_and_fused_paths_agree(causal):
    ours, _ = twins(embed_dim=32, num_heads=8, seed=4)
    query, memory = random(2, 6, 32, seed=8), random(2, 10, 32, seed=9)
    for args in ((query,), (query, memory, memory)):
        mask = random(2, 1, 6, args[-1].shape[1], seed=10) > -0.5
        mask[..., 0] = True  # every query keeps a key (see the test of empty rows below)
        fused, none = ours(*args, mask=mask, causal=causal)
        steps, weights = ours(*args, mask=mask, causal=causal, need_weights=True)
        assert none is None
        torch.testing.assert_close(fused, steps, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(weights.sum(-1), torch.ones(2, 8, 6, device=DEVICE))


def test_step_by_step_path_is_the_formula_head_by_head():
    """Q_r = E W_Q^r, A_r = softmax(Q_r K_rᵀ / √d_h), [head_1 | … | head_h] W_O + b_O,
    written with the row-vector matrices of the lectures, one head at a time."""
    ours, _ = twins(embed_dim=12, num_heads=3, seed=5)
    E = random(5, 12, seed=11)
    W_Q, W_K, W_V = (w.T for w in ours.in_proj_weight.detach().chunk(3))
    b_Q, b_K, b_V = ours.in_proj_bias.detach().chunk(3)
    W_O, b_O = ours.out_proj.weight.detach().T, ours.out_proj.bias.detach()
    heads, maps = [], []
    for r in range(3):
        columns = slice(4 * r, 4 * r + 4)
        Q = E @ W_Q[:, columns] + b_Q[columns]
        K = E @ W_K[:, columns] + b_K[columns]
        V = E @ W_V[:, columns] + b_V[columns]
        A = torch.softmax(Q @ K.T / math.sqrt(4), dim=-1)
        heads.append(A @ V)
        maps.append(A)
    expected = torch.cat(heads, dim=-1) @ W_O + b_O
    with torch.no_grad():
        out, weights = ours(E, need_weights=True)  # unbatched: (n, d) in, (n, d) out
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(weights, torch.stack(maps), atol=1e-6, rtol=1e-6)


def test_a_query_with_no_allowed_key_is_pytorchs_on_both_paths():
    """The fused path gives it zero weights (SDPA's convention), so its output is b_O; the
    path that returns the weights gives NaN there, as nn.MultiheadAttention does."""
    ours, theirs = twins(seed=6)
    x = random(1, 3, 16, seed=12)
    mask = torch.tensor([[True, False, False], [False, False, False], [True, True, True]])
    with torch.no_grad():
        fused, _ = ours(x, mask=mask.to(DEVICE))
        steps, weights = ours(x, mask=mask.to(DEVICE), need_weights=True)
        expected, expected_weights = theirs(x, x, x, attn_mask=~mask.to(DEVICE),
                                            average_attn_weights=False)
    torch.testing.assert_close(fused[0, 1], ours.out_proj.bias.detach())
    torch.testing.assert_close(steps, expected, equal_nan=True)
    torch.testing.assert_close(weights, expected_weights, equal_nan=True)
    assert torch.isnan(weights[0, :, 1]).all()
    torch.testing.assert_close(fused[:, [0, 2]], steps[:, [0, 2]], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("bias", [True, False])
def test_a_seed_draws_pytorchs_weights_then_w_o_once_more(bias):
    """The draws of the course's layer since its first version (notebooks' trained models
    keep their numbers): nn.MultiheadAttention's, then W_O again (and b_O = 0)."""
    torch.manual_seed(3)
    theirs = torch.nn.MultiheadAttention(12, 3, bias=bias, batch_first=True)
    theirs.out_proj.reset_parameters()
    torch.manual_seed(3)
    ours = MultiHeadAttention(12, 3, bias=bias)
    for name, value in theirs.state_dict().items():
        expected = torch.zeros_like(value) if name == "out_proj.bias" else value
        assert torch.equal(ours.state_dict()[name], expected), name


def test_module_output_stays_on_the_input_device():
    ours, _ = twins()
    out, weights = ours(random(2, 3, 16), need_weights=True)
    assert out.device == weights.device == ours.in_proj_weight.device


X = torch.ones(2, 3, 16)
MHA = MultiHeadAttention(16, 4)
BOOL = torch.bool


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: MultiHeadAttention(10, 3), ValueError, "divisible by num_heads.*10.*3"),
        (lambda: MultiHeadAttention(0, 1), ValueError, "embed_dim must be >= 1"),
        (lambda: MultiHeadAttention(8, 2.0), TypeError, "num_heads must be an int"),
        (lambda: MultiHeadAttention(8, 2, bias=None), TypeError, "bias must be a bool"),
        (lambda: MHA(torch.ones(16)), ValueError, "at least 2"),
        (lambda: MHA(torch.ones(1, 2, 3, 16)), ValueError, r"got shape \(1, 2, 3, 16\)"),
        (lambda: MHA(torch.ones(2, 3, 8)), ValueError, r"embed_dim=16.*\(2, 3, 8\)"),
        (lambda: MHA(X.long()), TypeError, "floating-point"),
        (lambda: MHA(X, torch.ones(2, 5, 16), torch.ones(2, 4, 16)), ValueError, "key and value"),
        (lambda: MHA(X, torch.ones(3, 5, 16)), ValueError, "same batch size"),
        (lambda: MHA(X, torch.ones(5, 16)), ValueError, "all be batched"),
        (lambda: MHA(X, mask=torch.ones(3, 3)), TypeError, "mask must be a torch.bool"),
        (
            lambda: MHA(X, mask=torch.ones(3, 4, dtype=BOOL)),
            ValueError,
            r"broadcast to \(batch, heads, n_q, n_k\) = \(2, 4, 3, 3\).*\(3, 4\)",
        ),
        (lambda: MHA(X, mask=torch.ones(2, 2, 4, 3, 3, dtype=BOOL)), ValueError, "must broadcast"),
        (lambda: MHA(X, causal=1), TypeError, "causal must be a bool"),
        (lambda: MHA(X, torch.ones(2, 3, 16, device="meta")), ValueError, "same device"),
    ],
)
def test_multi_head_attention_bad_input_gets_a_clear_error(call, error, words):
    with pytest.raises(error, match=words):
        call()

"""course_utils.models.linear_gpt against the attention formulas written out with their
N × N matrices (independently of the chunked and blocked code of the linear attention it
is given, the tests' reference, and of banded_attention), and against what a causal model
and a model without attention can and cannot see."""

import math

import pytest
import torch
import torch.nn.functional as F

from course_utils.device import get_device
from course_utils.models.gpt import GPTConfig, TinyGPT, next_token_loss, train_language_model
from course_utils.models.linear_attention import FMM_FEATURE_MAPS, elu_feature_map
from course_utils.models.linear_gpt import AttentionGPT, KernelSelfAttention
from tests.support.linear_attention import causal_linear_attention, linear_attention

DEVICE = get_device()
SMALL = GPTConfig(vocab_size=40, block_size=24, d_model=16, n_layers=2, n_heads=2,
                  dim_feedforward=32)  # fmt: skip


def model_with(attention, config=SMALL, seed=0, bandwidth=3):
    torch.manual_seed(seed)
    attend = causal_linear_attention if config.causal else linear_attention
    return AttentionGPT(config, attention, bandwidth=bandwidth,
                        linear_attention=attend).to(DEVICE)


def kernel_attention(kind, causal, bandwidth=8):
    attend = causal_linear_attention if causal else linear_attention
    return KernelSelfAttention(16, 2, kind, attend, bandwidth=bandwidth)


def random_ids(*shape, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(SMALL.vocab_size, shape, generator=generator).to(DEVICE)


def heads_of(attn, x):
    """Q, K, V of a MultiHeadAttention for x (batch, n, d), each (batch, heads, n, d_h)."""
    q, k, v = F.linear(x, attn.in_proj_weight, attn.in_proj_bias).chunk(3, dim=-1)
    return [t.unflatten(-1, (attn.num_heads, attn.head_dim)).transpose(1, 2) for t in (q, k, v)]


def merged(attn, heads):
    return attn.out_proj(heads.transpose(1, 2).flatten(-2))


def quadratic_linear(q, k, v, phi, causal):
    """tril(φ(Q)φ(K)ᵀ) V / tril(φ(Q)φ(K)ᵀ) 1, with the N × N matrix."""
    sim = phi(q) @ phi(k).transpose(-2, -1)
    if causal:
        sim = sim.tril()
    return sim @ v / sim.sum(-1, keepdim=True)


def band_softmax(q, k, v, bandwidth, causal):
    """softmax over the keys with |i − j| ≤ bandwidth (and j ≤ i), by hand."""
    n = q.shape[-2]
    offset = torch.arange(n, device=q.device)[None, :] - torch.arange(n, device=q.device)[:, None]
    allowed = (offset.abs() <= bandwidth) & ((offset <= 0) if causal else True)
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~allowed, -math.inf)
    return torch.softmax(scores, dim=-1) @ v


@pytest.mark.parametrize("causal", [True, False])
def test_linear_self_attention_is_the_quadratic_kernel_formula(causal):
    torch.manual_seed(1)
    attn = kernel_attention("linear", causal).to(DEVICE).double()
    x = torch.randn(3, 70, 16, device=DEVICE, dtype=torch.float64)  # longer than one chunk of 64
    q, k, v = heads_of(attn, x)
    expected = merged(attn, quadratic_linear(q, k, v, elu_feature_map, causal))
    torch.testing.assert_close(attn(x, causal=causal)[0], expected)


@pytest.mark.parametrize("causal", [True, False])
def test_fmm_self_attention_blends_the_band_and_the_three_maps_with_softplus_weights(causal):
    torch.manual_seed(2)
    attn = kernel_attention("fmm", causal, bandwidth=4).to(DEVICE).double()
    with torch.no_grad():  # weights that differ by head and by map
        attn.near_weight.copy_(torch.tensor([0.3, -1.0]).view(2, 1, 1))
        far = torch.tensor([[0.5, 1.0], [-2.0, 0.0], [1.5, -0.5]])
        attn.far_weights.copy_(far.view(3, 2, 1, 1))
    x = torch.randn(2, 90, 16, device=DEVICE, dtype=torch.float64)  # more than one block of 64
    q, k, v = heads_of(attn, x)
    softplus = lambda t: torch.log1p(torch.exp(t))  # noqa: E731
    heads = softplus(attn.near_weight) * band_softmax(q, k, v, 4, causal)
    for weight, phi in zip(attn.far_weights, FMM_FEATURE_MAPS, strict=True):
        heads = heads + softplus(weight) * quadratic_linear(q, k, v, phi, causal)
    torch.testing.assert_close(attn(x, causal=causal)[0], merged(attn, heads))


def test_the_blend_starts_at_one_half_near_and_one_half_shared_by_the_far_maps():
    attn = kernel_attention("fmm", True)
    assert torch.allclose(F.softplus(attn.near_weight), torch.full((2, 1, 1), 0.5))
    assert torch.allclose(F.softplus(attn.far_weights), torch.full((3, 2, 1, 1), 0.5 / 3))


def test_the_four_models_start_from_the_same_weights():
    softmax = model_with("softmax").state_dict()
    for attention in ("linear", "fmm", "none"):
        other = model_with(attention).state_dict()
        shared = [name for name in other if name in softmax]
        assert len(shared) >= len(softmax) - (4 * SMALL.n_layers if attention == "none" else 0)
        for name in shared:
            assert torch.equal(other[name], softmax[name]), (attention, name)


def test_softmax_is_the_tiny_gpt_itself():
    ids = random_ids(2, 10)
    torch.manual_seed(0)
    plain = TinyGPT(SMALL).to(DEVICE)
    torch.testing.assert_close(model_with("softmax")(ids), plain(ids))


@pytest.mark.parametrize("attention", ["linear", "fmm", "none"])
def test_a_byte_changes_the_logits_of_its_position_and_later_ones_only(attention):
    model = model_with(attention).eval()
    ids = random_ids(20, seed=3)
    changed = ids.clone()
    changed[7] = (ids[7] + 1) % SMALL.vocab_size
    moved = (model(ids) - model(changed)).abs().amax(dim=-1) > 1e-6
    assert not moved[:7].any()
    if attention == "none":  # nothing carries a token to another position
        assert moved.tolist() == [i == 7 for i in range(20)]
    else:
        assert moved[7:].all()


@pytest.mark.parametrize("attention", ["linear", "fmm"])
def test_without_the_causal_mask_every_position_sees_every_token(attention):
    config = GPTConfig(**{**SMALL.__dict__, "causal": False})
    model = model_with(attention, config).eval()
    ids = random_ids(12, seed=4)
    changed = ids.clone()
    changed[-1] = (ids[-1] + 1) % SMALL.vocab_size
    assert ((model(ids) - model(changed)).abs().amax(dim=-1) > 1e-6).all()


@pytest.mark.parametrize("attention", ["linear", "fmm", "none"])
def test_training_lowers_the_loss_and_reaches_every_parameter(attention):
    ids = random_ids(400, seed=5) % 5  # a 5-symbol text: learnable in a few steps
    model = model_with(attention)
    before = next_token_loss(model, ids[:25][None]).item()
    start = {name: p.detach().clone() for name, p in model.named_parameters()}
    losses = train_language_model(model, ids, 30, batch_size=8, lr=1e-2, progress=False)
    assert losses[-1] < before - 0.5
    for name, p in model.named_parameters():
        if attention == "none" and ".norm1." in name:  # it normalises the input of no attention
            continue
        assert not torch.equal(p, start[name]), f"{name} was not trained"


def test_bad_arguments_get_clear_errors():
    with pytest.raises(ValueError, match="attention must be one of"):
        AttentionGPT(SMALL, "performer")
    with pytest.raises(ValueError, match="kind must be"):
        KernelSelfAttention(16, 2, "softmax", linear_attention)
    with pytest.raises(TypeError, match="linear_attention must be callable"):
        KernelSelfAttention(16, 2, "linear", "elu")
    with pytest.raises(ValueError, match="runs a linear attention"):
        AttentionGPT(SMALL, "linear")
    with pytest.raises(ValueError, match="bandwidth"):
        AttentionGPT(SMALL, "fmm", bandwidth=-1, linear_attention=causal_linear_attention)
    attn = kernel_attention("linear", True)
    x = torch.randn(1, 5, 16)
    with pytest.raises(ValueError, match="takes no mask"):
        attn(x, mask=torch.ones(5, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match="no matrix of weights"):
        attn(x, need_weights=True)

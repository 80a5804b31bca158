"""course_utils.models.linear_attention (feature maps, banded attention, FMMformer's blend)
and the tests' own reference linear attention (tests.support.linear_attention) against
quadratic formulas written out with an explicit N × N similarity matrix, and banded
attention against ``scaled_dot_product_attention`` with a band mask."""

import math

import pytest
import torch
import torch.nn.functional as F

from course_utils.device import get_device
from course_utils.models.linear_attention import (
    FMM_FEATURE_MAPS,
    band_mask,
    banded_attention,
    elu_feature_map,
    fmm_attention,
    negative_elu_feature_map,
    tanh_feature_map,
)
from tests.support.linear_attention import (
    causal_linear_attention,
    linear_attention,
    recurrent_linear_attention,
)

DEVICE = get_device()


def qkv(*lead, n=7, d=4, d_v=3, seed=0, dtype=torch.float64):
    generator = torch.Generator().manual_seed(seed)
    return tuple(
        torch.randn(*lead, n, size, generator=generator, dtype=dtype).to(DEVICE)
        for size in (d, d, d_v)
    )


def quadratic_linear_attention(q, k, v, causal=False):
    """V′_i = Σ_j sim_ij v_j / Σ_j sim_ij with sim_ij = φ(q_i)ᵀφ(k_j) as an N × N matrix."""
    sim = elu_feature_map(q) @ elu_feature_map(k).transpose(-2, -1)
    if causal:
        sim = sim * torch.ones(sim.shape[-2:], device=sim.device).tril()
    return (sim @ v) / sim.sum(dim=-1, keepdim=True)


def far_field(causal):
    return causal_linear_attention if causal else linear_attention


def quadratic_banded_softmax(q, k, v, bandwidth, causal=False):
    """softmax(Q Kᵀ / √D) with the entries outside |i − j| ≤ bandwidth (and j > i) removed."""
    n = q.shape[-2]
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    keep = ((i - j).abs() <= bandwidth) & ((j <= i) if causal else True)
    sim = torch.exp(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])) * keep.to(DEVICE)
    return (sim @ v) / sim.sum(dim=-1, keepdim=True)


# -- the feature map ------------------------------------------------------------------------


def test_elu_feature_map_is_elu_plus_one_and_positive():
    x = torch.tensor([-30.0, -1.0, 0.0, 2.0])
    assert elu_feature_map(x).tolist() == pytest.approx([math.exp(-30), math.exp(-1), 1, 3])
    assert (elu_feature_map(torch.randn(1000) * 10) > 0).all()


def test_fmm_maps_are_elu_of_minus_x_plus_one_and_tanh_plus_one_and_positive():
    x = torch.tensor([-3.0, -0.5, 0.0, 0.5, 3.0], dtype=torch.float64)
    torch.testing.assert_close(negative_elu_feature_map(x), F.elu(-x) + 1)
    torch.testing.assert_close(tanh_feature_map(x), torch.tanh(x) + 1)
    assert negative_elu_feature_map(x).tolist() == pytest.approx(
        [4, 1.5, 1, math.exp(-0.5), math.exp(-3)])
    # in float32, tanh(x) + 1 is exactly 0 at x = -10 (a zero normaliser); the map is not
    far = torch.tensor([-10.0, -40.0, 30.0])
    assert (torch.tanh(far[:1]) + 1 == 0).all()
    assert (tanh_feature_map(far) > 0).all() and (negative_elu_feature_map(far) > 0).all()
    assert FMM_FEATURE_MAPS == (elu_feature_map, negative_elu_feature_map, tanh_feature_map)


# -- linear attention ------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(), (2,), (2, 3)])
def test_non_causal_matches_the_quadratic_formula(shape):
    q, k, v = qkv(*shape, n=9)
    torch.testing.assert_close(linear_attention(q, k, v), quadratic_linear_attention(q, k, v))


def test_non_causal_takes_more_keys_than_queries():
    q, _, _ = qkv(2, n=3)
    _, k, v = qkv(2, n=8, seed=1)
    torch.testing.assert_close(linear_attention(q, k, v), quadratic_linear_attention(q, k, v))


@pytest.mark.parametrize("n", [1, 5, 16, 37])
@pytest.mark.parametrize("chunk_size", [1, 4, 16, 64])
def test_causal_chunks_match_the_masked_quadratic_formula(n, chunk_size):
    q, k, v = qkv(2, 3, n=n)
    expected = quadratic_linear_attention(q, k, v, causal=True)
    got = linear_attention(q, k, v, causal=True, chunk_size=chunk_size)
    torch.testing.assert_close(got, expected)


def test_causal_first_row_is_v_1_and_last_row_is_the_non_causal_row():
    q, k, v = qkv(n=6)
    out = linear_attention(q, k, v, causal=True, chunk_size=4)
    torch.testing.assert_close(out[0], v[0])
    torch.testing.assert_close(out[-1], linear_attention(q, k, v)[-1])


def test_recurrent_equals_chunked_equals_quadratic():
    q, k, v = qkv(2, n=11, d=5, d_v=2)
    recurrent = recurrent_linear_attention(q, k, v)
    torch.testing.assert_close(recurrent, quadratic_linear_attention(q, k, v, causal=True))
    torch.testing.assert_close(recurrent, linear_attention(q, k, v, causal=True, chunk_size=4))


@pytest.mark.parametrize("causal", [False, True])
def test_leading_axes_broadcast_like_matmul(causal):
    q, _, _ = qkv(2, 3, n=6)  # (batch, heads, N, D)
    _, k, v = qkv(1, 3, n=6, seed=1)  # one key set shared by the batch
    expected = quadratic_linear_attention(q, k.expand(2, 3, 6, 4), v.expand(2, 3, 6, 3), causal)
    got = linear_attention(q, k, v, causal=causal, chunk_size=4)
    assert got.shape == (2, 3, 6, 3)
    torch.testing.assert_close(got, expected)
    if causal:
        torch.testing.assert_close(recurrent_linear_attention(q, k, v), expected)


def test_float32_matches_float64():
    q, k, v = qkv(2, n=40)
    got = linear_attention(q.float(), k.float(), v.float(), causal=True, chunk_size=16)
    assert got.dtype == torch.float32
    torch.testing.assert_close(got.double(), linear_attention(q, k, v, causal=True))


def test_chunked_causal_passes_gradcheck():
    q, k, v = (t.requires_grad_() for t in qkv(2, n=7, d=3, d_v=2))
    assert torch.autograd.gradcheck(
        lambda q, k, v: linear_attention(q, k, v, causal=True, chunk_size=3), (q, k, v)
    )


def test_non_causal_and_recurrent_gradients_flow():
    q, k, v = (t.requires_grad_() for t in qkv(n=5, d=3, d_v=2))
    assert torch.autograd.gradcheck(linear_attention, (q, k, v))
    assert torch.autograd.gradcheck(recurrent_linear_attention, (q, k, v))


def test_a_feature_map_changing_the_width_is_allowed():
    def phi(x):  # r = 2D features: [elu(x) + 1, elu(−x) + 1]
        return torch.cat([elu_feature_map(x), elu_feature_map(-x)], dim=-1)

    q, k, v = qkv(n=5)
    sim = phi(q) @ phi(k).T
    torch.testing.assert_close(linear_attention(q, k, v, phi), (sim @ v) / sim.sum(-1, True))


# -- banded attention -----------------------------------------------------------------------


def test_band_mask_by_hand():
    assert band_mask(4, 1).int().tolist() == [
        [1, 1, 0, 0],
        [1, 1, 1, 0],
        [0, 1, 1, 1],
        [0, 0, 1, 1],
    ]
    assert band_mask(4, 1, causal=True).int().tolist() == [
        [1, 0, 0, 0],
        [1, 1, 0, 0],
        [0, 1, 1, 0],
        [0, 0, 1, 1],
    ]
    assert torch.equal(band_mask(3, 0), torch.eye(3, dtype=torch.bool))
    assert band_mask(5, 9).all()


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n, bandwidth", [(1, 0), (7, 0), (7, 2), (9, 8), (100, 3), (150, 70)])
def test_banded_matches_sdpa_with_a_band_mask(n, bandwidth, causal):
    q, k, v = qkv(2, 3, n=n, d=8, d_v=5)
    mask = band_mask(n, bandwidth, causal=causal, device=DEVICE)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(banded_attention(q, k, v, bandwidth, causal=causal), expected)


@pytest.mark.parametrize("causal", [False, True])
def test_banded_matches_the_explicit_formula_and_full_softmax_for_a_wide_band(causal):
    q, k, v = qkv(2, n=80, d=8)
    expected = quadratic_banded_softmax(q, k, v, 5, causal)
    torch.testing.assert_close(banded_attention(q, k, v, 5, causal=causal), expected)
    full = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    torch.testing.assert_close(banded_attention(q, k, v, 1000, causal=causal), full)


def test_banded_broadcasts_and_passes_gradcheck():
    q, _, _ = qkv(2, 1, n=9, d=3, d_v=2)
    _, k, v = qkv(3, n=9, d=3, d_v=2, seed=1)
    got = banded_attention(q, k, v, 2)
    assert got.shape == (2, 3, 9, 2)
    torch.testing.assert_close(got, quadratic_banded_softmax(q, k, v, 2))
    q, k, v = (t.requires_grad_() for t in qkv(n=9, d=3, d_v=2))
    assert torch.autograd.gradcheck(lambda q, k, v: banded_attention(q, k, v, 2, True), (q, k, v))


# -- FMMformer ------------------------------------------------------------------------------


@pytest.mark.parametrize("causal", [False, True])
def test_fmm_is_the_weighted_sum_of_near_and_far_fields(causal):
    q, k, v = qkv(2, n=20, d=8)
    near = quadratic_banded_softmax(q, k, v, 3, causal)
    far = quadratic_linear_attention(q, k, v, causal)
    got = fmm_attention(q, k, v, 3, far_field(causal), w_near=0.7, w_far=0.2, causal=causal)
    torch.testing.assert_close(got, 0.7 * near + 0.2 * far)
    near_only = fmm_attention(q, k, v, 3, far_field(causal), 1.0, 0.0, causal=causal)
    torch.testing.assert_close(near_only, near)


def test_fmm_with_several_maps_sums_one_normalised_linear_attention_per_map():
    q, k, v = qkv(2, n=12, d=4, seed=3)
    near = quadratic_banded_softmax(q, k, v, 2)

    def normalised(phi):  # φ(Q)φ(K)ᵀ V / φ(Q)φ(K)ᵀ 1, with the N × N matrix
        sim = phi(q) @ phi(k).transpose(-2, -1)
        return (sim @ v) / sim.sum(dim=-1, keepdim=True)

    far = [normalised(lambda x: F.elu(x) + 1), normalised(lambda x: F.elu(-x) + 1),
           normalised(lambda x: torch.tanh(x) + 1)]
    got = fmm_attention(q, k, v, 2, linear_attention, 0.4, [0.3, 0.2, 0.1],
                        feature_maps=FMM_FEATURE_MAPS)
    torch.testing.assert_close(got, 0.4 * near + 0.3 * far[0] + 0.2 * far[1] + 0.1 * far[2])
    shared = fmm_attention(q, k, v, 2, linear_attention, w_near=0.4, w_far=0.2,
                           feature_maps=FMM_FEATURE_MAPS)
    torch.testing.assert_close(shared, 0.4 * near + 0.2 * (far[0] + far[1] + far[2]))


def test_fmm_far_field_of_r_maps_has_rank_at_most_r_times_d():
    q, k, _ = qkv(n=40, d=3, seed=4)
    for r in (1, 2, 3):
        far = sum(phi(q) @ phi(k).T for phi in FMM_FEATURE_MAPS[:r])
        assert torch.linalg.matrix_rank(far).item() == 3 * r


def test_fmm_weights_can_be_learnable_per_head():
    q, k, v = qkv(2, 3, n=10)
    w_near = torch.tensor([0.1, 0.5, 0.9], dtype=torch.float64, device=DEVICE)
    w_near = w_near.view(3, 1, 1).requires_grad_()
    out = fmm_attention(q, k, v, 2, linear_attention, w_near=w_near, w_far=1 - w_near.detach())
    out.sum().backward()
    assert w_near.grad.shape == (3, 1, 1)
    head_1 = 0.5 * quadratic_banded_softmax(q, k, v, 2) + 0.5 * quadratic_linear_attention(q, k, v)
    torch.testing.assert_close(out[:, 1], head_1[:, 1])


# -- bad input ------------------------------------------------------------------------------


def test_a_negative_feature_map_is_refused():
    q, k, v = qkv(n=5)
    with pytest.raises(ValueError, match="negative values"):
        linear_attention(q, k, v, feature_map=lambda x: x)
    with pytest.raises(ValueError, match="negative values"):
        recurrent_linear_attention(q, k, v, feature_map=torch.tanh)
    with pytest.raises(ValueError, match="negative values"):
        fmm_attention(q, k, v, 1, linear_attention, feature_maps=lambda x: x - 10)


def test_a_feature_map_of_the_wrong_kind_is_refused():
    q, k, v = qkv(n=5)
    with pytest.raises(TypeError, match="callable"):
        linear_attention(q, k, v, feature_map="elu")
    with pytest.raises(TypeError, match=r"feature_map\(q\) must be a torch.Tensor"):
        linear_attention(q, k, v, feature_map=lambda x: x.tolist())
    with pytest.raises(ValueError, match="the same number of features r; got 4 and 8"):
        linear_attention(q, k, v, feature_map=lambda x: x.exp() if x is q else x.exp().repeat(1, 2))
    with pytest.raises(ValueError, match="each row to a row"):
        linear_attention(q, k, v, feature_map=lambda x: torch.exp(x[..., :1, :]))


@pytest.mark.parametrize(
    "function",
    [linear_attention, recurrent_linear_attention,
     lambda q, k, v: fmm_attention(q, k, v, 1, linear_attention)],
)
def test_mismatched_shapes_are_refused(function):
    q, k, v = qkv(n=5)
    with pytest.raises(ValueError, match="same last dimension D"):
        function(q, k[:, :3], v)
    with pytest.raises(ValueError, match="one row per key position"):
        function(q, k, v[:4])
    with pytest.raises(ValueError, match="must broadcast"):
        function(q.expand(2, 5, 4), k.expand(3, 5, 4), v)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        function(q[0], k, v)
    with pytest.raises(TypeError, match="floating-point"):
        function(q.long(), k, v)


def test_causal_needs_as_many_queries_as_keys():
    q, k, v = qkv(n=5)
    with pytest.raises(ValueError, match="N_q = N_k"):
        linear_attention(q[:3], k, v, causal=True)
    with pytest.raises(ValueError, match="as many queries as keys"):
        banded_attention(q[:3], k, v, 1)
    with pytest.raises(TypeError, match="causal must be a bool"):
        linear_attention(q, k, v, causal=1)


def test_bad_bandwidths_chunk_sizes_and_weights_are_refused():
    q, k, v = qkv(n=5)
    with pytest.raises(ValueError, match="bandwidth must be >= 0; got -1"):
        banded_attention(q, k, v, -1)
    with pytest.raises(ValueError, match="bandwidth must be >= 0; got -2"):
        band_mask(5, -2)
    with pytest.raises(TypeError, match="bandwidth must be an int"):
        fmm_attention(q, k, v, 1.5, linear_attention)
    with pytest.raises(ValueError, match="chunk_size must be >= 1"):
        linear_attention(q, k, v, causal=True, chunk_size=0)
    with pytest.raises(ValueError, match="w_far must be >= 0"):
        fmm_attention(q, k, v, 1, linear_attention, w_far=-0.1)
    with pytest.raises(ValueError, match="w_near must be >= 0"):
        fmm_attention(q, k, v, 1, linear_attention, w_near=torch.tensor([0.5, -0.5]))
    with pytest.raises(TypeError, match="w_near must be a number"):
        fmm_attention(q, k, v, 1, linear_attention, w_near="half")
    with pytest.raises(ValueError, match="one weight per feature map: 3 maps, got 2 weights"):
        fmm_attention(q, k, v, 1, linear_attention, w_far=[0.5, 0.5], feature_maps=FMM_FEATURE_MAPS)
    with pytest.raises(TypeError, match="linear_attention must be callable"):
        fmm_attention(q, k, v, 1, "linear")
    with pytest.raises(ValueError, match="at least one feature map"):
        fmm_attention(q, k, v, 1, linear_attention, feature_maps=[])
    with pytest.raises(ValueError, match="w_far must be >= 0"):
        fmm_attention(q, k, v, 1, linear_attention, w_far=[0.5, -0.5],
                      feature_maps=FMM_FEATURE_MAPS[:2])

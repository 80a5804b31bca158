"""course_utils.models.transformer against hand computations and PyTorch's own layers."""

import math

import pytest
import torch

from course_utils.device import get_device
from course_utils.models.attention import MultiHeadAttention
from course_utils.models.transformer import (
    DecoderBlock,
    TransformerBlock,
    rotary_embedding,
    sinusoidal_positions,
)

DEVICE = get_device()


def blocked_future(n):
    """nn's causal mask: True = blocked, for j > i."""
    return torch.ones(n, n, dtype=torch.bool, device=DEVICE).triu(1)


def random(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(DEVICE)


# -- sinusoidal positions ---------------------------------------------------------------


@pytest.mark.parametrize(("n", "d"), [(7, 8), (4, 5), (3, 1)])
def test_positions_equal_the_formula_entry_by_entry(n, d):
    expected = [
        [
            math.sin(pos / 10000 ** (col / d)) if col % 2 == 0
            else math.cos(pos / 10000 ** ((col - 1) / d))
            for col in range(d)
        ]
        for pos in range(n)
    ]  # fmt: skip
    got = sinusoidal_positions(n, d, device=DEVICE)
    assert got.shape == (n, d) and got.dtype == torch.float32 and got.device.type == DEVICE.type
    torch.testing.assert_close(got.cpu(), torch.tensor(expected), atol=1e-7, rtol=0)


def test_positions_by_hand_for_d_4():
    # d = 4: frequencies 1 and 1/100
    got = sinusoidal_positions(3, 4, dtype=torch.float64)  # float32 values
    assert got[0].tolist() == [0.0, 1.0, 0.0, 1.0]
    assert got[2].tolist() == pytest.approx(
        [math.sin(2), math.cos(2), math.sin(0.02), math.cos(0.02)], abs=1e-7
    )


def shift_matrix(k, d):
    """The block-diagonal rotation M_k with PE(pos + k) = PE(pos) M_k (row vectors):
    for frequency ω_i, [sin, cos] at pos + k = [sin, cos] at pos times
    [[cos kω_i, −sin kω_i], [sin kω_i, cos kω_i]]."""
    m = torch.zeros(d, d, dtype=torch.float64)
    for i in range(d // 2):
        a = k / 10000 ** (2 * i / d)
        m[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = torch.tensor(
            [[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]], dtype=torch.float64
        )
    return m


@pytest.mark.parametrize("k", [1, 3, 17])
def test_a_shift_by_k_is_one_fixed_rotation_for_every_position(k):
    pe = sinusoidal_positions(64, 16, dtype=torch.float64)
    m = shift_matrix(k, 16)
    torch.testing.assert_close(pe[k:], pe[:-k] @ m, atol=3e-7, rtol=0)  # float32 values
    # found from the data alone: one least-squares linear map fits every position (by SVD:
    # the slow columns make pe nearly rank-deficient)
    fitted = torch.linalg.lstsq(pe[:-k], pe[k:], driver="gelsd").solution
    torch.testing.assert_close(pe[:-k] @ fitted, pe[k:], atol=3e-7, rtol=0)
    torch.testing.assert_close(m @ m.T, torch.eye(16, dtype=torch.float64))  # a rotation


def test_positions_are_distinct_and_bounded():
    pe = sinusoidal_positions(512, 64)
    assert pe.abs().max() <= 1
    distances = torch.cdist(pe, pe) + torch.eye(512) * 10
    assert distances.min() > 0.1  # no two positions get the same code
    torch.testing.assert_close(pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2, torch.ones(512, 32))


# -- rotary position embeddings ---------------------------------------------------------


def rotated(x, positions):
    """Each pair (x_2i, x_2i+1) of row j as the complex number x_2i + i·x_2i+1, times
    e^{i·positions[j]·ω_i} with ω_i = 10000^(−2i/d), in float64 (Su et al.)."""
    d = x.shape[-1]
    omega = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    turn = torch.polar(torch.ones(len(positions), d // 2, dtype=torch.float64),
                       positions.double()[:, None].cpu() * omega)
    pairs = torch.view_as_complex(x.double().cpu().reshape(*x.shape[:-1], d // 2, 2).contiguous())
    return torch.view_as_real(pairs * turn).reshape(x.shape)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_rotary_embedding_turns_each_pair_of_neighbours(dtype):
    x = random(3, 7, 16, seed=4).to(dtype)
    positions = torch.tensor([0, 1, 2, 5, 40, 41, 300], device=DEVICE)
    got = rotary_embedding(x, positions)
    assert got.shape == x.shape and got.dtype == dtype and got.device.type == DEVICE.type
    torch.testing.assert_close(got.double().cpu(), rotated(x, positions), atol=1e-5, rtol=0)
    torch.testing.assert_close(rotary_embedding(x).double().cpu(), rotated(x, torch.arange(7)),
                               atol=1e-5, rtol=0)  # positions 0 … n − 1 by default


def test_rotary_embedding_by_hand():
    # d = 4: frequencies 1 and 1/100; (x_0 + i x_1) e^{i p} and (x_2 + i x_3) e^{i p/100}
    x = torch.tensor([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0]], dtype=torch.float64)
    got = rotary_embedding(x, [1, 2])
    assert got[0].tolist() == pytest.approx(
        [math.cos(1), math.sin(1), -math.sin(0.01), math.cos(0.01)], abs=1e-7)
    assert got[1].tolist() == pytest.approx(
        [-math.sin(2), math.cos(2), math.cos(0.02), math.sin(0.02)], abs=1e-7)


def test_rotary_scores_depend_only_on_the_offset_and_lengths_are_kept():
    q, k = random(2, 32, seed=5).double().unbind(0)
    positions = torch.arange(50, device=DEVICE)
    rq, rk = (rotary_embedding(v.expand(50, 32), positions) for v in (q, k))
    scores = rq @ rk.T
    for offset in (-30, -1, 0, 1, 7, 49):
        diagonal = torch.diagonal(scores, offset)
        torch.testing.assert_close(diagonal, diagonal[:1].expand_as(diagonal))
    assert scores.std() > 0.1  # and they do depend on it
    torch.testing.assert_close(rq.norm(dim=-1), q.norm().expand(50))


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: rotary_embedding(torch.ones(3, 5)), ValueError, r"even.*\(3, 5\)"),
        (lambda: rotary_embedding(torch.ones(3, 4), [0, 1]), ValueError, r"\(3,\).*\(2,\)"),
        (lambda: rotary_embedding(torch.ones(4)), ValueError, "at least 2"),
        (lambda: rotary_embedding(torch.ones(3, 4, dtype=torch.int64)), TypeError, "floating"),
        (lambda: rotary_embedding(torch.ones(2, 4), [0, -1]), ValueError, "non-negative.*int64"),
        (lambda: rotary_embedding(torch.ones(2, 4), [0.0, 0.5]), ValueError, "integer.*float"),
    ],
)
def test_rotary_bad_input_gets_a_clear_error(call, error, words):
    with pytest.raises(error, match=words):
        call()


# -- the block against nn.TransformerEncoderLayer ---------------------------------------

D, HEADS, FF = 16, 4, 32


def block_twins(activation="relu", norm_first=False, dropout=0.1, seed=0, eps=1e-5):
    torch.manual_seed(seed)
    theirs = torch.nn.TransformerEncoderLayer(
        D, HEADS, FF, dropout, activation, batch_first=True, norm_first=norm_first,
        layer_norm_eps=eps,
    )  # fmt: skip
    with torch.no_grad():  # give every parameter a non-default value
        for p in theirs.parameters():
            p.add_(torch.randn_like(p) * 0.3)
    ours = TransformerBlock(D, HEADS, FF, dropout, activation, norm_first, layer_norm_eps=eps)
    ours.load_state_dict(theirs.state_dict())
    return ours.to(DEVICE), theirs.to(DEVICE)


@pytest.mark.parametrize("norm_first", [False, True])
def test_block_state_dict_has_exactly_pytorchs_keys_and_loads_both_ways(norm_first):
    ours = TransformerBlock(D, HEADS, FF, norm_first=norm_first, activation="gelu")
    theirs = torch.nn.TransformerEncoderLayer(
        D, HEADS, FF, activation="gelu", batch_first=True, norm_first=norm_first
    )
    assert list(ours.state_dict()) == list(theirs.state_dict())
    theirs.load_state_dict(ours.state_dict())
    ours.load_state_dict(theirs.state_dict())
    assert isinstance(ours.self_attn.out_proj, torch.nn.Linear)


def test_a_seed_draws_the_attention_then_the_two_linear_layers():
    """The weights a seed gives (the notebooks' trained models rely on them): the course's
    attention first, then linear1 and linear2; PyTorch's own attention draws nothing."""
    torch.manual_seed(3)
    block = TransformerBlock(8, 2, 16)
    torch.manual_seed(3)
    parts = (MultiHeadAttention(8, 2), torch.nn.Linear(8, 16), torch.nn.Linear(16, 8))
    expected = {f"{name}.{key}": value for name, part in zip(("self_attn", "linear1", "linear2"),
                                                             parts, strict=True)
                for key, value in part.state_dict().items()}
    for key, value in expected.items():
        assert torch.equal(block.state_dict()[key], value), key


LENGTHS = [6, 4, 1]


def masks(kind):
    """(our mask, our causal flag, nn's src_mask, nn's src_key_padding_mask)."""
    real = torch.arange(6, device=DEVICE) < torch.tensor(LENGTHS, device=DEVICE)[:, None]
    padding = real[:, None, None, :]
    future = blocked_future(6)  # nn: True = blocked
    return {
        "none": (None, False, None, None),
        "causal": (None, True, future, None),
        "padding": (padding, False, None, ~real),
        "padding+causal": (padding, True, future, ~real),
    }[kind]


@pytest.mark.parametrize("kind", ["none", "causal", "padding", "padding+causal"])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_block_matches_pytorch_in_eval_mode(activation, norm_first, kind):
    ours, theirs = block_twins(activation, norm_first, seed=len(kind))
    ours.eval(), theirs.eval()
    x = random(3, 6, D, seed=4)
    mask, causal, src_mask, padding = masks(kind)
    got = ours(x, mask=mask, causal=causal)
    expected = theirs(x, src_mask=src_mask, src_key_padding_mask=padding)
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)
    with torch.no_grad():  # PyTorch's fused inference path: compare at the real tokens
        fast = theirs(x, src_mask=src_mask, src_key_padding_mask=padding)
        got = ours(x, mask=mask, causal=causal)
    for row, length in enumerate(LENGTHS):
        torch.testing.assert_close(got[row, :length], fast[row, :length], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("norm_first", [False, True])
def test_block_gradients_match_pytorch(norm_first):
    ours, theirs = block_twins("gelu", norm_first, dropout=0.0, seed=5)
    x = random(2, 6, D, seed=6)
    x_ours, x_theirs = x.clone().requires_grad_(), x.clone().requires_grad_()
    target = random(2, 6, D, seed=7)
    ((ours(x_ours, causal=True) - target) ** 2).sum().backward()
    future = blocked_future(6)
    ((theirs(x_theirs, src_mask=future, is_causal=True) - target) ** 2).sum().backward()
    torch.testing.assert_close(x_ours.grad, x_theirs.grad, atol=1e-5, rtol=1e-5)
    ours_grads = dict(ours.named_parameters())
    for name, p in theirs.named_parameters():  # sums over every position: float32's rounding
        torch.testing.assert_close(ours_grads[name].grad, p.grad, atol=1e-4, rtol=1e-4)


def test_unbatched_input_and_a_causal_block_cannot_see_the_future():
    ours, _ = block_twins(norm_first=True, seed=8)
    ours.eval()
    x = random(5, D, seed=9)
    changed = x.clone()
    changed[3:] = random(2, D, seed=10)
    with torch.no_grad():
        before, after = ours(x, causal=True), ours(changed, causal=True)
        batched = ours(x[None], causal=True)[0]
    assert before.shape == (5, D)
    torch.testing.assert_close(after[:3], before[:3])
    assert not torch.allclose(after[3:], before[3:])
    torch.testing.assert_close(batched, before)


def test_any_attention_runs_in_eval_and_pytorchs_fused_switch_is_left_as_it_was():
    """PyTorch's fused inference path reads nn.MultiheadAttention's internals: the block
    keeps to its plain path, whatever its self_attn, and restores PyTorch's switch."""

    class NoAttention(torch.nn.Module):
        def forward(self, query, mask=None, causal=False):
            return torch.zeros_like(query), None

    block = TransformerBlock(D, HEADS, FF, norm_first=True).to(DEVICE).eval()
    block.self_attn = NoAttention()
    block.self_attn.embed_dim = D
    x = random(2, 6, D, seed=13)
    with torch.no_grad():
        got = block(x)
    expected = x + block.linear2(block.activation(block.linear1(block.norm2(x))))
    torch.testing.assert_close(got, expected)
    assert torch.backends.mha.get_fastpath_enabled()


def test_dropout_is_on_in_training_and_off_in_eval():
    ours, _ = block_twins(dropout=0.5, seed=11)
    x = random(2, 6, D, seed=12)
    assert not torch.equal(ours(x), ours(x))
    ours.eval()
    assert torch.equal(ours(x), ours(x))


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: sinusoidal_positions(0, 4), ValueError, "n_positions must be >= 1"),
        (lambda: sinusoidal_positions(4, 2.0), TypeError, "d_model must be an int"),
        (lambda: sinusoidal_positions(4, 4, dtype=torch.long), TypeError, "floating-point"),
        (lambda: TransformerBlock(10, 3), ValueError, "divisible by num_heads"),
        (lambda: TransformerBlock(8, 2, activation="tanh"), ValueError, "relu.*tanh"),
        (lambda: TransformerBlock(8, 2, activation=3), TypeError, "activation must be"),
        (lambda: TransformerBlock(8, 2, norm_first=1), TypeError, "norm_first must be a bool"),
        (lambda: TransformerBlock(8, 2, dropout=1.5), ValueError, r"dropout must be in \[0, 1\)"),
        (lambda: TransformerBlock(8, 2, layer_norm_eps=0), ValueError, "layer_norm_eps"),
        (
            lambda: TransformerBlock(8, 2)(torch.ones(2, 3, 6)),
            ValueError,
            r"d_model=8.*\(2, 3, 6\)",
        ),
        (lambda: TransformerBlock(8, 2)(torch.ones(1, 2, 3, 8)), ValueError, "got shape"),
        (lambda: TransformerBlock(8, 2)(torch.ones(8)), ValueError, "at least 2"),
        (
            lambda: TransformerBlock(8, 2)(torch.ones(2, 3, 8), mask=torch.ones(2, 3)),
            TypeError,
            "mask must be a torch.bool",
        ),
        (
            lambda: TransformerBlock(8, 2)(
                torch.ones(2, 3, 8), mask=torch.ones(2, 4, dtype=torch.bool)
            ),
            ValueError,
            "must broadcast",
        ),
    ],
)
def test_bad_input_gets_a_clear_error(call, error, words):
    with pytest.raises(error, match=words):
        call()


# -- decoder block ----------------------------------------------------------------------


def decoder_twins(activation="relu", norm_first=False, seed=0):
    torch.manual_seed(seed)
    theirs = torch.nn.TransformerDecoderLayer(
        D, HEADS, FF, 0.0, activation, batch_first=True, norm_first=norm_first
    )
    with torch.no_grad():
        for p in theirs.parameters():
            p.add_(torch.randn_like(p) * 0.3)
    ours = DecoderBlock(D, HEADS, FF, 0.0, activation, norm_first)
    ours.load_state_dict(theirs.state_dict())
    return ours.to(DEVICE), theirs.to(DEVICE)


def test_decoder_state_dict_has_exactly_pytorchs_keys():
    ours = DecoderBlock(D, HEADS, FF)
    theirs = torch.nn.TransformerDecoderLayer(D, HEADS, FF, batch_first=True)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_decoder_matches_pytorch_with_cross_attention_and_source_padding(activation, norm_first):
    ours, theirs = decoder_twins(activation, norm_first, seed=13)
    x, memory = random(3, 5, D, seed=14), random(3, 6, D, seed=15)
    source_real = torch.arange(6, device=DEVICE) < torch.tensor(LENGTHS, device=DEVICE)[:, None]
    got = ours(x, memory, memory_mask=source_real[:, None, None, :])
    expected = theirs(
        x, memory, tgt_mask=blocked_future(5), memory_key_padding_mask=~source_real
    )
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)
    # causal=False: the decoder's self-attention sees the whole target
    got = ours(x, memory, causal=False)
    torch.testing.assert_close(got, theirs(x, memory), atol=1e-5, rtol=1e-5)


def test_decoder_output_depends_on_the_memory_and_not_on_future_targets():
    ours, _ = decoder_twins(norm_first=True, seed=16)
    x, memory = random(2, 5, D, seed=17), random(2, 4, D, seed=18)
    later = x.clone()
    later[:, 3:] = random(2, 2, D, seed=19)
    with torch.no_grad():
        before = ours(x, memory)
        torch.testing.assert_close(ours(later, memory)[:, :3], before[:, :3])
        assert not torch.allclose(ours(x, memory + 1.0), before)


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: DecoderBlock(8, 2)(torch.ones(2, 3, 8), torch.ones(3, 3, 8)), "same batch"),
        (lambda: DecoderBlock(8, 2)(torch.ones(2, 3, 8), torch.ones(3, 8)), "both unbatched"),
        (lambda: DecoderBlock(8, 2)(torch.ones(3, 8), torch.ones(2, 3, 6)), r"memory must.*8"),
    ],
)
def test_decoder_bad_input_gets_a_clear_error(call, words):
    with pytest.raises(ValueError, match=words):
        call()

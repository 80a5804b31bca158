"""Each diagnostic of checks/transformer_blocks.py: its mistake names it, a right answer none.

The right answers come from PyTorch (``nn.LayerNorm``, ``nn.TransformerEncoderLayer``) or
from the formula written out entry by entry; the mistakes are written out here by hand.
"""

import math
import re

import pytest
import torch
import torch.nn.functional as F

from course_utils import checks
from course_utils.checks.transformer_blocks import BLOCK_MISTAKES
from course_utils.models.transformer import TransformerBlock


def raises(key):
    return pytest.raises(AssertionError, match=re.escape(BLOCK_MISTAKES[key]))



@pytest.mark.parametrize("key", sorted(BLOCK_MISTAKES))
def test_a_message_names_the_mistake_without_writing_the_fix_as_code(key):
    """No equation (y_2i = …, H = …) and no keyword argument (dim=-1, unbiased=False) to
    copy; the exercise's own argument (causal=True) may be named."""
    message = BLOCK_MISTAKES[key].replace("causal=True", "").replace("causal=False", "")
    assert " = " not in message and not re.search(r"\w=\S", message), message
    assert "return " not in message, message


# -- positional encoding ----------------------------------------------------------------

N, D = 6, 8


def positions(angle=lambda pos, col: pos / 10000 ** (col // 2 * 2 / D), first=0, sin_even=True):
    def entry(pos, col):
        use_sin = (col % 2 == 0) == sin_even
        return math.sin(angle(pos, col)) if use_sin else math.cos(angle(pos, col))

    return torch.tensor([[entry(pos, col) for col in range(D)] for pos in range(first, first + N)])


def test_the_right_encoding_passes_as_a_tensor_a_list_and_float64():
    right = positions()
    checks.check_positional_encoding(right, N, D)
    checks.check_positional_encoding(right.tolist(), N, D)
    checks.check_positional_encoding(right.double().numpy(), N, D)


def halves():
    angle = torch.arange(N)[:, None] / 10000 ** (torch.arange(0, D, 2) / D)
    return torch.cat([angle.sin(), angle.cos()], dim=1)


@pytest.mark.parametrize(
    ("wrong", "key"),
    [
        (positions(sin_even=False), "sin_cos_swapped"),
        (positions(angle=lambda pos, col: pos / 10000 ** (col / D)), "column_exponent"),
        (halves(), "halves"),
        (positions(first=1), "from_one"),
        (positions(angle=lambda pos, col: pos * 10000 ** (col // 2 * 2 / D)), "times_frequency"),
        (positions().T, "transposed"),
    ],
)
def test_positional_encoding_mistakes_are_named(wrong, key):
    with raises(key):
        checks.check_positional_encoding(wrong, N, D)


@pytest.mark.parametrize("d", [4, 10, 64])
def test_angles_that_grow_with_the_column_are_named_at_any_width(d):
    # 10000^(2i/d) wraps round the circle: backwards for d = 4, nearly 0 for pair 1 at d = 10
    angle = torch.arange(5.0)[:, None] * 10000 ** (torch.arange(0, d, 2) / d)
    wrong = torch.stack([angle.sin(), angle.cos()], dim=-1).flatten(1)
    with raises("times_frequency"):
        checks.check_positional_encoding(wrong, 5, d)


# -- rotary position embeddings ----------------------------------------------------------------
# Right answers: Hugging Face's GPT-J (interleaved pairs) and a loop over pairs written here; the
# rotate-half layout is Hugging Face's LLaMA.

GR = torch.Generator().manual_seed(3)
XR = torch.randn(2, 5, 8, generator=GR)
AT = torch.tensor([0, 3, 4, 10, 200])


def hf_rotary(x, positions, layout="gptj", sign=1.0):
    from transformers.models.gptj.modeling_gptj import apply_rotary_pos_emb
    from transformers.models.llama.modeling_llama import rotate_half

    d = x.shape[-1]
    angle = positions.double()[:, None] / 10000 ** (torch.arange(0, d, 2).double() / d)
    sin, cos = sign * torch.sin(angle).float(), torch.cos(angle).float()
    if layout == "llama":  # (x_i, x_i+d/2) pairs: cos and sin repeated over both halves
        cos, sin = torch.cat([cos, cos], -1), torch.cat([sin, sin], -1)
        return x * cos + rotate_half(x) * sin
    b = len(x)
    return apply_rotary_pos_emb(x[:, :, None], sin[None].expand(b, -1, -1),
                                cos[None].expand(b, -1, -1))[:, :, 0]


def rotated_by_loop(x, positions, frequency=lambda i, d: 10000 ** (-2 * i / d)):
    out = x.clone()
    d = x.shape[-1]
    for j, pos in enumerate(positions.tolist()):
        for i in range(d // 2):
            c, s = math.cos(pos * frequency(i, d)), math.sin(pos * frequency(i, d))
            a, b = x[..., j, 2 * i], x[..., j, 2 * i + 1]
            out[..., j, 2 * i], out[..., j, 2 * i + 1] = a * c - b * s, a * s + b * c
    return out


def test_the_right_rotation_passes_batched_unbatched_and_as_a_list():
    checks.check_rope(hf_rotary(XR, AT), XR, AT)
    checks.check_rope(rotated_by_loop(XR, AT).numpy(), XR, AT)
    checks.check_rope(hf_rotary(XR, AT)[1].tolist(), XR[1], AT.tolist())


def test_the_rotation_by_hand():
    # d = 2, positions 1 and 2: (1, 0) turns by 1 and by 2 radians
    checks.check_rope([[math.cos(1), math.sin(1)], [math.cos(2), math.sin(2)]],
                      torch.tensor([[1.0, 0.0], [1.0, 0.0]]), torch.tensor([1, 2]))


def added_positions(x, positions):
    d = x.shape[-1]
    angle = positions[:, None] / 10000 ** (torch.arange(d) // 2 * 2 / d)
    return x + torch.where(torch.arange(d) % 2 == 0, angle.sin(), angle.cos())


@pytest.mark.parametrize(
    ("wrong", "key"),
    [
        (hf_rotary(XR, AT, layout="llama"), "rope_halves"),
        (hf_rotary(XR, AT, sign=-1.0), "rope_minus"),
        (rotated_by_loop(XR, AT, lambda i, d: 10000 ** (-i / d)), "rope_exponent"),
        (rotated_by_loop(XR, AT, lambda i, d: 10000 ** (2 * i / d)), "rope_times"),
        (hf_rotary(XR, torch.arange(5)), "rope_arange"),
        (added_positions(XR, AT), "rope_added"),
    ],
)
def test_rope_mistakes_are_named(wrong, key):
    with raises(key):
        checks.check_rope(wrong, XR, AT)


def test_growing_angles_are_named_where_two_positions_are_neighbours_and_never_for_a_right_answer():
    growing = lambda i, d: 10000 ** (2 * i / d)  # noqa: E731
    at = torch.arange(20, 25)
    with raises("rope_times"):
        checks.check_rope(rotated_by_loop(XR, at, growing), XR, at)
    # no two positions one apart: only that the values are off
    with pytest.raises(AssertionError, match="entries") as failure:
        checks.check_rope(rotated_by_loop(XR, AT + AT, growing), XR, AT + AT)
    assert BLOCK_MISTAKES["rope_times"] not in str(failure.value)
    checks.check_rope(rotated_by_loop(XR, at), XR, at)


ONE_Q, ONE_K = torch.randn(2, 1, 8, generator=GR)
SEQ = torch.arange(12)


def test_relative_scores_pass_for_the_rotation_and_fail_otherwise():
    q, k = ONE_Q.repeat(12, 1), ONE_K.repeat(12, 1)
    checks.check_rope_relative(rotated_by_loop(q, SEQ), rotated_by_loop(k, SEQ))
    checks.check_rope_relative(hf_rotary(q[None], SEQ + 50)[0], hf_rotary(k[None], SEQ + 50)[0])
    checks.check_rope_relative(hf_rotary(q[None], SEQ, sign=-1.0)[0],  # clockwise: relative too
                               hf_rotary(k[None], SEQ, sign=-1.0)[0])
    with pytest.raises(AssertionError, match="relative-position property"):
        checks.check_rope_relative(added_positions(q, SEQ), added_positions(k, SEQ))
    with pytest.raises(AssertionError, match="relative-position property"):
        checks.check_rope_relative(q * (1 + SEQ[:, None]), k * (1 + SEQ[:, None]))
    with pytest.raises(AssertionError, match="same score .* every pair"):
        checks.check_rope_relative(q, k)  # not rotated at all
    with pytest.raises(AssertionError, match=r"shape \(n, d\)"):
        checks.check_rope_relative(q[None], k[None])


def test_a_query_and_a_key_in_one_call_are_checked_for_offsets_first():
    """check_rope_answer (the record's check): x = one query and one key, each on every row
    at consecutive positions, gets the relative-position message before check_rope's."""
    pair = torch.stack([ONE_Q.repeat(12, 1), ONE_K.repeat(12, 1)])          # (2, 12, 8)
    checks.check_rope_answer(rotated_by_loop(pair, SEQ), pair, SEQ)
    checks.check_rope_answer(hf_rotary(XR, AT), XR, AT)                     # any other x
    with pytest.raises(AssertionError, match="relative-position property"):
        checks.check_rope_answer(added_positions(pair, SEQ), pair, SEQ)
    with raises("rope_exponent"):  # relative too, and still the wrong frequencies
        checks.check_rope_answer(rotated_by_loop(pair, SEQ, lambda i, d: 10000 ** (-i / d)),
                                 pair, SEQ)
    with raises("rope_added"):
        checks.check_rope_answer(added_positions(XR, AT), XR, AT)


# -- layer norm ----------------------------------------------------------------------------

G = torch.Generator().manual_seed(0)
X = torch.randn(2, 4, 5, generator=G) * torch.tensor([1.0, 0.01, 3.0, 0.2])[:, None]
GAMMA = torch.randn(5, generator=G)
BETA = torch.randn(5, generator=G)


def normalised(correction=0, dim=-1, eps=1e-5, eps_inside=True, gamma=GAMMA, beta=BETA):
    mu = X.mean(dim, keepdim=True)
    var = X.var(dim, keepdim=True, correction=correction)
    scale = (var + eps).sqrt() if eps_inside else var.sqrt() + eps
    return (X - mu) / scale * gamma + beta


def test_the_right_layer_norm_passes():
    checks.check_layer_norm(F.layer_norm(X, (5,), GAMMA, BETA), X, GAMMA, BETA)
    checks.check_layer_norm(normalised().numpy(), X.double(), GAMMA, BETA)


@pytest.mark.parametrize(
    ("wrong", "key"),
    [
        (normalised(correction=1), "unbiased"),
        (normalised(dim=-2), "across_tokens"),
        (normalised(eps_inside=False), "eps_outside"),
        (normalised(eps=0.0), "no_eps"),
        (normalised(gamma=torch.ones(5), beta=torch.zeros(5)), "no_affine"),
        (normalised(gamma=BETA, beta=GAMMA), "gamma_beta_swapped"),
    ],
)
def test_layer_norm_mistakes_are_named(wrong, key):
    with raises(key):
        checks.check_layer_norm(wrong, X, GAMMA, BETA)


@pytest.mark.parametrize("key", ["unbiased", "across_tokens"])
def test_the_bug_hunts_mistakes_are_told_by_their_symptoms(key):
    """The two bugs of slide_layer_norm are exercise 3's written part: their messages say
    what the output shows, never the axis, the divisor or batch norm."""
    message = BLOCK_MISTAKES[key].lower()
    for word in ("axis", "dim", "divide", "count", "batch", "unbiased", "across"):
        assert word not in message, (key, word)


# -- one block -------------------------------------------------------------------------------


def block(norm_first, activation="relu", seed=1):
    torch.manual_seed(seed)
    b = TransformerBlock(8, 2, 16, dropout=0.0, activation=activation, norm_first=norm_first)
    with torch.no_grad():
        for p in b.parameters():
            p.add_(torch.randn_like(p) * 0.3)
    return b.eval()


XB = torch.randn(2, 5, 8, generator=G)


def attention(h, self_attn, causal=False):
    """The attention a test hands transformer_block: PyTorch's, with self_attn's weights."""
    return self_attn(h, causal=causal)[0]


def by_hand(b, x, causal, norm_first=None, residual=(1.0, 1.0), activation=True,
            from_norm=False):
    """The block's forward written out from its parts (``from_norm``: each pre-LN residual
    adds the normalised input, a mistake)."""
    norm_first = b.norm_first if norm_first is None else norm_first
    n = x.shape[1]
    blocked = torch.ones(n, n, dtype=torch.bool).triu(1) if causal else None

    def sa(h):
        in_w, in_b = b.self_attn.in_proj_weight, b.self_attn.in_proj_bias
        q, k, v = (h @ in_w.T + in_b).chunk(3, dim=-1)
        split = lambda t: t.reshape(len(h), n, 2, 4).transpose(1, 2)  # noqa: E731
        out = F.scaled_dot_product_attention(
            split(q), split(k), split(v), attn_mask=None if blocked is None else ~blocked
        )
        return b.self_attn.out_proj(out.transpose(1, 2).reshape(len(h), n, 8))

    def ff(h):
        hidden = b.linear1(h)
        return b.linear2(b.activation(hidden) if activation else hidden)

    with torch.no_grad():
        if norm_first and from_norm:
            h = b.norm1(x) + sa(b.norm1(x))
            return b.norm2(h) + ff(b.norm2(h))
        if norm_first:
            h = residual[0] * x + sa(b.norm1(x))
            return residual[1] * h + ff(b.norm2(h))
        h = b.norm1(residual[0] * x + sa(x))
        return b.norm2(residual[1] * h + ff(h))


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("causal", [False, True])
def test_the_right_block_passes(norm_first, causal):
    b = block(norm_first, "gelu")
    checks.check_transformer_block(by_hand(b, XB, causal), XB, b, attention, causal)
    assert not b.training and b.self_attn.in_proj_weight.dtype == torch.float32  # untouched


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"norm_first": "other"}, "norm_order"),
        ({"residual": (0.0, 0.0)}, "no_residual"),
        ({"residual": (0.0, 1.0)}, "no_attention_residual"),
        ({"residual": (1.0, 0.0)}, "no_ff_residual"),
        ({"activation": False}, "no_activation"),
    ],
)
def test_block_mistakes_are_named(norm_first, change, key):
    b = block(norm_first)
    if change.get("norm_first") == "other":
        change = {"norm_first": not norm_first}
    with raises(key):
        checks.check_transformer_block(by_hand(b, XB, True, **change), XB, b, attention, True)


def test_a_pre_ln_residual_of_the_normalised_input_is_named():
    b = block(True)
    with raises("residual_from_norm"):
        checks.check_transformer_block(by_hand(b, XB, True, from_norm=True), XB, b, attention, True)


def test_the_block_check_leaves_the_random_numbers_of_the_test_alone():
    b = block(True)
    torch.manual_seed(7)
    checks.check_transformer_block(by_hand(b, XB, True), XB, b, attention, True)
    after_the_check = torch.randn(3)
    torch.manual_seed(7)
    assert torch.equal(after_the_check, torch.randn(3))


def test_a_block_that_ignores_the_causal_flag_is_named_both_ways():
    b = block(False)
    with raises("no_causal"):
        checks.check_transformer_block(by_hand(b, XB, False), XB, b, attention, True)
    with raises("unwanted_causal"):
        checks.check_transformer_block(by_hand(b, XB, True), XB, b, attention, False)



def test_a_block_that_runs_its_own_attention_instead_of_the_one_handed_is_named():
    """The tests hand an attention unlike the block's own layer (here each token sees only its
    neighbours): the block around it passes, the block around its own layer is named."""
    near = (torch.arange(5)[:, None] - torch.arange(5)).abs() <= 1

    def windowed(h, self_attn, causal=False):
        return self_attn(h, mask=near, causal=causal)[0]

    b = block(True, "gelu")
    with torch.no_grad():
        h = XB + windowed(b.norm1(XB), b.self_attn, True)
        right = h + b.linear2(b.activation(b.linear1(b.norm2(h))))
    checks.check_transformer_block(right, XB, b, windowed, True)
    with raises("own_attention"):
        checks.check_transformer_block(by_hand(b, XB, True), XB, b, windowed, True)


# -- is_causal ---------------------------------------------------------------------------------


def test_is_causal_answers():
    checks.check_is_causal(True, True, "f")
    checks.check_is_causal(torch.tensor(False), False, "f")
    with pytest.raises(AssertionError, match="IS causal"):
        checks.check_is_causal(False, True, "a causal block")
    with pytest.raises(AssertionError, match="NOT causal.*not only the last"):
        checks.check_is_causal(True, False, "an encoder block")
    with pytest.raises(AssertionError, match="returned None"):
        checks.check_is_causal(None, False, "f")
    with pytest.raises(AssertionError, match="True or False"):
        checks.check_is_causal(torch.ones(3), False, "f")


def test_is_causal_of_takes_what_the_test_states_and_works_nothing_out():
    """check_is_causal_of (the record's check) takes is_causal's own inputs and the expected
    verdict the visible test states; it never looks at f (an f that raises is fine)."""
    def never_called(x):
        raise AssertionError("the check ran f")

    x = torch.randn(5, 3, generator=torch.Generator().manual_seed(1))
    checks.check_is_causal_of(True, never_called, x, expected=True)
    checks.check_is_causal_of(torch.tensor(False), never_called, x, expected=False)
    with pytest.raises(AssertionError, match="said False for never_called, which IS causal"):
        checks.check_is_causal_of(False, never_called, x, expected=True)
    with pytest.raises(AssertionError, match="said True for the function it was given"):
        checks.check_is_causal_of(True, lambda x: x, x, expected=False)


# -- the whole GPT ----------------------------------------------------------------------------


def test_the_gpt_check_passes_the_learned_positions_assembly_and_names_three_mistakes():
    from course_utils.models.gpt import GPTConfig, TinyGPT

    torch.manual_seed(0)
    model = TinyGPT(GPTConfig(20, block_size=6, d_model=8, n_layers=2, n_heads=2,
                              dim_feedforward=16, positions="learned")).eval()
    ids = torch.randint(20, (2, 5))

    def logits(scale=1.0, positions=True, final_norm=True):   # written here, as a student would
        E, P = model.token_embedding.weight, model.position_embedding.weight
        h = E[ids] * scale + (P[:5] if positions else 0.0)
        for block in model.blocks:
            h = block(h, causal=True)
        return (model.norm(h) if final_norm else h) @ E.T

    with torch.no_grad():
        checks.check_gpt_logits(logits(), ids, model, None)
        for key, mistake in (("gpt_scaled", logits(scale=8 ** 0.5)),
                             ("gpt_no_positions", logits(positions=False)),
                             ("gpt_no_final_norm", logits(final_norm=False))):
            with raises(key):
                checks.check_gpt_logits(mistake, ids, model, None)


def test_the_gpt_check_runs_the_blocks_by_the_run_block_it_is_handed():
    from course_utils.models.gpt import GPTConfig, TinyGPT

    torch.manual_seed(1)
    model = TinyGPT(GPTConfig(20, block_size=6, d_model=8, n_layers=2, n_heads=2,
                              dim_feedforward=16, positions="learned")).eval()
    ids = torch.randint(20, (2, 5))

    def twice(h, block):                              # each block run twice, its weights shared
        return block(block(h, causal=True), causal=True)

    def logits(run_block):
        E, P = model.token_embedding.weight, model.position_embedding.weight
        h = E[ids] + P[:5]
        for block in model.blocks:
            h = run_block(h, block)
        return model.norm(h) @ E.T

    with torch.no_grad():
        checks.check_gpt_logits(logits(twice), ids, model, twice)
        with raises("gpt_own_blocks"):
            checks.check_gpt_logits(logits(lambda h, block: block(h, causal=True)), ids, model,
                                    twice)


def test_the_gpt_check_wants_the_learned_positions_model():
    from course_utils.models.gpt import GPTConfig, TinyGPT

    model = TinyGPT(GPTConfig(20, block_size=6, d_model=8, n_heads=2, dim_feedforward=16))
    with pytest.raises(ValueError, match="learned positions"):
        checks.check_gpt_logits(torch.zeros(1, 2, 20), torch.zeros(1, 2, dtype=torch.long),
                                model, None)


# -- the sampler ---------------------------------------------------------------------------------

ROWS = torch.tensor([[2.0, 1.0, 0.0, -0.5], [0.0, 0.5, 1.0, 1.5]]).repeat(2000, 1)


def drawn(logits, temperature):
    """Draws of softmax(logits / temperature) by inverse CDF, written out here."""
    p = torch.softmax(logits.double() / temperature, dim=-1)
    return (p.cumsum(dim=-1) < torch.rand(len(p), 1, dtype=torch.float64)).sum(dim=-1).clamp(max=3)


@pytest.mark.parametrize("temperature", [0.5, 1.0, 2.0])
def test_right_draws_pass_by_any_sampler(temperature):
    torch.manual_seed(0)
    checks.check_sample_next(drawn(ROWS, temperature), ROWS, temperature)
    checks.check_sample_next(torch.distributions.Categorical(logits=ROWS / temperature).sample(),
                             ROWS, temperature)


@pytest.mark.parametrize(("wrong", "key"), [
    (lambda: drawn(ROWS, 1.0), "sample_no_temperature"),
    (lambda: drawn(ROWS * 0.25, 0.5), "sample_times_temperature"),    # logits × T
    (lambda: torch.randint(4, (len(ROWS),)), "sample_uniform"),
    (lambda: ROWS.argmax(dim=-1), "sample_greedy"),
])
def test_sampler_mistakes_are_named(wrong, key):
    torch.manual_seed(1)
    with raises(key):
        checks.check_sample_next(wrong(), ROWS, 0.5)


def test_draws_that_are_not_one_id_per_row_are_refused():
    ids = drawn(ROWS, 0.5)
    for wrong in (ids[:, None], ids.double(), ids + 4):
        with pytest.raises(AssertionError, match="one token id per row"):
            checks.check_sample_next(wrong, ROWS, 0.5)
    with pytest.raises(ValueError, match="temperature must be positive"):
        checks.check_sample_next(ids, ROWS, 0.0)

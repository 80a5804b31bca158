"""Diagnostic checks for notebook 06: positional encodings, rotary position embeddings,
layer norm, one block, causality.

The references are written out in float64 from the formulas (RoPE as a complex
multiplication by e^{i·pos·ω}), and PyTorch's own ``nn.LayerNorm`` and
``nn.TransformerEncoderLayer`` for the layer norm and the block, independently of
``course_utils.models.transformer``.
"""

import torch
from torch import nn

from .core import as_tensor, check_close
from .guards import checked_plainly

__all__ = [
    "BLOCK_MISTAKES",
    "check_is_causal",
    "check_is_causal_of",
    "check_layer_norm",
    "check_positional_encoding",
    "check_rope",
    "check_rope_answer",
    "check_rope_relative",
    "check_transformer_block",
]

BLOCK_MISTAKES = {
    "sin_cos_swapped": "sine and cosine are swapped: look again at which column of a pair "
    "the formula of section 1 gives the sine",
    "column_exponent": "you used each column's own index in the exponent: the two columns of "
    "a pair share one frequency (see the exponent in the formula of section 1)",
    "halves": "you put all the sines in the first half and all the cosines in the second; in "
    "the formula of section 1 the two columns of a pair sit side by side",
    "from_one": "your positions start at 1; positions are counted from 0",
    "times_frequency": "your angles grow with the column instead of shrinking: check where "
    "10000^(2i/d) goes in the formula of section 1",
    "transposed": "your array is transposed: one ROW per position, one column per feature",
    "rope_halves": "you paired feature i with feature i + d/2 (the 'rotate_half' layout of "
    "GPT-NeoX and Hugging Face's LLaMA); this exercise pairs neighbours: (x_2i, x_2i+1) turn "
    "together",
    "rope_minus": "you turned each pair clockwise, by −pos·ω_i: compare the signs of your "
    "sines with the rotation written out in the RoPE cell",
    "rope_exponent": "your frequencies fall too slowly with the pair index: check the exponent "
    "of ω_i in the RoPE cell",
    "rope_times": "your angles grow with the pair index: ω_i is at most 1 (see the RoPE cell)",
    "rope_arange": "you rotated row j by the angle of position j; use the positions you are "
    "given (row j sits at positions[j])",
    "rope_added": "you added the sinusoidal encoding PE(pos) to x; RoPE rotates each pair "
    "(x_2i, x_2i+1) by the angle pos·ω_i instead (a multiplication, not a sum)",
    "unbiased": "you used the unbiased variance (dividing by d − 1, as torch.var and "
    "torch.std do by default); σ² in the formula of section 2 divides by d",
    "across_tokens": "you normalised each feature across the tokens: that is batch "
    "normalisation; layer norm normalises each token over its own features",
    "eps_outside": "you added eps to the standard deviation: check where ε sits in the "
    "formula of section 2",
    "no_eps": "you left out eps (see the formula of section 2)",
    "no_affine": "you left out γ and β, the learned scale and shift of the formula of "
    "section 2",
    "gamma_beta_swapped": "γ and β are swapped: γ (the weight) multiplies, β (the bias) is added",
    "norm_order": "you computed the other arrangement of the layer norms: compare "
    "block.norm_first with the two arrangements of section 3",
    "no_residual": "the residual connections are missing: each sub-layer's output is added "
    "to its input (section 3)",
    "no_attention_residual": "the residual around the self-attention is missing (section 3)",
    "no_ff_residual": "the residual around the feed-forward layer is missing (section 3)",
    "no_activation": "the feed-forward layer has no activation (FF in section 3)",
    "no_causal": "with causal=True token i may attend only to j ≤ i, and your self-attention "
    "was not masked: section 3 says how block.self_attn takes the mask",
    "unwanted_causal": "you applied a causal mask although causal=False",
}


# -- positional encoding ----------------------------------------------------------------


def _positions(n: int, d: int, first=0, exponent="pair", sin_even=True, interleave=True,
               divide=True) -> torch.Tensor:
    """PE (n, d) by the formula, and the variants that model the usual mistakes."""
    pos = torch.arange(first, first + n, dtype=torch.float64)[:, None]
    pair = torch.arange(d, dtype=torch.float64) // 2 * 2         # 2i for columns 2i and 2i + 1
    column = torch.arange(d, dtype=torch.float64)
    frequency = 10000.0 ** ((pair if exponent == "pair" else column) / d)
    angle = pos / frequency if divide else pos * frequency
    if not interleave:  # sines of every frequency first, then the cosines
        half = angle[:, 0::2]
        return torch.cat([torch.sin(half), torch.cos(half)], dim=1)
    even = (column % 2 == 0) == sin_even
    return torch.where(even, torch.sin(angle), torch.cos(angle))


@checked_plainly
def check_positional_encoding(actual, n_positions: int, d_model: int,
                              name="positional_encoding") -> None:
    """Fail unless ``actual`` (n_positions, d_model) is the sinusoidal encoding:
    PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i + 1) = cos(pos / 10000^(2i/d)).
    """
    expected = _positions(n_positions, d_model)
    got = as_tensor(actual, name)
    if got.shape == (d_model, n_positions) and n_positions != d_model:
        raise AssertionError(f"{name} is not right: {BLOCK_MISTAKES['transposed']}.")
    mistakes = {
        BLOCK_MISTAKES["sin_cos_swapped"]: _positions(n_positions, d_model, sin_even=False),
        BLOCK_MISTAKES["column_exponent"]: _positions(n_positions, d_model, exponent="column"),
        BLOCK_MISTAKES["halves"]: _positions(n_positions, d_model, interleave=False),
        BLOCK_MISTAKES["from_one"]: _positions(n_positions, d_model, first=1),
        BLOCK_MISTAKES["times_frequency"]: _positions(n_positions, d_model, divide=False),
    }
    check_close(got, expected, name, atol=1e-5, mistakes=mistakes, reveal=False)


# -- rotary position embeddings -----------------------------------------------------------


def _rotary(x: torch.Tensor, positions: torch.Tensor, sign=1.0, pairs="neighbours",
            exponent=2, divide=True) -> torch.Tensor:
    """x (..., n, d) with pair i turned by sign·pos·ω_i, as the complex product
    (x_a + i·x_b)·e^{i·sign·pos·ω_i}; pairs (a, b) = (2i, 2i + 1), or (i, i + d/2) for
    "halves". ω_i = 10000^(−exponent·i/d) (10000^(+…) unless ``divide``): the variants
    model the usual mistakes."""
    d = x.shape[-1]
    i = torch.arange(d // 2, dtype=torch.float64)
    omega = 10000.0 ** ((-1 if divide else 1) * exponent * i / d)
    turn = torch.polar(torch.ones(len(positions), d // 2, dtype=torch.float64),
                       sign * positions.double()[:, None] * omega)          # e^{i·pos·ω}, (n, d/2)
    if pairs == "halves":
        z = torch.complex(x[..., : d // 2], x[..., d // 2:]) * turn
        return torch.cat([z.real, z.imag], dim=-1)
    z = torch.view_as_complex(x.reshape(*x.shape[:-1], d // 2, 2).contiguous()) * turn
    return torch.view_as_real(z).reshape(x.shape)


@checked_plainly
def check_rope(actual, x, positions, name="rope") -> None:
    """Fail unless ``actual`` is x (..., n, d) with each pair (x_2i, x_2i+1) of row j turned
    by the angle positions[j]·ω_i, ω_i = 10000^(−2i/d): the complex product
    (x_2i + i·x_2i+1)·e^{i·positions[j]·ω_i}, computed here in float64."""
    x = as_tensor(x, "x")
    positions = as_tensor(positions, "positions")
    expected = _rotary(x, positions)
    n, d = x.shape[-2:]
    mistakes = {
        BLOCK_MISTAKES["rope_halves"]: _rotary(x, positions, pairs="halves"),
        BLOCK_MISTAKES["rope_minus"]: _rotary(x, positions, sign=-1.0),
        BLOCK_MISTAKES["rope_exponent"]: _rotary(x, positions, exponent=1),
        BLOCK_MISTAKES["rope_times"]: _rotary(x, positions, divide=False),
        BLOCK_MISTAKES["rope_added"]: x + _positions_at(positions, d),
    }
    arange = torch.arange(n, dtype=torch.float64)
    if not torch.equal(positions, arange):
        mistakes[BLOCK_MISTAKES["rope_arange"]] = _rotary(x, arange)
    check_close(actual, expected, name, atol=1e-4, mistakes=mistakes, reveal=False)


@checked_plainly
def check_rope_answer(actual, x, positions, name="rope") -> None:
    """``rope(x, positions)`` of a test cell (its record's check): :func:`check_rope`, and
    first :func:`check_rope_relative` when x holds one query and one key, each repeated on
    every row, at consecutive positions (x of shape (2, n, d): the scores of the two then
    depend only on the offset)."""
    x_t, at = as_tensor(x, "x"), as_tensor(positions, "positions")
    if (x_t.dim() == 3 and len(x_t) == 2 and x_t.shape[1] > 1
            and bool((x_t == x_t[:, :1]).all()) and bool((at.diff() == 1).all())):
        got = as_tensor(actual, name)
        if got.shape == x_t.shape:
            check_rope_relative(got[0], got[1], name=name)
    check_rope(actual, x, positions, name=name)


def _positions_at(positions: torch.Tensor, d: int) -> torch.Tensor:
    """The sinusoidal PE (n, d) at the given positions."""
    angle = positions[:, None] / 10000.0 ** (torch.arange(d, dtype=torch.float64) // 2 * 2 / d)
    return torch.where(torch.arange(d) % 2 == 0, torch.sin(angle), torch.cos(angle))


@checked_plainly
def check_rope_relative(q_rotated, k_rotated, name="rope") -> None:
    """Fail unless the scores of one query and one key, each rotated to the positions
    0 … n − 1 (rows of ``q_rotated`` and ``k_rotated``, (n, d)), depend only on the offset:
    S[m, n] = ⟨R(m)q, R(n)k⟩ is constant along every diagonal m − n, and not constant
    everywhere (the rotation must depend on the position)."""
    q, k = as_tensor(q_rotated, f"{name}(q)"), as_tensor(k_rotated, f"{name}(k)")
    if q.dim() != 2 or q.shape != k.shape:
        raise AssertionError(
            f"{name} should return one row per position, shape (n, d) for x of shape (n, d); "
            f"got shapes {tuple(q.shape)} and {tuple(k.shape)}"
        )
    scores = q @ k.T
    n, scale = len(scores), scores.abs().max().item() + 1e-12
    for offset in range(-n + 1, n):
        diagonal = torch.diagonal(scores, offset)
        if (diagonal - diagonal[0]).abs().max() > 1e-4 * max(scale, 1.0):
            m = int((diagonal - diagonal[0]).abs().argmax()) + max(0, -offset)
            m0 = max(0, -offset)
            raise AssertionError(
                f"{name} breaks the relative-position property: for one query q and one key k, "
                f"⟨R({m0})q, R({m0 + offset})k⟩ = {diagonal[0]:.4f} but "
                f"⟨R({m})q, R({m + offset})k⟩ = {scores[m, m + offset]:.4f}, the same offset "
                f"{offset}. Rotating each pair (x_2i, x_2i+1) by pos·ω_i keeps this constant "
                "(rotations keep dot products and add their angles); adding a position vector "
                "or scaling by the position does not"
            )
    if (scores - scores[0, 0]).abs().max() <= 1e-4 * max(scale, 1.0):
        raise AssertionError(
            f"{name} gives the same score ⟨R(m)q, R(n)k⟩ at every pair of positions: the "
            "rows were not turned by angles that depend on their positions"
        )


# -- layer norm --------------------------------------------------------------------------


def _normalise(x, gamma, beta, eps, dim=-1, correction=0, eps_inside=True):
    """(x − μ)/√(σ² + eps) ⊙ γ + β over ``dim``, and the variants that model mistakes."""
    mu = x.mean(dim=dim, keepdim=True)
    var = x.var(dim=dim, keepdim=True, correction=correction)
    scale = torch.sqrt(var + eps) if eps_inside else torch.sqrt(var) + eps
    return (x - mu) / scale * gamma + beta


@checked_plainly
def check_layer_norm(actual, x, gamma, beta, eps: float = 1e-5, name="layer_norm") -> None:
    """Fail unless ``actual`` equals ``nn.LayerNorm(d, eps)`` with weight γ and bias β on x
    (..., d): each token normalised over its own d features."""
    x, gamma, beta = (as_tensor(t, label) for t, label in ((x, "x"), (gamma, "γ"), (beta, "β")))
    d = x.shape[-1]
    reference = nn.LayerNorm(d, eps=eps).double()
    with torch.no_grad():
        reference.weight.copy_(gamma)
        reference.bias.copy_(beta)
        expected = reference(x)
    ones, zeros = torch.ones_like(gamma), torch.zeros_like(beta)
    mistakes = {
        BLOCK_MISTAKES["unbiased"]: _normalise(x, gamma, beta, eps, correction=1),
        BLOCK_MISTAKES["eps_outside"]: _normalise(x, gamma, beta, eps, eps_inside=False),
        BLOCK_MISTAKES["no_eps"]: _normalise(x, gamma, beta, 0.0),
        BLOCK_MISTAKES["no_affine"]: _normalise(x, ones, zeros, eps),
        BLOCK_MISTAKES["gamma_beta_swapped"]: _normalise(x, beta, gamma, eps),
    }
    if x.dim() >= 2 and x.shape[-2] > 1:
        mistakes[BLOCK_MISTAKES["across_tokens"]] = _normalise(x, gamma, beta, eps, dim=-2)
    check_close(actual, expected, name, atol=1e-4, mistakes=mistakes, reveal=False)


# -- one transformer block ---------------------------------------------------------------


def _pytorch_block(block: nn.Module, x: torch.Tensor, causal: bool) -> torch.Tensor:
    """``nn.TransformerEncoderLayer`` with ``block``'s weights, in float64, eval mode."""
    attention = block.self_attn
    layer = nn.TransformerEncoderLayer(
        attention.embed_dim, attention.num_heads, block.linear1.out_features, dropout=0.0,
        activation=block.activation, layer_norm_eps=block.norm1.eps, batch_first=True,
        norm_first=block.norm_first,
    ).double()
    layer.load_state_dict(block.state_dict())
    n = x.shape[-2]
    future = torch.ones(n, n, dtype=torch.bool).triu(1) if causal else None
    layer.eval()
    with torch.no_grad():
        return layer(x, src_mask=future)


def _block_variant(block, x, causal, norm_first, residual=(1.0, 1.0), activation=True):
    """The block's forward written out, with switches that model the usual mistakes
    (``residual``: how much of the input each residual adds, around SA and around FF)."""
    def sa(h):
        return block.self_attn(h, causal=causal)[0]

    def ff(h):
        hidden = block.linear1(h)
        return block.linear2(block.activation(hidden) if activation else hidden)

    keep_sa, keep_ff = residual
    with torch.no_grad():
        if norm_first:
            h = keep_sa * x + sa(block.norm1(x))
            return keep_ff * h + ff(block.norm2(h))
        h = block.norm1(keep_sa * x + sa(x))
        return block.norm2(keep_ff * h + ff(h))


@checked_plainly
def check_transformer_block(actual, x, block: nn.Module, causal: bool = False,
                            name="transformer_block") -> None:
    """Fail unless ``actual`` equals ``nn.TransformerEncoderLayer`` loaded with ``block``'s
    weights (the course's ``TransformerBlock``, in eval mode) on x (batch, n, d_model)."""
    x = as_tensor(x, "x")
    block = _float64_copy(block)
    expected = _pytorch_block(block, x, causal)
    norm_first = block.norm_first
    mistakes = {
        BLOCK_MISTAKES["norm_order"]: _block_variant(block, x, causal, not norm_first),
        BLOCK_MISTAKES["no_activation"]: _block_variant(block, x, causal, norm_first,
                                                        activation=False),
        BLOCK_MISTAKES["no_causal" if causal else "unwanted_causal"]:
            _block_variant(block, x, not causal, norm_first),
    }
    for key, residual in (("no_residual", (0.0, 0.0)), ("no_attention_residual", (0.0, 1.0)),
                          ("no_ff_residual", (1.0, 0.0))):
        mistakes[BLOCK_MISTAKES[key]] = _block_variant(block, x, causal, norm_first, residual)
    check_close(actual, expected, name, atol=1e-4, mistakes=mistakes)


def _float64_copy(block: nn.Module) -> nn.Module:
    """A float64 copy of ``block`` in eval mode (the student's block is left as it was)."""
    copy = type(block)(
        block.self_attn.embed_dim, block.self_attn.num_heads, block.linear1.out_features,
        dropout=0.0, activation=block.activation, norm_first=block.norm_first,
        layer_norm_eps=block.norm1.eps,
    )
    copy.load_state_dict(block.state_dict())
    return copy.double().eval()


# -- the causality test -------------------------------------------------------------------


@checked_plainly
def check_is_causal(actual, expected: bool, description: str, name="is_causal") -> None:
    """Fail unless the answer ``actual`` (a bool, or a one-element tensor or array) equals
    ``expected`` for the function described by ``description``."""
    if actual is None:
        raise AssertionError(f"{name} returned None: return True or False")
    try:
        value = bool(actual)
    except (TypeError, ValueError, RuntimeError):
        raise AssertionError(
            f"{name} must return True or False; got {type(actual).__name__} {actual!r}"
        ) from None
    if value == expected:
        return
    if expected:
        raise AssertionError(
            f"{name} said False for {description}, which IS causal: output i depends only "
            "on tokens j ≤ i. Did you compare all the outputs after changing token t? "
            "Outputs at positions ≥ t may change; only those before t must not"
        )
    raise AssertionError(
        f"{name} said True for {description}, which is NOT causal: a later token changes an "
        "earlier output. Change every position t in turn (not only the last), and compare "
        "the outputs at every position before t"
    )


def _is_causal(f, x) -> bool:
    """Whether changing token t (each t in turn) leaves f's outputs before t unchanged."""
    generator = torch.Generator().manual_seed(0)
    x = torch.as_tensor(x)
    with torch.no_grad():
        before = as_tensor(f(x), "f(x)")
        for t in range(1, len(x)):
            changed = x.clone()
            changed[t] += torch.randn(x[t].shape, generator=generator).to(x.dtype)
            after = as_tensor(f(changed), "f(x)")
            if not torch.allclose(after[:t], before[:t], atol=1e-6):
                return False
    return True


@checked_plainly
def check_is_causal_of(actual, f, x, name="is_causal") -> None:
    """``is_causal(f, x)`` of a test cell (its record's check): :func:`check_is_causal`
    with the answer worked out here, by changing each token of x in turn."""
    label = getattr(f, "__name__", "<lambda>")
    description = "the function it was given" if label == "<lambda>" else label
    check_is_causal(actual, _is_causal(f, x), description, name=name)

"""Diagnostic checks for notebook 06: positional encodings, layer norm, one block, causality.

The references are written out in float64 from the formulas, and PyTorch's own
``nn.LayerNorm`` and ``nn.TransformerEncoderLayer`` for the layer norm and the block,
independently of ``course_utils.transformer``.
"""

import torch
from torch import nn

from .core import as_tensor, check_close

__all__ = [
    "BLOCK_MISTAKES",
    "check_is_causal",
    "check_layer_norm",
    "check_positional_encoding",
    "check_transformer_block",
]

BLOCK_MISTAKES = {
    "sin_cos_swapped": "sine and cosine are swapped: the EVEN columns 2i hold sin, the odd "
    "columns 2i + 1 hold cos",
    "column_exponent": "you used the column index c in 10000^(c/d); both columns of a pair "
    "share the exponent 2i/d (column 2i + 1 uses the same frequency as column 2i)",
    "halves": "you put all the sines in the first half and all the cosines in the second; "
    "they alternate: column 2i is sin, column 2i + 1 is cos of the same angle",
    "from_one": "your positions start at 1; the first position is pos = 0 (its row is "
    "0, 1, 0, 1, …)",
    "times_frequency": "you multiplied pos by 10000^(2i/d) instead of dividing by it",
    "transposed": "your array is transposed: one ROW per position, one column per feature",
    "unbiased": "you used the unbiased variance (dividing by d − 1; torch.var and torch.std "
    "do so by default); layer norm divides by d (unbiased=False, or correction=0)",
    "across_tokens": "you normalised each feature across the tokens (dim=0 or -2): that is "
    "batch normalisation; layer norm normalises each token over its own features (dim=-1)",
    "eps_outside": "you added eps to the standard deviation; it goes under the square "
    "root: (x − μ) / √(σ² + eps)",
    "no_eps": "you left out eps: divide by √(σ² + eps)",
    "no_affine": "you left out γ and β: return γ ⊙ (x − μ)/√(σ² + eps) + β",
    "gamma_beta_swapped": "γ and β are swapped: γ (the weight) multiplies, β (the bias) is added",
    "norm_order": "you computed the other arrangement of the layer norms: look at "
    "block.norm_first (False: post-LN, H = LN₁(X + SA(X)); True: pre-LN, H = X + SA(LN₁(X)))",
    "no_residual": "the residual connections are missing: each sub-layer's output is ADDED "
    "to its input (X + SA(…), H + FF(…))",
    "no_attention_residual": "the residual around the self-attention is missing: add X to "
    "SA(…) (post-LN: LN₁(X + SA(X)); pre-LN: X + SA(LN₁(X)))",
    "no_ff_residual": "the residual around the feed-forward layer is missing: add H to FF(…)",
    "no_activation": "the feed-forward layer has no activation: FF(H) = "
    "act(H W₁ + b₁) W₂ + b₂ with act = block.activation",
    "no_causal": "with causal=True token i may attend only to j ≤ i: pass causal=causal to "
    "block.self_attn",
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
    check_close(got, expected, name, atol=1e-5, mistakes=mistakes)


# -- layer norm --------------------------------------------------------------------------


def _normalise(x, gamma, beta, eps, dim=-1, correction=0, eps_inside=True):
    """(x − μ)/√(σ² + eps) ⊙ γ + β over ``dim``, and the variants that model mistakes."""
    mu = x.mean(dim=dim, keepdim=True)
    var = x.var(dim=dim, keepdim=True, correction=correction)
    scale = torch.sqrt(var + eps) if eps_inside else torch.sqrt(var) + eps
    return (x - mu) / scale * gamma + beta


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
    check_close(actual, expected, name, atol=1e-4, mistakes=mistakes)


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


def check_transformer_block(actual, block: nn.Module, x, causal: bool,
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

"""Attention beside the exercises of notebook 07: the feature maps, banded softmax
attention and FMMformer's blend.

Notation of the lectures, with row vectors: Q, K (N × D) and V (N × D_v) hold q_i, k_j,
v_j in their rows. Softmax attention costs O(N²) time and memory: the N × N matrix
A = softmax(Q Kᵀ / √D). **Linear attention** ("Transformers are RNNs", Katharopoulos et
al., 2020) replaces the exponential by a kernel sim(q, k) = φ(q)ᵀφ(k) with a feature map
φ: R^D → R^r whose values are > 0; how that makes the cost linear in N, and its causal
form, are notebook 07's exercises, and this module does not compute them: a caller passes
its own linear attention (in the notebook, the student's) where one is needed.

**Feature maps**: φ(x) = elu(x) + 1 of that paper, and FMMformer's mirror image
elu(−x) + 1 and tanh(x) + 1, all > 0 everywhere.

**Banded attention** keeps softmax attention for the near field |i − j| ≤ bandwidth only
(and j ≤ i if causal): B = softmax(band_k(Q Kᵀ / √D)) (the slides call this matrix D,
which here is the head size), by PyTorch's ``scaled_dot_product_attention`` with a band
mask, block by block.

**FMMformer** ("FMMformer: Efficient and Flexible Transformer via Decomposed Near-field
and Far-field Attention", Nguyen et al., 2021) adds the banded near field B V and a far
field of m feature maps φ_1 … φ_m, one linear attention each (the caller's), blended by
weights ≥ 0: V̂ = w₁ B V + Σ_l w₂,l · (linear attention with φ_l).

Shapes: q and k are (..., N, D), v is (..., N, D_v); leading batch and head axes
broadcast as in ``torch.matmul``. Everything runs on the device of its inputs.
"""

import torch
import torch.nn.functional as F

from course_utils.validation import (
    float_tensor,
    float_tensors,
    integer,
    number,
    positive_int,
    same_size,
)


def elu_feature_map(x: torch.Tensor) -> torch.Tensor:
    """φ(x) = elu(x) + 1 = e^{min(x, 0)} + max(x, 0), elementwise: x + 1 for x > 0, eˣ for
    x ≤ 0; always > 0. Shape (..., D) → (..., D).

    Written with min and max rather than as F.elu(x) + 1: in float32, (eˣ − 1) + 1 rounds
    to exactly 0 below x ≈ −17, and e^{min(x, 0)} never overflows (nor makes a NaN
    gradient) for large positive x.
    """
    return torch.exp(x.clamp(max=0)) + x.clamp(min=0)


def negative_elu_feature_map(x: torch.Tensor) -> torch.Tensor:
    """φ(x) = elu(−x) + 1, elementwise: 1 − x for x < 0, e^{−x} for x ≥ 0; always > 0.
    FMMformer's second far-field map, the mirror image of ``elu_feature_map``: it is large
    where that one is small. Shape (..., D) → (..., D)."""
    return elu_feature_map(-x)


def tanh_feature_map(x: torch.Tensor) -> torch.Tensor:
    """φ(x) = tanh(x) + 1 = 2σ(2x), elementwise, in (0, 2). Shape (..., D) → (..., D).

    FMMformer's third far-field map is written tanh; the + 1 makes it positive, as linear
    attention's normaliser needs (the authors' code adds it too). Computed as 2σ(2x): in
    float32, tanh(x) + 1 rounds to exactly 0 below x ≈ −9, 2σ(2x) stays > 0 to x ≈ −50.
    """
    return 2 * torch.sigmoid(2 * x)


FMM_FEATURE_MAPS = (elu_feature_map, negative_elu_feature_map, tanh_feature_map)
"""FMMformer's three far-field feature maps: elu(x) + 1, elu(−x) + 1, tanh(x) + 1."""


# -- input checks ------------------------------------------------------------------------


def _check_qkv(q, k, v, causal: bool) -> None:
    """q, k: (..., N_q, D), (..., N_k, D); v: (..., N_k, D_v); N_q = N_k when causal."""
    float_tensors(q=q, k=k, v=v, min_dim=2)
    same_size(-1, "must have the same last dimension D", q=q, k=k)
    same_size(-2, "must have one row per key position (the same N)", k=k, v=v)
    if not isinstance(causal, bool):
        raise TypeError(f"causal must be a bool; got {causal!r}")
    if causal and q.shape[-2] != k.shape[-2]:
        raise ValueError(
            "causal attention needs as many queries as keys (N_q = N_k); "
            f"got q of shape {tuple(q.shape)} and k of shape {tuple(k.shape)}"
        )
    try:
        torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ValueError(
            "the leading (batch, head) axes of q, k and v must broadcast; got shapes "
            f"{tuple(q.shape)}, {tuple(k.shape)} and {tuple(v.shape)}"
        ) from None


# -- banded (near-field) attention -----------------------------------------------------------


def _allowed(offset: torch.Tensor, bandwidth: int, causal: bool) -> torch.Tensor:
    """True where a key at ``offset`` = j − i from its query is in the band."""
    allowed = offset.abs() <= bandwidth
    return allowed & (offset <= 0) if causal else allowed


def band_mask(n: int, bandwidth: int, causal: bool = False, device=None) -> torch.Tensor:
    """Boolean (n, n) mask, True where query i MAY attend to key j: |i − j| ≤ bandwidth,
    and also j ≤ i when ``causal``. ``bandwidth = 0`` keeps the diagonal only."""
    positive_int("n", n)
    integer("bandwidth", bandwidth, minimum=0)
    if not isinstance(causal, bool):
        raise TypeError(f"causal must be a bool; got {causal!r}")
    positions = torch.arange(n, device=device)
    return _allowed(positions - positions[:, None], bandwidth, causal)


def banded_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    bandwidth: int,
    causal: bool = False,
) -> torch.Tensor:
    """Softmax attention restricted to the band |i − j| ≤ bandwidth (and j ≤ i if causal).

    D = softmax(band(Q Kᵀ / √D)), output D V of shape (..., N, D_v); q, k (..., N, D),
    v (..., N, D_v). Equal to ``scaled_dot_product_attention(q, k, v,
    attn_mask=band_mask(N, bandwidth, causal))`` but without the N × N matrix: the queries
    go in blocks of P positions, and block b (queries b·P … b·P + P − 1) sees only the
    keys b·P − w … b·P + P − 1 + w (w = bandwidth), so time and memory are O(N (P + 2w)).
    A sequence of one block (N ≤ P) takes that call itself: its mask is no larger.
    """
    _check_qkv(q, k, v, causal)
    if q.shape[-2] != k.shape[-2]:
        raise ValueError(
            "banded attention needs as many queries as keys (the band is around i = j); "
            f"got q of shape {tuple(q.shape)} and k of shape {tuple(k.shape)}"
        )
    integer("bandwidth", bandwidth, minimum=0)
    n = q.shape[-2]
    w = min(bandwidth, n - 1)  # a wider band sees no more keys
    block = min(n, max(w, 64))
    if block == n:  # one block of queries: the (N, N) mask is as small as the windows' would be
        return F.scaled_dot_product_attention(q, k, v, attn_mask=band_mask(n, w, causal, q.device))
    n_blocks = -(-n // block)
    lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    # queries: (..., n_blocks, P, D), padded at the end
    q_blocks = F.pad(q.expand(*lead, *q.shape[-2:]), (0, 0, 0, n_blocks * block - n))
    q_blocks = q_blocks.unflatten(-2, (n_blocks, block))
    # keys and values: w padded rows before, enough after, then windows of P + 2w rows
    # starting every P rows: (..., n_blocks, P + 2w, ·)
    after = n_blocks * block - n + w

    def windows(x: torch.Tensor) -> torch.Tensor:
        x = F.pad(x.expand(*lead, *x.shape[-2:]), (0, 0, w, after))
        return x.unfold(-2, block + 2 * w, block).transpose(-2, -1)

    k_windows, v_windows = windows(k), windows(v)
    # query a of block b is i = b·P + a; key c of its window is j = b·P − w + c; padded
    # keys (j < 0 or j ≥ N) are masked out with the keys outside the band
    window = torch.arange(block + 2 * w, device=q.device)
    offset = window - w - torch.arange(block, device=q.device)[:, None]  # j − i: (P, P + 2w)
    key_index = torch.arange(n_blocks, device=q.device)[:, None, None] * block - w + window
    mask = _allowed(offset, w, causal) & (key_index >= 0) & (key_index < n)
    out = F.scaled_dot_product_attention(q_blocks, k_windows, v_windows, attn_mask=mask)
    return out.flatten(-3, -2)[..., :n, :]


# -- FMMformer ----------------------------------------------------------------------------


def _weight(name: str, w):
    """A blend weight ≥ 0: a number, or a tensor (a learnable parameter) broadcasting
    to the output, e.g. one weight per head of shape (heads, 1, 1)."""
    if isinstance(w, torch.Tensor):
        float_tensor(name, w, min_dim=0)
        if (w < 0).any():
            raise ValueError(f"{name} must be >= 0 (FMMformer's positivity constraint); got {w}")
        return w
    if number(name, w) < 0:
        raise ValueError(f"{name} must be >= 0 (FMMformer's positivity constraint); got {w}")
    return w


def fmm_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    bandwidth: int,
    linear_attention,
    w_near=0.5,
    w_far=0.5,
    feature_maps=elu_feature_map,
    causal: bool = False,
) -> torch.Tensor:
    """FMMformer attention with m far-field feature maps φ_1 … φ_m, shape (..., N, D_v):

        V̂ = w₁ B V + Σ_l w₂,l · linear_attention(q, k, v, φ_l).

    Near field B V = ``banded_attention(q, k, v, bandwidth, causal)``; far field: one call
    of the caller's ``linear_attention(q, k, v, feature_map)`` per map (causal when
    ``causal`` is, as the caller chooses it). ``feature_maps`` is one map or a sequence of
    m maps (e.g. ``FMM_FEATURE_MAPS``). The weights are ≥ 0: numbers, or tensors such as
    learnable per-head weights kept positive by the caller (e.g. through softplus);
    w₁ = ``w_near``, and ``w_far`` is one weight for every map or a sequence of m weights.
    """
    if not callable(linear_attention):
        raise TypeError(f"linear_attention must be callable; got {type(linear_attention).__name__}")
    maps = (feature_maps,) if callable(feature_maps) else tuple(feature_maps)
    if not maps:
        raise ValueError("feature_maps must hold at least one feature map; got none")
    if isinstance(w_far, (list, tuple)):
        if len(w_far) != len(maps):
            raise ValueError(
                f"w_far must hold one weight per feature map: {len(maps)} maps, "
                f"got {len(w_far)} weights"
            )
        weights = tuple(w_far)
    else:
        weights = (w_far,) * len(maps)
    w_near = _weight("w_near", w_near)
    weights = [_weight("w_far", w) for w in weights]
    near = banded_attention(q, k, v, bandwidth, causal=causal)
    far = [torch.as_tensor(linear_attention(q, k, v, phi)).to(near) for phi in maps]
    return w_near * near + sum(w * part for w, part in zip(weights, far, strict=True))

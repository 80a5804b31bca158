"""Attention in linear time: a kernel similarity, its causal (RNN) form, and FMMformer.

Notation of the lectures, with row vectors: Q, K (N × D) and V (N × D_v) hold q_i, k_j,
v_j in their rows. Softmax attention is one instance of

    V′_i = Σ_j sim(q_i, k_j) v_j / Σ_j sim(q_i, k_j),      sim(q, k) = exp(qᵀk / √D),

and costs O(N²) time and memory: the N × N matrix A = softmax(Q Kᵀ / √D).

**Linear attention** ("Transformers are RNNs: Fast Autoregressive Transformers with Linear
Attention", Katharopoulos et al., 2020) replaces sim by a kernel sim(q, k) = φ(q)ᵀφ(k)
with a feature map φ: R^D → R^r whose values are > 0, so that the normaliser is > 0
(values ≥ 0 are not enough: φ(q)ᵀ Σ_j φ(k_j) is 0 when q's features and the keys'
features are never positive together).
The sums over j no longer depend on i and are computed once:

    V′_i = φ(q_i)ᵀ (Σ_j φ(k_j) v_jᵀ) / φ(q_i)ᵀ (Σ_j φ(k_j))
    V′   = φ(Q) (φ(K)ᵀ V) / φ(Q) (φ(K)ᵀ 1)                  O(N r D_v), no N × N matrix.

The default φ(x) = elu(x) + 1 of that paper is positive everywhere.

**Causal** attention sums over j ≤ i only. The sums become running sums, a recurrent
network with state S_i (r × D_v) and z_i (r):

    S_i = S_{i−1} + φ(k_i) v_iᵀ,   z_i = z_{i−1} + φ(k_i),   V′_i = φ(q_i)ᵀ S_i / φ(q_i)ᵀ z_i

(``recurrent_linear_attention``, one step per position: generation needs only the
state, never the past tokens). A Python loop over N steps is slow, so
``linear_attention(causal=True)`` cuts the sequence into chunks of C positions. Chunk c
(positions t_c … t_c + C − 1) starts from the state carried over from the chunks before
it, S = Σ_{j < t_c} φ(k_j) v_jᵀ and z = Σ_{j < t_c} φ(k_j) (cumulative sums over chunks
of each chunk's φ(K_c)ᵀ V_c and φ(K_c)ᵀ 1), and adds its own past inside the chunk with a
small C × C causal product:

    V′_c = [φ(Q_c) S + tril(φ(Q_c) φ(K_c)ᵀ) V_c] / [φ(Q_c) z + tril(φ(Q_c) φ(K_c)ᵀ) 1].

Time O(N (C (r + D_v) + r D_v)) and memory O(N (C + r D_v / C)): linear in N, and
mostly matrix products, which is fast. C = 1 is the recurrence, C ≥ N the masked quadratic form.

**Banded attention** keeps softmax attention for the near field |i − j| ≤ bandwidth only
(and j ≤ i if causal): B = softmax(band_k(Q Kᵀ / √D)) (the slides call this matrix D,
which here is the head size).

**FMMformer** ("FMMformer: Efficient and Flexible Transformer via Decomposed Near-field
and Far-field Attention", Nguyen et al., 2021) adds the two: the banded near field B and
a low-rank far field built from m feature maps φ_1 … φ_m (the paper's are elu(x) + 1,
elu(−x) + 1 and tanh), each a linear attention of its own, blended by weights ≥ 0:

    V̂ = w₁ B V + Σ_l w₂,l φ_l(Q)(φ_l(K)ᵀ V) / φ_l(Q)(φ_l(K)ᵀ 1).

The lectures call this far field "rank r" with r the number of feature maps; here that
number is m, and r stays the width of one map, as above. Each map here acts on every
coordinate, φ_l: R^D → R^D (r = D), so φ_l(Q) φ_l(K)ᵀ has rank at most D and the far
field at most m·D.

**Well-separation**, the condition of the fast multipole method's argument: sources y_j are
well separated from targets x_i when ‖y_j − y*‖ ≤ δ ‖x_i − y*‖ for all pairs, with y* the
sources' centre and δ < 1; then a block g(‖x_i − y_j‖) of a smooth kernel is numerically
low-rank. ``well_separation`` returns the smallest such δ. For attention the distance is the
one between queries and keys in feature space (exp(qᵀk/√D) is a Gaussian of ‖q − k‖ times
a row and a column factor), not the distance |i − j| of their positions.

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


def _features(feature_map, q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """φ(Q) and φ(K), (..., N, r) each, checked: same r, same rows, no negative value."""
    if not callable(feature_map):
        raise TypeError(f"feature_map must be callable; got {type(feature_map).__name__}")
    phi_q, phi_k = feature_map(q), feature_map(k)
    for name, x, phi in (("q", q, phi_q), ("k", k, phi_k)):
        float_tensor(f"feature_map({name})", phi, min_dim=2)
        if phi.shape[:-1] != x.shape[:-1]:
            raise ValueError(
                f"feature_map must map each row to a row, (..., N, D) → (..., N, r); "
                f"got {tuple(x.shape)} → {tuple(phi.shape)} for {name}"
            )
        smallest = phi.min().item()
        if smallest < 0:
            raise ValueError(
                f"feature_map({name}) has negative values (smallest {smallest:.3g}); "
                "linear attention needs φ > 0 so that the normaliser φ(q)ᵀ Σ φ(k) is "
                "positive: use e.g. elu_feature_map or positive random features"
            )
    if phi_q.shape[-1] != phi_k.shape[-1]:
        raise ValueError(
            "feature_map must give q and k the same number of features r; "
            f"got {phi_q.shape[-1]} and {phi_k.shape[-1]}"
        )
    return phi_q, phi_k


# -- linear attention ----------------------------------------------------------------------


def linear_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    feature_map=elu_feature_map,
    causal: bool = False,
    *,
    chunk_size: int = 64,
) -> torch.Tensor:
    """Linear attention V′ = φ(Q)(φ(K)ᵀ V) / φ(Q)(φ(K)ᵀ 1), shape (..., N_q, D_v).

    q (..., N_q, D), k (..., N_k, D), v (..., N_k, D_v). ``feature_map`` maps (..., N, D)
    to (..., N, r) with values > 0 (default elu(x) + 1). No 1/√D scale is applied: fold
    any scale into q and k or into φ. ``causal=True`` (N_q = N_k) sums over j ≤ i only,
    computed in chunks of ``chunk_size`` positions (see the module docstring); the chunk
    size changes the speed, not the result.
    """
    _check_qkv(q, k, v, causal)
    positive_int("chunk_size", chunk_size)
    phi_q, phi_k = _features(feature_map, q, k)
    if causal:
        return _chunked_causal(phi_q, phi_k, v, chunk_size)
    kv = phi_k.transpose(-2, -1) @ v  # Σ_j φ(k_j) v_jᵀ: (..., r, D_v)
    z = phi_k.sum(dim=-2)  # Σ_j φ(k_j): (..., r)
    numerator = phi_q @ kv  # (..., N_q, D_v)
    denominator = (phi_q * z.unsqueeze(-2)).sum(dim=-1, keepdim=True)  # (..., N_q, 1)
    return numerator / denominator


def _chunked_causal(phi_q, phi_k, v, chunk: int) -> torch.Tensor:
    """Causal linear attention on features, by chunks of ``chunk`` positions.

    The normaliser rides along as an extra value column of ones: with V₁ = [V | 1],
    φ(Q)(φ(K)ᵀ V₁) holds the numerator in its first D_v columns and φ(Q)(φ(K)ᵀ 1) in the last.
    """
    n, d_v = v.shape[-2], v.shape[-1]
    chunk = min(chunk, n)
    lead = torch.broadcast_shapes(phi_q.shape[:-2], phi_k.shape[:-2], v.shape[:-2])
    v1 = torch.cat([v.expand(*lead, n, d_v), v.new_ones(*lead, n, 1)], dim=-1)
    # Pad N up to a multiple of the chunk with zero rows: padded keys come after every
    # real query, so no real row sees them, and padded queries are cut off before dividing.
    pad = -n % chunk
    if pad:
        phi_q, phi_k, v1 = (F.pad(x, (0, 0, 0, pad)) for x in (phi_q, phi_k, v1))
    n_chunks = (n + pad) // chunk
    # (..., n_chunks, C, ·): chunk c holds positions c·C … c·C + C − 1
    phi_q, phi_k, v1 = (x.unflatten(-2, (n_chunks, chunk)) for x in (phi_q, phi_k, v1))

    # far part: the state S carried into chunk c is Σ_{c' < c} φ(K_c')ᵀ V₁_c'
    chunk_sums = phi_k.transpose(-2, -1) @ v1  # (..., n_chunks, r, D_v + 1)
    carried = chunk_sums.cumsum(dim=-3) - chunk_sums  # exclusive cumulative sum
    # near part: inside the chunk, the causal C × C product
    within = (phi_q @ phi_k.transpose(-2, -1)).tril()  # (..., n_chunks, C, C)
    out = phi_q @ carried + within @ v1  # (..., n_chunks, C, D_v + 1)
    out = out.flatten(-3, -2)[..., :n, :]
    return out[..., :d_v] / out[..., d_v:]


def recurrent_linear_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, feature_map=elu_feature_map
) -> torch.Tensor:
    """Causal linear attention as a recurrent network, one step per position (for teaching).

    S_i = S_{i−1} + φ(k_i) v_iᵀ  (..., r, D_v);   z_i = z_{i−1} + φ(k_i)  (..., r);
    V′_i = φ(q_i)ᵀ S_i / φ(q_i)ᵀ z_i, with S_0 = 0 and z_0 = 0. Returns (..., N, D_v),
    equal to ``linear_attention(q, k, v, feature_map, causal=True)``, only slower.
    """
    _check_qkv(q, k, v, causal=True)
    phi_q, phi_k = _features(feature_map, q, k)
    lead = torch.broadcast_shapes(phi_q.shape[:-2], phi_k.shape[:-2], v.shape[:-2])
    s = v.new_zeros(*lead, phi_k.shape[-1], v.shape[-1])
    z = v.new_zeros(*lead, phi_k.shape[-1])
    outputs = []
    for i in range(v.shape[-2]):
        s = s + phi_k[..., i, :, None] * v[..., i, None, :]  # outer product φ(k_i) v_iᵀ
        z = z + phi_k[..., i, :]
        numerator = (phi_q[..., i, :, None] * s).sum(dim=-2)  # φ(q_i)ᵀ S_i: (..., D_v)
        denominator = (phi_q[..., i, :] * z).sum(dim=-1, keepdim=True)  # φ(q_i)ᵀ z_i
        outputs.append(numerator / denominator)
    return torch.stack(outputs, dim=-2)


# -- the fast multipole method's condition ---------------------------------------------------


def well_separation(targets: torch.Tensor, sources: torch.Tensor) -> float:
    """The smallest δ with ‖y_j − y*‖ ≤ δ ‖x_i − y*‖ for every target x_i and source y_j.

    ``targets`` (m, D) and ``sources`` (n, D) hold the points in their rows; y* is the mean
    of the sources. So δ = max_j ‖y_j − y*‖ / min_i ‖x_i − y*‖: the sources' radius over
    the nearest target's distance. The sources are well separated from the targets when
    δ < 1 (a target at the centre gives ∞).
    """
    float_tensors(targets=targets, sources=sources, min_dim=2)
    if targets.dim() != 2 or sources.dim() != 2 or targets.shape[1] != sources.shape[1]:
        raise ValueError(f"targets (m, D) and sources (n, D) need two axes and one D; got targets "
                         f"{tuple(targets.shape)} and sources {tuple(sources.shape)}")
    centre = sources.mean(dim=0)
    radius = torch.linalg.vector_norm(sources - centre, dim=-1).max()
    nearest = torch.linalg.vector_norm(targets - centre, dim=-1).min()
    return (radius / nearest).item()


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
    w_near=0.5,
    w_far=0.5,
    feature_maps=elu_feature_map,
    causal: bool = False,
) -> torch.Tensor:
    """FMMformer attention with m far-field feature maps φ_1 … φ_m, shape (..., N, D_v):

        V̂ = w₁ B V + Σ_l w₂,l φ_l(Q)(φ_l(K)ᵀ V) / φ_l(Q)(φ_l(K)ᵀ 1).

    Near field B V = ``banded_attention(q, k, v, bandwidth, causal)``; far field: one
    ``linear_attention(q, k, v, φ_l, causal)`` per map. ``feature_maps`` is one map or a
    sequence of m maps (e.g. ``FMM_FEATURE_MAPS``). The weights are ≥ 0: numbers, or
    tensors such as learnable per-head weights kept positive by the caller (e.g. through
    softplus); w₁ = ``w_near``, and ``w_far`` is one weight for every map or a sequence
    of m weights, one per map. In O(N (bandwidth + Σ_l r_l D_v)), r_l the width of φ_l.
    """
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
    far = [linear_attention(q, k, v, feature_map=phi, causal=causal) for phi in maps]
    return w_near * near + sum(w * part for w, part in zip(weights, far, strict=True))

"""Linear attention in O(N), the reference the tests and benchmarks compare with (the
instructors' side: students receive no implementation of notebook 07's exercises).

With a kernel sim(q, k) = φ(q)ᵀφ(k) whose features are > 0 the sums over j no longer
depend on i:

    V′ = φ(Q) (φ(K)ᵀ V) / φ(Q) (φ(K)ᵀ 1)                  O(N r D_v), no N × N matrix.

**Causal** attention sums over j ≤ i only: a recurrent network with state S_i (r × D_v)
and z_i (r), S_i = S_{i−1} + φ(k_i) v_iᵀ, z_i = z_{i−1} + φ(k_i), V′_i = φ(q_i)ᵀ S_i /
φ(q_i)ᵀ z_i (``recurrent_linear_attention``), computed fast in chunks of C positions:
chunk c starts from the state carried over from the chunks before it and adds its own
past with a small C × C causal product,

    V′_c = [φ(Q_c) S + tril(φ(Q_c) φ(K_c)ᵀ) V_c] / [φ(Q_c) z + tril(φ(Q_c) φ(K_c)ᵀ) 1].
"""

import torch
import torch.nn.functional as F

from course_utils.models.linear_attention import _check_qkv, elu_feature_map
from course_utils.validation import float_tensor, positive_int

__all__ = ["causal_linear_attention", "linear_attention", "recurrent_linear_attention"]


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


def causal_linear_attention(q, k, v, feature_map=elu_feature_map) -> torch.Tensor:
    """``linear_attention(q, k, v, feature_map, causal=True)``: the far field of a causal
    FMMformer, and what a causal model's linear heads run."""
    return linear_attention(q, k, v, feature_map, causal=True)

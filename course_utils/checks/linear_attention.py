"""Diagnostic checks for notebook 07: kernel attention, the recurrent step, causal linear
attention and the separation of a block of keys from a block of queries.

The references are the quadratic forms of the slides, written out in float64 with an
explicit N × N matrix of similarities φ(q_i)ᵀφ(k_j) (masked where needed), independently
of ``course_utils.models.linear_attention`` (which never builds that matrix).
"""

import math

import torch

from .core import as_tensor, check_close
from .guards import checked_plainly

__all__ = [
    "LINEAR_MISTAKES",
    "check_causal_linear_attention",
    "check_kernel_attention",
    "check_recurrent_step",
    "check_separation",
]

LINEAR_MISTAKES = {
    "no_normaliser": "you did not divide by the sum of the similarities: each output row is a "
    "weighted AVERAGE of the values (the denominator of the formula in the exercise)",
    "no_feature_map": "you used the raw dot products Q_iᵀK_j as similarities: the kernel is an "
    "inner product of FEATURES (section 2, the key idea)",
    "softmax": "you computed softmax attention, sim = exp(qᵀk/√D); here sim(q, k) = φ(q)ᵀφ(k) "
    "with the given feature_map",
    "scaled": "you scaled q and k (by 1/√D or D^-¼) before φ: the kernel replaces the "
    "exponential, and the exercise's formula has no scale",
    "global_normaliser": "you divided by one number, the sum of the similarities over ALL "
    "queries and keys: each query's row is an average of its own",
    "q_k_swapped": "you swapped the roles of the queries and the keys: check which of them "
    "the sum over j runs over, and which one indexes the output row",
    "causal_kernel": "you summed over j ≤ i only: this form is NOT causal, every query sees "
    "every key",
    "not_accumulated_s": "your S_i holds token i's term alone: S_i sums over every j ≤ i, "
    "the earlier tokens' terms included (compare the definitions of S_i and S_{i−1})",
    "not_accumulated_z": "your z_i holds token i's term alone: z_i sums over every j ≤ i "
    "(compare the definitions of z_i and z_{i−1})",
    "outer_transposed": "your outer product is v_i φ(k_i)ᵀ, the transpose of what the state "
    "needs: compare the shape of S, (r, D_v), with the order of the two vectors",
    "state_no_feature_map": "you added k_i (or k_i v_iᵀ) to the state: the state sums φ(k_i), "
    "the features of the key",
    "old_state": "you computed the output with the OLD state S_{i−1}, z_{i−1}: position i "
    "also attends to itself (j ≤ i includes i)",
    "output_no_feature_map": "you multiplied the state by q_i itself: the query enters the "
    "kernel through its features, as the key does",
    "separation_centre": "you measured from the centre of the QUERIES: k* is the mean of the "
    "keys (the sources), the point every query should see them gathered around",
    "separation_inverted": "your ratio is upside down: δ compares the keys' spread around k* "
    "with the queries' distance from k*, so well separated means small δ",
    "separation_means": "you compared average distances: the inequality must hold for EVERY "
    "pair, so look at the one pair that makes it hardest",
    "separation_farthest_query": "you divided by the distance of the FARTHEST query: the "
    "inequality must hold for the nearest query too, the one that makes it hardest",
    "separation_squared": "you compared squared distances: the definition compares the "
    "distances themselves",
    "not_causal": "you summed over ALL keys: causal attention keeps j ≤ i only (running sums "
    "over the past)",
    "strictly_causal": "you left out j = i: position i must also see itself (the diagonal "
    "stays), otherwise the first row is 0/0",
    "anti_causal": "you summed over the FUTURE j ≥ i (a reversed cumulative sum, or triu): "
    "causal keeps the past j ≤ i",
    "normaliser_not_causal": "your numerator sums over j ≤ i but your normaliser over all j: "
    "both sums run over the past",
    "causal_softmax": "you computed causal softmax attention; here sim(q, k) = φ(q)ᵀφ(k) with "
    "the given feature_map",
}


def _float64(*pairs):
    return [as_tensor(t, label) for t, label in pairs]


def _features(feature_map, x: torch.Tensor) -> torch.Tensor:
    return as_tensor(feature_map(x), "feature_map(x)")


def _similarities(phi_q, phi_k, keep: str = "all") -> torch.Tensor:
    """φ(q_i)ᵀφ(k_j) as an (..., N_q, N_k) matrix, kept where the mask says."""
    sim = phi_q @ phi_k.transpose(-2, -1)
    n_q, n_k = sim.shape[-2:]
    if keep == "all":
        return sim
    past = torch.ones(n_q, n_k, dtype=torch.bool).tril()
    allowed = {"past": past, "strict": past.tril(-1), "future": past.T}[keep]
    return sim * allowed


def _quadratic(phi_q, phi_k, v, keep="all", keep_normaliser=None, normalise=True):
    """V′_i = Σ_j sim_ij V_j / Σ_j sim_ij with an explicit N × N matrix of similarities."""
    sim = _similarities(phi_q, phi_k, keep)
    numerator = sim @ v
    if not normalise:
        return numerator
    normaliser = _similarities(phi_q, phi_k, keep_normaliser or keep).sum(-1, keepdim=True)
    return numerator / normaliser


def _softmax_attention(q, k, v, causal=False):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        n_q, n_k = scores.shape[-2:]
        past = torch.ones(n_q, n_k, dtype=torch.bool).tril()
        scores = scores.masked_fill(~past, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


@checked_plainly
def check_kernel_attention(actual, q, k, v, feature_map, name="kernel_attention",
                           atol=1e-4) -> None:
    """Fail unless ``actual`` is V′_i = φ(Q_i)ᵀ(Σ_j φ(K_j)V_jᵀ) / φ(Q_i)ᵀ Σ_j φ(K_j).

    q (..., N_q, D), k (..., N_k, D), v (..., N_k, D_v); every query sees every key.
    ``feature_map`` maps tensors (..., D) → (..., r) with values > 0.
    """
    q, k, v = _float64((q, "q"), (k, "k"), (v, "v"))
    phi_q, phi_k = _features(feature_map, q), _features(feature_map, k)
    scale = q.shape[-1] ** -0.25
    sim = phi_q @ phi_k.transpose(-2, -1)
    mistakes = {
        LINEAR_MISTAKES["no_normaliser"]: _quadratic(phi_q, phi_k, v, normalise=False),
        LINEAR_MISTAKES["no_feature_map"]: _quadratic(q, k, v),
        LINEAR_MISTAKES["softmax"]: _softmax_attention(q, k, v),
        LINEAR_MISTAKES["scaled"]: _quadratic(_features(feature_map, q * scale),
                                              _features(feature_map, k * scale), v),
        LINEAR_MISTAKES["global_normaliser"]: sim @ v / sim.sum((-2, -1), keepdim=True),
    }
    if q.shape[-2] == k.shape[-2]:
        mistakes[LINEAR_MISTAKES["q_k_swapped"]] = _quadratic(phi_k, phi_q, v)
        mistakes[LINEAR_MISTAKES["causal_kernel"]] = _quadratic(phi_q, phi_k, v, keep="past")
    check_close(actual, _quadratic(phi_q, phi_k, v), name, atol=atol, mistakes=mistakes,
                reveal=False)


def _step(s, z, q_i, k_i, v_i, feature_map, *, outer=None, state_phi=True, accumulate=True,
          old=False, output_phi=True):
    """One step of the recurrence (and models of its mistakes): (S_i, z_i, V′_i)."""
    phi_k = _features(feature_map, k_i) if state_phi else k_i
    phi_q = _features(feature_map, q_i) if output_phi else q_i
    new = torch.outer(phi_k, v_i) if outer is None else outer
    s_i = s + new if accumulate else new
    z_i = z + phi_k if accumulate else phi_k
    s_out, z_out = (s, z) if old else (s_i, z_i)
    return s_i, z_i, (phi_q @ s_out) / (phi_q @ z_out)


def _three(actual, name):
    if not isinstance(actual, (tuple, list)) or len(actual) != 3:
        raise AssertionError(
            f"{name} should return three things, (S_i, z_i, output); "
            f"got {type(actual).__name__}"
            + (f" of length {len(actual)}" if isinstance(actual, (tuple, list)) else "")
        )
    return actual


@checked_plainly
def check_recurrent_step(actual, s, z, q_i, k_i, v_i, feature_map, name="recurrent_step",
                         atol=1e-4) -> None:
    """Fail unless ``actual`` is (S_i, z_i, V′_i) with S_i = S_{i−1} + φ(k_i)v_iᵀ (r, D_v),
    z_i = z_{i−1} + φ(k_i) (r,) and V′_i = φ(q_i)ᵀS_i / φ(q_i)ᵀz_i (D_v,)."""
    s, z, q_i, k_i, v_i = _float64((s, "S"), (z, "z"), (q_i, "q_i"), (k_i, "k_i"), (v_i, "v_i"))
    s_got, z_got, out_got = _three(actual, name)
    s_i, z_i, out = _step(s, z, q_i, k_i, v_i, feature_map)
    phi_k = _features(feature_map, k_i)
    s_got_t = as_tensor(s_got, f"{name}: S_i")
    if s_got_t.shape == s_i.shape[::-1] and s_i.shape[0] != s_i.shape[1]:
        raise AssertionError(f"{name}: S_i is not right: {LINEAR_MISTAKES['outer_transposed']}.")
    same_size = k_i.shape == phi_k.shape  # r = D: the raw key fits the state too
    s_mistakes = {LINEAR_MISTAKES["not_accumulated_s"]: torch.outer(phi_k, v_i)}
    z_mistakes = {LINEAR_MISTAKES["not_accumulated_z"]: phi_k}
    if same_size:
        s_mistakes[LINEAR_MISTAKES["state_no_feature_map"]] = s + torch.outer(k_i, v_i)
        z_mistakes[LINEAR_MISTAKES["state_no_feature_map"]] = z + k_i
    if s.shape[0] == s.shape[1]:
        s_mistakes[LINEAR_MISTAKES["outer_transposed"]] = s + torch.outer(v_i, phi_k)
    check_close(s_got_t, s_i, f"{name}: S_i", atol=atol, mistakes=s_mistakes, reveal=False)
    check_close(z_got, z_i, f"{name}: z_i", atol=atol, mistakes=z_mistakes, reveal=False)
    out_mistakes = {
        LINEAR_MISTAKES["old_state"]: _step(s, z, q_i, k_i, v_i, feature_map, old=True)[2],
        LINEAR_MISTAKES["no_normaliser"]: _features(feature_map, q_i) @ s_i,
    }
    if same_size:
        out_mistakes[LINEAR_MISTAKES["output_no_feature_map"]] = _step(
            s, z, q_i, k_i, v_i, feature_map, output_phi=False)[2]
    check_close(out_got, out, f"{name}: output", atol=atol, mistakes=out_mistakes, reveal=False)


def _separation(queries, keys, centre=None, spread=torch.amax, nearest=torch.amin, power=1.0):
    """max_j ‖k_j − k*‖ / min_i ‖q_i − k*‖ (k* the keys' mean), or a mistake's variant of it."""
    centre = keys.mean(dim=0) if centre is None else centre
    radius = ((keys - centre) ** 2).sum(dim=-1) ** (power / 2)
    distance = ((queries - centre) ** 2).sum(dim=-1) ** (power / 2)
    return spread(radius) / nearest(distance)


@checked_plainly
def check_separation(actual, queries, keys, name="separation", rtol=1e-5) -> None:
    """Fail unless ``actual`` is the smallest δ with ‖k_j − k*‖ ≤ δ ‖q_i − k*‖ for every
    query i and key j, k* the mean of the keys. One number: a float or a 0-d (or 1-entry)
    tensor or array, within a relative tolerance ``rtol`` (float32 answers pass)."""
    queries, keys = _float64((queries, "queries"), (keys, "keys"))
    got = as_tensor(actual, name)
    if got.numel() != 1:
        raise AssertionError(f"{name} should be one number; got shape {tuple(got.shape)}")
    mistakes = {
        LINEAR_MISTAKES["separation_centre"]:
            _separation(queries, keys, centre=queries.mean(dim=0)),
        LINEAR_MISTAKES["separation_inverted"]: 1 / _separation(queries, keys),
        LINEAR_MISTAKES["separation_means"]: _separation(queries, keys, spread=torch.mean,
                                                                nearest=torch.mean),
        LINEAR_MISTAKES["separation_farthest_query"]:
            _separation(queries, keys, nearest=torch.amax),
        LINEAR_MISTAKES["separation_squared"]: _separation(queries, keys, power=2.0),
    }
    expected = _separation(queries, keys)
    check_close(got.reshape(()), expected, name, atol=rtol * max(1.0, expected.item()),
                mistakes=mistakes, reveal=False)


@checked_plainly
def check_causal_linear_attention(actual, q, k, v, feature_map, name="causal_linear_attention",
                                  atol=1e-4) -> None:
    """Fail unless ``actual`` is causal linear attention, the masked quadratic form
    V′_i = Σ_{j ≤ i} φ(Q_i)ᵀφ(K_j) V_j / Σ_{j ≤ i} φ(Q_i)ᵀφ(K_j), shape (..., N, D_v).

    q, k (..., N, D), v (..., N, D_v); ``feature_map`` maps (..., D) → (..., r), > 0.
    """
    q, k, v = _float64((q, "q"), (k, "k"), (v, "v"))
    phi_q, phi_k = _features(feature_map, q), _features(feature_map, k)
    mistakes = {
        LINEAR_MISTAKES["not_causal"]: _quadratic(phi_q, phi_k, v),
        LINEAR_MISTAKES["strictly_causal"]: _quadratic(phi_q, phi_k, v, keep="strict"),
        LINEAR_MISTAKES["anti_causal"]: _quadratic(phi_q, phi_k, v, keep="future"),
        LINEAR_MISTAKES["normaliser_not_causal"]:
            _quadratic(phi_q, phi_k, v, keep="past", keep_normaliser="all"),
        LINEAR_MISTAKES["no_normaliser"]: _quadratic(phi_q, phi_k, v, keep="past",
                                                     normalise=False),
        LINEAR_MISTAKES["no_feature_map"]: _quadratic(q, k, v, keep="past"),
        LINEAR_MISTAKES["causal_softmax"]: _softmax_attention(q, k, v, causal=True),
    }
    expected = _quadratic(phi_q, phi_k, v, keep="past")
    check_close(actual, expected, name, atol=atol, mistakes=mistakes, reveal=False)

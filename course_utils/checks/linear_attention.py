"""Diagnostic checks for notebook 07: kernel attention, the recurrent step, causal linear
attention and the separation of a block of keys from a block of queries.

The expected outputs come from PyTorch's ``scaled_dot_product_attention``, which the
exercises refuse: with all-zero queries and keys its weights are softmax(M) for the mask M
it is given, and softmax(log s) = s / Σ s, so the mask log φ(Q)φ(K)ᵀ (−∞ where a key is
masked) makes it the weighted average of the values that attention with the similarity
φ(q)ᵀφ(k) is, in float64 with its N × N matrix. A mistake is named by that call on other
similarities (swapped, masked otherwise, rescaled inputs) or by a transformation of its
output. The recurrent step's output is the last row of that call on a short sequence whose
first r keys stand for the state. The separation δ is checked by its two properties: every
pair of a query and a key satisfies the inequality with it, and some pair does not with a
slightly smaller δ.
"""

import torch
import torch.nn.functional as F

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
    "not_accumulated_s": "your S_i holds token i's contribution alone: the earlier tokens' "
    "contributions are lost (compare which keys the state before and after token i covers)",
    "not_accumulated_z": "your z_i holds token i's contribution alone: the earlier tokens' "
    "are lost (compare which keys the state before and after token i covers)",
    "outer_transposed": "what you add to S is transposed: compare its shape with that of S, "
    "(r, D_v)",
    "state_no_feature_map": "your state took in the raw key k_i: look again at how a key "
    "enters the two shared sums of exercise 1",
    "old_state": "your output leaves token i's own key out: read the causal formula's sums "
    "again, which keys does query i see?",
    "output_no_feature_map": "you multiplied the state by q_i itself: the query enters the "
    "kernel through its features, as the key does",
    "separation_breaks": "with your δ some query and key break ‖k_j − k*‖ ≤ δ ‖q_i − k*‖",
    "separation_not_smallest": "every pair holds with your δ, but also with a smaller one",
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


def _broadcast(*tensors: torch.Tensor) -> list[torch.Tensor]:
    """The tensors with their leading (batch, head) axes broadcast to one shape."""
    lead = torch.broadcast_shapes(*(t.shape[:-2] for t in tensors))
    return [t.expand(*lead, *t.shape[-2:]) for t in tensors]


def _softmax_attention(q, k, v, causal=False) -> torch.Tensor:
    """softmax(q kᵀ / √D) v, causal or not: PyTorch's own."""
    return F.scaled_dot_product_attention(*_broadcast(q, k, v), is_causal=causal)


def _attend(weights: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Row i: Σ_j w_ij v_j / Σ_j w_ij, for weights w ≥ 0 of shape (..., N_q, N_k), by
    ``scaled_dot_product_attention`` with zero queries and keys and the mask log w (a zero
    weight is a masked key); a row of zero weights is 0/0 (NaN), as the formula gives."""
    weights, v = _broadcast(weights, v)
    zeros = weights.new_zeros(*weights.shape[:-1], 1)
    keys = weights.new_zeros(*weights.shape[:-2], weights.shape[-1], 1)
    out = F.scaled_dot_product_attention(zeros, keys, v, attn_mask=weights.log())
    return out.masked_fill(weights.sum(-1, keepdim=True) == 0, float("nan"))


def _signed(weights: torch.Tensor, allowed: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """The same average for weights of any sign on the keys ``allowed`` (a boolean matrix):
    each row shifted by c ≥ 0 to be positive, averaged by ``_attend``, shifted back, since
    Σ_j w_ij v_j = Σ_j (w_ij + c) v_j − c Σ_j v_j over the allowed keys, and so for Σ_j w_ij."""
    allowed = allowed.to(weights)
    shift = (1 - weights.amin(dim=-1, keepdim=True)).clamp(min=0)
    shifted = (weights + shift) * allowed
    total = shifted.sum(-1, keepdim=True)
    numerator = _attend(shifted, v) * total - shift * (allowed @ v)
    return numerator / (total - shift * allowed.sum(-1, keepdim=True))


def _keys(n_q: int, n_k: int, keep: str) -> torch.Tensor:
    """Boolean (n_q, n_k): the keys each query sees, all, the past j ≤ i, the strict past
    j < i or the future j ≥ i."""
    past = torch.ones(n_q, n_k, dtype=torch.bool).tril()
    return {"all": torch.ones_like(past), "past": past, "strict": past.tril(-1),
            "future": torch.ones_like(past).triu()}[keep]


@checked_plainly
def check_kernel_attention(actual, q, k, v, feature_map, name="kernel_attention",
                           atol=1e-4) -> None:
    """Fail unless ``actual`` is attention with the similarity φ(q)ᵀφ(k): row i the average
    of the values weighted by φ(Q_i)ᵀφ(K_j) over every key j (see the module docstring).

    q (..., N_q, D), k (..., N_k, D), v (..., N_k, D_v); every query sees every key.
    ``feature_map`` maps tensors (..., D) → (..., r) with values > 0.
    """
    q, k, v = _float64((q, "q"), (k, "k"), (v, "v"))
    phi_q, phi_k = _features(feature_map, q), _features(feature_map, k)
    sim = phi_q @ phi_k.transpose(-2, -1)
    expected = _attend(sim, v)
    row_sums = sim.sum(-1, keepdim=True)
    scale = q.shape[-1] ** -0.25
    scaled = _features(feature_map, q * scale) @ _features(feature_map, k * scale).transpose(-2, -1)
    n_q, n_k = sim.shape[-2:]
    mistakes = {
        LINEAR_MISTAKES["no_normaliser"]: expected * row_sums,
        LINEAR_MISTAKES["no_feature_map"]: _signed(q @ k.transpose(-2, -1),
                                                   _keys(n_q, n_k, "all"), v),
        LINEAR_MISTAKES["softmax"]: _softmax_attention(q, k, v),
        LINEAR_MISTAKES["scaled"]: _attend(scaled, v),
        LINEAR_MISTAKES["global_normaliser"]:
            expected * row_sums / sim.sum((-2, -1), keepdim=True),
    }
    if n_q == n_k:
        mistakes[LINEAR_MISTAKES["q_k_swapped"]] = _attend(phi_k @ phi_q.transpose(-2, -1), v)
        mistakes[LINEAR_MISTAKES["causal_kernel"]] = _attend(sim * _keys(n_q, n_k, "past"), v)
    check_close(actual, expected, name, atol=atol, mistakes=mistakes, reveal=False)


def _three(actual, name):
    if not isinstance(actual, (tuple, list)) or len(actual) != 3:
        raise AssertionError(
            f"{name} should return three things, (S_i, z_i, output); "
            f"got {type(actual).__name__}"
            + (f" of length {len(actual)}" if isinstance(actual, (tuple, list)) else "")
        )
    return actual


def _state_as_keys(query_features, s, z, phi_k, v_i):
    """A sequence whose last row of causal attention is the step's output: r keys stand for
    the state (key m with features z_m e_m and value S_m / z_m, a row of S that is 0 where
    z_m = 0, as a state a sequence leaves), then token i's own key. Its weights as seen
    from each row of ``query_features`` (n, r): (n, r + 1), and its values (r + 1, D_v)."""
    weights = torch.cat([query_features * z, (query_features @ phi_k)[:, None]], dim=-1)
    past = torch.where(z[:, None] > 0, s / z[:, None], torch.zeros_like(s))
    return weights, torch.cat([past, v_i[None, :]])


def _state_after(s, z, key_features, v_i):
    """The state a sequence leaves once token i is added, read back from the oracle: row m of
    the state is what a query with features e_m gathers, its attention output times its
    total weight, and entry m of z is that total weight. ``key_features`` may have any sign
    (the slips that skip the feature map): ``_signed`` averages them."""
    weights, values = _state_as_keys(torch.eye(len(z), dtype=z.dtype), s, z, key_features, v_i)
    totals = weights.sum(-1, keepdim=True)
    every_key = torch.ones_like(weights, dtype=torch.bool)
    return _signed(weights, every_key, values) * totals, totals[:, 0]


@checked_plainly
def check_recurrent_step(actual, s, z, q_i, k_i, v_i, feature_map, name="recurrent_step",
                         atol=1e-4) -> None:
    """Fail unless ``actual`` is (S_i, z_i, V′_i): the state (r, D_v) and (r,) after token i,
    from the state before it, and token i's output (D_v,). The state and the output are
    those of a sequence that leaves the given state and then reads token i, from the oracle
    (see ``_state_as_keys`` and ``_state_after``)."""
    s, z, q_i, k_i, v_i = _float64((s, "S"), (z, "z"), (q_i, "q_i"), (k_i, "k_i"), (v_i, "v_i"))
    s_got, z_got, out_got = _three(actual, name)
    phi_k, phi_q = _features(feature_map, k_i), _features(feature_map, q_i)
    s_i, z_i = _state_after(s, z, phi_k, v_i)
    s_got_t = as_tensor(s_got, f"{name}: S_i")
    if s_got_t.shape == s_i.shape[::-1] and s_i.shape[0] != s_i.shape[1]:
        raise AssertionError(f"{name}: S_i is not right: {LINEAR_MISTAKES['outer_transposed']}.")
    same_size = k_i.shape == phi_k.shape  # r = D: the raw key fits the state too
    s_mistakes = {LINEAR_MISTAKES["not_accumulated_s"]: s_i - s}
    z_mistakes = {LINEAR_MISTAKES["not_accumulated_z"]: z_i - z}
    if same_size:
        raw_s, raw_z = _state_after(s, z, k_i, v_i)
        s_mistakes[LINEAR_MISTAKES["state_no_feature_map"]] = raw_s
        z_mistakes[LINEAR_MISTAKES["state_no_feature_map"]] = raw_z
    if s.shape[0] == s.shape[1]:
        s_mistakes[LINEAR_MISTAKES["outer_transposed"]] = s + (s_i - s).T
    check_close(s_got_t, s_i, f"{name}: S_i", atol=atol, mistakes=s_mistakes, reveal=False)
    check_close(z_got, z_i, f"{name}: z_i", atol=atol, mistakes=z_mistakes, reveal=False)
    weights, values = _state_as_keys(phi_q[None, :], s, z, phi_k, v_i)
    out = _attend(weights, values)[0]
    out_mistakes = {
        LINEAR_MISTAKES["old_state"]: _attend(weights[:, :-1], values[:-1])[0],
        LINEAR_MISTAKES["no_normaliser"]: out * weights.sum(),
    }
    if same_size:
        raw_weights, _ = _state_as_keys(q_i[None, :], s, z, phi_k, v_i)
        out_mistakes[LINEAR_MISTAKES["output_no_feature_map"]] = _signed(
            raw_weights, torch.ones_like(raw_weights, dtype=torch.bool), values)[0]
    check_close(out_got, out, f"{name}: output", atol=atol, mistakes=out_mistakes, reveal=False)


def _tight(delta: float, spread: torch.Tensor, distance: torch.Tensor, tol: float) -> bool:
    """Whether ``delta`` is, within ``tol``, the smallest δ with spread_j ≤ δ · distance_i for
    every i and j: every pair holds at δ + tol, and some pair fails at δ − tol."""
    bound = distance[:, None]
    holds = bool((spread[None, :] <= (delta + tol) * bound).all())
    return holds and bool((spread[None, :] > (delta - tol) * bound).any())


@checked_plainly
def check_separation(actual, queries, keys, name="separation", rtol=1e-5) -> None:
    """Fail unless ``actual`` is the smallest δ with ‖k_j − k*‖ ≤ δ ‖q_i − k*‖ for every
    query i and key j, k* the mean of the keys, checked by those two properties. One
    number: a float or a 0-d (or 1-entry) tensor or array, within a relative tolerance
    ``rtol`` (float32 answers pass). A failure names the property that fails, never the
    pair that decides δ."""
    queries, keys = _float64((queries, "queries"), (keys, "keys"))
    got = as_tensor(actual, name)
    if got.numel() != 1:
        raise AssertionError(f"{name} should be one number; got shape {tuple(got.shape)}")
    delta = got.item()
    tol = rtol * max(1.0, abs(delta))
    centre = keys.mean(dim=0)
    spread, distance = (keys - centre).norm(dim=-1), (queries - centre).norm(dim=-1)
    if _tight(delta, spread, distance, tol):
        return
    holds = bool((spread[None, :] <= (delta + tol) * distance[:, None]).all())
    key = "separation_not_smallest" if holds else "separation_breaks"
    raise AssertionError(f"{name} is not right: {LINEAR_MISTAKES[key]}.")


@checked_plainly
def check_causal_linear_attention(actual, q, k, v, feature_map, name="causal_linear_attention",
                                  atol=1e-4) -> None:
    """Fail unless ``actual`` is causal attention with the similarity φ(q)ᵀφ(k): row i the
    average of the values V_j, j ≤ i, weighted by φ(Q_i)ᵀφ(K_j), shape (..., N, D_v).

    q, k (..., N, D), v (..., N, D_v); ``feature_map`` maps (..., D) → (..., r), > 0.
    """
    q, k, v = _float64((q, "q"), (k, "k"), (v, "v"))
    phi_q, phi_k = _features(feature_map, q), _features(feature_map, k)
    sim = phi_q @ phi_k.transpose(-2, -1)
    n_q, n_k = sim.shape[-2:]
    past = sim * _keys(n_q, n_k, "past")
    expected = _attend(past, v)
    mistakes = {
        LINEAR_MISTAKES["not_causal"]: _attend(sim, v),
        LINEAR_MISTAKES["strictly_causal"]: _attend(sim * _keys(n_q, n_k, "strict"), v),
        LINEAR_MISTAKES["anti_causal"]: _attend(sim * _keys(n_q, n_k, "future"), v),
        LINEAR_MISTAKES["normaliser_not_causal"]:
            expected * past.sum(-1, keepdim=True) / sim.sum(-1, keepdim=True),
        LINEAR_MISTAKES["no_normaliser"]: expected * past.sum(-1, keepdim=True),
        LINEAR_MISTAKES["no_feature_map"]: _signed(q @ k.transpose(-2, -1),
                                                   _keys(n_q, n_k, "past"), v),
        LINEAR_MISTAKES["causal_softmax"]: _softmax_attention(q, k, v, causal=True),
    }
    check_close(actual, expected, name, atol=atol, mistakes=mistakes, reveal=False)

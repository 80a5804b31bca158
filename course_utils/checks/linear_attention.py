"""Diagnostic checks for notebook 07: kernel attention, the recurrent step, causal linear
attention and the separation of a block of keys from a block of queries.

The expected outputs come from PyTorch's ``scaled_dot_product_attention``, which the
exercises refuse: with all-zero queries and keys its weights are softmax(M) for the mask M
it is given, and softmax(log s) = s / Σ s, so the mask log φ(Q)φ(K)ᵀ (−∞ where a key is
masked) makes it the weighted average of the values that attention with the similarity
φ(q)ᵀφ(k) is, in float64 with its N × N matrix. A mistake is named by that call on other
similarities (swapped, masked otherwise, rescaled inputs) or by a transformation of its
output. The recurrent step runs token after token over a short sequence; its outputs are
that call's rows, with the weights of the decayed causal form, on the sequence whose first r
keys stand for the state it started from, and its states the sums read back from it. The
separation δ is checked by its two properties: every pair of a query and a key satisfies
the inequality with it, and some pair does not with a slightly smaller δ.
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
    "outer_transposed": "the term your step adds to S is transposed: its rows run over what "
    "the state's columns run over (look at how you form that term)",
    "no_decay": "your S_i does not fade: it is the state of γ = 1 whatever γ is; compare "
    "the definition's sums at token i and at token i − 1, term by term",
    "decay_z_only": "your S_i does not fade, though your z_i does: S_i is the state of γ = 1 "
    "whatever γ is (look at your update of S)",
    "decay_s_only": "your z_i does not fade, though your S_i does: z_i is the state of γ = 1 "
    "whatever γ is (look at your update of z)",
    "decay_after_adding": "your S_i and z_i fade token i's own term too: which tokens' "
    "weights does one step of decay change, and what is token i's own weight?",
    "decay_power": "your old tokens fade faster at each step (a decay that depends on i): "
    "how much does the gap i − j grow from one token to the next?",
    "state_no_feature_map": "your state took in the raw key k_i: look again at how a key "
    "enters the two shared sums of exercise 1",
    "old_state": "your outputs lag one token behind: from the empty state the first one is "
    "0/0, and each later one misses its own token's value (which state does it read?)",
    "output_no_feature_map": "your outputs are the state read with the raw query q_i: look "
    "at what multiplies the state in the numerator and the normaliser of the definition",
    "separation_breaks": "with your δ some query and key break ‖k_j − k*‖ ≤ δ ‖q_i − k*‖",
    "separation_not_smallest": "every pair holds with your δ, but also with a smaller one",
    "not_causal": "you summed over ALL keys: causal attention keeps j ≤ i only",
    "strictly_causal": "your first row is 0/0 and no row weighs its own value: compare row i "
    "with the formula's sums, which positions do they run over?",
    "chunk_no_state": "your rows see only the positions of their own chunk: from the second "
    "chunk on, what came before the chunk is missing",
    "chunk_no_mask": "your rows see the later positions of their own chunk: inside a chunk "
    "the future must stay out too",
    "chunk_state_too_soon": "your rows see the later positions of their own chunk and count "
    "its earlier ones twice: which chunks has the state taken in when a chunk's rows are "
    "computed?",
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


def _steps(actual, name: str, n: int, r: int, d_v: int) -> list:
    """The n steps the run returned, each three things with a state of the given shapes."""
    steps = actual if isinstance(actual, list) else [actual]
    for t, step in enumerate(steps, 1):
        if not isinstance(step, tuple | list) or len(step) != 3:
            raise AssertionError(
                f"{name}: step {t} should return three things, (S_i, z_i, output); got "
                f"{type(step).__name__}"
                + (f" of length {len(step)}" if isinstance(step, tuple | list) else ""))
        got = tuple(as_tensor(step[0], f"{name}: S_i").shape)
        if got == (d_v, r) != (r, d_v):
            raise AssertionError(f"{name}: S_i is not right: "
                                 f"{LINEAR_MISTAKES['outer_transposed']}.")
        if got != (r, d_v) or tuple(as_tensor(step[1], f"{name}: z_i").shape) != (r,):
            raise AssertionError(f"{name}: step {t} should return S_i of shape {(r, d_v)} "
                                 f"and z_i of shape {(r,)}, the shapes of the state it got")
    if len(steps) != n:
        raise AssertionError(f"{name}: the run over {n} tokens stopped after {len(steps)}")
    return steps


def _decay(n: int, r: int, gamma: float, dtype, keep: str = "past") -> torch.Tensor:
    """(n, r + n): entry (i, j) the weight the definition gives key j seen from token i,
    γ^(p_i − p_j) for p_j ≤ p_i, else 0; the r keys that stand for the state come one step
    before token 1 (p = 0), the tokens at p = 1 ... n. ``keep``: "strict" (p_j < p_i),
    "self" (p_j = p_i), "tokens" (the tokens' keys only), "power" (the exponent
    (p_i² + p_i − p_j² − p_j) / 2 of a decay that grows with the step)."""
    p_q = torch.arange(1, n + 1, dtype=dtype)
    p_k = torch.cat([torch.zeros(r, dtype=dtype), p_q])
    gap = p_q[:, None] - p_k[None, :]
    exponent = (p_q * (p_q + 1))[:, None] / 2 - (p_k * (p_k + 1))[None, :] / 2 \
        if keep == "power" else gap
    seen = {"strict": gap > 0, "self": gap == 0, "tokens": (gap >= 0) & (p_k > 0)[None, :]}
    return torch.where(seen.get(keep, gap >= 0), torch.pow(gamma, exponent), 0.0)


def _state_as_keys(s, z, key_features, v):
    """The keys of a sequence that leaves the state ``s``, ``z`` and then reads the tokens:
    r keys for the state (key m with features z_m e_m and value S_m / z_m, a row of S that
    is 0 where z_m = 0, as a state a sequence leaves), then the tokens' own. Their features
    (r + n, r) and values (r + n, D_v)."""
    past = torch.where(z[:, None] > 0, s / z.clamp(min=1e-300)[:, None], torch.zeros_like(s))
    return torch.cat([torch.diag(z), key_features]), torch.cat([past, v])


def _states(decay, features, values):
    """The state after each token, read back from the oracle: row m of S_i is what a query
    with features e_m gathers at token i, its average times its total weight, and entry m
    of z_i is that total weight: (n, r, D_v) and (n, r). ``features`` may have any sign
    (the slips that skip the feature map): ``_signed`` averages them."""
    weights = decay[:, None, :] * features.T[None, :, :]
    totals = weights.sum(-1, keepdim=True)
    seen = (decay > 0)[:, None, :].expand_as(weights)
    return _signed(weights, seen, values) * totals, totals[..., 0]


@checked_plainly
def check_recurrent_step(actual, s, z, q, k, v, feature_map, gamma, name="recurrent_step",
                         atol=1e-4) -> None:
    """Fail unless ``actual``, what ``recurrent_step`` returned token after token over the
    rows of q, k (n, D) and v (n, D_v) from the state S (r, D_v), z (r,) (the record's
    ``run``), is each token's (S_i, z_i, V′_i) in the causal form whose key j weighs
    γ^(i − j) φ(q_i)ᵀφ(k_j) seen from token i: every output is the masked form's (by
    ``_attend``) on a sequence whose first r keys stand for the state (``_state_as_keys``),
    and every state the sums read back from it (``_states``)."""
    s, z, q, k, v = _float64((s, "S"), (z, "z"), (q, "q"), (k, "k"), (v, "v"))
    (n, d_v), r = v.shape, len(z)
    steps = _steps(actual, name, n, r, d_v)
    got = [torch.stack([as_tensor(step[part], name) for step in steps]) for part in range(3)]
    phi_q, phi_k = _features(feature_map, q), _features(feature_map, k)
    features, values = _state_as_keys(s, z, phi_k, v)
    decay = _decay(n, r, gamma, s.dtype)
    s_i, z_i = _states(decay, features, values)
    flat_s, flat_z = _states(_decay(n, r, 1.0, s.dtype), features, values)
    late = torch.cat([torch.ones(r, dtype=s.dtype), torch.full((n,), gamma, dtype=s.dtype)])
    late_s, late_z = _states(decay * late, features, values)  # each token's own term faded too
    z_decays = torch.allclose(got[1], z_i, rtol=0.0, atol=atol)
    s_mistakes = {
        LINEAR_MISTAKES["decay_z_only" if z_decays else "no_decay"]: flat_s,
        LINEAR_MISTAKES["decay_after_adding"]: late_s,
        LINEAR_MISTAKES["decay_power"]: _states(_decay(n, r, gamma, s.dtype, "power"),
                                                features, values)[0],
        LINEAR_MISTAKES["not_accumulated_s"]: _states(_decay(n, r, gamma, s.dtype, "self"),
                                                      features, values)[0],
    }
    z_mistakes = {
        LINEAR_MISTAKES["decay_s_only"]: flat_z,
        LINEAR_MISTAKES["decay_after_adding"]: late_z,
        LINEAR_MISTAKES["not_accumulated_z"]: _states(_decay(n, r, gamma, s.dtype, "self"),
                                                      features, values)[1],
    }
    if k.shape == phi_k.shape:  # r = D: the raw keys fit the state too
        raw_s, raw_z = _states(decay, _state_as_keys(s, z, k, v)[0], values)
        s_mistakes[LINEAR_MISTAKES["state_no_feature_map"]] = raw_s
        z_mistakes[LINEAR_MISTAKES["state_no_feature_map"]] = raw_z
    if r == d_v:
        new = _states(_decay(n, r, gamma, s.dtype, "tokens"), features, values)[0]
        s_mistakes[LINEAR_MISTAKES["outer_transposed"]] = s_i - new + new.transpose(-2, -1)
    check_close(got[0], s_i, f"{name}: S_i", atol=atol, mistakes=s_mistakes, reveal=False)
    check_close(got[1], z_i, f"{name}: z_i", atol=atol, mistakes=z_mistakes, reveal=False)
    weights = decay * (phi_q @ features.T)
    out = _attend(weights, values)
    out_mistakes = {
        LINEAR_MISTAKES["old_state"]: _attend(_decay(n, r, gamma, s.dtype, "strict")
                                              * (phi_q @ features.T), values),
        LINEAR_MISTAKES["no_normaliser"]: out * weights.sum(-1, keepdim=True),
    }
    if q.shape == phi_q.shape:
        out_mistakes[LINEAR_MISTAKES["output_no_feature_map"]] = _signed(
            decay * (q @ features.T), decay > 0, values)
    check_close(got[2], out, f"{name}: output", atol=atol, mistakes=out_mistakes,
                reveal=False)


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
def check_causal_linear_attention(actual, q, k, v, feature_map, chunk_size,
                                  name="causal_linear_attention", atol=1e-4) -> None:
    """Fail unless ``actual`` is causal attention with the similarity φ(q)ᵀφ(k): row i the
    average of the values V_j, j ≤ i, weighted by φ(Q_i)ᵀφ(K_j), shape (..., N, D_v), whatever
    the chunk size C (which only names the mistakes of a chunked form).

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
    if n_q > chunk_size:  # a chunk's mistakes: the keys each row sees, by chunk
        chunk = torch.arange(n_q) // chunk_size
        past, same = _keys(n_q, n_k, "past"), chunk[:, None] == chunk[None, :]
        earlier = chunk[:, None] > chunk[None, :]
        mistakes[LINEAR_MISTAKES["chunk_no_state"]] = _attend(sim * (past & same), v)
        mistakes[LINEAR_MISTAKES["chunk_no_mask"]] = _attend(sim * (earlier | same), v)
        mistakes[LINEAR_MISTAKES["chunk_state_too_soon"]] = _attend(
            sim * ((earlier | same).double() + (past & same).double()), v)
    check_close(actual, expected, name, atol=atol, mistakes=mistakes, reveal=False)

"""Each diagnostic of checks/linear_attention.py: its mistake names it, a right answer none."""

import math
import re

import pytest
import torch
import torch.nn.functional as F

from course_utils import checks
from course_utils.checks.linear_attention import LINEAR_MISTAKES


def raises(key):
    return pytest.raises(AssertionError, match=re.escape(LINEAR_MISTAKES[key]))


def phi(x):
    return F.elu(x) + 1


G = torch.Generator().manual_seed(0)
Q = torch.randn(2, 6, 4, generator=G, dtype=torch.float64)
K = torch.randn(2, 6, 4, generator=G, dtype=torch.float64)
V = torch.randn(2, 6, 3, generator=G, dtype=torch.float64)
K8 = torch.randn(8, 4, generator=G, dtype=torch.float64)
V8 = torch.randn(8, 3, generator=G, dtype=torch.float64)


def attend(q, k, v, keep="all", normaliser_keep=None, normalise=True, fm=phi):
    """The quadratic form written with a loop over queries (independent of the checks)."""
    rows = []
    j = torch.arange(k.shape[-2])
    for i in range(q.shape[-2]):
        sim = (fm(q[..., i, :])[..., None, :] * fm(k)).sum(-1)  # (..., N_k)
        allowed = {"all": j >= 0, "past": j <= i, "strict": j < i, "future": j >= i}
        num = ((sim * allowed[keep])[..., None] * v).sum(-2)
        den = (sim * allowed[normaliser_keep or keep]).sum(-1, keepdim=True)
        rows.append(num / den if normalise else num)
    return torch.stack(rows, dim=-2)


def softmax_attention(q, k, v, causal=False):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        s = s.masked_fill(~torch.ones(s.shape[-2:], dtype=torch.bool).tril(), float("-inf"))
    return torch.softmax(s, -1) @ v


# -- kernel attention ------------------------------------------------------------------------


def test_right_kernel_attention_passes_in_float32_lists_numpy_and_cross_attention():
    right = attend(Q, K, V)
    checks.check_kernel_attention(right, Q, K, V, phi)
    checks.check_kernel_attention(right.float(), Q.float(), K.float(), V.float(), phi)
    checks.check_kernel_attention(right.tolist(), Q, K, V, phi)
    checks.check_kernel_attention(right.numpy(), Q, K, V, phi)
    checks.check_kernel_attention(attend(Q[0], K8, V8), Q[0], K8, V8, phi)


@pytest.mark.parametrize("wrong, key", [
    (attend(Q, K, V, normalise=False), "no_normaliser"),
    (attend(Q, K, V, fm=lambda x: x), "no_feature_map"),
    (softmax_attention(Q, K, V), "softmax"),
    (attend(Q / 2 ** 0.5, K / 2 ** 0.5, V), "scaled"),
    (attend(K, Q, V), "q_k_swapped"),
    (attend(Q, K, V, keep="past"), "causal_kernel"),
])
def test_kernel_attention_mistakes_are_named(wrong, key):
    with raises(key):
        checks.check_kernel_attention(wrong, Q, K, V, phi)


def test_a_global_normaliser_is_named():
    sim = phi(Q) @ phi(K).transpose(-2, -1)
    with raises("global_normaliser"):
        checks.check_kernel_attention(sim @ V / sim.sum((-2, -1), keepdim=True), Q, K, V, phi)


def test_a_plain_wrong_kernel_attention_shows_what_it_got_not_what_is_expected():
    with pytest.raises(AssertionError, match="got") as failure:
        checks.check_kernel_attention(attend(Q, K, V) + 0.1, Q, K, V, phi)
    assert "expected" not in str(failure.value)


# -- one step of the recurrence ----------------------------------------------------------------

S0 = torch.rand(4, 3, generator=G, dtype=torch.float64)
Z0 = torch.rand(4, generator=G, dtype=torch.float64) + 0.5
Q_I, K_I = torch.randn(2, 4, generator=G, dtype=torch.float64)
V_I = torch.randn(3, generator=G, dtype=torch.float64)


def step(s=S0, z=Z0, q_i=Q_I, k_i=K_I, v_i=V_I):
    s_i = s + phi(k_i)[:, None] * v_i[None, :]
    z_i = z + phi(k_i)
    return s_i, z_i, phi(q_i) @ s_i / (phi(q_i) @ z_i)


def test_a_right_step_passes_as_tuple_list_numpy_float32():
    s_i, z_i, out = step()
    checks.check_recurrent_step((s_i, z_i, out), S0, Z0, Q_I, K_I, V_I, phi)
    checks.check_recurrent_step([s_i.numpy(), z_i.tolist(), out.float()], S0, Z0, Q_I, K_I,
                                V_I, phi)
    checks.check_recurrent_step(step(*(t.float() for t in (S0, Z0, Q_I, K_I, V_I))),
                                S0.float(), Z0.float(), Q_I.float(), K_I.float(),
                                V_I.float(), phi)


def test_a_step_that_does_not_return_three_things_is_told():
    with pytest.raises(AssertionError, match="three things"):
        checks.check_recurrent_step(step()[:2], S0, Z0, Q_I, K_I, V_I, phi)
    with pytest.raises(AssertionError, match="three things"):
        checks.check_recurrent_step(step()[2], S0, Z0, Q_I, K_I, V_I, phi)


def test_step_mistakes_are_named():
    s_i, z_i, out = step()
    outer = torch.outer(phi(K_I), V_I)
    with raises("not_accumulated_s"):
        checks.check_recurrent_step((outer, z_i, out), S0, Z0, Q_I, K_I, V_I, phi)
    with raises("outer_transposed"):
        checks.check_recurrent_step((S0.T + outer.T, z_i, out), S0, Z0, Q_I, K_I, V_I, phi)
    with raises("state_no_feature_map"):
        checks.check_recurrent_step((S0 + torch.outer(K_I, V_I), z_i, out), S0, Z0, Q_I, K_I,
                                    V_I, phi)
    with raises("not_accumulated_z"):
        checks.check_recurrent_step((s_i, phi(K_I), out), S0, Z0, Q_I, K_I, V_I, phi)
    with raises("state_no_feature_map"):
        checks.check_recurrent_step((s_i, Z0 + K_I, out), S0, Z0, Q_I, K_I, V_I, phi)
    old = phi(Q_I) @ S0 / (phi(Q_I) @ Z0)
    with raises("old_state"):
        checks.check_recurrent_step((s_i, z_i, old), S0, Z0, Q_I, K_I, V_I, phi)
    with raises("output_no_feature_map"):
        checks.check_recurrent_step((s_i, z_i, Q_I @ s_i / (Q_I @ z_i)), S0, Z0, Q_I, K_I, V_I,
                                    phi)
    with raises("no_normaliser"):
        checks.check_recurrent_step((s_i, z_i, phi(Q_I) @ s_i), S0, Z0, Q_I, K_I, V_I, phi)


def test_a_transposed_square_state_is_named():
    s0, v_i = torch.rand(4, 4, generator=G, dtype=torch.float64), torch.randn(4, generator=G)
    right = step(s=s0, v_i=v_i.double())
    wrong = s0 + torch.outer(v_i.double(), phi(K_I))
    with raises("outer_transposed"):
        checks.check_recurrent_step((wrong, right[1], right[2]), s0, Z0, Q_I, K_I, v_i, phi)


# -- the band mask -----------------------------------------------------------------------------


def band(n, w, causal, width=None, diagonal=True):
    m = torch.tensor([[abs(i - j) <= (w if width is None else width)
                       and (not causal or (j <= i if diagonal else j < i))
                       for j in range(n)] for i in range(n)])
    return m


@pytest.mark.parametrize("n, w, causal", [(6, 2, False), (6, 2, True), (5, 0, False), (4, 9, True)])
def test_a_right_band_passes_as_bool_int_numpy(n, w, causal):
    right = band(n, w, causal)
    checks.check_band_mask(right, n, w, causal)
    checks.check_band_mask(right.int(), n, w, causal)
    checks.check_band_mask(right.numpy(), n, w, causal)
    checks.check_band_mask(right.tolist(), n, w, causal)


def test_band_mistakes_are_named():
    n, w = 7, 2
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    cases = [
        (~band(n, w, False), False, "band_inverted"),
        (band(n, w, False, width=w - 1), False, "band_strict"),
        (band(n, w, True, width=w - 1), True, "band_strict"),
        (band(n, w, False, width=w + 1), False, "band_width_doubled"),
        (i - j <= w, False, "band_no_abs"),
        (band(n, w, True), False, "band_unwanted_causal"),
        (band(n, w, False), True, "band_no_causal"),
        (band(n, w, True, diagonal=False), True, "band_diagonal"),
        (band(n, w, False) & (i != j), False, "band_diagonal"),
        (band(n, w, False) & (j >= i), True, "band_future"),
    ]
    for wrong, causal, key in cases:
        with raises(key):
            checks.check_band_mask(wrong, n, w, causal)


def test_a_band_of_the_wrong_shape_is_told():
    with pytest.raises(AssertionError, match="shape"):
        checks.check_band_mask(band(5, 1, False), 6, 1, False)


# -- causal linear attention -------------------------------------------------------------------


def test_right_causal_linear_attention_passes_in_float32_lists_numpy():
    right = attend(Q, K, V, keep="past")
    checks.check_causal_linear_attention(right, Q, K, V, phi)
    checks.check_causal_linear_attention(right.float(), Q.float(), K.float(), V.float(), phi)
    checks.check_causal_linear_attention(right.numpy(), Q, K, V, phi)
    checks.check_causal_linear_attention(right.tolist(), Q, K, V, phi)


@pytest.mark.parametrize("wrong, key", [
    (attend(Q, K, V), "not_causal"),
    (attend(Q, K, V, keep="strict"), "strictly_causal"),
    (attend(Q, K, V, keep="future"), "anti_causal"),
    (attend(Q, K, V, keep="past", normaliser_keep="all"), "normaliser_not_causal"),
    (attend(Q, K, V, keep="past", normalise=False), "no_normaliser"),
    (attend(Q, K, V, keep="past", fm=lambda x: x), "no_feature_map"),
    (softmax_attention(Q, K, V, causal=True), "causal_softmax"),
])
def test_causal_linear_attention_mistakes_are_named(wrong, key):
    with raises(key):
        checks.check_causal_linear_attention(wrong, Q, K, V, phi)


def test_a_causal_answer_of_the_wrong_shape_is_told():
    with pytest.raises(AssertionError, match="shape"):
        checks.check_causal_linear_attention(attend(Q, K, V, keep="past")[0], Q, K, V, phi)


def test_a_step_with_more_features_than_inputs_is_checked_without_shape_errors():
    w = torch.randn(4, 6, generator=G, dtype=torch.float64)

    def features(x):
        return torch.exp(x @ w - (x * x).sum(-1, keepdim=True) / 2)

    s0, z0 = torch.rand(6, 3, generator=G, dtype=torch.float64), torch.rand(6, generator=G) + 1
    s_i = s0 + torch.outer(features(K_I), V_I)
    z_i = z0.double() + features(K_I)
    out = features(Q_I) @ s_i / (features(Q_I) @ z_i)
    checks.check_recurrent_step((s_i, z_i, out), s0, z0, Q_I, K_I, V_I, features)
    with raises("old_state"):
        old = features(Q_I) @ s0 / (features(Q_I) @ z0.double())
        checks.check_recurrent_step((s_i, z_i, old), s0, z0, Q_I, K_I, V_I, features)
    with pytest.raises(AssertionError, match="S_i is not right"):
        checks.check_recurrent_step((s_i + 1, z_i, out), s0, z0, Q_I, K_I, V_I, features)


def test_no_message_writes_the_fix_as_code():
    """A message names the mistake and where to look, never the line to write."""
    code = re.compile(r"torch\.|transpose\(|cumsum\(|outer\(")
    assert not [key for key, message in LINEAR_MISTAKES.items() if code.search(message)]

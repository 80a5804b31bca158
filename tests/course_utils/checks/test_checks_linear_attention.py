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


# -- the separation of a block of keys from a block of queries -----------------------------------


def mean_point(points):
    return [sum(column) / len(points) for column in zip(*points, strict=True)]


def delta_by_pairs(queries, keys, centre=None):
    """The definition, pair by pair in plain Python: the least δ that every pair allows."""
    centre = mean_point(keys) if centre is None else centre
    return max(math.dist(k, centre) / math.dist(q, centre) for q in queries for k in keys)


BLOCK_Q = torch.randn(6, 3, generator=G, dtype=torch.float64)
BLOCK_K = torch.randn(5, 3, generator=G, dtype=torch.float64) * 0.5 + 2


def test_a_right_separation_passes_as_float_tensor_array_and_float32():
    right = delta_by_pairs(BLOCK_Q.tolist(), BLOCK_K.tolist())
    checks.check_separation(right, BLOCK_Q, BLOCK_K)
    checks.check_separation(torch.tensor([right]), BLOCK_Q, BLOCK_K)
    checks.check_separation(torch.tensor(right).numpy(), BLOCK_Q, BLOCK_K)
    q32, k32 = BLOCK_Q.float(), BLOCK_K.float()
    centre = k32.mean(0)
    checks.check_separation((k32 - centre).norm(dim=-1).max() / (q32 - centre).norm(dim=-1).min(),
                            q32, k32)


def test_the_line_of_section_5_is_separated_by_a_fifth():
    line = torch.linspace(0, 1, 11, dtype=torch.float64)[:, None]
    checks.check_separation(0.2, line, line + 3)
    with raises("separation_not_smallest"):
        checks.check_separation(5.0, line, line + 3)


def test_separation_mistakes_name_the_property_not_the_pair():
    """Each slip is told which property fails (a pair breaks δ, or a smaller δ holds), never
    which query or key decides δ: the messages would spell the answer."""
    q, k = BLOCK_Q.tolist(), BLOCK_K.tolist()
    key_centre = mean_point(k)

    def distance(x):
        return math.dist(x, key_centre)

    right = delta_by_pairs(q, k)
    cases = [
        (1 / right, "separation_not_smallest"),                                # upside down
        (right**2, "separation_breaks"),                                       # squared (δ < 1)
        (sum(map(distance, k)) / len(k) / (sum(map(distance, q)) / len(q)),    # the means
         "separation_breaks"),
        (max(map(distance, k)) / max(map(distance, q)), "separation_breaks"),  # farthest query
    ]
    assert right < 1
    for wrong, key in cases:
        with raises(key):
            checks.check_separation(wrong, BLOCK_Q, BLOCK_K)
    for text in LINEAR_MISTAKES["separation_breaks"], LINEAR_MISTAKES["separation_not_smallest"]:
        assert not any(word in text for word in ("FARTHEST", "nearest", "mean", "hardest"))


def test_an_unknown_separation_is_not_revealed_and_a_vector_is_told():
    with pytest.raises(AssertionError) as failure:
        checks.check_separation(delta_by_pairs(BLOCK_Q.tolist(), BLOCK_K.tolist()) + 0.1,
                                BLOCK_Q, BLOCK_K)
    assert "expected" not in str(failure.value)
    with pytest.raises(AssertionError, match="one number"):
        checks.check_separation([0.1, 0.2], BLOCK_Q, BLOCK_K)


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

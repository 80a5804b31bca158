"""Each diagnostic of checks/linear_attention.py: its mistake names it, a right answer none."""

import math
import re

import pytest
import torch
import torch.nn.functional as F

from course_utils import checks
from course_utils.checks.linear_attention import LINEAR_MISTAKES
from course_utils.exercises import exercise
from course_utils.exercises.checking import run_answer


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


# -- the recurrent step, run token after token -------------------------------------------------

S0 = torch.rand(4, 3, generator=G, dtype=torch.float64)
Z0 = torch.rand(4, generator=G, dtype=torch.float64) + 0.5
G_STEP = torch.Generator().manual_seed(1)
QS, KS = torch.randn(2, 5, 4, generator=G_STEP, dtype=torch.float64)
VS = torch.randn(5, 3, generator=G_STEP, dtype=torch.float64)
EMPTY = (torch.zeros(4, 3, dtype=torch.float64), torch.zeros(4, dtype=torch.float64))


def decayed(q, k, v, gamma, s, z, fm=phi):
    """Each token's (S_i, z_i, V'_i) from the state (s, z), as the definition's sums written
    with loops (independent of the checks): the state fades from one step before token 1."""
    rows = []
    for i in range(len(v)):
        s_i = gamma ** (i + 1) * s + sum(gamma ** (i - j) * torch.outer(fm(k[j]), v[j])
                                         for j in range(i + 1))
        z_i = gamma ** (i + 1) * z + sum(gamma ** (i - j) * fm(k[j]) for j in range(i + 1))
        rows.append((s_i, z_i, fm(q[i]) @ s_i / (fm(q[i]) @ z_i)))
    return rows


def step(s, z, q_i, k_i, v_i, fm, gamma):
    return decayed(q_i[None], k_i[None], v_i[None], gamma, s, z, fm)[0]


def run(answer, gamma=0.7, state=(S0, Z0), q=QS, k=KS, v=VS, fm=phi):
    """Check what ``answer``, run token after token as the tests run it, returned."""
    steps = run_answer(exercise("recurrent_step"), answer, (*state, q, k, v, fm, gamma), {})
    checks.check_recurrent_step(steps, *state, q, k, v, fm, gamma)


@pytest.mark.parametrize("gamma", [0.7, 1.0])
@pytest.mark.parametrize("state", [EMPTY, (S0, Z0)], ids=["empty", "a state"])
def test_a_right_step_passes_as_tuple_list_numpy_float32(gamma, state):
    run(step, gamma, state)
    run(lambda *a: [part.numpy() if i < 2 else part.tolist() for i, part in enumerate(step(*a))],
        gamma, state)
    thirty_two = [t.float() for t in (*state, QS, KS, VS)]
    run(lambda *a: step(*a), gamma, thirty_two[:2], *thirty_two[2:])


def test_a_step_that_does_not_return_three_things_is_told():
    with pytest.raises(AssertionError, match="three things"):
        run(lambda *a: step(*a)[:2])
    with pytest.raises(AssertionError, match="three things"):
        run(lambda *a: step(*a)[2])


def slip(s=None, z=None, out=None):
    """The right step with its S_i, z_i or output swapped for a slip: a function of the
    step's inputs (S, z, q_i, k_i, v_i, feature_map, gamma) and the right (S_i, z_i, V'_i)."""
    def answer(*inputs):
        right = step(*inputs)
        return tuple(right[n] if part is None else part(*inputs, right)
                     for n, part in enumerate((s, z, out)))
    return answer


def test_decay_mistakes_are_named():
    def flat_s(s, z, q, k, v, fm, g, right):
        return s + torch.outer(fm(k), v)

    def flat_z(s, z, q, k, v, fm, g, right):
        return z + fm(k)
    with raises("no_decay"):
        run(slip(s=flat_s, z=flat_z))
    with raises("decay_z_only"):
        run(slip(s=flat_s))
    with raises("decay_s_only"):
        run(slip(z=flat_z))
    with raises("decay_after_adding"):
        run(slip(s=lambda s, z, q, k, v, fm, g, right: g * flat_s(s, z, q, k, v, fm, g, right),
                 z=lambda s, z, q, k, v, fm, g, right: g * flat_z(s, z, q, k, v, fm, g, right)))
    calls = []

    def power(s, z, q_i, k_i, v_i, fm, gamma):  # step i fades the old state by γ^i
        calls.append(1)
        faded = gamma ** (len(calls) - 1)
        return step(s * faded, z * faded, q_i, k_i, v_i, fm, gamma)
    with raises("decay_power"):
        run(power, state=EMPTY)


def test_step_mistakes_are_named():
    with raises("not_accumulated_s"):
        run(slip(s=lambda s, z, q, k, v, fm, g, right: torch.outer(fm(k), v)))
    with raises("not_accumulated_z"):
        run(slip(z=lambda s, z, q, k, v, fm, g, right: fm(k)))
    with raises("state_no_feature_map"):
        run(slip(s=lambda s, z, q, k, v, fm, g, right: g * s + torch.outer(k, v)))
    with raises("state_no_feature_map"):
        run(slip(z=lambda s, z, q, k, v, fm, g, right: g * z + k))
    with raises("old_state"):
        run(slip(out=lambda s, z, q, k, v, fm, g, right: fm(q) @ s / (fm(q) @ z)))
    with raises("no_normaliser"):
        run(slip(out=lambda s, z, q, k, v, fm, g, right: fm(q) @ right[0]))
    with raises("output_no_feature_map"):
        run(slip(out=lambda s, z, q, k, v, fm, g, right: q @ right[0] / (q @ right[1])))


def test_a_transposed_state_is_named():
    with raises("outer_transposed"):  # (D_v, r) where S is (r, D_v)
        run(slip(s=lambda s, z, q, k, v, fm, g, right: right[0].T))
    square = (torch.rand(4, 4, dtype=torch.float64, generator=G_STEP), Z0)
    with raises("outer_transposed"):
        run(slip(s=lambda s, z, q, k, v, fm, g, right: g * s + torch.outer(v, fm(k))),
            state=square, v=torch.randn(5, 4, generator=G_STEP, dtype=torch.float64))


def test_a_state_of_another_shape_is_told():
    with pytest.raises(AssertionError, match="should return S_i of shape"):
        run(slip(s=lambda s, z, q, k, v, fm, g, right: right[0][:, :2]))


def test_a_step_with_more_features_than_inputs_is_checked_without_shape_errors():
    w = torch.randn(4, 6, generator=G, dtype=torch.float64)

    def features(x):
        return torch.exp(x @ w - (x * x).sum(-1, keepdim=True) / 2)

    state = torch.rand(6, 3, generator=G, dtype=torch.float64), torch.rand(6, generator=G) + 1
    state = state[0], state[1].double()
    run(step, 0.8, state, fm=features)
    with raises("old_state"):
        run(slip(out=lambda s, z, q, k, v, fm, g, right: fm(q) @ s / (fm(q) @ z)), 0.8, state,
            fm=features)
    with pytest.raises(AssertionError, match="S_i is not right"):
        run(slip(s=lambda s, z, q, k, v, fm, g, right: right[0] + 1), 0.8, state, fm=features)


def test_no_message_writes_the_fix_as_code():
    """A message names the mistake and where to look, never the line to write."""
    code = re.compile(r"torch\.|transpose\(|cumsum\(|outer\(")
    assert not [key for key, message in LINEAR_MISTAKES.items() if code.search(message)]


# -- causal linear attention, in chunks ------------------------------------------------------


def chunked(q, k, v, chunk, state=True, mask=True, state_first=False):
    """The chunked form written with a loop over the chunks (independent of the checks), with
    its likely slips: no state between chunks, no mask inside one, the state updated first."""
    phi_q, phi_k = phi(q), phi(k)
    s, z, rows = 0, 0, []
    for start in range(0, q.shape[-2], chunk):
        pq, pk, vc = (t[..., start:start + chunk, :] for t in (phi_q, phi_k, v))
        within = pq @ pk.transpose(-2, -1)
        within = within.tril() if mask else within
        if state_first:
            s, z = s + pk.transpose(-2, -1) @ vc, z + pk.sum(-2, keepdim=True)
        if state:
            rows.append((within @ vc + pq @ s) / (within.sum(-1) + (pq * z).sum(-1))[..., None]
                        if start or state_first else within @ vc / within.sum(-1)[..., None])
        else:
            rows.append(within @ vc / within.sum(-1)[..., None])
        if not state_first:
            s, z = s + pk.transpose(-2, -1) @ vc, z + pk.sum(-2, keepdim=True)
    return torch.cat(rows, dim=-2)


def test_a_right_chunked_form_passes_whatever_the_chunk():
    for chunk in (1, 2, 4, 6, 9):
        right = chunked(Q, K, V, chunk)
        checks.check_causal_linear_attention(right, Q, K, V, phi, chunk)
    checks.check_causal_linear_attention(attend(Q, K, V, keep="past"), Q, K, V, phi, 4)


@pytest.mark.parametrize("slip, key", [
    ({"state": False}, "chunk_no_state"),
    ({"mask": False}, "chunk_no_mask"),
    ({"state_first": True}, "chunk_state_too_soon"),
])
def test_chunk_mistakes_are_named(slip, key):
    with raises(key):
        checks.check_causal_linear_attention(chunked(Q, K, V, 4, **slip), Q, K, V, phi, 4)


def test_a_strictly_causal_form_is_named():
    with raises("strictly_causal"):
        checks.check_causal_linear_attention(attend(Q, K, V, keep="strict"), Q, K, V, phi, 4)

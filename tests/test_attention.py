"""course_utils.attention against hand-worked values and PyTorch's own attention."""

import math

import pytest
import torch
import torch.nn.functional as F

from course_utils.attention import (
    attention,
    attention_scores,
    attention_weights,
    causal_mask,
    masked_softmax,
)
from course_utils.device import get_device

DEVICE = get_device()

# "I am good" from notebook 04: q_3 and the three keys, worked out by hand.
Q3 = [-1.0, 1.0, 0.0, 0.0]
KEYS = [[0.0, -1.0, 1.0, 2.0], [2.0, -2.0, 0.0, 0.0], [-1.0, 1.0, 0.0, 0.0]]


def tensor(rows):
    return torch.tensor(rows, device=DEVICE)


def test_scores_of_query_3_by_hand():
    # q_3 · k_j = -1, -4, 2 and sqrt(d_k) = 2
    got = attention_scores(tensor([Q3]), tensor(KEYS))
    assert got.tolist() == [[-0.5, -2.0, 1.0]]


def test_alpha_3_by_hand():
    exps = [math.exp(-0.5), math.exp(-2.0), math.exp(1.0)]
    expected = [e / sum(exps) for e in exps]  # 0.1753, 0.0391, 0.7856
    got = attention_weights(tensor([Q3]), tensor(KEYS))[0]
    assert got.tolist() == pytest.approx(expected, abs=1e-6)


def test_causal_mask_keeps_the_past_and_the_present():
    assert causal_mask(3).tolist() == [
        [True, False, False],
        [True, True, False],
        [True, True, True],
    ]
    assert torch.equal(causal_mask(2, 4), torch.ones(2, 4, dtype=torch.bool).tril())


def test_first_row_of_causal_weights_is_one_hot():
    generator = torch.Generator().manual_seed(0)
    q, k = torch.randn(5, 3, generator=generator), torch.randn(5, 3, generator=generator)
    alpha = attention_weights(q.to(DEVICE), k.to(DEVICE), causal=True)
    assert alpha[0].tolist() == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert torch.all(alpha.triu(diagonal=1) == 0)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shape", [(4, 4, 8), (2, 3, 5, 5, 16), (1, 6, 6, 1)])
def test_matches_scaled_dot_product_attention(shape, causal):
    *lead, n, _, d = shape
    generator = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(*lead, n, d, generator=generator).to(DEVICE) for _ in range(3))
    out, alpha = attention(q, k, v, causal=causal)
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(alpha.sum(-1), torch.ones(*lead, n, device=DEVICE))


def test_boolean_mask_and_rectangular_causal_match_pytorch():
    generator = torch.Generator().manual_seed(2)
    q = torch.randn(2, 3, 4, generator=generator).to(DEVICE)
    k = torch.randn(2, 5, 4, generator=generator).to(DEVICE)
    v = torch.randn(2, 5, 6, generator=generator).to(DEVICE)
    mask = torch.rand(3, 5, generator=generator).to(DEVICE) > 0.3
    mask[:, 0] = True  # every query keeps at least one key
    torch.testing.assert_close(
        attention(q, k, v, mask=mask)[0],
        F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
    )
    torch.testing.assert_close(
        attention(q, k, v, causal=True)[0],
        F.scaled_dot_product_attention(q, k, v, is_causal=True),
    )


def test_gradients_match_pytorch():
    generator = torch.Generator().manual_seed(3)
    ours = [torch.randn(4, 8, generator=generator).requires_grad_() for _ in range(3)]
    theirs = [t.detach().clone().requires_grad_() for t in ours]
    attention(*ours, causal=True)[0].square().sum().backward()
    F.scaled_dot_product_attention(*theirs, is_causal=True).square().sum().backward()
    for a, b in zip(ours, theirs, strict=True):
        torch.testing.assert_close(a.grad, b.grad)


def test_softmax_is_stable_for_large_scores():
    scores = torch.tensor([[1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 1000.0]], device=DEVICE)
    got = masked_softmax(scores)
    assert torch.isfinite(got).all()
    torch.testing.assert_close(got, torch.softmax(scores.double(), dim=-1).float())


def test_masked_entries_are_exactly_zero_and_an_empty_row_is_nan():
    scores = torch.zeros(3, 3, device=DEVICE)
    strictly_past = causal_mask(3, device=DEVICE).tril(diagonal=-1)
    got = masked_softmax(scores, strictly_past)
    assert torch.isnan(got[0]).all()  # nothing to attend to: 0/0
    assert got[1].tolist() == [1.0, 0.0, 0.0]
    assert got[2].tolist() == [0.5, 0.5, 0.0]


def test_output_stays_on_the_input_device():
    q = torch.randn(3, 4, device=DEVICE)
    out, alpha = attention(q, q, q, causal=True)
    assert out.device == q.device and alpha.device == q.device


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (
            lambda: attention_scores([[1.0]], torch.ones(1, 1)),
            TypeError,
            "q must be a torch.Tensor",
        ),
        (
            lambda: attention_scores(torch.ones(2, 3, dtype=torch.long), torch.ones(2, 3)),
            TypeError,
            "floating-point",
        ),
        (lambda: attention_scores(torch.ones(3), torch.ones(2, 3)), ValueError, "at least 2"),
        (lambda: attention_scores(torch.ones(0, 3), torch.ones(2, 3)), ValueError, "empty"),
        (lambda: attention_scores(torch.ones(2, 3), torch.ones(2, 4)), ValueError, "same last"),
        (
            lambda: attention(torch.ones(2, 3), torch.ones(2, 3), torch.ones(4, 3)),
            ValueError,
            "same n_k",
        ),
        (
            lambda: attention_scores(torch.ones(2, 3), torch.ones(2, 3, device="meta")),
            ValueError,
            "same device",
        ),
        (lambda: masked_softmax(torch.ones(2, 2), torch.ones(2, 2)), TypeError, "torch.bool"),
        (
            lambda: masked_softmax(torch.ones(2, 2), torch.ones(3, 3, dtype=torch.bool)),
            ValueError,
            "does not broadcast",
        ),
        (lambda: causal_mask(0), ValueError, ">= 1"),
        (lambda: causal_mask(2.5), TypeError, "must be an int"),
    ],
)
def test_bad_input_gets_a_clear_error(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_mask_and_causal_combine():
    generator = torch.Generator().manual_seed(4)
    q, k, v = (torch.randn(5, 4, generator=generator).to(DEVICE) for _ in range(3))
    padding = torch.tensor([True, True, True, False, True], device=DEVICE)  # key 4 is padding
    combined = causal_mask(5, device=DEVICE) & padding
    torch.testing.assert_close(
        attention(q, k, v, mask=padding, causal=True)[0],
        F.scaled_dot_product_attention(q, k, v, attn_mask=combined),
    )

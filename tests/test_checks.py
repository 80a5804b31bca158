"""The diagnostic checks catch each common mistake and name it."""

import math

import pytest
import torch

from course_utils import checks

generator = torch.Generator().manual_seed(0)
Q = torch.randn(4, 9, generator=generator)
K = torch.randn(4, 9, generator=generator)
V = torch.randn(4, 3, generator=generator)
SCORES = Q @ K.T / 3.0  # sqrt(9) = 3
KEEP = torch.ones(4, 4, dtype=torch.bool).tril()


def softmax_with(scores, keep=None):
    if keep is not None:
        scores = scores.masked_fill(~keep, float("-inf"))
    return torch.softmax(scores, dim=-1)


def test_right_answers_pass():
    checks.check_scores(SCORES, Q, K)
    checks.check_attention_weights(softmax_with(SCORES, KEEP), Q, K, causal=True)
    checks.check_attention_weights(softmax_with(SCORES), Q, K, causal=False)
    checks.check_attention_output(softmax_with(SCORES, KEEP) @ V, Q, K, V, causal=True)
    checks.check_softmax(torch.softmax(SCORES, -1).tolist(), SCORES)  # lists are fine too
    checks.check_rows_sum_to_one(softmax_with(SCORES))


@pytest.mark.parametrize(
    ("wrong", "causal", "words"),
    [
        (softmax_with(Q @ K.T, KEEP), True, "√d_k"),
        (softmax_with(Q @ K.T / 9, KEEP), True, "d_k instead of √d_k"),
        (softmax_with(SCORES, KEEP.tril(-1)), True, "diagonal"),
        (softmax_with(SCORES), True, "did not apply the causal mask"),
        (softmax_with(SCORES, KEEP.T), True, "past instead of the future"),
        (softmax_with(SCORES, KEEP), False, "full \\(bidirectional\\)"),
        (torch.softmax(SCORES, dim=0), False, "over the queries"),
        (softmax_with(SCORES.T, KEEP), True, "K Qᵀ"),
    ],
)
def test_each_mistake_is_named(wrong, causal, words):
    with pytest.raises(AssertionError, match=words):
        checks.check_attention_weights(wrong, Q, K, causal=causal)


def test_scores_mistakes_are_named():
    with pytest.raises(AssertionError, match="√d_k"):
        checks.check_scores(Q @ K.T, Q, K)
    with pytest.raises(AssertionError, match="K Qᵀ"):
        checks.check_scores(SCORES.T, Q, K)


def test_output_with_keys_instead_of_values_is_named():
    q = k = v = Q[:, :3]
    wrong = softmax_with(q @ k.T / math.sqrt(3), KEEP) @ (k + 1)
    with pytest.raises(AssertionError, match="not right"):
        checks.check_attention_output(wrong, q, k, v, causal=True)
    k2 = K[:, :3]
    with pytest.raises(AssertionError, match="multiply by the keys"):
        checks.check_attention_output(softmax_with(q @ k2.T / math.sqrt(3)) @ k2, q, k2, V, False)


def test_rows_versus_columns():
    with pytest.raises(AssertionError, match="over the queries"):
        checks.check_rows_sum_to_one(torch.softmax(SCORES, dim=0))
    with pytest.raises(AssertionError, match="do not sum to 1"):
        checks.check_rows_sum_to_one(torch.exp(SCORES))
    with pytest.raises(AssertionError, match="NaN"):
        checks.check_rows_sum_to_one(softmax_with(SCORES, KEEP.tril(-1)))
    with pytest.raises(AssertionError, match="negative"):
        checks.check_rows_sum_to_one([[1.5, -0.5]])


def test_close_reports_shape_none_and_overflow():
    with pytest.raises(AssertionError, match=r"shape \(3,\); got \(2,\)"):
        checks.check_close([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(AssertionError, match="None"):
        checks.check_close(None, [1.0])
    with pytest.raises(AssertionError, match="must be numbers"):
        checks.check_close("abc", [1.0])
    overflow = torch.exp(torch.tensor([1000.0, 0.0])) / torch.exp(torch.tensor([1000.0, 0.0])).sum()
    with pytest.raises(AssertionError, match="subtract the row"):
        checks.check_softmax(overflow, torch.tensor([1000.0, 0.0]))
    with pytest.raises(AssertionError, match="without dividing"):
        checks.check_softmax(torch.exp(SCORES), SCORES)

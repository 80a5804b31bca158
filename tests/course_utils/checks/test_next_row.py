"""04's KV cache, ``next_row(x_new, K_cache, V_cache, W_Q, W_K, W_V) -> (a_new, K, V)``: the
check compares it with PyTorch's causal attention on n + 1 tokens and names each likely
mistake; the rule ``OneRow`` refuses the earlier rows computed again."""

import math

import pytest
import torch
import torch.nn.functional as F

from course_utils import checks
from tests.course_utils.checks import as_cells

GENERATOR = torch.Generator().manual_seed(4)
X = torch.randn(6, 7, generator=GENERATOR, dtype=torch.float64)
W_Q, W_K = torch.randn(2, 7, 3, generator=GENERATOR, dtype=torch.float64) / math.sqrt(7)
W_V = torch.randn(7, 2, generator=GENERATOR, dtype=torch.float64)
W_SQUARE = torch.randn(3, 7, 7, generator=GENERATOR, dtype=torch.float64) / math.sqrt(7)


def inputs(n: int, w_q=W_Q, w_k=W_K, w_v=W_V) -> tuple:
    """Token n + 1 of X and the caches of the n before it, with the matrices."""
    return X[n], X[:n] @ w_k, X[:n] @ w_v, w_q, w_k, w_v


def next_row(x_new, K_cache, V_cache, W_Q, W_K, W_V, scale=None, grow=True, own=True):
    """The KV cache's step; each keyword argument swaps one part for a mistake."""
    k, v = x_new @ W_K, x_new @ W_V
    keys, values = torch.cat([K_cache, k[None]]), torch.cat([V_cache, v[None]])
    seen = (keys, values) if own else (K_cache, V_cache)
    s = seen[0] @ (x_new @ W_Q) / (math.sqrt(W_K.shape[1]) if scale is None else scale)
    a = torch.softmax(s, dim=-1) @ seen[1]
    return (a, keys, values) if grow else (a, K_cache, V_cache)


def full_matrix(x_new, K_cache, V_cache, W_Q, W_K, W_V):
    """Right values by the whole causal matrix, the earlier queries made up: every row again."""
    keys = torch.cat([K_cache, (x_new @ W_K)[None]])
    values = torch.cat([V_cache, (x_new @ W_V)[None]])
    queries = torch.cat([torch.zeros(len(K_cache), W_Q.shape[1], dtype=keys.dtype),
                         (x_new @ W_Q)[None]])
    future = torch.ones(len(keys), len(keys), dtype=torch.bool).triu(diagonal=1)
    alpha = torch.softmax((queries @ keys.T / math.sqrt(keys.shape[1])).masked_fill(
        future, -math.inf), dim=-1)
    return (alpha @ values)[-1], keys, values


as_cells(globals(), "next_row", "full_matrix")


@pytest.mark.parametrize("n", [0, 1, 5])
def test_the_right_step_passes_and_is_row_n_plus_1_of_pytorchs_causal_attention(n):
    a, keys, values = next_row(*inputs(n))
    checks.check_next_row((a, keys, values), *inputs(n))
    checks.check_next_row([a.numpy(), keys.tolist(), values.float()], *inputs(n))  # any form
    whole = F.scaled_dot_product_attention(X[:n + 1] @ W_Q, X[:n + 1] @ W_K, X[:n + 1] @ W_V,
                                           is_causal=True)
    assert torch.allclose(a, whole[n])


@pytest.mark.parametrize(
    ("mistake", "words"),
    [
        (dict(scale=1.0), "did not divide by √d_k"),
        (dict(scale=3.0), "divided by d_k instead of √d_k"),
        (dict(scale=math.sqrt(7)), "√d_model"),
        (dict(grow=False), "as many rows as the ones you were given"),
        (dict(own=False), "its own key and value get no weight"),
    ],
)
def test_each_next_row_mistake_is_named(mistake, words):
    with pytest.raises(AssertionError, match=words):
        checks.check_next_row(next_row(*inputs(5), **mistake), *inputs(5))


def test_a_cache_projected_again_reordered_or_grown_by_the_wrong_matrix_is_named():
    w_q, w_k, w_v = W_SQUARE  # d_k = d_model: the cache can be taken for embeddings
    x, k_cache, v_cache = inputs(4, w_q, w_k, w_v)[:3]
    a, keys, values = next_row(*inputs(4, w_q, w_k, w_v))
    again = torch.cat([k_cache, x[None]]) @ w_k
    with pytest.raises(AssertionError, match="rows of the cache you were given changed"):
        checks.check_next_row((a, again, values), *inputs(4, w_q, w_k, w_v))
    first = torch.cat([keys[-1:], keys[:-1]])
    with pytest.raises(AssertionError, match="not the last row of the cache"):
        checks.check_next_row((a, first, values), *inputs(4, w_q, w_k, w_v))
    by_w_q = torch.cat([k_cache, (x @ w_q)[None]])
    with pytest.raises(AssertionError, match="which matrix each of the three projections"):
        checks.check_next_row((a, by_w_q, values), *inputs(4, w_q, w_k, w_v))
    with pytest.raises(AssertionError, match="three things"):
        checks.check_next_row((a, keys), *inputs(4, w_q, w_k, w_v))


def test_the_earlier_rows_computed_again_break_the_rule_and_the_new_row_alone_does_not():
    answer = checks.own_work(full_matrix, "next_row")
    with pytest.raises(checks.RuleBroken, match=r"shape \(6, 6\).*earlier rows computed again"):
        answer(*inputs(5))
    assert torch.allclose(full_matrix(*inputs(5))[0], next_row(*inputs(5))[0])  # right values
    checks.check_next_row(checks.own_work(next_row, "next_row")(*inputs(5)), *inputs(5))
    answer(*inputs(0))  # the first token: no earlier row to compute again

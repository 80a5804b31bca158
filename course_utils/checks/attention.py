"""Diagnostic checks for attention: scores, weights, outputs, softmax."""

import torch

from ..attention import attention_scores, attention_weights, causal_mask, masked_softmax
from .core import QUERY_AXIS, as_tensor, check_close

__all__ = [
    "MISTAKES",
    "attention_mistakes",
    "check_attention_output",
    "check_attention_weights",
    "check_scores",
    "check_softmax",
]

MISTAKES = {
    "no_scale": "you did not divide by √d_k",
    "divide_by_dk": "you divided by d_k instead of √d_k",
    "query_axis": QUERY_AXIS,
    "diagonal_masked": "you masked the diagonal as well (j ≥ i): position i must still see "
    "itself, so mask only j > i",
    "no_mask": "you did not apply the causal mask: position i must not see any j > i",
    "unwanted_mask": "you applied a causal mask, but this is full (bidirectional) attention",
    "past_masked": "you masked the past instead of the future: keep j ≤ i, hide j > i",
    "transposed": "you computed K Qᵀ instead of Q Kᵀ: row i must belong to query i",
    "values_not_weighted": "the weights are right but the output is not α V: "
    "did you multiply by the keys or the queries instead of the values?",
}


def attention_mistakes(q: torch.Tensor, k: torch.Tensor, causal: bool) -> dict:
    """What the attention weights α would be under each common mistake, keyed by diagnosis."""
    n_q, n_k, d_k = q.shape[-2], k.shape[-2], q.shape[-1]
    past_and_present = causal_mask(n_q, n_k, device=q.device)
    mask = past_and_present if causal else None
    wrong = {
        MISTAKES["no_scale"]: attention_weights(q, k, causal=causal, scale=1.0),
        MISTAKES["divide_by_dk"]: attention_weights(q, k, causal=causal, scale=1.0 / d_k),
        MISTAKES["transposed"]: masked_softmax(attention_scores(k, q), mask)
        if n_q == n_k
        else None,
        MISTAKES["query_axis"]: masked_softmax(
            attention_scores(q, k).transpose(-2, -1), None if mask is None else mask.T
        ).transpose(-2, -1),
    }
    if causal:
        wrong[MISTAKES["no_mask"]] = attention_weights(q, k)
        wrong[MISTAKES["diagonal_masked"]] = masked_softmax(
            attention_scores(q, k), past_and_present.tril(diagonal=-1)
        )
        wrong[MISTAKES["past_masked"]] = masked_softmax(
            attention_scores(q, k), ~past_and_present.tril(diagonal=-1)
        )
    else:
        wrong[MISTAKES["unwanted_mask"]] = attention_weights(q, k, causal=True)
    return {message: value for message, value in wrong.items() if value is not None}


def check_attention_weights(actual, q, k, causal: bool, name: str = "weights", atol=1e-4) -> None:
    """Fail unless ``actual`` is softmax(Q Kᵀ / √d_k), causally masked when ``causal``."""
    q, k = as_tensor(q, "q"), as_tensor(k, "k")
    expected = attention_weights(q, k, causal=causal)
    check_close(actual, expected, name, atol=atol, mistakes=attention_mistakes(q, k, causal))


def check_attention_output(actual, q, k, v, causal: bool, name: str = "output", atol=1e-4) -> None:
    """Fail unless ``actual`` is α V with α = softmax(Q Kᵀ / √d_k) (causal when ``causal``)."""
    q, k, v = as_tensor(q, "q"), as_tensor(k, "k"), as_tensor(v, "v")
    alpha = attention_weights(q, k, causal=causal)
    mistakes = {message: w @ v for message, w in attention_mistakes(q, k, causal).items()}
    if k.shape == v.shape:
        mistakes[MISTAKES["values_not_weighted"]] = alpha @ k
    if q.shape == v.shape:
        mistakes.setdefault(MISTAKES["values_not_weighted"], alpha @ q)
    check_close(actual, alpha @ v, name, atol=atol, mistakes=mistakes)


def check_scores(actual, q, k, name: str = "scores", atol=1e-4) -> None:
    """Fail unless ``actual`` is Q Kᵀ / √d_k."""
    q, k = as_tensor(q, "q"), as_tensor(k, "k")
    d_k = q.shape[-1]
    mistakes = {
        MISTAKES["no_scale"]: attention_scores(q, k, scale=1.0),
        MISTAKES["divide_by_dk"]: attention_scores(q, k, scale=1.0 / d_k),
    }
    if q.shape[-2] == k.shape[-2]:
        mistakes[MISTAKES["transposed"]] = attention_scores(k, q)
    check_close(actual, attention_scores(q, k), name, atol=atol, mistakes=mistakes)


def check_softmax(actual, scores, name: str = "softmax", atol=1e-4) -> None:
    """Fail unless ``actual`` is the softmax of ``scores`` over the last axis."""
    s = as_tensor(scores, "scores")
    mistakes = {"you returned exp(s) without dividing by the sum of the row": torch.exp(s)}
    if s.dim() >= 2:
        mistakes[MISTAKES["query_axis"]] = torch.softmax(s, dim=-2)
    check_close(actual, masked_softmax(s), name, atol=atol, mistakes=mistakes)

"""Diagnostic assertions for the notebooks' test cells.

A bare ``assert`` tells a student only that something is wrong. These checks say
what is expected, what came, and, where the answer matches a known mistake (no
√d_k, softmax over the wrong axis, the diagonal masked too, ...), which mistake.
Each raises ``AssertionError`` so that nbgrader counts the test as failed.
"""

import torch

from .attention import attention_scores, attention_weights, causal_mask, masked_softmax

MISTAKES = {
    "no_scale": "you did not divide by √d_k",
    "divide_by_dk": "you divided by d_k instead of √d_k",
    "query_axis": "you took the softmax over the queries (dim=0) instead of over the keys "
    "(the last axis): each ROW must sum to 1",
    "diagonal_masked": "you masked the diagonal as well (j ≥ i): position i must still see "
    "itself, so mask only j > i",
    "no_mask": "you did not apply the causal mask: position i must not see any j > i",
    "unwanted_mask": "you applied a causal mask, but this is full (bidirectional) attention",
    "past_masked": "you masked the past instead of the future: keep j ≤ i, hide j > i",
    "transposed": "you computed K Qᵀ instead of Q Kᵀ: row i must belong to query i",
    "values_not_weighted": "the weights are right but the output is not α V: "
    "did you multiply by the keys or the queries instead of the values?",
}


def as_tensor(value, name: str = "answer") -> torch.Tensor:
    """A float64 CPU tensor of ``value`` (a tensor, NumPy array, list or number)."""
    if value is None:
        raise AssertionError(f"{name} is None: did you forget to return or assign it?")
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu", torch.float64)
    try:
        return torch.as_tensor(value, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError) as error:
        raise AssertionError(
            f"{name} must be numbers; got {type(value).__name__}: {error}"
        ) from None


def _same(a: torch.Tensor, b: torch.Tensor, atol: float) -> bool:
    return a.shape == b.shape and torch.allclose(a, b, rtol=0.0, atol=atol, equal_nan=True)


def _round(t: torch.Tensor) -> list:
    return torch.round(t * 1e4).div(1e4).tolist()


def check_shape(actual, expected_shape, name: str = "answer") -> None:
    """Fail unless ``actual`` has shape ``expected_shape``."""
    got = tuple(as_tensor(actual, name).shape)
    if got != tuple(expected_shape):
        raise AssertionError(f"{name} should have shape {tuple(expected_shape)}; got {got}")


def check_close(actual, expected, name: str = "answer", atol: float = 1e-4, mistakes=None) -> None:
    """Fail unless ``actual`` equals ``expected`` within ``atol``.

    ``mistakes`` maps a message to the value a known mistake would give; when the
    answer matches one of them, that message is the diagnosis.
    """
    actual_t = as_tensor(actual, name)
    expected_t = as_tensor(expected, "expected")
    if actual_t.shape != expected_t.shape:
        raise AssertionError(
            f"{name} should have shape {tuple(expected_t.shape)}; got {tuple(actual_t.shape)}"
        )
    if _same(actual_t, expected_t, atol):
        return
    for message, wrong in (mistakes or {}).items():
        if _same(actual_t, as_tensor(wrong), atol):
            raise AssertionError(f"{name} is not right: {message}.")
    hint = ""
    if not torch.isfinite(actual_t).all() and torch.isfinite(expected_t).all():
        hint = (
            "\n  It contains NaN or inf: exp of a large score overflows (subtract the row"
            " maximum first), and a softmax over a fully masked row is 0/0."
        )
    raise AssertionError(
        f"{name} is not right (tolerance {atol}).\n  expected: {_round(expected_t)}\n"
        f"  got:      {_round(actual_t)}.{hint}"
    )


def check_rows_sum_to_one(weights, name: str = "attention weights", atol: float = 1e-4) -> None:
    """Fail unless every row of ``weights`` is a probability distribution (≥ 0, sums to 1)."""
    w = as_tensor(weights, name)
    if torch.isnan(w).any():
        raise AssertionError(
            f"{name} contain NaN: a row where every position is masked has no softmax (0/0)"
        )
    if (w < -atol).any():
        raise AssertionError(f"{name} have negative entries: softmax gives values in [0, 1]")
    row_sums = w.sum(dim=-1)
    if torch.allclose(row_sums, torch.ones_like(row_sums), atol=atol):
        return
    if w.dim() >= 2:
        col_sums = w.sum(dim=-2)
        if torch.allclose(col_sums, torch.ones_like(col_sums), atol=atol):
            raise AssertionError(f"{name}: {MISTAKES['query_axis']}")
    raise AssertionError(
        f"the rows of {name} do not sum to 1 (they sum to {_round(row_sums)}): "
        "did you take the softmax over the key axis (the last one)?"
    )


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

"""Diagnostic checks for attention: scores, weights, outputs, softmax, masks, and a test for
causality (notebook 06's ``is_causal``, whose visible test states the answer: ``expected=``).

Expected values come from PyTorch's ``F.scaled_dot_product_attention`` (its weights are
its output for the identity matrix as values: ``course_utils.models.attention.
attention_weights``) and ``torch.softmax``; each named mistake is the same oracle on
transformed inputs (another scale, the keys and queries swapped, another mask, the scores
with their masked entries set to 0) or a transformation of its output.
"""

import math
import numbers

import torch
import torch.nn.functional as F

from course_utils.models.attention import attention_weights

from .core import QUERY_AXIS, as_tensor, check_close
from .guards import checked_plainly

__all__ = [
    "MISTAKES",
    "attention_mistakes",
    "check_attention_output",
    "check_attention_weights",
    "check_causal_attention",
    "check_is_causal",
    "check_is_causal_of",
    "check_next_row",
    "check_score_gaps",
    "check_slips",
    "check_softmax",
    "line_of",
]

MISTAKES = {
    "no_scale": "you did not divide by √d_k",
    "divide_by_dk": "you divided by d_k instead of √d_k",
    "query_axis": QUERY_AXIS,
    "diagonal_masked": "you masked the diagonal as well (j ≥ i): position i must still see "
    "itself; look at which diagonal your mask starts from",
    "no_mask": "you did not apply the causal mask: position i must not see any j > i",
    "unwanted_mask": "you applied a causal mask, but this is full (bidirectional) attention",
    "past_masked": "you masked the past instead of the future: keep j ≤ i, hide j > i",
    "transposed": "you computed K Qᵀ instead of Q Kᵀ: row i must belong to query i",
    "values_not_weighted": "the weights are right but the output is not α V: "
    "did you multiply by the keys or the queries instead of the values?",
    "embeddings_weighted": "the weights are right but the output is α X: weight the values "
    "V = X W_V, not the embeddings",
    "not_renormalised": "the weights of a row that hides a key do not sum to 1 (row i's "
    "α_i1 + … + α_ii ≠ 1)",
    "masked_with_zero": "you set the masked scores to 0: e^0 = 1, so the hidden keys still "
    "get weight; look at the value you give a masked score, and at what e^x of it must be",
    "column_vectors": "you computed W xᵢ (column vectors) instead of xᵢ W: with the tokens as "
    "the rows of X, the projections are Q = X W_Q, K = X W_K, V = X W_V",
    "swapped_outputs": "you returned (alpha, a): return the outputs first, (a, alpha)",
    "gaps_positive": "a gap is positive: s_3j − s_33 > 0 would give key j more weight than "
    "key 3, and the slides' row gives key 3 the most",
    "gaps_are_logs": "your gaps are the logarithms of the weights themselves, ln α_31 and "
    "ln α_32",
    "cache_not_grown": "the caches you returned have as many rows as the ones you were given: "
    "the next token's call would not see this token's key and value",
    "cache_changed": "the rows of the cache you were given changed: they are the earlier "
    "tokens' keys and values, already projected; look at what your code does to them",
    "cache_order": "the new token's row is not the last row of the cache you returned: the "
    "next call reads the cache in the order of the tokens",
    "new_key_projection": "the new token's key or value in the cache you returned is not "
    "made from x_new with its own matrix: look at which matrix each of the three projections "
    "uses",
    "new_token_left_out": "the new token's output is attention over the cached keys alone: "
    "its own key and value get no weight",
    "scale_by_d_model": "you divided by √d_model, the size of the embedding: the scores of "
    "(9.11) are divided by √d_k, the size of a key",
}


def _weights(q, k, mask=None, causal=False, scale=None):
    """The oracle's weights; NaN in a row with no allowed key, as a softmax over −∞ gives
    (the oracle's kernel gives zeros there)."""
    weights = attention_weights(q, k, mask=mask, causal=causal, scale=scale)
    if mask is not None:
        weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), float("nan"))
    return weights


def _of_scores(s, mask=None, causal=False):
    """The oracle's weights of the score matrix ``s`` itself: queries s, keys the identity."""
    return _weights(s, torch.eye(s.shape[-1], dtype=s.dtype, device=s.device), mask=mask,
                    causal=causal, scale=1.0)


def attention_mistakes(q: torch.Tensor, k: torch.Tensor, causal: bool) -> dict:
    """What the attention weights α would be under each common mistake, keyed by diagnosis."""
    n_q, n_k, d_k = q.shape[-2], k.shape[-2], q.shape[-1]
    keep = torch.ones(n_q, n_k, dtype=torch.bool, device=q.device).tril()
    wrong = {
        MISTAKES["no_scale"]: _weights(q, k, causal=causal, scale=1.0),
        MISTAKES["divide_by_dk"]: _weights(q, k, causal=causal, scale=1.0 / d_k),
        MISTAKES["transposed"]: _weights(k, q, causal=causal) if n_q == n_k else None,
        # each key's softmax over the queries: the keys' weights over the queries, transposed
        MISTAKES["query_axis"]: _weights(k, q, mask=keep.mT if causal else None).mT,
    }
    if causal:
        scores = q @ k.mT / math.sqrt(d_k)
        wrong[MISTAKES["no_mask"]] = _weights(q, k)
        wrong[MISTAKES["not_renormalised"]] = _weights(q, k) * keep
        wrong[MISTAKES["masked_with_zero"]] = _of_scores(scores.masked_fill(~keep, 0.0))
        wrong[MISTAKES["diagonal_masked"]] = _weights(q, k, mask=keep.tril(diagonal=-1))
        wrong[MISTAKES["past_masked"]] = _weights(q, k, mask=~keep.tril(diagonal=-1))
    else:
        wrong[MISTAKES["unwanted_mask"]] = _weights(q, k, causal=True)
    return {message: value for message, value in wrong.items() if value is not None}


@checked_plainly
def check_attention_weights(actual, q, k, causal: bool, name: str = "weights", atol=1e-4) -> None:
    """Fail unless ``actual`` is softmax(Q Kᵀ / √d_k), causally masked when ``causal``."""
    q, k = as_tensor(q, "q"), as_tensor(k, "k")
    expected = _weights(q, k, causal=causal)
    check_close(actual, expected, name, atol=atol, mistakes=attention_mistakes(q, k, causal))


@checked_plainly
def check_attention_output(actual, q, k, v, causal: bool, name: str = "output", atol=1e-4) -> None:
    """Fail unless ``actual`` is α V with α = softmax(Q Kᵀ / √d_k) (causal when ``causal``)."""
    q, k, v = as_tensor(q, "q"), as_tensor(k, "k"), as_tensor(v, "v")
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    mistakes = {message: w @ v for message, w in attention_mistakes(q, k, causal).items()}
    for other in (k, q):
        if other.shape == v.shape:
            mistakes.setdefault(MISTAKES["values_not_weighted"],
                                F.scaled_dot_product_attention(q, k, other, is_causal=causal))
    check_close(actual, expected, name, atol=atol, mistakes=mistakes)


@checked_plainly
def check_softmax(actual, scores, name: str = "softmax", atol=1e-4) -> None:
    """Fail unless ``actual`` is the softmax of ``scores`` over the last axis."""
    s = as_tensor(scores, "scores")
    mistakes = {"you returned exp(s) without dividing by the sum of the row": torch.exp(s)}
    if s.dim() >= 2:
        mistakes[MISTAKES["query_axis"]] = torch.softmax(s, dim=-2)
    check_close(actual, torch.softmax(s, dim=-1), name, atol=atol, mistakes=mistakes)


@checked_plainly
def check_causal_attention(result, x, w_q, w_k, w_v, name: str = "causal_attention", atol=1e-4):
    """Fail unless ``result`` is ``(a, alpha)`` of causal attention over the rows of ``x``.

    With Q = X W_Q, K = X W_K, V = X W_V: alpha (n, n) is softmax(Q Kᵀ / √d_k) with the
    entries j > i masked, and a (n, d_v) is alpha V; for a batch ``x`` (B, n, d_model), each
    sentence's own, (B, n, n) and (B, n, d_v). Both are compared with PyTorch's
    ``scaled_dot_product_attention(Q, K, V, is_causal=True)``: ``a`` with its output, alpha
    with its output for the identity as V.
    """
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        got = type(result).__name__
        if isinstance(result, (tuple, list)):
            got += f" of length {len(result)}"
        raise AssertionError(f"{name} must return a pair (a, alpha); got {got}")
    x, w_q, w_k, w_v = (as_tensor(t, label) for t, label in ((x, "X"), (w_q, "W_Q"),
                                                              (w_k, "W_K"), (w_v, "W_V")))
    a = as_tensor(result[0], f"a returned by {name}")
    alpha = as_tensor(result[1], f"alpha returned by {name}")
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    *batch, n, _ = x.shape
    square, outputs = (*batch, n, n), (*batch, n, v.shape[-1])
    expected_alpha = _weights(q, k, causal=True)
    expected_a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    swapped = (a.shape, alpha.shape) == (square, outputs) and (
        square != outputs
        or (torch.allclose(a, expected_alpha, atol=atol) and torch.allclose(alpha, expected_a,
                                                                            atol=atol))
    )
    if swapped:
        raise AssertionError(f"{name}: {MISTAKES['swapped_outputs']}")
    mistakes = attention_mistakes(q, k, causal=True)
    if w_q.shape[0] == w_q.shape[1] and w_k.shape[0] == w_k.shape[1]:
        mistakes[MISTAKES["column_vectors"]] = _weights(x @ w_q.T, x @ w_k.T, causal=True)
    check_close(alpha, expected_alpha, f"alpha returned by {name}", atol=atol, mistakes=mistakes)
    output_mistakes = {message: w @ v for message, w in mistakes.items()}
    if w_v.shape[0] == w_v.shape[1]:
        output_mistakes[MISTAKES["column_vectors"]] = F.scaled_dot_product_attention(
            q, k, x @ w_v.T, is_causal=True)
    values = {MISTAKES["values_not_weighted"]: (k, q), MISTAKES["embeddings_weighted"]: (x,)}
    for message, others in values.items():  # the oracle on other values
        for other in others:
            if other.shape == v.shape:
                output_mistakes.setdefault(
                    message, F.scaled_dot_product_attention(q, k, other, is_causal=True))
    check_close(a, expected_a, f"a returned by {name}", atol=atol, mistakes=output_mistakes)


def _last_row(q, keys, values, scale=None):
    """Row n + 1 of PyTorch's causal attention over the n + 1 tokens whose keys and values
    are ``keys`` and ``values``, the last query ``q``: the earlier rows' queries, which do
    not enter this row, are zeros."""
    queries = torch.cat([torch.zeros(len(keys) - 1, len(q), dtype=q.dtype), q[None]])
    return F.scaled_dot_product_attention(queries, keys, values, is_causal=True,
                                          scale=scale)[-1]


@checked_plainly
def check_next_row(result, x_new, k_cache, v_cache, w_q, w_k, w_v, name: str = "next_row",
                   atol=1e-4) -> None:
    """Fail unless ``result`` is ``(a_new, K, V)`` of one more token under causal attention
    with a cache: the new token x_new (d_model,) after n tokens whose keys ``k_cache`` (n, d_k)
    and values ``v_cache`` (n, d_v) are cached. K (n + 1, d_k) and V (n + 1, d_v) are the
    caches grown by x_new W_K and x_new W_V as their last rows, and a_new (d_v,) is row n + 1
    of PyTorch's ``scaled_dot_product_attention(..., is_causal=True)`` over the n + 1 tokens.
    """
    if not isinstance(result, (tuple, list)) or len(result) != 3:
        got = type(result).__name__
        if isinstance(result, (tuple, list)):
            got += f" of length {len(result)}"
        raise AssertionError(f"{name} must return three things (a_new, K_cache, V_cache); got "
                             f"{got}")
    x, k_cache, v_cache, w_q, w_k, w_v = (as_tensor(t, label) for t, label in (
        (x_new, "x_new"), (k_cache, "K_cache"), (v_cache, "V_cache"), (w_q, "W_Q"),
        (w_k, "W_K"), (w_v, "W_V")))
    a, keys, values = (as_tensor(part, f"{label} returned by {name}")
                       for part, label in zip(result, ("a_new", "K_cache", "V_cache"), strict=True))
    n, d_model, d_k = len(k_cache), len(x), w_k.shape[1]
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    for got, cache, new, label in ((keys, k_cache, k, "K_cache"), (values, v_cache, v, "V_cache")):
        label = f"{label} returned by {name}"
        if tuple(got.shape) == tuple(cache.shape):
            raise AssertionError(f"{label} is not right: {MISTAKES['cache_not_grown']}.")
        grown = torch.cat([cache, new[None]])
        if got.shape == grown.shape and not torch.allclose(got[:n], cache, atol=atol):
            order = torch.cat([new[None], cache])
            raise AssertionError(f"{label} is not right: " + (
                MISTAKES["cache_order"] if torch.allclose(got, order, atol=atol)
                else MISTAKES["cache_changed"]) + ".")
        for other in (q, k, v):  # the new row made with another of the three matrices
            if (other.shape == new.shape and got.shape == grown.shape
                    and not torch.allclose(other, new, atol=atol)
                    and torch.allclose(got[n], other, atol=atol)):
                raise AssertionError(f"{label} is not right: {MISTAKES['new_key_projection']}.")
        check_close(got, grown, label, atol=atol)
    keys, values = torch.cat([k_cache, k[None]]), torch.cat([v_cache, v[None]])
    mistakes = {
        MISTAKES["no_scale"]: _last_row(q, keys, values, scale=1.0),
        MISTAKES["divide_by_dk"]: _last_row(q, keys, values, scale=1.0 / d_k),
        MISTAKES["scale_by_d_model"]: _last_row(q, keys, values, scale=d_model ** -0.5),
    }
    if n:
        mistakes[MISTAKES["new_token_left_out"]] = _last_row(q, k_cache, v_cache)
    if keys.shape == values.shape:
        mistakes[MISTAKES["values_not_weighted"]] = _last_row(q, keys, keys)
    check_close(a, _last_row(q, keys, values), f"a_new returned by {name}", atol=atol,
                mistakes=mistakes)


@checked_plainly
def check_score_gaps(actual, weights, name: str = "answer") -> None:
    """Fail unless ``actual`` is two finite numbers [g₁, g₂], gaps s₁ − s₃ and s₂ − s₃ of
    scores whose softmax could be the three ``weights``. Never whether they are right.

    The gaps of the slides' row are the same for every student, so a check that said whether
    they are right (turning them back into weights, say) would be an oracle: a loop over
    candidate values would find them. This one fails only on what no right answer does (not
    two finite numbers; a positive gap, while the third weight is the largest) and on the
    logarithms of the weights themselves, a symptom it names. Whether the gaps are right is
    decided when the work is graded: the value it reports is compared with the stored answer
    (``grader.scoring.outside``).
    """
    gaps = as_tensor(actual, name).to(torch.float64)
    if tuple(gaps.shape) != (2,) or not torch.isfinite(gaps).all():
        raise AssertionError(f"{name} should be two numbers, [s_31 − s_33, s_32 − s_33]; got "
                             f"shape {tuple(gaps.shape)}")
    weights = as_tensor(weights, "weights").to(torch.float64)
    if torch.allclose(gaps, weights[:2].log(), rtol=0.0, atol=0.011):
        raise AssertionError(f"{name}: {MISTAKES['gaps_are_logs']}")
    if weights[2] == weights.max() and (gaps > 0).any():
        raise AssertionError(f"{name}: {MISTAKES['gaps_positive']}")
    print(f"✓ {name}: two gaps, neither positive; whether they are right is checked when your "
          "work is graded")


# 04's exercise 6: the lines of the given causal_attention that assign, named by what they
# assign; whichever a student names, the grader decides outside the kernel whether each
# sentence makes its line go wrong while the others hold (grader.scoring.given_slips)
GIVEN_LINES = ("Q, K, V", "scores", "future", "alpha")
LARGEST_SIZE = 64  # each size of a slip's sentence, so that grading stays small


def line_of(name) -> str:
    """A line's name as the checks and the grader compare it: lower case, without spaces or
    commas ("Q, K, V" and "q,k,v" are both "qkv")."""
    return "".join(str(name).lower().replace(",", " ").split())


@checked_plainly
def check_slips(actual, name: str = "answer") -> None:
    """Fail unless ``actual`` is a dict of three entries, each a line of the given function
    (by what it assigns, :data:`GIVEN_LINES`) and the sizes (n, d_model, d_k, d_v) of a
    sentence: four whole numbers from 1 to :data:`LARGEST_SIZE`. Never whether they are right.

    Which lines slip, and on which sentences, is the exercise: a check that said so would be
    an oracle. Whether each sentence makes its line go wrong while the other two hold is
    decided when the work is graded (``grader.scoring.given_slips``).
    """
    if actual is Ellipsis:
        raise AssertionError(f"{name} is still `...`: write the three lines, each with a "
                             "sentence's sizes")
    if not isinstance(actual, dict) or len(actual) != 3:
        got = type(actual).__name__ + (f" of {len(actual)} entries" if isinstance(actual, dict)
                                       else "")
        raise AssertionError(f"{name} should be a dict of three entries, one per line: "
                             f"{{line: (n, d_model, d_k, d_v)}}; got {got}")
    lines = [line_of(line) for line in actual]
    known = [line_of(line) for line in GIVEN_LINES]
    for line, sizes in actual.items():
        if line_of(line) not in known:
            raise AssertionError(f"{name}: {line!r} is not a line of the given function; name "
                                 "a line by what it assigns: "
                                 + ", ".join(repr(given) for given in GIVEN_LINES))
        if not (isinstance(sizes, list | tuple) and len(sizes) == 4 and all(
                isinstance(size, numbers.Integral) and not isinstance(size, bool)
                and 1 <= size <= LARGEST_SIZE for size in sizes)):
            raise AssertionError(f"{name}[{line!r}] should be four whole numbers from 1 to "
                                 f"{LARGEST_SIZE}, (n, d_model, d_k, d_v); got {sizes!r}")
    if len(set(lines)) != len(lines):
        raise AssertionError(f"{name} names one line twice: give three different lines")
    print(f"✓ {name}: three lines, each with a sentence's sizes; whether each sentence makes "
          "its line go wrong while the other two hold is checked when your work is graded")


# -- the causality test -------------------------------------------------------------------


@checked_plainly
def check_is_causal(actual, expected: bool, description: str, name="is_causal") -> None:
    """Fail unless the answer ``actual`` (a bool, or a one-element tensor or array) equals
    ``expected`` for the function described by ``description``."""
    if actual is None:
        raise AssertionError(f"{name} returned None: return True or False")
    try:
        value = bool(actual)
    except (TypeError, ValueError, RuntimeError):
        raise AssertionError(
            f"{name} must return True or False; got {type(actual).__name__} {actual!r}"
        ) from None
    if value == expected:
        return
    if expected:
        raise AssertionError(
            f"{name} said False for {description}, which IS causal: output i depends only "
            "on tokens j ≤ i. Did you compare all the outputs after changing token t? "
            "Outputs at positions ≥ t may change; only those before t must not"
        )
    raise AssertionError(
        f"{name} said True for {description}, which is NOT causal: a later token changes an "
        "earlier output. Change every position t in turn (not only the last), in a way the "
        "function cannot ignore, and compare the outputs at every position before t"
    )


@checked_plainly
def check_is_causal_of(actual, f, x, expected: bool, name="is_causal") -> None:
    """``is_causal(f, x)`` of a test cell (its record's check), which states what f is:
    ``check("is_causal", f, x, expected=True)``; :func:`check_is_causal`."""
    label = getattr(f, "__name__", "<lambda>")
    description = "the function it was given" if label == "<lambda>" else label
    check_is_causal(actual, expected, description, name=name)

"""Diagnostic checks for the embeddings notebook's test cells.

Each check computes the expected answer from the inputs with plain torch operations
(not the student's code), and when the answer matches a typical mistake, says which.
"""

import torch

from .core import as_tensor, check_close
from .guards import checked_plainly

__all__ = [
    "EMBEDDING_MISTAKES",
    "check_contextual_update",
    "check_cosine_matrix",
    "check_lookup",
    "check_neighbours",
    "check_updated_embeddings",
]

EMBEDDING_MISTAKES = {
    "row_not_column": "you took a ROW of Wᵀ; the embedding of word n is its n-th COLUMN, "
    "Wᵀ I(w) = Wᵀ[:, n]",
    "dot_product": "you returned the dot products, not the cosines: divide each u · v by |u| |v|",
    "first_norm": "you divided by |u| only: the cosine is u · v / (|u| |v|)",
    "second_norm": "you divided by |v| only: the cosine is u · v / (|u| |v|)",
    "distance": "you returned the cosine distance 1 − cos θ; the similarity is cos θ itself",
    "includes_itself": "your neighbours include the word itself (its cosine with itself is 1): "
    "leave it out",
    "ascending": "your neighbours are sorted from the least similar up: the most similar comes "
    "first",
    "dot_ranking": "you ranked by dot products, which favour long vectors: rank by cosine",
    "no_softmax": "you used the raw dot products Qᵀ E_j as weights: W_j = softmax_j(Qᵀ E_j), "
    "so the weights are positive and sum to 1",
    "delta_only": "you returned Δ alone: the updated word is E′_i = E_i + Δ",
    "overflow": "e^x overflows in floating point (beyond x ≈ 88.7 in float32, 709.8 in "
    "float64), and inf / inf is NaN. The weights are a ratio of exponentials: find a form of "
    "that ratio whose exponentials stay finite (exercise 4's text)",
    "later_words": "you let words AFTER position i contribute too: the sum runs over j ≤ i",
    "no_causal_mask": "row i mixes in the words AFTER word i too: mask the scores Q_i · E_j "
    "with j > i (set them to −∞) before the softmax, so the sum runs over j ≤ i",
    "no_residual": "you returned the changes Δ_i alone: add them to the words, E′_i = E_i + Δ_i",
    "softmax_axis": "you took the softmax down the columns (over the words i that ask): for "
    "each word i the weights over j ≤ i must sum to 1 (softmax over the last axis)",
    "scaled": "you divided the scores by √n_E: this update uses the raw dot products "
    "Q_i · E_j (the scaling comes with attention)",
    "transposed": "you computed E_i · Q_j instead of Q_i · E_j: row i of the scores compares "
    "word i's query with every word's embedding, S = Q Eᵀ",
}


def _cosines(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.cosine_similarity(a[:, None, :], b[None, :, :], dim=-1)


@checked_plainly
def check_lookup(actual, weight_t, index: int, name: str = "lookup") -> None:
    """Fail unless ``actual`` is column ``index`` of Wᵀ (``weight_t``, shape (d, N))."""
    weight_t = as_tensor(weight_t, "Wᵀ")
    mistakes = {}
    if weight_t.shape[0] == weight_t.shape[1]:
        mistakes[EMBEDDING_MISTAKES["row_not_column"]] = weight_t[index]
    check_close(actual, weight_t[:, index], name, mistakes=mistakes)


@checked_plainly
def check_cosine_matrix(actual, a, b, name: str = "cosine similarities", atol=1e-4) -> None:
    """Fail unless ``actual`` is the (n, m) matrix of cosines between the rows of a and b."""
    a, b = as_tensor(a, "a"), as_tensor(b, "b")
    dots = a @ b.T
    norms_a, norms_b = a.norm(dim=1, keepdim=True), b.norm(dim=1, keepdim=True)
    expected = _cosines(a, b)
    mistakes = {
        EMBEDDING_MISTAKES["dot_product"]: dots,
        EMBEDDING_MISTAKES["first_norm"]: dots / norms_a,
        EMBEDDING_MISTAKES["second_norm"]: dots / norms_b.T,
        EMBEDDING_MISTAKES["distance"]: 1 - expected,
    }
    check_close(actual, expected, name, atol=atol, mistakes=mistakes)


@checked_plainly
def check_neighbours(actual, word: str, words, vectors, k: int, name: str = "neighbours") -> None:
    """Fail unless ``actual`` lists the k words most cosine-similar to ``word``, best first.

    ``words`` names the rows of ``vectors`` (N, d); ``word`` itself is not a neighbour.
    """
    words = list(words)
    vectors = as_tensor(vectors, "vectors")
    if not isinstance(actual, list | tuple) or not all(isinstance(w, str) for w in actual):
        raise AssertionError(f"{name} must be a list of words (str); got {actual!r}")
    actual = list(actual)
    me = words.index(word)

    def ranked(scores: torch.Tensor, skip_self: bool = True, descending: bool = True) -> list:
        order = scores.argsort(descending=descending, stable=True).tolist()
        return [words[j] for j in order if not (skip_self and j == me)][:k]

    cosines = _cosines(vectors[me : me + 1], vectors)[0]
    expected = ranked(cosines)
    if actual == expected:
        return
    if len(actual) != k:
        raise AssertionError(f"{name} should hold k = {k} words; got {len(actual)}: {actual}")
    mistakes = {
        EMBEDDING_MISTAKES["includes_itself"]: ranked(cosines, skip_self=False),
        EMBEDDING_MISTAKES["ascending"]: ranked(cosines, descending=False),
        EMBEDDING_MISTAKES["dot_ranking"]: ranked(vectors @ vectors[me]),
    }
    for message, wrong in mistakes.items():
        if actual == wrong:
            raise AssertionError(f"{name} is not right: {message}.\n  got: {actual}")
    raise AssertionError(f"{name} is not right.\n  expected: {expected}\n  got:      {actual}")


@checked_plainly
def check_contextual_update(
    actual, embeddings, position: int, query, values, name: str = "E′_i", atol=1e-4
) -> None:
    """Fail unless ``actual`` is E′_i = E_i + Σ_{j ≤ i} softmax_j(Qᵀ E_j) V_j (i = position).

    The inputs are finite, and so is E′_i however large the scores: an answer with NaN or
    inf computed e^{Qᵀ E_j} as written, and it overflowed.
    """
    answer = as_tensor(actual, name)
    if not torch.isfinite(answer).all():
        raise AssertionError(f"{name} contains NaN or inf: {EMBEDDING_MISTAKES['overflow']}.")
    e, q, v = as_tensor(embeddings, "E"), as_tensor(query, "Q"), as_tensor(values, "V")
    seen, seen_values = e[: position + 1], v[: position + 1]
    scores = seen @ q
    delta = torch.softmax(scores, dim=0) @ seen_values
    mistakes = {
        EMBEDDING_MISTAKES["no_softmax"]: e[position] + scores @ seen_values,
        EMBEDDING_MISTAKES["delta_only"]: delta,
        EMBEDDING_MISTAKES["later_words"]: e[position] + torch.softmax(e @ q, dim=0) @ v,
    }
    check_close(answer, e[position] + delta, name, atol=atol, mistakes=mistakes)


def _causal_update(e, q, v, scale=1.0, mask=True, residual=True, dim=-1, scores=None):
    """E + softmax(mask(Q Eᵀ · scale)) V, with each part switchable to model a mistake."""
    if scores is None:
        scores = q @ e.T
    scores = scores * scale
    if mask:
        later = torch.ones(scores.shape, dtype=torch.bool).triu(diagonal=1)
        scores = scores.masked_fill(later, float("-inf"))
    delta = torch.softmax(scores, dim=dim) @ v
    return e + delta if residual else delta


@checked_plainly
def check_updated_embeddings(actual, embeddings, queries, values, name: str = "E′",
                             atol=1e-4) -> None:
    """Fail unless ``actual`` is E′ with E′_i = E_i + Σ_{j ≤ i} softmax_j(Q_i · E_j) V_j.

    ``embeddings`` E, ``queries`` Q and ``values`` V all have shape (n, n_E); row i of
    Q is the query of word i. The expected E′ has shape (n, n_E).
    """
    e, q = as_tensor(embeddings, "E"), as_tensor(queries, "Q")
    v = as_tensor(values, "V")
    mistakes = {
        EMBEDDING_MISTAKES["no_causal_mask"]: _causal_update(e, q, v, mask=False),
        EMBEDDING_MISTAKES["no_residual"]: _causal_update(e, q, v, residual=False),
        EMBEDDING_MISTAKES["softmax_axis"]: _causal_update(e, q, v, dim=0),
        EMBEDDING_MISTAKES["scaled"]: _causal_update(e, q, v, scale=e.shape[-1] ** -0.5),
        EMBEDDING_MISTAKES["transposed"]: _causal_update(e, q, v, scores=e @ q.T),
    }
    check_close(actual, _causal_update(e, q, v), name, atol=atol, mistakes=mistakes)

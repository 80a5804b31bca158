"""Words as vectors: one-hot codes, dense lookups, cosine similarity, neighbours, and
the first contextual update of a word vector.

Notation of the lectures. A vocabulary of N words has an order; I(w) is the one-hot
vector of word w (a 1 in the word's dimension, 0 elsewhere). The embeddings are the
columns of Wᵀ (shape (d, N)), so the embedding of the n-th word is the lookup

    v_{w^n} = Wᵀ I(w^n).

With row vectors, as in the rest of the course, W has one ROW per word (shape (N, d)),
the row vector is I(w)ᵀ W, and that is exactly ``nn.Embedding.weight`` and what
``nn.Embedding`` returns for the index n.

Similarity of two vectors is their cosine, S_C(u, v) = u · v / (|u| |v|) = cos θ,
which ignores their lengths; S_D(u, v) = u · v keeps them.

One vector per word serves every sense of it ("bark" of a dog, of a tree, of
chocolate). The first fix is an update from the words before it:

    E′_i = E_i + Δ,   Δ = Σ_{j ≤ i} W_j V_j,   W_j = exp(Qᵀ E_j) / Σ_{k ≤ i} exp(Qᵀ E_k).

Everything runs on the device of its inputs.
"""

from typing import NamedTuple

import torch

from course_utils.validation import float_tensor, integer, positive_int, same_device


def _index_tensor(name: str, indices) -> torch.Tensor:
    """``indices`` as an integer tensor (an int, a list of ints or an integer tensor)."""
    if isinstance(indices, bool):
        raise TypeError(f"{name} must be integer word indices; got a bool")
    if not isinstance(indices, torch.Tensor):
        try:
            indices = torch.as_tensor(indices)
        except (TypeError, ValueError, RuntimeError):
            raise TypeError(
                f"{name} must be integer word indices; got a {type(indices).__name__}"
            ) from None
    if indices.dtype == torch.bool or indices.is_floating_point() or indices.is_complex():
        raise TypeError(f"{name} must have an integer dtype (e.g. torch.long); got {indices.dtype}")
    return indices.long()


def one_hot(indices, num_words: int) -> torch.Tensor:
    """The one-hot vectors I(w) of the words with these indices in a vocabulary of N words.

    ``indices``: an int or an integer tensor of any shape (...); returns a float tensor of
    shape (..., N) with a 1 in dimension ``index`` and 0 elsewhere. Same result as
    ``torch.nn.functional.one_hot(indices, N).float()``.
    """
    positive_int("num_words", num_words)
    indices = _index_tensor("indices", indices)
    if indices.numel() and (indices.min() < 0 or indices.max() >= num_words):
        raise ValueError(
            f"indices must lie in [0, {num_words - 1}] for a vocabulary of {num_words} words; "
            f"got values from {indices.min().item()} to {indices.max().item()}"
        )
    codes = torch.zeros(*indices.shape, num_words, device=indices.device)
    return codes.scatter_(-1, indices.unsqueeze(-1), 1.0)


def lookup(weight: torch.Tensor, indices) -> torch.Tensor:
    """Embeddings of word indices as the product of one-hot codes with the table.

    ``weight``: (N, d), one row per word (Wᵀ of the lectures is its transpose, one column
    per word). ``indices``: int or integer tensor (...). Returns (..., d): row n of
    ``weight`` for index n, computed as I(w)ᵀ W, i.e. (Wᵀ I(w))ᵀ. It equals
    ``weight[indices]`` and ``nn.Embedding.from_pretrained(weight)(indices)``, which
    skip the multiplication by zeros.
    """
    float_tensor("weight", weight, min_dim=2)
    if weight.dim() != 2:
        raise ValueError(f"weight must be a 2-D (N, d) table; got shape {tuple(weight.shape)}")
    indices = _index_tensor("indices", indices).to(weight.device)
    return one_hot(indices, weight.shape[0]).to(weight.dtype) @ weight


def _rows(name: str, x: torch.Tensor) -> torch.Tensor:
    """``x`` as a 2-D (n, d) matrix: a 1-D vector becomes one row."""
    float_tensor(name, x)
    if x.dim() > 2:
        raise ValueError(f"{name} must be a vector (d,) or a matrix (n, d); got {tuple(x.shape)}")
    return x.unsqueeze(0) if x.dim() == 1 else x


def cosine_similarity(a: torch.Tensor, b: torch.Tensor | None = None) -> torch.Tensor:
    """All cosines S_C(a_i, b_j) = a_i · b_j / (|a_i| |b_j|) at once.

    ``a``: (n, d) or (d,); ``b``: (m, d) or (d,), default ``a`` itself. Returns the
    (n, m) matrix A_hat B_hatᵀ of the rows normalized to length 1 (a 1-D input counts as
    one row). Values lie in [-1, 1]; a zero vector has no direction, so its cosine is
    undefined and raises ``ValueError``.
    """
    a = _rows("a", a)
    b = a if b is None else _rows("b", b)
    same_device(a=a, b=b)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(
            f"a and b must have the same vector length d; got {tuple(a.shape)} and {tuple(b.shape)}"
        )
    norms_a, norms_b = a.norm(dim=-1, keepdim=True), b.norm(dim=-1, keepdim=True)
    for name, norms in (("a", norms_a), ("b", norms_b)):
        if (norms == 0).any():
            rows = (norms.squeeze(-1) == 0).nonzero().flatten().tolist()
            raise ValueError(f"{name} has zero vectors (rows {rows}): their cosine is undefined")
    return (a / norms_a) @ (b / norms_b).T


class Neighbours(NamedTuple):
    """The k nearest rows: their cosine similarities (largest first) and their indices."""

    similarities: torch.Tensor
    indices: torch.Tensor


def nearest_neighbours(
    query: torch.Tensor, vectors: torch.Tensor, k: int = 5, exclude=()
) -> Neighbours:
    """The ``k`` rows of ``vectors`` with the largest cosine similarity to ``query``.

    ``query``: (d,) or (q, d); ``vectors``: (N, d). ``exclude``: row indices to skip,
    typically the query word's own row (its cosine with itself is 1). Returns
    ``Neighbours(similarities, indices)``, each of shape (k,) for a 1-D query or (q, k),
    sorted from the most similar down, like ``torch.topk``.
    """
    positive_int("k", k)
    single = isinstance(query, torch.Tensor) and query.dim() == 1
    vectors = _rows("vectors", vectors)
    if not isinstance(exclude, int | torch.Tensor):
        exclude = list(exclude) or torch.empty(0, dtype=torch.long)
    excluded = _index_tensor("exclude", exclude).flatten().to(vectors.device)
    if excluded.numel() and (excluded.min() < 0 or excluded.max() >= vectors.shape[0]):
        raise ValueError(
            f"exclude must hold row indices in [0, {vectors.shape[0] - 1}]; got {excluded.tolist()}"
        )
    available = vectors.shape[0] - excluded.unique().numel()
    if k > available:
        raise ValueError(f"k = {k} but only {available} rows of vectors are left to choose from")
    similarities = cosine_similarity(query, vectors)
    similarities[:, excluded] = float("-inf")
    best = similarities.topk(k, dim=-1)
    if single:
        return Neighbours(best.values[0], best.indices[0])
    return Neighbours(best.values, best.indices)


class ContextualUpdate(NamedTuple):
    """E′_i = E_i + Δ, with Δ = Σ_j W_j V_j and the weights W_j (j ≤ i)."""

    updated: torch.Tensor
    delta: torch.Tensor
    weights: torch.Tensor


def contextual_update(
    embeddings: torch.Tensor, position: int, query: torch.Tensor, values: torch.Tensor
) -> ContextualUpdate:
    """The lectures' first contextual update of the word at ``position`` (0-based).

    ``embeddings``: E, shape (n, n_E), row j is E_j; ``query``: Q, shape (n_E,);
    ``values``: V, shape (n, n_E), row j is the change V_j that word j proposes. Only the
    word itself and the words before it count (j ≤ i, with i = ``position``):

        W_j = exp(Qᵀ E_j) / Σ_{k ≤ i} exp(Qᵀ E_k)     (a softmax of dot products)
        Δ = Σ_{j ≤ i} W_j V_j
        E′_i = E_i + Δ

    There is no 1/√n_Q scaling yet (that comes with attention). Returns
    ``ContextualUpdate(updated (n_E,), delta (n_E,), weights (i + 1,))``.
    """
    float_tensor("embeddings", embeddings, min_dim=2)
    float_tensor("query", query)
    float_tensor("values", values, min_dim=2)
    same_device(embeddings=embeddings, query=query, values=values)
    if embeddings.dim() != 2:
        raise ValueError(
            f"embeddings must be a (n, n_E) matrix; got shape {tuple(embeddings.shape)}"
        )
    n, n_e = embeddings.shape
    if query.shape != (n_e,):
        raise ValueError(
            f"query must have shape ({n_e},) like one embedding; got {tuple(query.shape)}"
        )
    if values.shape != (n, n_e):
        raise ValueError(
            f"values must have shape {(n, n_e)}, one change V_j per word; got {tuple(values.shape)}"
        )
    integer(f"position (one of the {n} words)", position, minimum=0, maximum=n - 1)
    seen = embeddings[: position + 1]
    weights = torch.softmax(seen @ query, dim=0)
    delta = weights @ values[: position + 1]
    return ContextualUpdate(embeddings[position] + delta, delta, weights)

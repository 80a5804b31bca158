"""Diagnostic checks for the embeddings notebook's test cells.

The expected values come from libraries, never from an exercise written again:

* a lookup is PyTorch's ``F.embedding`` of the index in the table Wᵀ transposed; reading a
  row instead of a column is the same call on Wᵀ itself;
* cosines are scikit-learn's ``cosine_similarity``; its slips are transformations of that
  output (times the lengths of the rows, 1 − it) or the colleague's draft of exercise 2
  (given in the notebook), and a ranking
  by dot products is scikit-learn's ``linear_kernel``;
* a counterexample to that draft is a pair (a, b) without zero rows (where cosines exist)
  on which the draft returns a value no cosine takes (|x| > 1, or NaN): ``draft_fails_on``
  says whether it does, and the test
  reports that verdict, the same for every right counterexample;
* the neighbours of a word are the other words sorted by scikit-learn's cosines; the slips
  keep the word or read the same order backwards;
* bark's tree feature with m dogs among L words is the first entry of E′ for a sentence of
  L words built so (m dogs, bark the last), by the same kernel; each slip is that kernel on
  other words, or its change counted once per dog;
* an update E′_i is E_i plus PyTorch's ``F.scaled_dot_product_attention`` without scaling
  (``scale=1``), causal for a whole sentence; each slip is that call on other inputs or
  with another mask or scale, or its output changed as the slip changes it (no residual;
  the softmax's axis: the same kernel with queries and keys exchanged and the mask
  transposed, its weights read through an identity matrix of values).
"""

import math

import torch
import torch.nn.functional as F

from .core import as_tensor, check_close, counterexample_parts
from .guards import checked_plainly

__all__ = [
    "EMBEDDING_MISTAKES",
    "check_contextual_update",
    "check_cosine_matrix",
    "check_draft_fails",
    "check_lookup",
    "check_many_dogs",
    "check_neighbours",
    "check_updated_embeddings",
    "draft_fails_on",
]

EMBEDDING_MISTAKES = {
    "row_not_column": "you took a ROW of Wᵀ; the embedding of word n is its n-th COLUMN "
    "(look at which index of Wᵀ the one-hot vector meets in the product)",
    "dot_product": "you returned the dot products, not the cosines: look at what S_C divides "
    "u · v by",
    "first_norm": "you divided by the lengths of the rows of a only: the denominator of S_C "
    "has a length from each side",
    "second_norm": "you divided by the lengths of the rows of b only: the denominator of S_C "
    "has a length from each side",
    "distance": "you returned the cosine distance 1 − cos θ; the similarity is cos θ itself",
    "draft": "your cosine_matrix returns what the colleague's draft returns: one of its lines "
    "does not compute S_C (exercise 2b)",
    "draft_gives_cosines": "on your counterexample every entry the draft returns lies in "
    "[-1, 1], and could be a cosine: look for an input on which some entry cannot be a "
    "cosine (the cell after exercise 2b prints the draft's output)",
    "includes_itself": "your neighbours include the word itself (its cosine with itself is 1): "
    "leave it out",
    "ascending": "your neighbours are sorted from the least similar up: the most similar comes "
    "first",
    "dot_ranking": "you ranked by dot products, which favour long vectors: look at what else "
    "than the angle a dot product grows with",
    "distance_ranking": "you ranked by the distances between the vectors as they are: a long "
    "vector lies far from a short one even when they point the same way (look at what "
    "|u − v|² is made of)",
    "no_softmax": "you used the raw dot products Qᵀ E_j as weights: the weights W_j are "
    "positive and sum to 1 (look at the display of W_j)",
    "delta_only": "you returned Δ alone: look at what E′_i adds Δ to",
    "overflow": "e^x overflows in floating point (beyond x ≈ 88.7 in float32, 709.8 in "
    "float64), and inf / inf is NaN. The weights are a ratio of exponentials: find a form of "
    "that ratio whose exponentials stay finite (exercise 4's text)",
    "later_words": "you let words AFTER position i contribute too: the sum runs over j ≤ i",
    "no_causal_mask": "row i mixes in the words AFTER word i too",
    "no_residual": "you returned the changes Δ_i alone: look at what E′_i adds them to",
    "softmax_axis": "you took the softmax down the columns (over the words i that ask): for "
    "each word i the weights over j ≤ i must sum to 1 (look at the axis of your softmax)",
    "scaled": "you divided the scores by √n_E: this update uses the raw dot products "
    "Q_i · E_j (the scaling comes with attention)",
    "transposed": "you computed E_i · Q_j instead of Q_i · E_j: row i of the scores compares "
    "word i's query with every word's embedding",
    # where a NaN or inf comes from (the symptom and where to look, never the fix)
    "dogs_add": "each of your dogs removes what one dog alone would remove: look at how the "
    "softmax shares its weight when several words score alike",
    "bark_left_out": "your sum leaves out bark itself: the weights run over all L words, bark "
    "the last of them",
    "no_denominator": "your weights are e^(Q·E_i) without the softmax's denominator",
    "zero_length": "a division by a length of 0: look at which lengths you divide by",
    "not_finite_update": "an exponential that overflowed, or a row of weights that sums to 0 "
    "(0/0): look at each row's scores where they enter the softmax",
}


@checked_plainly
def check_lookup(actual, weight_t, index: int, name: str = "lookup") -> None:
    """Fail unless ``actual`` is column ``index`` of Wᵀ (``weight_t``, shape (d, N))."""
    weight_t = as_tensor(weight_t, "Wᵀ")
    word = torch.tensor(index)
    mistakes = {}
    if weight_t.shape[0] == weight_t.shape[1]:
        mistakes[EMBEDDING_MISTAKES["row_not_column"]] = F.embedding(word, weight_t)
    check_close(actual, F.embedding(word, weight_t.T), name, mistakes=mistakes)


@checked_plainly
def check_cosine_matrix(actual, a, b, name: str = "cosine similarities", atol=1e-4) -> None:
    """Fail unless ``actual`` is the (n, m) matrix of cosines between the rows of a and b."""
    from sklearn.metrics.pairwise import cosine_similarity

    a, b = as_tensor(a, "a"), as_tensor(b, "b")
    expected = torch.as_tensor(cosine_similarity(a.numpy(), b.numpy()))
    lengths_a, lengths_b = a.norm(dim=1)[:, None], b.norm(dim=1)[None, :]
    mistakes = {
        EMBEDDING_MISTAKES["dot_product"]: expected * lengths_a * lengths_b,
        EMBEDDING_MISTAKES["first_norm"]: expected * lengths_b,
        EMBEDDING_MISTAKES["second_norm"]: expected * lengths_a,
        EMBEDDING_MISTAKES["distance"]: 1 - expected,
    }
    drafted = _draft(a, b)
    if torch.isfinite(drafted).all():  # a NaN of the draft is the zero_length hint's case
        mistakes[EMBEDDING_MISTAKES["draft"]] = drafted
    check_close(actual, expected, name, atol=atol, mistakes=mistakes,
                nan_hint=EMBEDDING_MISTAKES["zero_length"])


def _draft(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """What the colleague's draft of 01's exercise 2, given in the notebook, returns."""
    return (a / a.norm(dim=0, keepdim=True)) @ (b / b.norm(dim=0, keepdim=True)).T


def draft_fails_on(counterexample) -> bool:
    """Whether the colleague's draft of exercise 2 returns, on ``counterexample`` = (a, b),
    two matrices (n, d) and (m, d) with no zero row, an entry no cosine takes: |x| > 1, or
    NaN. Fails, naming the problem, when ``counterexample`` is not such a pair."""
    pair = counterexample_parts(counterexample, "write (a, b), two small matrices, under the "
                                "draft", "(a, b) of matrices")
    a, b = (as_tensor(matrix, "counterexample") for matrix in pair)
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[1] or 0 in a.shape + b.shape:
        raise AssertionError(f"counterexample: a and b must be matrices (n, d) and (m, d) "
                             f"with the same number d of columns; got shapes "
                             f"{tuple(a.shape)} and {tuple(b.shape)}")
    if not (a.any(dim=1).all() and b.any(dim=1).all()):
        raise AssertionError("counterexample: a row of a or b is all zeros, and a zero vector "
                             "has no cosine with anything, so it shows nothing about the "
                             "draft: give every row a nonzero entry")
    drafted = _draft(a, b)
    return bool(((drafted.abs() > 1 + 1e-6) | drafted.isnan()).any())


@checked_plainly
def check_draft_fails(fails, name: str = "counterexample") -> None:
    """Fail unless ``fails``, ``draft_fails_on(counterexample)``, is True."""
    if fails is not True:
        raise AssertionError(f"{name}: {EMBEDDING_MISTAKES['draft_gives_cosines']}.")


@checked_plainly
def check_neighbours(actual, word: str, words, vectors, k: int, name: str = "neighbours") -> None:
    """Fail unless ``actual`` lists the k words most cosine-similar to ``word``, best first.

    ``words`` names the rows of ``vectors`` (N, d); ``word`` itself is not a neighbour.
    """
    from sklearn.metrics.pairwise import cosine_similarity, euclidean_distances, linear_kernel

    words = list(words)
    vectors = as_tensor(vectors, "vectors").numpy()
    if not isinstance(actual, list | tuple) or not all(isinstance(w, str) for w in actual):
        raise AssertionError(f"{name} must be a list of words (str); got {actual!r}")
    actual = list(actual)
    me = words.index(word)

    def ranked(scores, skip_self: bool = True, descending: bool = True) -> list:
        order = torch.as_tensor(scores[0]).argsort(descending=descending, stable=True).tolist()
        return [words[j] for j in order if not (skip_self and j == me)][:k]

    cosines = cosine_similarity(vectors[me : me + 1], vectors)
    expected = ranked(cosines)
    if actual == expected:
        return
    if len(actual) != k:
        raise AssertionError(f"{name} should hold k = {k} words; got {len(actual)}: {actual}")
    mistakes = {
        EMBEDDING_MISTAKES["includes_itself"]: ranked(cosines, skip_self=False),
        EMBEDDING_MISTAKES["ascending"]: ranked(cosines, descending=False),
        EMBEDDING_MISTAKES["dot_ranking"]: ranked(linear_kernel(vectors[me : me + 1], vectors)),
        EMBEDDING_MISTAKES["distance_ranking"]: ranked(
            euclidean_distances(vectors[me : me + 1], vectors), descending=False),
    }
    for message, wrong in mistakes.items():
        if actual == wrong:
            raise AssertionError(f"{name} is not right: {message}.")
    raise AssertionError(f"{name} is not right.\n  expected: {expected}\n  got:      {actual}")


@checked_plainly
def check_contextual_update(
    actual, embeddings, position: int, query, values, name: str = "E′_i", atol=1e-4
) -> None:
    """Fail unless ``actual`` is E′_i: word ``position`` of the sentence E, updated by the
    words up to it with the query Q and the values V (exercise 4).

    The inputs are finite, and so is E′_i however large the scores: an answer with NaN or
    inf computed e^{Qᵀ E_j} as written, and it overflowed.
    """
    answer = as_tensor(actual, name)
    if not torch.isfinite(answer).all():
        raise AssertionError(f"{name} contains NaN or inf: {EMBEDDING_MISTAKES['overflow']}.")
    e, q, v = as_tensor(embeddings, "E"), as_tensor(query, "Q")[None], as_tensor(values, "V")
    seen, seen_values = e[: position + 1], v[: position + 1]
    delta = F.scaled_dot_product_attention(q, seen, seen_values, scale=1.0)[0]
    mistakes = {
        EMBEDDING_MISTAKES["no_softmax"]: e[position] + (F.linear(q, seen) @ seen_values)[0],
        EMBEDDING_MISTAKES["delta_only"]: delta,
        EMBEDDING_MISTAKES["later_words"]: e[position]
        + F.scaled_dot_product_attention(q, e, v, scale=1.0)[0],
    }
    check_close(answer, e[position] + delta, name, atol=atol, mistakes=mistakes)


def _down_the_columns(e: torch.Tensor, q: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """E plus the values weighted by a softmax over the words i that ask (for each j ≤ i):
    the kernel with E asking and Q answering, the mask transposed, its weights read
    through an identity matrix of values and transposed back."""
    n = e.shape[0]
    weights = F.scaled_dot_product_attention(
        e, q, torch.eye(n, dtype=e.dtype), attn_mask=torch.ones(n, n, dtype=torch.bool).triu(),
        scale=1.0,
    )
    return e + weights.T @ v


@checked_plainly
def check_updated_embeddings(actual, embeddings, queries, values, name: str = "E′",
                             atol=1e-4) -> None:
    """Fail unless ``actual`` is E′, every word of the sentence E updated at once by the
    words up to it, with its own query (row i of Q) and the values V (exercise 5).

    ``embeddings`` E, ``queries`` Q and ``values`` V all have shape (n, n_E); the expected
    E′ has shape (n, n_E).
    """
    e, q = as_tensor(embeddings, "E"), as_tensor(queries, "Q")
    v = as_tensor(values, "V")

    def kernel(queries, keys, causal=True, scale=1.0):
        return F.scaled_dot_product_attention(queries, keys, v, is_causal=causal, scale=scale)

    expected = e + kernel(q, e)
    mistakes = {
        EMBEDDING_MISTAKES["no_causal_mask"]: e + kernel(q, e, causal=False),
        EMBEDDING_MISTAKES["no_residual"]: expected - e,
        EMBEDDING_MISTAKES["softmax_axis"]: _down_the_columns(e, q, v),
        EMBEDDING_MISTAKES["scaled"]: e + kernel(q, e, scale=None),
        EMBEDDING_MISTAKES["transposed"]: e + kernel(e, q),
    }
    check_close(actual, expected, name, atol=atol, mistakes=mistakes,
                nan_hint=EMBEDDING_MISTAKES["not_finite_update"])


def _dogs_and_bark(dogs: int, length: int) -> tuple[torch.Tensor, torch.Tensor]:
    """E and V of ``length`` words of the bark example: ``dogs`` dogs, then words with no
    animal feature, bark the last; each dog proposes the dog's change, every other word 0."""
    dog, other = [0.0, 0.5, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0, 1.0]
    words = torch.tensor([dog] * dogs + [other] * (length - dogs - 1) + [[1.0, 1.0, 1.0, 0.0, 0.0]],
                         dtype=torch.float64)
    values = torch.zeros_like(words)
    values[:dogs] = torch.tensor([-1.0, 0.0, -1.0, 0.0, 0.0], dtype=torch.float64)
    return words, values


def _tree_change(words: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """The tree entry of Δ over ``words``, by the kernel with the animal query."""
    query = torch.tensor([[0.0, 0.0, 0.0, 5.0, 0.0]], dtype=torch.float64)
    return F.scaled_dot_product_attention(query, words, values, scale=1.0)[0, 0]


@checked_plainly
def check_many_dogs(actual, dogs: int, length: int, name: str = "many_dogs") -> None:
    """Fail unless ``actual`` is bark's tree feature in E′ when ``dogs`` of the first
    ``length`` words are *dog* (0 ≤ dogs < length), *bark* the last: the bark example's
    features, query and values (the written question on many dogs)."""
    if not 0 <= dogs < length:
        raise ValueError(f"{name}: the test's sentence needs 0 ≤ dogs < length, got "
                         f"{dogs} dogs among {length} words")
    words, values = _dogs_and_bark(dogs, length)   # bark's own tree feature is 1
    mistakes = {
        EMBEDDING_MISTAKES["dogs_add"]: 1 + dogs * _tree_change(*_dogs_and_bark(1, length)),
        EMBEDDING_MISTAKES["bark_left_out"]: 1 + _tree_change(words[:-1], values[:-1]),
        EMBEDDING_MISTAKES["no_denominator"]: 1 - dogs * math.exp(5),
    }
    check_close(actual, 1 + _tree_change(words, values), name, atol=1e-6, mistakes=mistakes)

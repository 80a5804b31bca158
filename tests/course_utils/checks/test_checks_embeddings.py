"""Every diagnostic of course_utils.checks.embeddings: the modelled mistake triggers its
message, right answers (tensor, list, numpy, float32 or float64) trigger none."""

import math
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from course_utils import checks
from course_utils.checks.embeddings import EMBEDDING_MISTAKES


def random(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def message(key: str) -> str:
    """A regular expression matching the message of ``EMBEDDING_MISTAKES[key]``."""
    return re.escape(EMBEDDING_MISTAKES[key])


# inputs shared by the cases

W_T = random(4, 4, seed=3)
A, B = random(3, 5, seed=1) * 3, random(4, 5, seed=2)
WORDS = [f"w{n}" for n in range(8)]
VECTORS = random(8, 3, seed=12) * torch.linspace(0.2, 6.0, 8)[:, None]


def cosine_order(me: int = 2) -> list[str]:
    cosines = F.cosine_similarity(VECTORS[me : me + 1], VECTORS, dim=1)
    return [WORDS[n] for n in cosines.argsort(descending=True).tolist()]


def bark_sentence():
    """I hope her dog doesn't bark when I knock: features (tree, noise, treat, animal, other)."""
    other = [0.0, 0.0, 0.0, 0.0, 1.0]
    rows = [other, other, other, [0.0, 0.5, 0.0, 1.0, 0.0], other, [1.0, 1.0, 1.0, 0.0, 0.0]]
    embeddings = torch.tensor(rows + [other, other, [0.0, 0.5, 0.0, 0.0, 0.5]])
    values = torch.zeros_like(embeddings)
    values[3] = torch.tensor([-1.0, 0.0, -1.0, 0.0, 0.0])
    return embeddings, torch.tensor([0.0, 0.0, 0.0, 5.0, 0.0]), values


E1, Q1, V1 = bark_sentence()


def one_update(e, q, v, i):
    return e[i] + torch.softmax(e[: i + 1] @ q, dim=0) @ v[: i + 1]


E, Q, V = (random(6, 4, seed=s, dtype=torch.float64) * 1.5 for s in (20, 21, 22))


def whole_update(scale=1.0, mask=True, residual=True, dim=-1, scores=None):
    """E′ written independently of the check: SDPA for the right answer, loops otherwise."""
    if scores is None:
        scores = Q @ E.T
    scores = scores * scale
    if mask:
        scores = scores.masked_fill(torch.ones(6, 6, dtype=torch.bool).triu(1), float("-inf"))
    delta = torch.softmax(scores, dim=dim) @ V
    return E + delta if residual else delta


ZERO_COLUMN_A = torch.tensor([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]])
ZERO_COLUMN_B = torch.tensor([[3.0, 0.0], [-1.0, 0.0]])


def literal_softmax(scores):
    """The causal softmax of (6, 6) scores as displayed: e^s over the sum, nothing against
    overflow."""
    exps = torch.exp(scores).masked_fill(torch.ones(6, 6, dtype=torch.bool).triu(1), 0.0)
    return exps / exps.sum(dim=-1, keepdim=True)


RIGHT_UPDATE = F.scaled_dot_product_attention(Q, E, V, is_causal=True, scale=1.0) + E


# every mistake: (key, the check called with that mistake)

MISTAKES = {
    "row_not_column": lambda: checks.check_lookup(W_T[2], W_T, 2),
    "dot_product": lambda: checks.check_cosine_matrix(A @ B.T, A, B),
    "first_norm": lambda: checks.check_cosine_matrix(A @ B.T / A.norm(dim=1, keepdim=True), A, B),
    "second_norm": lambda: checks.check_cosine_matrix(A @ B.T / B.norm(dim=1), A, B),
    "distance": lambda: checks.check_cosine_matrix(
        1 - F.cosine_similarity(A[:, None], B[None], dim=-1), A, B
    ),
    # exercise 2's draft as it stands: the lengths of the columns, not of the rows
    "draft": lambda: checks.check_cosine_matrix(
        A / A.norm(dim=0) @ (B / B.norm(dim=0)).T, A, B
    ),
    # one-hot rows: the draft gives the identity there, as cosines would
    "draft_gives_cosines": lambda: checks.check_draft_fails(
        checks.draft_fails_on((torch.eye(3), torch.eye(3)))
    ),
    "includes_itself": lambda: checks.check_neighbours(cosine_order()[:3], "w2", WORDS, VECTORS, 3),
    "ascending": lambda: checks.check_neighbours(
        cosine_order()[::-1][:3], "w2", WORDS, VECTORS, 3
    ),
    "dot_ranking": lambda: checks.check_neighbours(
        [WORDS[n] for n in (VECTORS @ VECTORS[2]).argsort(descending=True).tolist() if n != 2][:3],
        "w2", WORDS, VECTORS, 3,
    ),
    "distance_ranking": lambda: checks.check_neighbours(
        [WORDS[n] for n in torch.cdist(VECTORS[2:3], VECTORS)[0].argsort().tolist() if n != 2][:3],
        "w2", WORDS, VECTORS, 3,
    ),
    "no_softmax": lambda: checks.check_contextual_update(
        E1[5] + (E1[:6] @ Q1) @ V1[:6], E1, 5, Q1, V1
    ),
    "delta_only": lambda: checks.check_contextual_update(
        one_update(E1, Q1, V1, 5) - E1[5], E1, 5, Q1, V1
    ),
    "later_words": lambda: checks.check_contextual_update(
        E1[5] + torch.softmax(E1 @ Q1, dim=0) @ V1, E1, 5, Q1, V1
    ),
    # the displayed softmax computed as written, with the dog scoring 1000: inf / inf
    "overflow": lambda: checks.check_contextual_update(
        E1[5] + torch.exp(E1[:6] @ (200 * Q1)) / torch.exp(E1[:6] @ (200 * Q1)).sum() @ V1[:6],
        E1, 5, 200 * Q1, V1,
    ),
    "no_causal_mask": lambda: checks.check_updated_embeddings(whole_update(mask=False), E, Q, V),
    "no_residual": lambda: checks.check_updated_embeddings(whole_update(residual=False), E, Q, V),
    "softmax_axis": lambda: checks.check_updated_embeddings(whole_update(dim=0), E, Q, V),
    "scaled": lambda: checks.check_updated_embeddings(whole_update(scale=0.5), E, Q, V),
    "transposed": lambda: checks.check_updated_embeddings(whole_update(scores=E @ Q.T), E, Q, V),
    # exercise 2's draft (the lengths of the columns) on rows of b with a column of zeros: 0/0
    "zero_length": lambda: checks.check_cosine_matrix(
        ZERO_COLUMN_A / ZERO_COLUMN_A.norm(dim=0) @ (ZERO_COLUMN_B / ZERO_COLUMN_B.norm(dim=0)).T,
        ZERO_COLUMN_A, ZERO_COLUMN_B,
    ),
    # the whole sentence's softmax computed as written, with queries 1000 times longer
    "not_finite_update": lambda: checks.check_updated_embeddings(
        E + literal_softmax(1000 * Q @ E.T) @ V, E, 1000 * Q, V
    ),
    # bark's tree feature with 3 dogs among 10 words: each dog as if alone (weight e⁵ / (e⁵ + 9)),
    # the softmax over the 9 words before bark, and weights e^(Q·E) without their sum
    "dogs_add": lambda: checks.check_many_dogs(1 - 3 * math.exp(5) / (math.exp(5) + 9), 3, 10),
    "bark_left_out": lambda: checks.check_many_dogs(1 - 3 * math.exp(5) / (3 * math.exp(5) + 6),
                                                    3, 10),
    "no_denominator": lambda: checks.check_many_dogs(1 - 3 * math.exp(5), 3, 10),
}


def test_every_message_has_a_case():
    assert set(MISTAKES) == set(EMBEDDING_MISTAKES)


@pytest.mark.parametrize("key", sorted(MISTAKES))
def test_the_mistake_triggers_its_message(key):
    with pytest.raises(AssertionError, match=message(key)):
        MISTAKES[key]()


# right answers trigger nothing, whatever their type


def test_right_lookups_pass():
    checks.check_lookup(W_T[:, 2], W_T, 2)
    checks.check_lookup(W_T[:, 2].tolist(), W_T, 2)
    checks.check_lookup(W_T.double().numpy()[:, 2], W_T, 2)
    wide = random(3, 9, seed=5)
    checks.check_lookup(wide @ F.one_hot(torch.tensor(8), 9).float(), wide, 8)


@pytest.mark.parametrize("counterexample", [
    ([[3.0, 4.0]], [[3.0, 4.0]]),                          # a column's length is one entry's
    (np.array([[1.0, 1.0], [1.0, 0.0]]), torch.ones(1, 2)),  # NumPy and torch: |x| > 1
    (torch.eye(2), torch.tensor([[3.0, 0.0], [-1.0, 0.0]])),  # a column of zeros: NaN
])
def test_a_counterexample_to_the_draft_passes(counterexample):
    assert checks.draft_fails_on(counterexample) is True
    checks.check_draft_fails(checks.draft_fails_on(counterexample))


@pytest.mark.parametrize("counterexample, words", [
    (..., "still `...`"),
    ([[1.0, 2.0]], "a pair"),
    (([[1.0, 2.0]], [[1.0]]), "same number d of columns"),
    (([[1.0, 2.0]], "ab"), "must be numbers"),
    (([[0.0, 0.0]], [[1.0, 0.0]]), "a zero vector has no cosine"),   # the draft's NaN: 0/0
    ((torch.eye(2), torch.tensor([[1.0, 1.0], [0.0, 0.0]])), "a zero vector has no cosine"),
])
def test_a_malformed_counterexample_is_named(counterexample, words):
    with pytest.raises(AssertionError, match=re.escape(words)):
        checks.draft_fails_on(counterexample)


def test_right_cosine_matrices_pass():
    right = F.cosine_similarity(A[:, None], B[None], dim=-1)
    checks.check_cosine_matrix(right, A, B)
    checks.check_cosine_matrix(F.normalize(A.double()) @ F.normalize(B.double()).T, A, B)
    a, b = A.numpy(), B.numpy()
    by_numpy = (a @ b.T) / np.outer(np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1))
    checks.check_cosine_matrix(by_numpy, A, B)
    checks.check_cosine_matrix(right.tolist(), A, B)


def test_right_neighbours_pass_as_a_list_or_tuple():
    checks.check_neighbours(cosine_order()[1:4], "w2", WORDS, VECTORS, 3)
    checks.check_neighbours(tuple(cosine_order()[1:4]), "w2", WORDS, VECTORS, 3)
    checks.check_neighbours(cosine_order(0)[1:2], "w0", WORDS, VECTORS.double(), 1)


def test_right_single_updates_pass():
    e, q, v = bark_sentence()
    for i in (0, 5, 8):
        checks.check_contextual_update(one_update(e, q, v, i), e, i, q, v)
    checks.check_contextual_update(one_update(e.double(), q.double(), v.double(), 5).numpy(),
                                   e, 5, q, v)
    checks.check_contextual_update(one_update(e, 200 * q, v, 5), e, 5, 200 * q, v)  # score 1000


def test_right_whole_sentence_updates_pass():
    checks.check_updated_embeddings(RIGHT_UPDATE, E, Q, V)
    checks.check_updated_embeddings(whole_update(), E, Q, V)
    checks.check_updated_embeddings(RIGHT_UPDATE.float(), E.float(), Q.float(), V.float())
    checks.check_updated_embeddings(RIGHT_UPDATE.tolist(), E, Q, V)
    # a mask of −1e9 instead of −∞ gives the same weights
    scores = (Q @ E.T).masked_fill(torch.ones(6, 6, dtype=torch.bool).triu(1), -1e9)
    checks.check_updated_embeddings(E + torch.softmax(scores, dim=-1) @ V, E, Q, V)
    one = random(1, 3, seed=30, dtype=torch.float64)
    checks.check_updated_embeddings(one + one, one, one, one)


def test_the_whole_sentence_update_reproduces_the_bark_example():
    e, q, v = bark_sentence()
    everyone_asks = q.expand(len(e), -1)
    right = F.scaled_dot_product_attention(everyone_asks, e, v, is_causal=True, scale=1.0) + e
    checks.check_updated_embeddings(right, e, everyone_asks, v)
    assert torch.allclose(right[5], one_update(e, q, v, 5))


# the generic failures: wrong shape, wrong type, other wrong values


def test_other_wrong_answers_fail_with_expected_and_got():
    with pytest.raises(AssertionError, match="shape"):
        checks.check_cosine_matrix(F.cosine_similarity(A[:, None], B[None], dim=-1).T, A, B)
    with pytest.raises(AssertionError, match=r"shape \(6, 4\)"):
        checks.check_updated_embeddings(RIGHT_UPDATE[-1], E, Q, V)
    with pytest.raises(AssertionError, match="expected"):
        checks.check_updated_embeddings(RIGHT_UPDATE + 0.1, E, Q, V)
    with pytest.raises(AssertionError, match="None"):
        checks.check_updated_embeddings(None, E, Q, V)
    with pytest.raises(AssertionError, match="k = 3 words"):
        checks.check_neighbours(cosine_order()[1:3], "w2", WORDS, VECTORS, 3)
    with pytest.raises(AssertionError, match="list of words"):
        checks.check_neighbours("w1 w3 w4", "w2", WORDS, VECTORS, 3)
    with pytest.raises(AssertionError, match="expected"):
        checks.check_neighbours(cosine_order()[2:5], "w2", WORDS, VECTORS, 3)


def test_the_single_update_check_accepts_the_lectures_worked_example():
    """E′_6 of the bark sentence by hand: W_dog = e⁵ / (e⁵ + 5), E′_6 = E_6 + W_dog V_dog."""
    w_dog = math.exp(5) / (math.exp(5) + 5)
    by_hand = [1 - w_dog, 1.0, 1 - w_dog, 0.0, 0.0]
    checks.check_contextual_update(by_hand, E1, 5, Q1, V1)
    with pytest.raises(AssertionError, match="not right"):
        checks.check_contextual_update([1 - w_dog / 2, 1.0, 1 - w_dog / 2, 0.0, 0.0], E1, 5, Q1, V1)


def test_the_many_dogs_check_accepts_the_softmax_worked_by_hand():
    """m dogs among L words: each dog weighs e⁵ / (m e⁵ + L − m), bark keeps 1 − m times it."""
    for dogs, length in ((0, 4), (1, 6), (3, 10), (19, 20)):
        by_hand = 1 - dogs * math.exp(5) / (dogs * math.exp(5) + length - dogs)
        checks.check_many_dogs(by_hand, dogs, length)
        checks.check_many_dogs(torch.tensor(by_hand, dtype=torch.float64), dogs, length)
    with pytest.raises(AssertionError, match="not right"):
        checks.check_many_dogs(0.5, 3, 10)
    with pytest.raises(ValueError, match="0 ≤ dogs < length"):
        checks.check_many_dogs(0.5, 10, 10)

"""course_utils.words.embeddings and its checks, against torch, scikit-learn and the seeds'
examples."""

import math

import pytest
import torch
import torch.nn.functional as F
from sklearn.metrics.pairwise import cosine_similarity as sklearn_cosine
from sklearn.neighbors import NearestNeighbors

from course_utils.words.embeddings import (
    contextual_update,
    cosine_similarity,
    lookup,
    nearest_neighbours,
    one_hot,
)


def random(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# one-hot vectors I(w)


def test_one_hot_matches_torch_and_the_furniture_example():
    # seed 002, (11.2): table, bed, couch, chair in that order
    chair = one_hot(3, 4)
    assert chair.tolist() == [0.0, 0.0, 0.0, 1.0]
    ids = torch.tensor([[2, 0], [1, 3]])
    assert torch.equal(one_hot(ids, 4), F.one_hot(ids, 4).float())


def test_one_hot_vectors_are_all_equally_different():
    codes = one_hot(torch.arange(4), 4)
    assert torch.equal(codes @ codes.T, torch.eye(4))
    distances = torch.cdist(codes, codes)
    assert torch.allclose(distances[~torch.eye(4, dtype=torch.bool)], torch.tensor(math.sqrt(2)))


@pytest.mark.parametrize(
    ("indices", "num_words", "error", "message"),
    [
        (4, 4, ValueError, r"\[0, 3\]"),
        (-1, 4, ValueError, r"\[0, 3\]"),
        (torch.tensor([0.0, 1.0]), 4, TypeError, "integer dtype"),
        (True, 4, TypeError, "bool"),
        ("table", 4, TypeError, "integer"),
        (0, 0, ValueError, ">= 1"),
    ],
)
def test_one_hot_rejects_bad_input(indices, num_words, error, message):
    with pytest.raises(error, match=message):
        one_hot(indices, num_words)


# the lookup Wᵀ I(w)


def test_lookup_is_a_column_of_w_transpose_and_equals_nn_embedding():
    weight = random(10, 3)  # W: one row per word; Wᵀ (3, 10) has one column per word
    ids = torch.tensor([[7, 0, 7], [2, 9, 4]])
    table = torch.nn.Embedding.from_pretrained(weight)
    assert torch.allclose(lookup(weight, ids), table(ids))
    assert torch.allclose(lookup(weight, 7), weight.T @ F.one_hot(torch.tensor(7), 10).float())
    assert lookup(weight, ids).shape == (2, 3, 3)


def test_lookup_rejects_bad_input():
    with pytest.raises(ValueError, match=r"2-D \(N, d\)"):
        lookup(random(2, 3, 4), 0)
    with pytest.raises(TypeError, match="floating-point"):
        lookup(torch.ones(3, 2, dtype=torch.long), 0)
    with pytest.raises(ValueError, match=r"\[0, 2\]"):
        lookup(random(3, 2), 3)


# cosine similarity


def test_cosine_similarity_matches_scikit_learn_and_torch():
    a, b = random(5, 7, seed=1) * 3, random(4, 7, seed=2)
    expected = torch.as_tensor(sklearn_cosine(a.numpy(), b.numpy()), dtype=torch.float32)
    assert torch.allclose(cosine_similarity(a, b), expected, atol=1e-6)
    torch_pairwise = F.cosine_similarity(a[:, None, :], b[None, :, :], dim=-1)
    assert torch.allclose(cosine_similarity(a, b), torch_pairwise, atol=1e-6)
    assert cosine_similarity(a).shape == (5, 5)
    assert torch.allclose(cosine_similarity(a).diagonal(), torch.ones(5))


def test_cosine_is_the_angle_and_ignores_lengths():
    # seed 003: E1 · E2 = |E1| |E2| cos θ
    e1, e2 = torch.tensor([2.0, 0.0]), torch.tensor([3.0, 3.0])
    assert cosine_similarity(e1, e2).item() == pytest.approx(math.cos(math.pi / 4))
    assert cosine_similarity(5 * e1, e2).item() == pytest.approx(math.cos(math.pi / 4))
    assert cosine_similarity(e1, -e1).item() == pytest.approx(-1.0)
    assert cosine_similarity(e1, torch.tensor([0.0, 1.0])).item() == pytest.approx(0.0)


def test_cosine_similarity_rejects_bad_input():
    with pytest.raises(ValueError, match="zero vectors"):
        cosine_similarity(torch.tensor([[1.0, 0.0], [0.0, 0.0]]))
    with pytest.raises(ValueError, match="same vector length"):
        cosine_similarity(random(2, 3), random(2, 4))
    with pytest.raises(ValueError, match=r"vector \(d,\) or a matrix"):
        cosine_similarity(random(2, 3, 4))
    with pytest.raises(TypeError, match="floating-point"):
        cosine_similarity(torch.ones(2, 3, dtype=torch.long))
    with pytest.raises(TypeError, match="torch.Tensor"):
        cosine_similarity([[1.0, 0.0]])


# nearest neighbours


def test_nearest_neighbours_match_scikit_learn():
    vectors = random(30, 8, seed=3) * torch.linspace(0.1, 4.0, 30)[:, None]
    queries = random(3, 8, seed=4)
    found = nearest_neighbours(queries, vectors, k=5)
    oracle = NearestNeighbors(n_neighbors=5, metric="cosine", algorithm="brute").fit(
        vectors.numpy()
    )
    distances, indices = oracle.kneighbors(queries.numpy())
    assert found.indices.tolist() == indices.tolist()
    assert torch.allclose(found.similarities, torch.as_tensor(1 - distances).float(), atol=1e-5)
    assert (found.similarities[:, :-1] >= found.similarities[:, 1:]).all()


def test_nearest_neighbours_leave_out_excluded_rows():
    vectors = random(12, 4, seed=5)
    found = nearest_neighbours(vectors[6], vectors, k=3)
    assert found.indices[0].item() == 6 and found.similarities[0].item() == pytest.approx(1.0)
    without_self = nearest_neighbours(vectors[6], vectors, k=3, exclude=[6])
    assert without_self.indices.tolist() == found.indices[1:].tolist() + [
        nearest_neighbours(vectors[6], vectors, k=4).indices[3].item()
    ]
    assert nearest_neighbours(vectors[6], vectors, k=11, exclude=6).indices.shape == (11,)


def test_nearest_neighbours_reject_bad_input():
    vectors = random(5, 3)
    with pytest.raises(ValueError, match="only 4 rows"):
        nearest_neighbours(vectors[0], vectors, k=5, exclude=[0])
    with pytest.raises(ValueError, match=r"\[0, 4\]"):
        nearest_neighbours(vectors[0], vectors, k=2, exclude=[5])
    with pytest.raises(ValueError, match=">= 1"):
        nearest_neighbours(vectors[0], vectors, k=0)
    with pytest.raises(ValueError, match="same vector length"):
        nearest_neighbours(random(4), vectors, k=2)


# the first contextual update E'_6 = E_6 + Δ (the lectures' bark sentence)


def bark_sentence():
    """I hope her dog doesn't bark when I knock: features (tree, noise, treat, animal, other)."""
    other = [0.0, 0.0, 0.0, 0.0, 1.0]
    rows = [other, other, other, [0.0, 0.5, 0.0, 1.0, 0.0], other, [1.0, 1.0, 1.0, 0.0, 0.0]]
    embeddings = torch.tensor(rows + [other, other, [0.0, 0.5, 0.0, 0.0, 0.5]])
    values = torch.zeros_like(embeddings)
    values[3] = torch.tensor([-1.0, 0.0, -1.0, 0.0, 0.0])
    return embeddings, torch.tensor([0.0, 0.0, 0.0, 5.0, 0.0]), values


def test_contextual_update_turns_bark_into_a_noise_as_worked_by_hand():
    embeddings, query, values = bark_sentence()
    update = contextual_update(embeddings, 5, query, values)
    w_dog = math.exp(5) / (math.exp(5) + 5)
    assert update.weights.tolist() == pytest.approx(
        [(1 - w_dog) / 5] * 3 + [w_dog] + [(1 - w_dog) / 5] * 2
    )
    assert update.delta.tolist() == pytest.approx([-w_dog, 0.0, -w_dog, 0.0, 0.0])
    assert update.updated.tolist() == pytest.approx([1 - w_dog, 1.0, 1 - w_dog, 0.0, 0.0])
    assert update.updated[1] > 0.99 and update.updated[0] < 0.04


def test_contextual_update_equals_unscaled_attention_over_the_words_so_far():
    embeddings, query, values = random(7, 4, seed=6), random(4, seed=7), random(7, 4, seed=8)
    for position in range(7):
        seen = slice(0, position + 1)
        delta = F.scaled_dot_product_attention(
            query[None, None], embeddings[None, seen], values[None, seen], scale=1.0
        )[0, 0]
        update = contextual_update(embeddings, position, query, values)
        assert torch.allclose(update.delta, delta, atol=1e-6)
        assert torch.allclose(update.updated, embeddings[position] + delta, atol=1e-6)
        assert update.weights.sum().item() == pytest.approx(1.0)


def test_contextual_update_ignores_later_words():
    embeddings, query, values = random(6, 3, seed=9), random(3, seed=10), random(6, 3, seed=11)
    changed_e, changed_v = embeddings.clone(), values.clone()
    changed_e[4:] += 10.0
    changed_v[4:] -= 10.0
    before = contextual_update(embeddings, 3, query, values).updated
    assert torch.equal(before, contextual_update(changed_e, 3, query, changed_v).updated)


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ((random(4, 3), 4, random(3), random(4, 3)), ValueError, r"4 words\) must be <= 3; got 4"),
        ((random(4, 3), 1.0, random(3), random(4, 3)), TypeError, r"words\) must be an int"),
        ((random(4, 3), 1, random(2), random(4, 3)), ValueError, r"query must have shape \(3,\)"),
        (
            (random(4, 3), 1, random(3), random(3, 3)),
            ValueError,
            r"values must have shape \(4, 3\)",
        ),
        ((random(2, 4, 3), 1, random(3), random(4, 3)), ValueError, r"\(n, n_E\)"),
        ((torch.ones(4, 3, dtype=torch.int64), 1, random(3), random(4, 3)), TypeError, "float"),
    ],
)
def test_contextual_update_rejects_bad_input(args, error, message):
    with pytest.raises(error, match=message):
        contextual_update(*args)


# the diagnostic checks of the notebook's test cells:
# tests/course_utils/checks/test_checks_embeddings.py

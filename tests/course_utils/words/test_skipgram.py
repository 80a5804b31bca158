"""course_utils.words (sampling, the trainer, word_eval) against independent oracles: the
lecture's hand-enumerated windows, the word2vec formulas, and gensim."""

from collections import Counter

import pytest
import torch
from gensim.models import Word2Vec
from scipy.stats import spearmanr

from course_utils.data import PLANTED_ROLES, planted_analogy_corpus
from course_utils.words import skipgram as sg
from course_utils.words import vocabulary
from course_utils.words.skipgram_training import (
    _offsets,
    _window_positions,
    noise_table,
    train_skipgram,
)
from course_utils.words.word_eval import WordVectors, analogy_accuracy, word_pair_spearman
from tests.support.skipgram_example import SAMPLE_PAIRS_C2, SENTENCE


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: vocabulary.build_vocabulary([]), ValueError),
        (lambda: vocabulary.build_vocabulary([[], []]), ValueError),
        (lambda: vocabulary.build_vocabulary(["not", "split"]), TypeError),
        (lambda: vocabulary.build_vocabulary([["a", "b"]], min_count=3), ValueError),
        (lambda: train_skipgram([], progress=False), ValueError),
        (
            lambda: train_skipgram([["a", "b"]], window=0, min_count=1, progress=False),
            ValueError,
        ),
        (lambda: train_skipgram([["a", "b"]], lr=-1.0, min_count=1, progress=False), ValueError),
        (lambda: sg.noise_distribution(torch.tensor([3, 0])), ValueError),
        (lambda: sg.keep_probability(torch.tensor([3, 1]), sample=-1.0), ValueError),
        (lambda: WordVectors(["a", "b"], torch.ones(3, 2)), ValueError),
    ],
)
def test_bad_input_raises_a_clear_error(call, error):
    with pytest.raises(error):
        call()


def test_the_trainers_windows_are_the_lectures_and_stop_at_sentences():
    """The trainer's pairs, read off its window positions, are (11.14)'s worked by hand."""
    ids = torch.arange(len(SENTENCE))
    context, valid = _window_positions(ids, _offsets(2), len(ids), torch.zeros_like(ids))
    centers = ids[:, None].expand_as(context)
    found = zip(centers[valid].tolist(), context[valid].tolist(), strict=True)
    pairs = [(SENTENCE[a], SENTENCE[b]) for a, b in found]
    assert Counter(pairs) == Counter(SAMPLE_PAIRS_C2)
    two_sentences = torch.tensor([0, 0, 1, 1, 1])  # "This is" | "a sample sentence"
    context, valid = _window_positions(ids, _offsets(2), len(ids), two_sentences)
    assert valid.sum(1).tolist() == [1, 1, 2, 2, 2]
    assert (two_sentences[context][valid] == two_sentences[:, None].expand_as(context)[valid]).all()


def test_noise_and_subsampling_follow_the_word2vec_formulas():
    counts = torch.tensor([1000, 100, 10, 1])
    noise = sg.noise_distribution(counts)
    torch.testing.assert_close(noise, (counts**0.75 / (counts**0.75).sum()).float())
    keep = sg.keep_probability(counts, sample=0.01)
    share = counts / counts.sum()
    torch.testing.assert_close(
        keep, ((torch.sqrt(share / 0.01) + 1) * 0.01 / share).clamp(max=1).float()
    )
    assert keep[-1] == 1.0 and keep[0] < 0.2
    assert torch.equal(sg.keep_probability(counts, sample=0), torch.ones(4))


def test_noise_table_draws_from_the_noise_distribution():
    counts = torch.tensor([5000, 700, 30, 5, 1])
    table = noise_table(counts, size=10**5)
    empirical = torch.bincount(table, minlength=5) / table.numel()
    torch.testing.assert_close(empirical, sg.noise_distribution(counts), atol=1e-4, rtol=0)
    assert (torch.bincount(table) >= 1).all()  # every word can be drawn


def test_vocabulary_and_encoding_drop_rare_words_and_keep_sentences():
    kept = vocabulary.build_vocabulary([["a", "b", "a"], ["c", "a", "b"]], min_count=2)
    assert kept.words == ("a", "b") and kept.counts.tolist() == [3, 2]
    ids, sentences = vocabulary.encode([["a", "b", "a"], ["c", "a", "b"]], kept)
    assert ids.tolist() == [0, 1, 0, 0, 1] and sentences.tolist() == [0, 0, 0, 1, 1]


@pytest.fixture(scope="module")
def planted():
    return planted_analogy_corpus(3000, seed=0)


def planted_analogies():
    people = [people for people, _ in PLANTED_ROLES.values()]
    return [(m1, f1, m2, f2) for m1, f1 in people for m2, f2 in people if m1 != m2]


@pytest.fixture(scope="module")
def trained(planted):
    torch.set_num_threads(1)
    return train_skipgram(
        planted, dim=30, window=5, epochs=5, min_count=1, batch_size=512, seed=0, progress=False
    )


def test_both_trainers_solve_the_planted_analogies(planted, trained):
    gensim = Word2Vec(
        [list(s) for s in planted], vector_size=30, min_count=1, sg=1, epochs=5, workers=1, seed=0
    )
    ours = trained.vectors
    theirs = WordVectors.from_gensim(gensim.wv)
    assert (
        theirs.most_similar(["king", "woman"], ["man"], topn=1)[0][0] == "queen"
    )  # the oracle works
    assert ours.most_similar(["king", "woman"], ["man"], topn=1)[0][0] == "queen"
    gensim_accuracy, n = analogy_accuracy(theirs, planted_analogies())
    our_accuracy, _ = analogy_accuracy(ours, planted_analogies())
    assert n == 30 and gensim_accuracy >= 0.9, gensim_accuracy
    assert our_accuracy >= gensim_accuracy - 0.1, (our_accuracy, gensim_accuracy)
    assert trained.losses[-1] < trained.losses[0]


def test_evaluation_agrees_with_gensim_on_the_same_vectors(planted):
    gensim = Word2Vec(
        [list(s) for s in planted], vector_size=20, min_count=1, sg=1, epochs=2, workers=1, seed=0
    )
    ours = WordVectors.from_gensim(gensim.wv)
    assert [w for w, _ in ours.most_similar("king", topn=5)] == [
        w for w, _ in gensim.wv.most_similar("king", topn=5)
    ]
    pairs = [
        ("king", "queen", 9.0),
        ("king", "throne", 7.0),
        ("he", "dress", 1.0),
        ("man", "woman", 8.0),
        ("toy", "crown", 0.5),
    ]
    rho, used = word_pair_spearman(ours, pairs + [("king", "unknown", 5.0)])
    assert used == 5
    assert rho == pytest.approx(
        spearmanr(
            [gensim.wv.similarity(a, b) for a, b, _ in pairs], [s for *_, s in pairs]
        ).statistic,
        abs=1e-5,
    )
    questions = planted_analogies()
    accuracy, _ = analogy_accuracy(ours, questions)
    expected = sum(
        gensim.wv.most_similar([b, c], [a], topn=1)[0][0] == d for a, b, c, d in questions
    ) / len(questions)
    assert accuracy == pytest.approx(expected)


def test_trainer_runs_on_the_inputs_device_and_is_seeded(planted):
    small = planted[:300]
    first = train_skipgram(
        small, dim=8, epochs=1, min_count=1, device="cpu", seed=1, progress=False
    )
    second = train_skipgram(
        small, dim=8, epochs=1, min_count=1, device="cpu", seed=1, progress=False
    )
    assert first.vectors.vectors.device.type == "cpu"
    assert torch.equal(first.vectors.vectors, second.vectors.vectors)

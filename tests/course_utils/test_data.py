"""The offline corpora load, are clean, and are what design.md §6 says."""

import pytest

from course_utils import data


def test_wikipedia_corpus_is_about_450k_words_of_plain_text():
    articles = data.wikipedia_articles()
    assert 100 <= len(articles) <= 110
    titles = [title for title, _ in articles]
    assert "Anarchism" in titles and "Aristotle" in titles
    text = data.wikipedia_text()
    assert 2_500_000 < len(text) < 3_500_000
    assert "'''" not in text and "[[" not in text and "==History==" not in text
    words = sum(len(sentence) for sentence in data.wikipedia_sentences())
    assert 400_000 < words < 520_000


def test_lee_corpus_and_tokenizer():
    assert data.tokenize("The dog's BARK, twice!") == ["the", "dog", "s", "bark", "twice"]
    words = sum(len(line) for line in data.lee_sentences())
    assert 50_000 < words < 70_000


def test_evaluation_sets():
    wordsim = data.word_pairs("wordsim353")
    simlex = data.word_pairs("simlex999")
    assert len(wordsim) == 353 and len(simlex) == 999
    assert ("tiger", "cat", 7.35) in wordsim
    assert ("smart", "intelligent", 9.2) in simlex
    questions = data.analogy_questions()
    assert questions["capital-common-countries"][0] == ("athens", "greece", "baghdad", "iraq")
    assert sum(len(q) for q in questions.values()) == 19544


def test_cached_corpora_cannot_be_spoiled_by_one_caller():
    questions = data.analogy_questions()
    with pytest.raises(AttributeError):
        questions.pop("capital-common-countries")  # a student's slip, in one cell
    with pytest.raises(TypeError):
        questions["capital-common-countries"] = ()
    with pytest.raises(TypeError):
        data.wikipedia_sentences()[0][0] = "spoiled"
    assert "capital-common-countries" in data.analogy_questions()


def test_bad_input():
    with pytest.raises(ValueError, match="wordsim353, simlex999; got 'men'"):
        data.word_pairs("men")
    with pytest.raises(TypeError, match="must be a str"):
        data.tokenize(["a", "list"])


def test_planted_corpus_is_seeded_and_has_its_structure():
    first = data.planted_analogy_corpus(200, seed=1)
    assert first == data.planted_analogy_corpus(200, seed=1) != data.planted_analogy_corpus(200)
    assert len(first) == 200 and all(len(sentence) == 10 for sentence in first)
    kings = [s for s in first if "king" in s]
    words_with_king = {word for sentence in kings for word in sentence}
    assert {"throne", "he"} <= words_with_king and not {"she", "school"} & words_with_king
    with pytest.raises(ValueError, match="n_sentences"):
        data.planted_analogy_corpus(0)


def test_the_first_characters_of_wikipedia_are_read_without_parsing_every_article():
    data.wikipedia_articles.cache_clear()
    try:
        start = data.wikipedia_text(100_000)
        assert data.wikipedia_articles.cache_info().currsize == 0  # the lazy path was taken
    finally:
        data.wikipedia_articles.cache_clear()
    whole = data.wikipedia_text()
    assert start == whole[:100_000] and len(start) == 100_000
    assert data.wikipedia_text(100_000) == start  # the cached path agrees
    assert data.wikipedia_text(len(whole) + 10) == whole
    with pytest.raises(ValueError, match="n_chars"):
        data.wikipedia_text(0)

"""course_utils.models.tiny_world: the sentences state the world's facts, and nothing else."""

import pytest
import torch

from course_utils.models.tiny_world import FACTS, WordTokenizer, tiny_world_text


def test_every_sentence_states_facts_of_the_world():
    text = tiny_world_text(500, seed=0)
    sentences = [s.strip() for s in text.split(" .") if s.strip()]
    assert len(sentences) == 500
    people = FACTS["people"]
    for sentence in sentences:
        words = sentence.split()
        if "lives" in words and words[0] in people:
            assert words[words.index("in") + 1] == people[words[0]][0]
        if words[:2] == ["the", "weather"]:
            assert FACTS["weather"][words[3]] == words[-1]
        if words[0] == "the" and words[2:3] == ["is"]:
            assert FACTS["colours"][words[1]] == words[3]
    assert tiny_world_text(20, seed=1) == tiny_world_text(20, seed=1)
    assert tiny_world_text(20, seed=1) != tiny_world_text(20, seed=2)


def test_the_word_tokenizer_round_trips_and_has_a_mask_id():
    tokenizer = WordTokenizer(tiny_world_text(500))
    ids = tokenizer.encode("anna lives in [MASK] .")
    assert ids.dtype == torch.int64 and ids[3] == tokenizer.mask_id == tokenizer.n_vocab
    assert tokenizer.decode(ids) == "anna lives in [MASK] ."
    assert tokenizer.words == sorted(tokenizer.words) and len(tokenizer.words) < 70
    with pytest.raises(ValueError, match="vocabulary"):
        tokenizer.encode("anna lives in london")


def test_the_probes_are_world_sentences_with_their_word_masked():
    from course_utils.models.tiny_world import fill_mask_probes, world_sentences

    true = world_sentences()
    probes = fill_mask_probes()
    assert sum(len(v) for v in probes.values()) == 42
    for pairs in probes.values():
        for sentence, word in pairs:
            assert sentence.count("[MASK]") == 1
            assert sentence.replace("[MASK]", word) in true
    assert set(tiny_world_text(300).replace(" . ", " .\n").splitlines()) <= true


def test_the_reading_questions_of_a_seed_worked_by_hand():
    from course_utils.models.tiny_world import Reading, reading_questions

    first = reading_questions(4, seed=0)
    # grace(0) likes the colour purple .(5) anna(6) has a dog .(10) clara(11) lives in paris(14)
    assert first[0] == Reading("where does clara live ?", "grace likes the colour purple . anna "
                               "has a dog . clara lives in paris .", 14)
    # emma(0) likes the colour red .(5) anna(6) lives in dublin(9) .
    assert first[1] == Reading("where does anna live ?",
                               "emma likes the colour red . anna lives in dublin .", 9)
    # david(0) likes the colour blue .(5) felix(6) lives in cairo . clara has a cat .
    assert first[3].question == "who lives in cairo ?" and first[3].answer == 6
    assert reading_questions(4, seed=0) == first and reading_questions(4, seed=1) != first


@pytest.mark.parametrize("one_kind", [False, True])
def test_every_reading_question_is_answered_by_its_fact_and_only_by_it(one_kind):
    from course_utils.models.tiny_world import QUESTION_WORDS, reading_questions

    vocabulary = set(tiny_world_text(2000).split()) | set(QUESTION_WORDS)
    people, true = FACTS["people"], set()
    for x in reading_questions(300, seed=3, one_kind=one_kind):
        words, asked = x.passage.split(), x.question.split()
        assert set(words + asked) <= vocabulary and asked[-1] == "?"
        sentences = [s.split() for s in x.passage.removesuffix(" .").split(" . ")]
        assert len(sentences) in (2, 3) and words[-1] == "."
        assert len({s[0] for s in sentences}) == len(sentences)          # one fact a person
        assert len({s[-1] for s in sentences}) == len(sentences)        # no value twice
        kinds = {s[1] for s in sentences}                                # lives, has, likes
        assert len(kinds) == (1 if one_kind else len(sentences))
        answer = words[x.answer]
        if asked[0] == "who":                   # the person of the sentence with the value
            assert answer in people and [answer, *asked[1:-1]] in [s[:len(asked) - 1]
                                                                   for s in sentences]
        else:                                   # the value of the person asked about
            person = asked[-3]
            sentence = next(s for s in sentences if s[0] == person)
            assert sentence[-1] == answer
            true.add(answer == people[person][{"where": 0, "what": 1}[asked[0]]
                                               if asked[1] != "colour" else 2])
    assert true == {True, False}            # the world's facts, and others: drawn at random
    with pytest.raises(ValueError):
        reading_questions(0)
    with pytest.raises(TypeError):
        reading_questions(3, one_kind="yes")

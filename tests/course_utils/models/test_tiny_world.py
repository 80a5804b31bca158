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

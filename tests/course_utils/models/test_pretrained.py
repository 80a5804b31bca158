"""course_utils.models.pretrained against MiniLM called directly through transformers' BertModel."""

import pytest
import torch
import torch.nn.functional as F
from transformers import BertModel

from course_utils.device import get_device
from course_utils.models.pretrained import (
    HIDDEN_SIZE,
    contextual_embeddings,
    contextual_embeddings_by_layer,
    input_embeddings,
    load_encoder,
    static_embedding,
    token_positions,
    vocabulary_neighbours,
    word_span,
)

SENTENCES = [
    "I hope her dog doesn't bark when I knock on the door.",
    "The beetles live under the bark of old oak trees.",
    "Chocolate bark.",
]


def direct_hidden_state(oracle, sentence, pieces, layer=6):
    """Mean hidden state over the word pieces ``pieces``, located by their ids, one sentence."""
    tokenizer, model = oracle
    encoded = tokenizer(sentence, return_tensors="pt")
    ids = encoded["input_ids"][0].tolist()
    piece_ids = tokenizer.convert_tokens_to_ids(pieces)
    start = next(i for i in range(len(ids)) if ids[i : i + len(pieces)] == piece_ids)
    with torch.no_grad():
        hidden = model(**encoded, output_hidden_states=True).hidden_states[layer][0]
    return hidden[start : start + len(pieces)].mean(dim=0)


def test_the_encoder_is_a_six_layer_bert_on_the_notebooks_device():
    tokenizer, model = load_encoder()
    assert isinstance(model, BertModel) and not model.training
    assert model.config.num_hidden_layers == 6 and model.config.hidden_size == HIDDEN_SIZE
    assert model.device.type == get_device().type


def test_a_student_who_changes_the_encoder_changes_nothing_else(oracle):
    tokenizer, model = load_encoder("cpu")
    other_tokenizer, other_model = load_encoder("cpu")
    assert model is not other_model and tokenizer is not other_tokenizer
    table = oracle[1].embeddings.word_embeddings.weight
    bark = oracle[0].convert_tokens_to_ids("bark")
    with torch.no_grad():
        model.embeddings.word_embeddings.weight.zero_()
        model.encoder.layer[0].attention.self.query.weight.add_(1.0)
    model.train()
    tokenizer.add_tokens(["barkbark"])
    assert torch.equal(static_embedding("bark", device="cpu"), table[bark])
    expected = direct_hidden_state(oracle, SENTENCES[0], ["bark"])
    assert torch.allclose(contextual_embeddings(SENTENCES[:1], "bark", device="cpu")[0], expected,
                          atol=1e-5)
    assert load_encoder("cpu")[1].embeddings.word_embeddings.weight.abs().sum() > 0
    assert "barkbark" not in load_encoder("cpu")[0].get_vocab()


def test_the_embedding_layer_adds_word_piece_position_and_token_type_rows(oracle):
    tokenizer, model = oracle
    encoded = tokenizer(SENTENCES[0], return_tensors="pt")
    ids, types = encoded["input_ids"][0], encoded["token_type_ids"][0]
    layer = model.embeddings
    assert layer.token_type_embeddings.weight.shape == (2, HIDDEN_SIZE)
    assert types.tolist() == [0] * len(ids)
    rows = (layer.word_embeddings.weight[ids] + layer.position_embeddings.weight[: len(ids)]
            + layer.token_type_embeddings.weight[types])
    with torch.no_grad():
        expected = layer.LayerNorm(rows)
    bark = ids.tolist().index(tokenizer.convert_tokens_to_ids("bark"))
    assert torch.allclose(contextual_embeddings_by_layer(SENTENCES[:1], "bark", device="cpu")[0, 0],
                          expected[bark], atol=1e-5)


def test_nothing_is_fetched_from_the_hub(monkeypatch):
    calls = []
    import transformers

    original = transformers.AutoModel.from_pretrained

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return original(*args, **kwargs)

    monkeypatch.setattr(transformers.AutoModel, "from_pretrained", spy)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    from course_utils.models import pretrained

    pretrained._load.cache_clear()
    try:
        load_encoder("cpu")
    finally:
        pretrained._load.cache_clear()
    assert calls and all(kwargs.get("local_files_only") for kwargs in calls)


def test_static_embedding_is_the_table_row_and_averages_word_pieces(oracle):
    tokenizer, model = oracle
    table = model.embeddings.word_embeddings.weight
    bark = tokenizer.convert_tokens_to_ids("bark")
    assert torch.allclose(static_embedding("bark"), table[bark])
    pieces = tokenizer.convert_tokens_to_ids(["em", "##bed", "##ding", "##s"])
    assert torch.allclose(static_embedding("embeddings"), table[pieces].mean(dim=0), atol=1e-6)


def test_input_embeddings_are_the_same_in_every_sentence():
    vectors = input_embeddings(SENTENCES, "bark")
    assert vectors.shape == (3, HIDDEN_SIZE)
    assert torch.equal(vectors, static_embedding("bark").expand(3, -1))


@pytest.mark.parametrize("layer", [0, 3, 6])
def test_contextual_embeddings_equal_a_direct_bert_call(oracle, layer):
    batched = contextual_embeddings(SENTENCES, "bark", layer=layer)
    for row, sentence in zip(batched, SENTENCES, strict=True):
        expected = direct_hidden_state(oracle, sentence, ["bark"], layer)
        assert torch.allclose(row, expected, atol=1e-5)


def test_every_layer_at_once_equals_one_layer_at_a_time():
    every = contextual_embeddings_by_layer(SENTENCES, "bark")
    assert every.shape == (7, 3, HIDDEN_SIZE)
    for layer in (0, 2, 6):
        assert torch.allclose(every[layer], contextual_embeddings(SENTENCES, "bark", layer=layer))


def test_contextual_vectors_differ_by_sentence_and_group_by_sense():
    dog = ["The dog began to bark at the mailman.", "Our dog will bark at every noise."]
    tree = ["The bark of the oak is rough.", "Moss grew on the bark of the tree."]
    vectors = contextual_embeddings(dog + tree, "bark")
    similarity = F.cosine_similarity(vectors[:, None], vectors[None], dim=-1)
    assert not torch.allclose(vectors[0], vectors[1])
    assert similarity[0, 1] > similarity[0, 2:].max() and similarity[2, 3] > similarity[2, :2].max()


def test_a_word_of_several_pieces_is_averaged_over_them(oracle):
    sentence = "Static embeddings ignore the sentence."
    pieces = ["em", "##bed", "##ding", "##s"]
    assert oracle[0].tokenize("embeddings") == pieces
    expected = direct_hidden_state(oracle, sentence, pieces)
    assert torch.allclose(contextual_embeddings([sentence], "embeddings")[0], expected, atol=1e-5)


def test_word_span_finds_whole_words_only_ignoring_case():
    sentence = "Bark! The dog's barks embark on a bark."
    assert word_span(sentence, "bark") == (0, 4)
    assert word_span(sentence, "bark", occurrence=1) == (34, 38)
    assert word_span("The dog's bark", "dog") == (4, 7)


def test_token_positions_use_the_character_offsets():
    offsets = [(0, 0), (0, 3), (4, 6), (6, 9), (10, 14), (0, 0)]
    assert token_positions(offsets, (4, 9)) == [2, 3]
    assert token_positions(offsets, (10, 14)) == [4]
    with pytest.raises(ValueError, match="no token covers"):
        token_positions(offsets, (20, 24))


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: contextual_embeddings(["The dog barks."], "bark"), ValueError, "does not occur"),
        (lambda: contextual_embeddings(["A bark."], "bark", occurrence=1), ValueError, "1 time"),
        (lambda: contextual_embeddings("A bark.", "bark"), TypeError, "list of str"),
        (lambda: contextual_embeddings([], "bark"), ValueError, "must not be empty"),
        (lambda: contextual_embeddings(["A."], "a", layer=7), ValueError, "layer must be <= 6"),
        (lambda: contextual_embeddings(["A."], "a", layer=True), TypeError, "layer must be an int"),
        (lambda: word_span("A bark.", "bark", occurrence=-1), ValueError, "occurrence must be >="),
        (lambda: contextual_embeddings(["A bark.", 3], "bark"), TypeError, r"sentences\[1\]"),
        (lambda: input_embeddings(["A bark."], "tree bark"), ValueError, "one word"),
        (lambda: static_embedding(""), ValueError, "one word"),
        (lambda: static_embedding(None), TypeError, "must be a str"),
        (
            lambda: vocabulary_neighbours(torch.ones(HIDDEN_SIZE), exclude=["zzzq"]),
            ValueError,
            "zzzq",
        ),
    ],
)
def test_bad_input_raises_clear_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_vocabulary_neighbours_search_the_whole_table(oracle):
    tokenizer, model = oracle
    bark = static_embedding("bark")
    assert vocabulary_neighbours(bark, k=1) == ["bark"]
    found = vocabulary_neighbours(bark, k=5, exclude=["bark"])
    cosines = F.cosine_similarity(bark[None], model.embeddings.word_embeddings.weight, dim=1)
    cosines[tokenizer.all_special_ids + [tokenizer.convert_tokens_to_ids("bark")]] = -2.0
    assert found == tokenizer.convert_ids_to_tokens(cosines.topk(5).indices.tolist())

"""course_utils.models.minilm (MiniLM rebuilt from the course's blocks) against Hugging Face's
BertModel loaded on its own from the packaged files."""

import copy

import pytest
import torch
from transformers import BertModel

from course_utils.device import get_device
from course_utils.models.minilm import MiniLMEncoder, hf_to_course_state_dict, minilm_encoder
from course_utils.models.pretrained import model_path
from course_utils.models.transformer import TransformerBlock
from tests.course_utils.models.test_pretrained import SENTENCES as BARK_SENTENCES

ATOL = 1e-4
# Different lengths, so the batch pads every sentence but the longest one.
PADDED = [
    "Nobel committee awards Strickland who advanced optics",
    "Hi.",
    "Anarchism is a political philosophy that advocates self-governed societies based on "
    "voluntary institutions, often described as stateless societies.",
    "The dog barked.",
    "Attention lets every token look at every other token of the sentence.",
]


@pytest.fixture(scope="module")
def ours():
    return minilm_encoder("cpu")


def both(oracle, ours, batch):
    with torch.no_grad():
        expected = oracle[1](**batch).last_hidden_state
        got = ours(batch["input_ids"], batch["attention_mask"], batch.get("token_type_ids"))
    return got, expected


def assert_every_token_matches(got, expected):
    assert got.shape == expected.shape
    worst = (got - expected).abs().amax(dim=-1)  # (batch, tokens)
    off = (worst > ATOL).nonzero().tolist()
    assert not off, f"(sentence, token) entries off by more than {ATOL}: {off[:10]}"


@pytest.mark.parametrize("sentences", [PADDED, BARK_SENTENCES], ids=["varied", "bark"])
def test_a_padded_batch_equals_bert_at_every_token_padding_included(oracle, ours, sentences):
    batch = oracle[0](sentences, padding=True, return_tensors="pt")
    lengths = batch["attention_mask"].sum(dim=1)
    assert len(set(lengths.tolist())) == len(sentences)  # every sentence has its own length
    got, expected = both(oracle, ours, batch)
    assert_every_token_matches(got, expected)
    padding = batch["attention_mask"] == 0
    assert padding.sum() > 10
    # padded queries attend to the real tokens, in BERT and here: not zeros, not NaN
    assert got[padding].abs().sum(dim=-1).min() > 1


def test_in_float64_it_is_the_same_computation_as_bert_to_1e_10(oracle, ours):
    """In float32 the padding positions differ by up to ~8e-5 (both models are that far
    from their float64 values there); in float64 every token agrees to rounding."""
    batch = oracle[0](PADDED, padding=True, return_tensors="pt")
    bert, model = copy.deepcopy(oracle[1]).double(), copy.deepcopy(ours).double()
    with torch.no_grad():
        expected = bert(**batch).last_hidden_state
        got = model(batch["input_ids"], batch["attention_mask"])
    assert (got - expected).abs().max() < 1e-10


def test_gradients_equal_bert_s_so_it_can_be_fine_tuned(oracle, ours):
    batch = oracle[0](BARK_SENTENCES, padding=True, return_tensors="pt")
    bert, model = copy.deepcopy(oracle[1]), copy.deepcopy(ours)
    target = torch.randn(
        batch["input_ids"].shape + (384,), generator=torch.Generator().manual_seed(0)
    )
    (bert(**batch).last_hidden_state * target).sum().backward()
    (model(batch["input_ids"], batch["attention_mask"]) * target).sum().backward()
    layer, block = bert.encoder.layer[0], model.blocks[0]
    parts = (layer.attention.self.query, layer.attention.self.key, layer.attention.self.value)
    pairs = [
        (block.self_attn.in_proj_weight.grad, torch.cat([part.weight.grad for part in parts])),
        (block.linear1.weight.grad, layer.intermediate.dense.weight.grad),
        (model.word_embeddings.weight.grad, bert.embeddings.word_embeddings.weight.grad),
        (model.position_embeddings.weight.grad, bert.embeddings.position_embeddings.weight.grad),
    ]
    for got, expected in pairs:
        assert expected.abs().max() > 0
        assert torch.allclose(got, expected, rtol=1e-4, atol=1e-4 * expected.abs().max())


def test_a_sentence_pair_uses_the_token_type_rows(oracle, ours):
    batch = oracle[0](["Where does the dog sleep?", "Who knocks?"],
                      ["The dog sleeps under the old oak tree.", "Nobody."],
                      padding=True, return_tensors="pt")  # fmt: skip
    assert batch["token_type_ids"].any()
    got, expected = both(oracle, ours, batch)
    assert_every_token_matches(got, expected)
    with torch.no_grad():
        single = ours(batch["input_ids"], batch["attention_mask"])
    assert not torch.allclose(single, got, atol=ATOL)


def test_no_mask_means_no_padding_and_padding_does_not_change_real_tokens(oracle, ours):
    alone = oracle[0](PADDED[:1], return_tensors="pt")
    padded = oracle[0](PADDED, padding=True, return_tensors="pt")
    n = alone["input_ids"].shape[1]
    with torch.no_grad():
        without_mask = ours(alone["input_ids"])
        in_batch = ours(padded["input_ids"], padded["attention_mask"])[:1, :n]
    assert torch.allclose(without_mask, both(oracle, ours, alone)[1], atol=ATOL)
    assert torch.allclose(without_mask, in_batch, atol=ATOL)


def test_512_tokens_pass_and_513_raise(oracle, ours):
    ids = torch.randint(1000, 30000, (1, 512), generator=torch.Generator().manual_seed(0))
    got, expected = both(oracle, ours, {"input_ids": ids, "attention_mask": torch.ones_like(ids)})
    assert_every_token_matches(got, expected)
    with pytest.raises(ValueError, match="512 positions; got 513 tokens"):
        ours(torch.ones(1, 513, dtype=torch.long))


def test_it_is_built_from_the_course_blocks_and_never_from_bert(monkeypatch, oracle):
    import transformers

    def refuse(*args, **kwargs):
        raise AssertionError("BertModel was used")

    monkeypatch.setattr(BertModel, "forward", refuse)
    monkeypatch.setattr(BertModel, "__init__", refuse)
    monkeypatch.setattr(transformers.AutoModel, "from_pretrained", refuse)
    model = minilm_encoder("cpu")
    batch = oracle[0](BARK_SENTENCES, padding=True, return_tensors="pt")
    with torch.no_grad():
        model(batch["input_ids"], batch["attention_mask"])
    assert isinstance(model, MiniLMEncoder) and not model.training
    assert not any(m.__module__.startswith("transformers") for m in model.modules())
    assert len(model.blocks) == 6 and all(type(b) is TransformerBlock for b in model.blocks)
    assert model.norm.eps == 1e-12 and model.blocks[0].norm1.eps == 1e-12
    reference = torch.nn.TransformerEncoderLayer(384, 12, 1536, batch_first=True)
    assert model.blocks[0].state_dict().keys() == reference.state_dict().keys()


def test_the_weights_are_bert_s_with_q_k_v_stacked_in_that_order(oracle, ours):
    bert = oracle[1]
    layer = bert.encoder.layer[2]
    block = ours.blocks[2]
    q, k, v = block.self_attn.in_proj_weight.chunk(3)
    assert torch.equal(q, layer.attention.self.query.weight)
    assert torch.equal(k, layer.attention.self.key.weight)
    assert torch.equal(v, layer.attention.self.value.weight)
    assert torch.equal(block.linear2.weight, layer.output.dense.weight)
    assert torch.equal(
        ours.token_type_embeddings.weight, bert.embeddings.token_type_embeddings.weight
    )
    prefixed = {"bert." + name: t for name, t in bert.state_dict().items()}
    state = hf_to_course_state_dict(prefixed, num_layers=6)
    assert state.keys() == ours.state_dict().keys()


def test_each_call_builds_its_own_model_on_the_notebooks_device():
    model, other = minilm_encoder(), minilm_encoder()
    assert model.word_embeddings.weight.device.type == get_device().type
    with torch.no_grad():
        model.word_embeddings.weight.zero_()
    assert other.word_embeddings.weight.abs().sum() > 0


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda m: m(torch.ones(2, 5)), TypeError, "input_ids must have an integer dtype"),
        (lambda m: m(torch.ones(2, 5, dtype=torch.bool)), TypeError, "integer dtype"),
        (lambda m: m([[101, 102]]), TypeError, "input_ids must be a torch.Tensor"),
        (lambda m: m(torch.ones(5, dtype=torch.long)), ValueError, r"shape \(batch, tokens\)"),
        (lambda m: m(torch.ones(2, 5, dtype=torch.long), torch.ones(2, 4, dtype=torch.long)),
         ValueError, r"attention_mask must have the shape of input_ids \(2, 5\); got \(2, 4\)"),
        (lambda m: m(torch.ones(2, 5, dtype=torch.long), torch.ones(2, 5)),
         TypeError, "attention_mask must have an integer dtype"),
        (lambda m: m(torch.ones(2, 5, dtype=torch.long), torch.full((2, 5), 2)),
         ValueError, "attention_mask must hold values from 0 to 1"),
        (lambda m: m(torch.ones(2, 5, dtype=torch.long), torch.tensor([[1] * 5, [0] * 5])),
         ValueError, "at least one token in every sentence"),
        (lambda m: m(torch.full((1, 3), 30522)), ValueError, "values from 0 to 30521"),
        (lambda m: m(torch.ones(1, 3, dtype=torch.long), None, torch.full((1, 3), 2)),
         ValueError, "token_type_ids must hold values from 0 to 1"),
    ],
)  # fmt: skip
def test_bad_input_raises_a_clear_error(ours, call, error, message):
    with pytest.raises(error, match=message):
        call(ours)


def test_attention_maps_and_hidden_states_equal_bert_s(oracle, ours):
    batch = oracle[0](BARK_SENTENCES, padding=True, return_tensors="pt")
    eager = BertModel.from_pretrained(model_path(), attn_implementation="eager").eval()
    with torch.no_grad():
        expected = eager(**batch, output_attentions=True, output_hidden_states=True)
        states, maps = ours.attention_maps(batch["input_ids"], batch["attention_mask"])
    assert maps.shape == (6, 3, 12, batch["input_ids"].shape[1], batch["input_ids"].shape[1])
    assert torch.allclose(maps, torch.stack(expected.attentions), atol=1e-5)
    assert torch.allclose(states, torch.stack(expected.hidden_states), atol=ATOL)
    assert torch.equal(states[-1], ours(batch["input_ids"], batch["attention_mask"]))
    padding = batch["attention_mask"] == 0
    assert maps.permute(1, 4, 0, 2, 3)[padding].abs().max() == 0  # no weight on padding keys


def test_bool_masks_and_small_integer_dtypes_work_like_the_tokenizers_longs(oracle, ours):
    batch = oracle[0](PADDED, padding=True, return_tensors="pt")
    with torch.no_grad():
        ints = ours(batch["input_ids"], batch["attention_mask"])
        bools = ours(batch["input_ids"], batch["attention_mask"].bool())
    assert torch.equal(ints, bools)
    with torch.no_grad():
        small = ours(batch["input_ids"].short(), batch["attention_mask"].to(torch.uint8))
    assert torch.equal(ints, small)

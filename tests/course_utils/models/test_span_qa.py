"""course_utils.models.span_qa against independent oracles: Hugging Face's BertForQuestionAnswering
built from the same MiniLM weights, a brute-force search over every span, and the
generated passages' own characters."""

import itertools

import pytest
import torch
from transformers import AutoTokenizer, BertForQuestionAnswering

from course_utils.models.minilm import minilm_encoder
from course_utils.models.pretrained import model_path
from course_utils.models.span_qa import (
    SpanQA,
    answer_questions,
    best_span,
    encode_questions,
    exact_match,
    generated_questions,
    normalise_answer,
    train_span_qa,
)


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(str(model_path()), local_files_only=True)


@pytest.fixture(scope="module")
def examples():
    return generated_questions(24, seed=3)


def encoded_with_answers(tokenizer, examples):
    return encode_questions(tokenizer, [x.question for x in examples],
                            [x.passage for x in examples], [x.answer_start for x in examples],
                            [x.answer for x in examples])


def test_span_scores_equal_hugging_faces_bert_for_question_answering(tokenizer):
    torch.manual_seed(0)
    ours = SpanQA(minilm_encoder("cpu")).eval()
    theirs = BertForQuestionAnswering.from_pretrained(str(model_path()),
                                                      local_files_only=True).eval()
    theirs.qa_outputs.load_state_dict(ours.qa_outputs.state_dict())
    encoded = encode_questions(tokenizer, ["Who sold the maps?", "Where?"],
                               ["Omar sold five maps in Hong Kong.", "In a cloud, high above."])
    inputs = {name: encoded[name] for name in ("input_ids", "attention_mask", "token_type_ids")}
    assert (encoded["attention_mask"] == 0).any()  # the batch is padded
    with torch.no_grad():
        start, end = ours(**inputs)
        reference = theirs(**inputs)
    real = encoded["attention_mask"].bool()
    assert torch.allclose(start[real], reference.start_logits[real], atol=1e-4)
    assert torch.allclose(end[real], reference.end_logits[real], atol=1e-4)


def brute_force(start, end, max_length):
    pairs = [(s, e) for s, e in itertools.product(range(len(start)), repeat=2)
             if s <= e < s + max_length]
    return max(pairs, key=lambda pair: (start[pair[0]] + end[pair[1]]).item())


@pytest.mark.parametrize("seed", range(20))
def test_best_span_equals_a_brute_force_search_over_all_pairs(seed):
    generator = torch.Generator().manual_seed(seed)
    n = int(torch.randint(1, 15, (1,), generator=generator))
    max_length = int(torch.randint(1, 6, (1,), generator=generator))
    start, end = torch.randn(2, n, generator=generator, dtype=torch.float64) * 10
    assert best_span(start, end, max_length) == brute_force(start, end, max_length)


def test_best_span_keeps_start_before_end_and_the_length_limit():
    start = torch.tensor([0.0, 0.0, 0.0, 9.0])        # the best start is the last token
    end = torch.tensor([9.0, 0.0, 0.0, 0.0])          # the best end is the first
    assert best_span(start, end, 4) == (0, 0)         # ties at 9: the first pair wins
    assert best_span(torch.tensor([5.0, 0, 0]), torch.tensor([0.0, 1, 5]), 2) == (0, 1)
    assert best_span(torch.tensor([5.0, 0, 0]), torch.tensor([0.0, 1, 5]), 3) == (0, 2)


@pytest.mark.parametrize(("args", "error"), [
    ((torch.zeros(3), torch.zeros(4), 2), ValueError),
    ((torch.zeros(3), torch.zeros(3), 0), ValueError),
    ((torch.zeros(2, 3), torch.zeros(2, 3), 2), ValueError),
    (([0.0, 1.0], torch.zeros(2), 2), TypeError),
])
def test_best_span_rejects_bad_input(args, error):
    with pytest.raises(error):
        best_span(*args)


def test_generated_answers_are_spans_of_their_passages_and_the_questions_vary():
    examples = generated_questions(200, seed=0)
    for x in examples:
        assert x.passage[x.answer_start:x.answer_start + len(x.answer)] == x.answer
        assert x.answer not in x.question  # the answer is in the passage, not the question
        assert x.question.endswith("?") and x.passage.count(".") == 2
    assert {x.question.split()[0] for x in examples} == {"Who", "Where", "How"}
    assert generated_questions(5, seed=1) == generated_questions(5, seed=1)
    assert generated_questions(5, seed=1) != generated_questions(5, seed=2)


def test_the_encoded_answer_tokens_are_the_answer(tokenizer, examples):
    encoded = encoded_with_answers(tokenizer, examples)
    for k, x in enumerate(examples):
        first, last = encoded["start_positions"][k], encoded["end_positions"][k]
        span = encoded["input_ids"][k, first:last + 1]
        assert tokenizer.decode(span) == x.answer.lower()        # the model is uncased
        assert encoded["passage_mask"][k, first]
        types = encoded["token_type_ids"][k][encoded["passage_mask"][k]]
        assert (types == 1).all()                                  # the passage is sentence B


def test_a_short_training_lowers_the_loss_and_trains_only_the_top(tokenizer, examples):
    torch.manual_seed(0)
    model = SpanQA(minilm_encoder("cpu"))
    frozen = [p.clone() for p in model.encoder.blocks[0].parameters()]
    top = [p.clone() for p in model.encoder.blocks[5].parameters()]
    losses = train_span_qa(model, encoded_with_answers(tokenizer, examples), frozen_blocks=5,
                           steps=12, batch_size=8, lr=2e-3)
    assert len(losses) == 12 and sum(losses[-3:]) < sum(losses[:3])
    bottom_now, top_now = (list(model.encoder.blocks[k].parameters()) for k in (0, 5))
    assert all(torch.equal(a, b) for a, b in zip(frozen, bottom_now, strict=True))
    assert not all(torch.equal(a, b) for a, b in zip(top, top_now, strict=True))
    results = answer_questions(model, tokenizer, [examples[0].question], [examples[0].passage])
    assert results[0]["answer"] in examples[0].passage
    assert results[0]["start"] <= results[0]["end"]


def test_exact_match_normalises_like_squad():
    assert normalise_answer("Within  a Cloud.") == "within cloud"
    assert exact_match(["Gravity", "the graupel", "rain"], ["gravity", "graupel", "snow"]) == 2 / 3
    with pytest.raises(ValueError):
        exact_match(["a"], [])

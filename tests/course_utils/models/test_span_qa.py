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
    """The pair (s, e), s <= e < s + max_length, with the largest start[s] + end[e]."""
    pairs = [(s, e) for s, e in itertools.product(range(len(start)), repeat=2)
             if s <= e < s + max_length]
    return max(pairs, key=lambda pair: start[pair[0]] + end[pair[1]])


@pytest.mark.parametrize("max_words", [1, 3, 10])
def test_answer_questions_decodes_the_best_span_of_whole_words(tokenizer, max_words):
    torch.manual_seed(0)
    model = SpanQA(minilm_encoder("cpu"))                   # an untrained head: any scores do
    questions = ["Who repaired the paintings?", "Where is the graupel?", "What forms?"]
    passages = ["Rosa repaired nine paintings in Buenos Aires.",
                "Drizzle, rain, sleet, snow, graupel and hail.", "Precipitation forms."]
    for result, passage in zip(answer_questions(model, tokenizer, questions, passages,
                                                brute_force, max_words), passages, strict=True):
        tokens, where = result["tokens"], result["passage_mask"].nonzero().flatten().tolist()
        # the span starts at a word's first piece and ends at a word's last piece
        assert not tokens[result["start"]].startswith("##")
        assert result["end"] == where[-1] or not tokens[result["end"] + 1].startswith("##")
        assert result["answer"] in passage and len(result["answer"].split()) <= max_words
        # and it is the best such span of the word scores
        starts = [t for t in where if not tokens[t].startswith("##")]
        ends = [t for t in where if t == where[-1] or not tokens[t + 1].startswith("##")]
        s, e = brute_force(result["start_scores"][starts].tolist(),
                           result["end_scores"][ends].tolist(), max_words)
        assert (result["start"], result["end"]) == (starts[s], ends[e])


def test_answer_questions_rejects_a_length_below_one(tokenizer):
    with pytest.raises(ValueError, match="max_words"):
        answer_questions(SpanQA(minilm_encoder("cpu")), tokenizer, ["Who?"], ["Anna."],
                         brute_force, 0)


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
    results = answer_questions(model, tokenizer, [examples[0].question], [examples[0].passage],
                               brute_force)
    assert results[0]["answer"] in examples[0].passage
    assert results[0]["start"] <= results[0]["end"]


def test_exact_match_normalises_like_squad():
    assert normalise_answer("Within  a Cloud.") == "within cloud"
    assert exact_match(["Gravity", "the graupel", "rain"], ["gravity", "graupel", "snow"]) == 2 / 3
    with pytest.raises(ValueError):
        exact_match(["a"], [])

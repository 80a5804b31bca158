"""Extractive question answering as BERT is fine-tuned for SQuAD, on the course's MiniLM.

The question and the passage go in as one sentence pair, with token types 0 and 1:

    [CLS] question [SEP] passage [SEP]        token types 0 … 0 0 1 … 1 1

The answer is a span of the *passage*. A span head, one ``nn.Linear(384, 2)`` on the
encoder's last hidden state H (batch, n, 384), gives every token a start score and an
end score (Hugging Face's ``BertForQuestionAnswering`` calls it ``qa_outputs``):

    [start_scores, end_scores] = H W + b          W: (384, 2), b: (2,)

and ``answer_questions`` decodes the answer, a span of whole words of the passage, with a
span decoder it is given (notebook 09's exercise 4, ``best_span``): a word's start score is
its first piece's, its end score its last piece's, so an answer never starts or ends inside
a word ("sl" of "sleet").
Fine-tuning minimises the mean of the two cross-entropies, −log softmax(start)[s*] and
−log softmax(end)[e*], over the passage tokens, for the true span (s*, e*).

The task is generated (``generated_questions``): passages of two short facts
("Anna bought three apples in Paris. Omar sold five maps in Hong Kong.") and a question
on one of them whose answer is a name ("Who ...?"), a place ("Where ...?") or a number
("How many ...?"). To train in seconds on a CPU, ``train_span_qa`` freezes the
embeddings and the lower blocks, runs them once over the training passages and caches
their output; only the top block(s) and the head learn.
"""

import random
import re
import string
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from course_utils.validation import integer, number, positive_int

from .minilm import MiniLMEncoder

__all__ = [
    "QAExample",
    "SpanQA",
    "answer_questions",
    "encode_questions",
    "exact_match",
    "generated_questions",
    "normalise_answer",
    "train_span_qa",
    "word_scores",
]

PASSAGE = 1  # the token type of the passage, the second sentence of the pair

NAMES = ("Anna", "Ben", "Clara", "David", "Emma", "Felix", "Grace", "Hugo", "Ida", "Jonas",
         "Lena", "Marco", "Nora", "Omar", "Paula", "Rosa", "Sam", "Tara", "Vera", "Oscar")
PLACES = ("Paris", "Berlin", "Madrid", "Rome", "Vienna", "Lisbon", "Oslo", "Prague", "Dublin",
          "Cairo", "New York", "Hong Kong", "Cape Town", "Buenos Aires", "Los Angeles",
          "Rio de Janeiro")
NUMBERS = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "twelve",
           "fifteen", "twenty")
THINGS = ("apples", "books", "letters", "chairs", "lamps", "boats", "paintings", "bicycles",
          "hats", "maps")
VERBS = (("bought", "buy"), ("sold", "sell"), ("painted", "paint"), ("carried", "carry"),
         ("found", "find"), ("counted", "count"), ("repaired", "repair"), ("ordered", "order"))


@dataclass(frozen=True)
class QAExample:
    """A question, its passage, and the answer: ``passage[answer_start:][:len(answer)]``."""

    question: str
    passage: str
    answer: str
    answer_start: int


def generated_questions(n: int, seed: int = 0) -> list[QAExample]:
    """``n`` questions over generated two-fact passages, seeded.

    Each passage states two facts, "<name> <verb> <number> <things> in <place>.", with
    different names, verbs, numbers, things and places; the question asks for the name
    (Who <verb> the <things>?), the place (Where did <name> ...?) or the number (How many
    <things> did <name> ...?) of one of them, so that the right fact must be found too.
    """
    positive_int("n", n)
    integer("seed", seed, minimum=0)
    generator = random.Random(seed)
    examples = []
    for _ in range(n):
        names, places, numbers, things, verbs = (
            generator.sample(pool, 2) for pool in (NAMES, PLACES, NUMBERS, THINGS, VERBS))
        facts = [f"{names[i]} {verbs[i][0]} {numbers[i]} {things[i]} in {places[i]}."
                 for i in range(2)]
        i, kind = generator.randrange(2), generator.randrange(3)
        question, answer = (
            (f"Who {verbs[i][0]} the {things[i]}?", names[i]),
            (f"Where did {names[i]} {verbs[i][1]} the {things[i]}?", places[i]),
            (f"How many {things[i]} did {names[i]} {verbs[i][1]}?", numbers[i]),
        )[kind]
        fact_start = 0 if i == 0 else len(facts[0]) + 1
        answer_start = fact_start + re.search(rf"\b{answer}\b", facts[i]).start()
        examples.append(QAExample(question, " ".join(facts), answer, answer_start))
    return examples


def encode_questions(tokenizer, questions: list[str], passages: list[str],
                     answer_starts=None, answers=None) -> dict:
    """Tokenise (question, passage) pairs as ``[CLS] q [SEP] p [SEP]``, padded.

    Returns the tokenizer's ``input_ids``, ``token_type_ids`` and ``attention_mask``
    (batch, n), ``offsets`` (batch, n, 2: each token's characters in its own text),
    ``passage_mask`` (batch, n: True at the passage's tokens, the only possible answer
    tokens), ``word_ids`` (batch, n: the word of its own text each token is a piece of,
    counted from 0, −1 for special tokens and padding) and, when ``answer_starts`` and
    ``answers`` are given, ``start_positions`` and ``end_positions`` (batch,): the first and
    last passage token of each answer.
    """
    if len(questions) != len(passages):
        raise ValueError(f"one passage per question: got {len(questions)} questions and "
                         f"{len(passages)} passages")
    batch = tokenizer(list(questions), list(passages), padding=True,
                      return_offsets_mapping=True, return_tensors="pt")
    encoded = {name: batch[name] for name in ("input_ids", "token_type_ids", "attention_mask")}
    encoded["offsets"] = batch["offset_mapping"]
    encoded["passage_mask"] = torch.tensor(
        [[piece == PASSAGE for piece in batch.sequence_ids(k)] for k in range(len(questions))])
    encoded["word_ids"] = torch.tensor(
        [[-1 if word is None else word for word in batch.word_ids(k)]
         for k in range(len(questions))])
    if answer_starts is None:
        return encoded
    starts, ends = [], []
    for k, (start, answer) in enumerate(zip(answer_starts, answers, strict=True)):
        inside = [j for j, (a, b) in enumerate(encoded["offsets"][k].tolist())
                  if encoded["passage_mask"][k, j] and b > start and a < start + len(answer)]
        if not inside:
            raise ValueError(f"the answer {answer!r} at character {start} is not in passage {k}")
        starts.append(inside[0])
        ends.append(inside[-1])
    encoded["start_positions"], encoded["end_positions"] = torch.tensor(starts), torch.tensor(ends)
    return encoded


class SpanQA(nn.Module):
    """A BERT encoder (the course's ``MiniLMEncoder``) and a span head ``qa_outputs``.

    ``forward`` returns ``(start_scores, end_scores)``, each (batch, n): one score per
    token, as ``BertForQuestionAnswering`` computes its start and end logits.
    """

    def __init__(self, encoder: MiniLMEncoder):
        super().__init__()
        if not isinstance(encoder, MiniLMEncoder):
            raise TypeError(f"encoder must be a MiniLMEncoder; got {type(encoder).__name__}")
        self.encoder = encoder
        self.qa_outputs = nn.Linear(encoder.config.hidden_size, 2)

    def lower(self, input_ids, attention_mask, token_type_ids, blocks: int) -> torch.Tensor:
        """The hidden state after the embeddings and the first ``blocks`` blocks (batch, n, d)."""
        integer("blocks", blocks, minimum=0, maximum=len(self.encoder.blocks))
        mask = attention_mask.bool()[:, None, None, :]  # keys only, as BERT masks padding
        hidden = self.encoder.embed(input_ids, token_type_ids)
        for block in self.encoder.blocks[:blocks]:
            hidden = block(hidden, mask=mask)
        return hidden

    def upper(self, hidden, attention_mask, blocks: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The blocks after the first ``blocks``, then the head: (start, end) scores."""
        mask = attention_mask.bool()[:, None, None, :]
        for block in self.encoder.blocks[blocks:]:
            hidden = block(hidden, mask=mask)
        start, end = self.qa_outputs(hidden).unbind(dim=-1)
        return start, end

    def forward(self, input_ids, attention_mask, token_type_ids):
        """(start_scores, end_scores), each (batch, n), for a batch of question-passage pairs."""
        return self.upper(self.lower(input_ids, attention_mask, token_type_ids, 0),
                          attention_mask, 0)


def span_loss(start, end, encoded: dict) -> torch.Tensor:
    """Mean of the start and end cross-entropies, over the passage tokens only."""
    outside = ~encoded["passage_mask"].to(start.device)
    start, end = start.masked_fill(outside, -1e4), end.masked_fill(outside, -1e4)
    return (F.cross_entropy(start, encoded["start_positions"].to(start.device))
            + F.cross_entropy(end, encoded["end_positions"].to(start.device))) / 2


def train_span_qa(model: SpanQA, encoded: dict, frozen_blocks: int, steps: int,
                  batch_size: int = 16, lr: float = 2e-3, seed: int = 0) -> list[float]:
    """Fine-tune the top blocks and the head of ``model`` on ``encoded`` (``encode_questions``
    with answers); returns the loss of every step.

    The embeddings and the first ``frozen_blocks`` blocks stay fixed: their output is
    computed once and cached. Each step draws ``batch_size`` examples (seeded by ``seed``)
    and takes one AdamW step on the mean cross-entropy of the true start and end over the
    passage tokens. Dropout stays off (eval mode), as for so short a run it only adds noise.
    Afterwards the model is in eval mode and only the trained parameters require gradients.
    """
    integer("frozen_blocks", frozen_blocks, minimum=0, maximum=len(model.encoder.blocks))
    positive_int("steps", steps)
    positive_int("batch_size", batch_size)
    number("lr", lr)
    device = model.qa_outputs.weight.device
    inputs = [encoded[name].to(device)
              for name in ("input_ids", "attention_mask", "token_type_ids")]
    model.eval()
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    trained = [*model.encoder.blocks[frozen_blocks:], model.qa_outputs]
    parameters = [p for module in trained for p in module.parameters()]
    for parameter in parameters:
        parameter.requires_grad_(True)
    with torch.no_grad():
        cached = model.lower(*inputs, blocks=frozen_blocks)
    optimiser = torch.optim.AdamW(parameters, lr=lr)
    generator = torch.Generator().manual_seed(seed)
    losses = []
    for _ in range(steps):
        rows = torch.randint(len(cached), (batch_size,), generator=generator)
        start, end = model.upper(cached[rows.to(device)], inputs[1][rows.to(device)],
                                 frozen_blocks)
        loss = span_loss(start, end, {name: encoded[name][rows] for name in
                                      ("passage_mask", "start_positions", "end_positions")})
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    return losses


def word_scores(start_scores, end_scores, passage_mask, word_ids):
    """The passage's scores per whole word, for one pair of the batch.

    start_scores, end_scores, passage_mask, word_ids: (n,), as ``SpanQA`` and
    ``encode_questions`` give them for one pair. Returns (word_start, word_end, first, last):
    for each of the passage's W words, the start score of its first piece, the end score of
    its last piece (two (W,) tensors), and the token positions of those pieces (two lists).
    """
    passage = passage_mask.nonzero().flatten().tolist()
    first, last = {}, {}
    for position in passage:
        word = int(word_ids[position])
        first.setdefault(word, position)
        last[word] = position
    words = sorted(first)
    first, last = [first[w] for w in words], [last[w] for w in words]
    return start_scores[first], end_scores[last], first, last


def answer_questions(model: SpanQA, tokenizer, questions: list[str], passages: list[str],
                     best_span, max_words: int = 4) -> list[dict]:
    """The answer to each question: a span of at most ``max_words`` whole words of its passage.

    ``best_span(word_start, word_end, max_words)`` (notebook 09's exercise 4) picks the span
    (s, e) of words from their scores (``word_scores``: a word starts where its first piece
    does and ends where its last piece does), so that no answer is cut inside a word.

    Returns one dict per question: ``answer`` (the passage's characters from the first
    word's first to the last word's last), ``start`` and ``end`` (their token positions in
    the pair), ``tokens`` (the pair's tokens), ``passage_mask`` (n,: True at the passage's
    tokens) and ``start_scores``/``end_scores`` (n,).
    """
    positive_int("max_words", max_words)
    if not callable(best_span):
        raise TypeError(f"best_span must be a function; got {type(best_span).__name__}")
    encoded = encode_questions(tokenizer, questions, passages)
    device = model.qa_outputs.weight.device
    model.eval()
    with torch.no_grad():
        start, end = model(*(encoded[name].to(device)
                             for name in ("input_ids", "attention_mask", "token_type_ids")))
    start, end = start.cpu(), end.cpu()
    results = []
    for k, passage in enumerate(passages):
        word_start, word_end, first, last = word_scores(
            start[k], end[k], encoded["passage_mask"][k], encoded["word_ids"][k])
        s, e = (int(i) for i in best_span(word_start.clone(), word_end.clone(), max_words))
        offsets = encoded["offsets"][k]
        results.append({
            "answer": passage[offsets[first[s], 0]:offsets[last[e], 1]],
            "start": first[s], "end": last[e],
            "tokens": tokenizer.convert_ids_to_tokens(encoded["input_ids"][k]),
            "passage_mask": encoded["passage_mask"][k],
            "start_scores": start[k], "end_scores": end[k],
        })
    return results


def normalise_answer(text: str) -> str:
    """SQuAD's normalisation: lower case, no punctuation, no articles, single spaces."""
    text = "".join(c for c in text.lower() if c not in string.punctuation)
    return " ".join(word for word in text.split() if word not in ("a", "an", "the"))


def exact_match(predictions: list[str], answers: list[str]) -> float:
    """The fraction of predictions equal to their answer after ``normalise_answer``."""
    if len(predictions) != len(answers) or not answers:
        raise ValueError(f"one prediction per answer, at least one: got {len(predictions)} "
                         f"predictions and {len(answers)} answers")
    same = [normalise_answer(p) == normalise_answer(a)
            for p, a in zip(predictions, answers, strict=True)]
    return sum(same) / len(same)

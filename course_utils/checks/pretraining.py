"""Diagnostic checks for notebook 09 (BERT and GPT): the masked-LM loss, the encoder's
forward pass, sizes and span decoding.

The expected values come from libraries, never from an exercise written again:

* the masked-LM loss is PyTorch's ``F.cross_entropy`` at each position, kept where
  ``bert_mask`` chose; each named mistake is those losses combined as the mistake combines
  them (or ``F.nll_loss``, which skips the softmax);
* the encoder's logits are judged by properties, never by the forward pass written again
  (the grader compares the hidden tests' values with the stored answers, outside the
  kernel): their shape; their output layer's, found by least squares; which positions a
  position's scores depend on; the order of a window; and, on windows of one word, the
  scores of Hugging Face's GPT-2 holding the model's weights (``models.library_gpt``);
* a BERT encoder's parameter count is Hugging Face's ``BertModel``, built from a
  ``BertConfig`` on the meta device (shapes only: nothing is downloaded or allocated) and
  counted with ``sum(p.numel() ...)``; each mistake is that count without the parameters
  it forgets (found by their names), with the pooler, or of one layer;
* a span is judged against the best span the visible test states (the grader compares the
  hidden tests' spans with the stored answers): it must be one the reader may answer and
  tie the stated span's score; the mistake of multiplying probabilities is Hugging Face's
  question-answering decoder, ``decode_spans``, on softmax probabilities as its pipeline
  feeds it.

Transformers is imported only where a check needs it: importing it takes seconds.
"""

import re

import numpy as np
import torch
import torch.nn.functional as F

from course_utils.models.library_gpt import gpt2_holding

from .core import as_tensor
from .guards import checked_plainly

__all__ = ["PRETRAINING_MISTAKES", "check_bert_parameters", "check_best_span",
           "check_encoder_logits", "check_masked_lm_loss"]

PRETRAINING_MISTAKES = {
    "not_a_loss": "the loss is one number (a tensor with one entry, or a float)",
    "all_positions": "you scored positions that bert_mask did not choose: look at what "
    "`masked` marks, and at what the model reads where it is False",
    "raw_logits": "you used the logits themselves at the targets: look at what the exercise "
    "calls the model's surprise, and at what turns a row of logits into p(· | x̃)",
    "summed": "your loss grows with the number of masked tokens: look at how you combine the "
    "positions' surprises into one number",
    "sign": "your loss has the wrong sign: look at the sign of a log-probability",
    "mask_scored": "you scored V + 1 tokens, one more than the words of the text: look at "
    "what the exercise asks the output layer to score",
    "encoder_shape": "the scores are one row of V numbers (one per word) at every position of "
    "every window: (batch, n, V)",
    "encoder_head": "your scores are not the words' rows of E applied to one vector per "
    "position, as the output of a model with no other weight is: look at your last step",
    "encoder_no_final_norm": "the last hidden states reach the output layer without the final "
    "layer norm (model.norm)",
    "encoder_causal": "your encoder is causal: changing the last word of a window changed no "
    "earlier position's scores. Exercise 2 asks where the clue to a masked word can be",
    "encoder_no_positions": "your encoder cannot tell where a word is: the window read "
    "backwards gives the same scores, backwards. Look at what H_0 adds to the token rows",
    "encoder_one_word": "on windows of one word, where the mask changes nothing, your scores "
    "differ from those of Hugging Face's GPT-2 holding the weights of `model`: look at what "
    "enters your first block (which table is lifted, and by what factor: decision 2 of "
    "exercise 2) and at what comes out of the last",
    "encoder_unlifted": "on windows of one word your scores are those of a model whose token "
    "rows enter the blocks at their own size, beside position rows many times larger (the "
    "sizes printed above exercise 2): the blocks read mostly where a word is, not which",
    "encoder_lifted_positions": "on windows of one word your scores are those of a model whose "
    "position rows were lifted and whose token rows enter at their own size: the position "
    "rows, already many times larger (the sizes printed above exercise 2), drown the words "
    "even more",
    "no_biases": "you left out the biases: every linear map (Q, K, V, O and the two of the "
    "feed-forward layer) has a bias vector as long as its output",
    "no_layer_norms": "you left out the layer norms: one after the embeddings and two in each "
    "layer, each with a γ and a β of d_model numbers",
    "layer_norm_once": "each layer norm has TWO vectors of d_model numbers, γ and β; you "
    "counted one",
    "no_positions": "you left out the position embeddings: a table of max_positions rows of "
    "d_model numbers",
    "no_types": "you left out the token-type (segment) embeddings: type_vocab_size rows of "
    "d_model numbers",
    "ff_once": "the feed-forward layer has TWO matrices, d_model × d_ff and d_ff × d_model "
    "(and biases of d_ff and d_model numbers); you counted one",
    "no_output_projection": "you counted Q, K and V but not the output projection O "
    "(d_model × d_model and its bias) that mixes the heads",
    "pooler": "you counted the pooler (a d_model × d_model layer on [CLS]); the exercise asks "
    "for the encoder without it",
    "one_layer": "you counted one layer: multiply the per-layer count by the number of layers",
    "not_a_count": "a parameter count is one whole number",
    "not_a_pair": "return a pair (start, end) of two whole numbers",
    "outside": "start and end are positions of the scores: from 0 to len(start_scores) − 1",
    "end_before_start": "your span ends before it starts",
    "too_long": "your span is longer than max_length tokens",
    "too_short": "a span exactly max_length tokens long beats yours: count the tokens of "
    "a span (decision 2 of exercise 4)",
    "separate_argmax": "you returned the best start and the best end taken separately, which "
    "here are no span the reader may answer (decision 3 of exercise 4)",
    "from_one": "your positions count from 1; they count from 0, like the scores' indices",
    "swapped": "you returned (end, start); return (start, end)",
    "probabilities": "you multiplied probabilities (softmax of the scores): for a confident "
    "model they underflow to 0 and every span ties. Rank the spans by a number that keeps "
    "the product's order without computing the product (decision 1 of exercise 4)",
    "not_best": "your span is one the reader may answer, but the model ranks another span "
    "above it (decision 1 of exercise 4)",
}


# -- the masked-LM loss ---------------------------------------------------------------------

def _pytorch_oracle(logits, targets, masked) -> dict:
    """The oracle: PyTorch's ``F.cross_entropy`` at each position, in float64, and from it the
    masked-LM loss (key None) and the value each named mistake gives. logits (..., V),
    targets (...) token ids, masked (...) booleans."""
    logits = logits.double().flatten(0, -2)                            # (positions, V)
    every = targets.long().flatten()                                   # (positions,)
    each = F.cross_entropy(logits, every, reduction="none")            # (positions,)
    chosen = masked.flatten().nonzero()[:, 0]                          # indices bert_mask chose
    right = each[chosen].mean()
    return {None: right,
            "all_positions": each.mean(),
            "raw_logits": F.nll_loss(logits[chosen], every[chosen]),
            "summed": each[chosen].sum(),
            "sign": -right}


@checked_plainly
def check_masked_lm_loss(actual, logits, targets, masked, name="masked_lm_loss") -> None:
    """Fail unless ``actual`` is the masked-LM loss of ``logits`` against ``targets`` where
    ``masked`` marks the positions ``bert_mask`` chose, as PyTorch's cross-entropy gives it
    (relative tolerance 1e-4: float32 logits are allowed)."""
    got = as_tensor(actual, name)
    if got.numel() != 1:
        raise AssertionError(f"{name} is not right: {PRETRAINING_MISTAKES['not_a_loss']}; "
                             f"got shape {tuple(got.shape)}.")
    value = got.item()
    masked = as_tensor(masked, "masked").bool()
    losses = _pytorch_oracle(as_tensor(logits, "logits"), as_tensor(targets, "targets"), masked)

    def near(x):
        return abs(value - x) <= 1e-4 * max(1.0, abs(x))

    if near(losses.pop(None).item()):
        return
    for key, wrong in losses.items():
        if near(wrong.item()):
            raise AssertionError(f"{name} is not right: {PRETRAINING_MISTAKES[key]}.")
    raise AssertionError(
        f"{name} is not right: got {value:.6g}, which is none of the mistakes we know. "
        "Look at the axis your probabilities are normalised over, at which positions "
        "count, and at how their surprises make one number.")


# -- the encoder's forward pass -------------------------------------------------------------


def _rows_that_differ_last(ids: torch.Tensor) -> list[tuple[int, int]]:
    """Pairs of windows (a, b) of ids (batch, n ≥ 2) equal but for their last word."""
    return [(a, b) for a in range(len(ids)) for b in range(a + 1, len(ids))
            if ids.shape[1] > 1 and torch.equal(ids[a, :-1], ids[b, :-1])
            and ids[a, -1] != ids[b, -1]]


def _rows_reversed(ids: torch.Tensor) -> list[tuple[int, int]]:
    """Pairs of windows (a, b) of ids (batch, n), b a reads backwards, not a palindrome."""
    return [(a, b) for a in range(len(ids)) for b in range(len(ids))
            if a != b and torch.equal(ids[a].flip(0), ids[b]) and not torch.equal(ids[a], ids[b])]


def _gpt_scores(ids: torch.Tensor, model, tokens: float, positions: float) -> torch.Tensor:
    """The scores of Hugging Face's GPT-2 holding ``model``'s weights on ``ids`` (batch, n),
    fed the token rows times ``tokens`` and, as its positions, the sinusoidal table times
    ``positions``: in float64 on the CPU, (batch, n, rows of E)."""
    twin = gpt2_holding(model, model.positions * positions)
    ids = torch.as_tensor(ids).long().cpu()
    with torch.no_grad():
        return twin(inputs_embeds=twin.transformer.wte(ids) * tokens).logits


@checked_plainly
def check_encoder_logits(actual, ids, model, name="encoder_logits") -> None:
    """Fail unless ``actual`` has the properties of the encoder's scores on ``ids`` (batch, n)
    for ``model``, a holder of a ``TinyGPT``'s weights whose token embedding E has V + 1 rows
    (the last is ``[MASK]``'s) and whose final layer norm is ``model.norm``: the contract's
    shape; the output layer's properties; which positions a position's scores depend on
    (where two windows differ in their last word) and the order (where a window is another
    read backwards); on windows of one word, Hugging Face's GPT-2 holding the same weights.
    The exact values of longer windows are the grader's to compare (the hidden tests)."""
    got = as_tensor(actual, name)
    ids = torch.as_tensor(ids).long().cpu()
    words = model.token_embedding.weight.detach().cpu().double()[:-1]      # (V, d)
    if got.shape != (*ids.shape, len(words)):
        key = "mask_scored" if got.shape == (*ids.shape, len(words) + 1) else "encoder_shape"
        raise AssertionError(f"{name} is not right: {PRETRAINING_MISTAKES[key]}; got shape "
                             f"{tuple(got.shape)} for ids of shape {tuple(ids.shape)} and "
                             f"V = {len(words)}.")
    if not torch.isfinite(got).all():
        raise AssertionError(f"{name} is not right: it contains NaN or inf.")
    rows = got.reshape(-1, len(words)).T                                   # (V, positions)
    u = torch.linalg.lstsq(words, rows).solution                           # (d, positions)
    if (words @ u - rows).norm() > 1e-4 * max(1.0, rows.norm().item()):
        raise AssertionError(f"{name} is not right: {PRETRAINING_MISTAKES['encoder_head']}.")
    norm = model.norm
    z = (u.T - norm.bias.detach().cpu().double()) / norm.weight.detach().cpu().double()
    if (z.mean(-1).abs().max() > 1e-3 or (z.pow(2).mean(-1) - 1).abs().max() > 1e-2):
        raise AssertionError(
            f"{name} is not right: {PRETRAINING_MISTAKES['encoder_no_final_norm']}.")
    for a, b in _rows_that_differ_last(ids):
        if torch.allclose(got[a, :-1], got[b, :-1], rtol=0.0, atol=1e-5):
            raise AssertionError(f"{name} is not right: {PRETRAINING_MISTAKES['encoder_causal']}.")
    for a, b in _rows_reversed(ids):
        if torch.allclose(got[b], got[a].flip(0), rtol=0.0, atol=1e-4):
            raise AssertionError(
                f"{name} is not right: {PRETRAINING_MISTAKES['encoder_no_positions']}.")
    if ids.shape[1] == 1:

        def gpt_with(tokens, positions=1.0):
            gpt = _gpt_scores(ids, model, tokens, positions)[..., :-1]
            return torch.allclose(got.double(), gpt, rtol=1e-4, atol=1e-4)

        lift = model.config.d_model ** 0.5
        if not gpt_with(lift):
            key = ("encoder_unlifted" if gpt_with(1.0) else
                   "encoder_lifted_positions" if gpt_with(1.0, lift) else "encoder_one_word")
            raise AssertionError(f"{name} is not right: {PRETRAINING_MISTAKES[key]}.")


# -- parameter count ------------------------------------------------------------------------

FORGOTTEN = {  # a counting mistake, and the names of the BertModel parameters it leaves out
    "no_biases": r"(query|key|value|dense)\.bias$",
    "no_layer_norms": r"LayerNorm\.",
    "layer_norm_once": r"LayerNorm\.bias$",
    "no_positions": r"^embeddings\.position_embeddings\.",
    "no_types": r"^embeddings\.token_type_embeddings\.",
    "ff_once": r"^encoder\.layer\.\d+\.output\.dense\.",          # W₂ and its bias
    "no_output_projection": r"\.attention\.output\.dense\.",      # O and its bias
}


def _hugging_face_bert(vocab_size, max_positions, type_vocab_size, d_model, layers, d_ff,
                       pooler=False) -> dict[str, int]:
    """{name: number of entries} of every parameter of Hugging Face's ``BertModel`` with
    these sizes (with its pooler if ``pooler``), built on the meta device. One head: the
    number of heads changes no shape."""
    from transformers import BertConfig, BertModel

    config = BertConfig(vocab_size=vocab_size, max_position_embeddings=max_positions,
                        type_vocab_size=type_vocab_size, hidden_size=d_model,
                        num_hidden_layers=layers, num_attention_heads=1,
                        intermediate_size=d_ff)
    with torch.device("meta"):                                      # shapes only
        model = BertModel(config, add_pooling_layer=pooler)
    return {name: p.numel() for name, p in model.named_parameters()}


@checked_plainly
def check_bert_parameters(actual, vocab_size: int, max_positions: int, type_vocab_size: int,
                          d_model: int, layers: int, d_ff: int,
                          name="bert_parameters") -> None:
    """Fail unless ``actual`` is the number of parameters of Hugging Face's ``BertModel``
    with these sizes, without the pooler."""
    sizes = (vocab_size, max_positions, type_vocab_size, d_model, layers, d_ff)
    got = as_tensor(actual, name)
    if got.numel() != 1 or not torch.isfinite(got).all() or got.item() != round(got.item()):
        raise AssertionError(f"{name} is not right: {PRETRAINING_MISTAKES['not_a_count']}; "
                             f"got {got.tolist()}.")
    encoder = _hugging_face_bert(*sizes)
    value, expected = round(got.item()), sum(encoder.values())
    if value == expected:
        return
    variants = {key: sum(n for part, n in encoder.items() if not re.search(pattern, part))
                for key, pattern in FORGOTTEN.items()}
    variants["pooler"] = sum(_hugging_face_bert(*sizes, pooler=True).values())
    variants["one_layer"] = sum(_hugging_face_bert(*sizes[:4], 1, d_ff).values())
    for key, variant in variants.items():
        if value == variant:
            raise AssertionError(f"{name} is not right: {PRETRAINING_MISTAKES[key]}.")
    raise AssertionError(
        f"{name} is not right: expected {expected:,}, got {value:,} ({value - expected:+,}). "
        "Count the embeddings (three tables and a LayerNorm), then one layer (Q, K, V, O, "
        "two LayerNorms, the feed-forward layer), then multiply by the layers.")


# -- the best answer span -------------------------------------------------------------------


def _decoded_from_probabilities(start, end, max_length) -> tuple[int, int]:
    """The span that Hugging Face's question-answering decoder, ``decode_spans``, picks from
    the softmax probabilities in float32, as its pipeline feeds it: the largest
    p_start[s] · p_end[e], which underflows to 0 for a confident model."""
    from transformers.pipelines.document_question_answering import decode_spans

    p_start, p_end = (torch.softmax(x.float(), dim=0).numpy() for x in (start, end))
    starts, ends, _ = decode_spans(p_start, p_end, 1, max_length, np.ones(len(start)))
    return int(starts[0]), int(ends[0])


@checked_plainly
def check_best_span(actual, start_scores, end_scores, max_length: int, expected,
                    name="best_span") -> None:
    """Fail unless ``actual`` is a pair (s, e), a span the reader may answer whose score ties
    that of ``expected``, the best span, which the visible test states."""
    start = as_tensor(start_scores, "start_scores").flatten()
    end = as_tensor(end_scores, "end_scores").flatten()
    best_start, best_end = (round(v) for v in as_tensor(expected, "expected").flatten().tolist())
    best = (start[best_start] + end[best_end]).item()
    got = as_tensor(actual, name).flatten()
    if got.numel() != 2 or got.tolist() != [round(v) for v in got.tolist()]:
        raise AssertionError(f"{name} is not right: {PRETRAINING_MISTAKES['not_a_pair']}; "
                             f"got {got.tolist()}.")
    s, e = (round(v) for v in got.tolist())
    n = len(start)

    def is_best(pair):
        """A span the reader may answer whose score ties the best span's (float32 sums may
        tie where float64 ones differ in the 7th digit: either is right)."""
        first, last = pair
        if not 0 <= first <= last < min(n, first + max_length):
            return False
        return (start[first] + end[last]).item() >= best - 1e-6 * max(1.0, abs(best))

    if is_best((s, e)):
        return
    if (s, e) == (start.argmax().item(), end.argmax().item()):
        key = "separate_argmax"
    elif (s, e) == _decoded_from_probabilities(start, end, max_length):
        key = "probabilities"
    elif is_best((s - 1, e - 1)):
        key = "from_one"
    elif is_best((e, s)):
        key = "swapped"
    elif not (0 <= s < n and 0 <= e < n):
        key = "outside"
    elif e < s:
        key = "end_before_start"
    elif e >= s + max_length:
        key = "too_long"
    elif best_end - best_start + 1 == max_length:     # the best span is as long as allowed
        key = "too_short"
    else:
        key = "not_best"
    raise AssertionError(f"{name} is not right: {PRETRAINING_MISTAKES[key]}. Got ({s}, {e}) "
                         f"for {n} scores and max_length = {max_length}.")

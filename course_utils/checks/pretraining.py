"""Diagnostic checks for notebook 09 (BERT and GPT): the masked-LM loss, the encoder's
forward pass, sizes and span decoding.

The expected values come from libraries, never from an exercise written again:

* the masked-LM loss is PyTorch's ``F.cross_entropy`` at each position, kept where
  ``bert_mask`` chose; each named mistake is those losses combined as the mistake combines
  them (or ``F.nll_loss``, which skips the softmax);
* the encoder's logits are judged by properties, never by the forward pass written again
  (the grader compares the hidden tests' values with the stored answers, outside the
  kernel): their shape; 0 at the padding; their output layer's, found by least squares;
  which positions a position's scores depend on (a later word, with and without the causal
  mask; the ids of the padding); the order of a window; and, on windows of one word, the
  scores of Hugging Face's GPT-2 holding the model's weights (``models.library_gpt``);
* a BERT encoder's parameter count is Hugging Face's ``BertModel``, built from a
  ``BertConfig`` on the meta device (shapes only: nothing is downloaded or allocated) and
  counted with ``sum(p.numel() ...)``; each mistake is that count without the parameters
  it forgets (found by their names), with the pooler, or of one layer;
* a span is judged against the best span the visible test states, or, on small scores,
  Hugging Face's question-answering decoder, ``decode_spans``, on the softmax probabilities
  in float64 (the grader compares the hidden tests' spans with the stored answers): it must
  be one the reader may answer and tie that span's score; the mistake of multiplying
  probabilities is that decoder on float32 probabilities, as its pipeline feeds it.

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
           "check_encoder_logits", "check_masked_lm_loss", "check_own_position_loss"]

_SHORT_IN_LAYERS = "your count is short by a part every layer holds, and only the layers"
_SHORT_EVERYWHERE = "your count is short by a part every layer holds, and the embeddings too"
_SHORT_IN_EMBEDDINGS = "your count is short in the embeddings only, by a multiple of d"
PRETRAINING_MISTAKES = {
    "not_a_loss": "the loss is one number (a tensor with one entry, or a float)",
    "all_positions": "your loss changes when the logits change at positions whose scores "
    "should not matter: look at which positions enter it",
    "raw_logits": "your loss changes when the same number is added to all V logits of a "
    "position, which leaves p(· | x̃) as it was",
    "summed": "the same windows given twice (a batch twice as large, the same surprises) do "
    "not give the same loss",
    "diluted": "your loss is lower the fewer positions bert_mask chose, on the same "
    "surprises: it is the draft's, whose slip is still there",
    "sign": "your loss falls as the model gives the words the text had less probability",
    "encoder_shape": "the scores are one row of numbers per position of every window, one "
    "number per word the model can answer: look at the shape your function returns",
    "encoder_head": "at some position your scores are not what one vector of d numbers gives "
    "through the model's weights, and a model with no other weight gives nothing else",
    "encoder_no_final_norm": "the vector of d numbers behind your scores at a position (read "
    "back from them) does not have the mean and variance the model's last weights leave it",
    "encoder_causal": "with causal=False, changing the last word of a window changed the "
    "scores at no earlier position",
    "encoder_future": "with causal=True, changing the last word of a window changed the "
    "scores at an earlier position",
    "encoder_padding": "two windows with the same words and other ids in their padding got "
    "other scores at their words",
    "encoder_padding_rows": "the scores at the padding are not 0, which the contract asks for",
    "encoder_no_positions": "the window read backwards gives the same scores, backwards: your "
    "scores do not depend on where a word is",
    "encoder_one_word": "on windows of one word, where no mask matters, your scores differ "
    "from those of Hugging Face's GPT-2 holding the same weights",
    "encoder_unlifted": "on windows of one word, where no mask matters, your scores are those "
    "of Hugging Face's GPT-2 holding the same weights fed the token rows unlifted: look at "
    "what enters the first block",
    "encoder_lifted_positions": "on windows of one word, where no mask matters, your scores "
    "are those of Hugging Face's GPT-2 holding the same weights with the lift on the "
    "positions' table: look at what enters the first block",
    # a count's slips are told by where the count is short, never by the part forgotten
    "no_biases": _SHORT_IN_LAYERS, "ff_once": _SHORT_IN_LAYERS,
    "no_output_projection": _SHORT_IN_LAYERS,
    "no_layer_norms": _SHORT_EVERYWHERE, "layer_norm_once": _SHORT_EVERYWHERE,
    "no_positions": _SHORT_IN_EMBEDDINGS, "no_types": _SHORT_IN_EMBEDDINGS,
    "pooler": "your count is over by a part that is neither in the embeddings nor in every "
    "layer: look at what the exercise leaves out",
    "one_layer": "your count is that of an encoder with one layer",
    "not_a_count": "a parameter count is one whole number",
    "not_a_pair": "return a pair (start, end) of two whole numbers",
    "outside": "start and end are positions of the scores: from 0 to len(start_scores) − 1",
    "end_before_start": "your span ends before it starts",
    "too_long": "your span is longer than max_length tokens",
    "too_short": "a span exactly max_length tokens long beats yours",
    "separate_argmax": "the pair you returned is no span the reader may answer on these "
    "scores",
    "from_one": "your pair is the best span's two positions, each plus 1",
    "swapped": "your pair is the best span's two positions in the other order",
    "probabilities": "on these scores, which reach the hundreds, another span beats yours, "
    "where on small scores your ranking finds the best: look at what it computes for such "
    "scores",
    "not_best": "your span is one the reader may answer, but another has a higher "
    "probability p_start(i) p_end(j)",
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
            "diluted": each[chosen].sum() / len(each),
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
        f"{name} is not right: got {value:.6g}, which is none of the mistakes we know.")


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


def _rows_padded_otherwise(ids: torch.Tensor, padding: torch.Tensor) -> list[tuple[int, int]]:
    """Pairs of windows (a, b) with the same padding and the same words, other padding ids."""
    return [(a, b) for a in range(len(ids)) for b in range(a + 1, len(ids))
            if torch.equal(padding[a], padding[b]) and padding[a].any()
            and torch.equal(ids[a][~padding[a]], ids[b][~padding[b]])
            and not torch.equal(ids[a], ids[b])]


@checked_plainly
def check_encoder_logits(actual, ids, model, causal=False, padding=None,
                         name="encoder_logits") -> None:
    """Fail unless ``actual`` has the properties of the encoder's scores on ``ids`` (batch, n)
    for ``model``, a holder of a ``TinyGPT``'s weights whose token embedding E has V + 1 rows
    (the last is ``[MASK]``'s) and whose final layer norm is ``model.norm``, with every block
    causal if ``causal`` and ``padding`` (batch, n), True after each window's words, or None:
    the contract's shape; 0 at the padding; the output layer's properties at the words; which
    positions a position's scores depend on (where two windows differ in their last word, or
    only in their padding) and the order (where a window is another read backwards); on
    windows of one word, Hugging Face's GPT-2 holding the same weights. The exact values are
    the grader's to compare (the hidden tests)."""
    got = as_tensor(actual, name)
    ids = torch.as_tensor(ids).long().cpu()
    padding = (torch.zeros(ids.shape, dtype=torch.bool) if padding is None
               else torch.as_tensor(padding).bool().cpu())
    words = model.token_embedding.weight.detach().cpu().double()[:-1]      # (V, d)
    if got.shape != (*ids.shape, len(words)):
        raise AssertionError(f"{name} is not right: {PRETRAINING_MISTAKES['encoder_shape']}; "
                             f"got shape {tuple(got.shape)} for ids of shape "
                             f"{tuple(ids.shape)}.")
    if not torch.isfinite(got).all():
        raise AssertionError(f"{name} is not right: it contains NaN or inf.")
    if got[padding].ne(0).any():
        raise AssertionError(
            f"{name} is not right: {PRETRAINING_MISTAKES['encoder_padding_rows']}.")
    rows = got[~padding].T                                                 # (V, positions)
    u = torch.linalg.lstsq(words, rows).solution                           # (d, positions)
    if (words @ u - rows).norm() > 1e-4 * max(1.0, rows.norm().item()):
        raise AssertionError(f"{name} is not right: {PRETRAINING_MISTAKES['encoder_head']}.")
    norm = model.norm
    z = (u.T - norm.bias.detach().cpu().double()) / norm.weight.detach().cpu().double()
    if (z.mean(-1).abs().max() > 1e-3 or (z.pow(2).mean(-1) - 1).abs().max() > 1e-2):
        raise AssertionError(
            f"{name} is not right: {PRETRAINING_MISTAKES['encoder_no_final_norm']}.")
    for a, b in _rows_that_differ_last(ids) if not padding.any() else ():
        if torch.allclose(got[a, :-1], got[b, :-1], rtol=0.0, atol=1e-5) != causal:
            key = "encoder_future" if causal else "encoder_causal"
            raise AssertionError(f"{name} is not right: {PRETRAINING_MISTAKES[key]}.")
    for a, b in _rows_padded_otherwise(ids, padding):
        if not torch.allclose(got[a], got[b], rtol=0.0, atol=1e-5):
            raise AssertionError(
                f"{name} is not right: {PRETRAINING_MISTAKES['encoder_padding']}.")
    for a, b in _rows_reversed(ids) if not padding.any() else ():
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


# -- the loss of a model that reads its own position only ----------------------------------


@checked_plainly
def check_own_position_loss(actual, name="own_position_loss") -> None:
    """Fail unless ``actual`` is one positive number. Never whether it is right.

    It is the same for every student, so a check that said whether it is right would be an
    oracle a loop over candidates could query. Whether it is right is decided when the work
    is graded: the value it reports is compared with the stored answer
    (``grader.scoring.outside``), within the record's tolerance.
    """
    value = as_tensor(actual, name)
    if value.numel() != 1 or not torch.isfinite(value).all() or value.item() <= 0:
        raise AssertionError(f"{name} should be one positive number (a loss in nats); got "
                             f"{actual!r}")
    print(f"✓ {name}: one positive number; whether it is right is checked when your work is "
          "graded")


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
            raise AssertionError(f"{name} is not right: {PRETRAINING_MISTAKES[key]} "
                                 f"({_where_it_differs(value - expected, layers)}).")
    raise AssertionError(f"{name} is not right: {_where_it_differs(value - expected, layers)}; "
                         "a difference that is none of the mistakes we know.")


def _where_it_differs(difference: int, layers: int) -> str:
    """The symptom of a wrong count: by how much, and whether every layer shares it."""
    if not layers:
        return f"it is off by {difference:+,}, in the embeddings (there are no layers)"
    if difference % layers == 0:
        return (f"it is off by {difference:+,}, {difference // layers:+,} for each of the "
                f"{layers} layers if the layers hold it")
    return (f"it is off by {difference:+,}, which the {layers} layers cannot share equally: "
            "the embeddings' part differs")


# -- the best answer span -------------------------------------------------------------------


def _decoded_from_probabilities(start, end, max_length, dtype=torch.float32) -> tuple[int, int]:
    """The span that Hugging Face's question-answering decoder, ``decode_spans``, picks from
    the softmax probabilities in ``dtype`` (float32, as its pipeline feeds it): the largest
    p_start[s] · p_end[e], which underflows to 0 for a confident model."""
    from transformers.pipelines.document_question_answering import decode_spans

    p_start, p_end = (torch.softmax(x.to(dtype), dim=0).numpy() for x in (start, end))
    starts, ends, _ = decode_spans(p_start, p_end, 1, max_length, np.ones(len(start)))
    return int(starts[0]), int(ends[0])


@checked_plainly
def check_best_span(actual, start_scores, end_scores, max_length: int, expected=None,
                    name="best_span") -> None:
    """Fail unless ``actual`` is a pair (s, e), a span the reader may answer whose score ties
    that of ``expected``, the best span, which the visible test states; where it states none
    (scores small enough that no probability underflows), Hugging Face's decoder on the
    probabilities in float64 gives it."""
    start = as_tensor(start_scores, "start_scores").flatten()
    end = as_tensor(end_scores, "end_scores").flatten()
    if expected is None:
        expected = _decoded_from_probabilities(start.double(), end.double(), max_length,
                                               torch.float64)
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

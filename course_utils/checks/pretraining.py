"""Diagnostic checks for notebook 09 (BERT and GPT): the masked-LM loss, sizes and span
decoding.

The references are written out independently of ``course_utils``: the masked-LM loss is
PyTorch's own cross-entropy at the masked positions, a BERT encoder's
parameter count summed layer by layer from its parts
(tests/course_utils/checks/test_checks_pretraining.py
checks it against Hugging Face's ``BertModel`` and MiniLM's packaged weights), and the
best answer span found by brute force over every pair (s, e).
"""

import math

import torch
import torch.nn.functional as F

from .core import as_tensor
from .guards import checked_plainly

__all__ = ["PRETRAINING_MISTAKES", "check_bert_parameters", "check_best_span",
           "check_masked_lm_loss"]

PRETRAINING_MISTAKES = {
    "not_a_loss": "the loss is one number (a tensor with one entry, or a float)",
    "all_positions": "you scored positions that bert_mask did not choose: look at what "
    "`masked` marks, and at what the model reads where it is False",
    "raw_logits": "you used the logits themselves at the targets: look at what the exercise "
    "calls the model's surprise, and at what turns a row of logits into p(· | x̃)",
    "summed": "your loss grows with the number of masked tokens: look at how you combine the "
    "positions' surprises into one number",
    "sign": "your loss has the wrong sign: look at the sign of a log-probability",
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
    "end_before_start": "your span ends before it starts: the answer needs s ≤ e",
    "too_long": "your span is longer than max_length tokens: it needs e − s + 1 ≤ max_length, "
    "i.e. e < s + max_length",
    "too_short": "you allowed only spans shorter than max_length: e − s + 1 may EQUAL "
    "max_length (e < s + max_length)",
    "separate_argmax": "you took the best start and the best end separately; they must be "
    "chosen together, the best PAIR with s ≤ e < s + max_length",
    "from_one": "your positions count from 1; they count from 0, like the scores' indices",
    "swapped": "you returned (end, start); return (start, end)",
    "probabilities": "you multiplied probabilities (softmax of the scores): for a confident "
    "model they underflow to 0 and every span ties. Maximise the SUM of the scores "
    "start_scores[s] + end_scores[e] (the log of that product, without the underflow)",
    "not_best": "your span (s, e) satisfies s ≤ e < s + max_length but another such span has "
    "a larger start_scores[s] + end_scores[e]",
}


# -- the masked-LM loss ---------------------------------------------------------------------


def _masked_lm_variants(logits, targets, masked) -> dict:
    """The loss (key None) and the value each named mistake gives, from PyTorch's own
    cross-entropy in float64."""
    logits, targets = logits.double(), targets.long()
    picked = logits.gather(-1, targets[..., None])[..., 0]             # the target's logit
    every = F.cross_entropy(logits.flatten(0, -2), targets.flatten(), reduction="none")
    right = F.cross_entropy(logits[masked], targets[masked])
    return {None: right, "all_positions": every.mean(), "raw_logits": -picked[masked].mean(),
            "summed": right * masked.sum(), "sign": -right}


@checked_plainly
def check_masked_lm_loss(actual, logits, targets, masked, name="masked_lm_loss") -> None:
    """Fail unless ``actual`` is the mean over the positions where ``masked`` is True of
    −log softmax(logits)[target] (relative tolerance 1e-4: float32 logits are allowed)."""
    got = as_tensor(actual, name)
    if got.numel() != 1:
        raise AssertionError(f"{name} is not right: {PRETRAINING_MISTAKES['not_a_loss']}; "
                             f"got shape {tuple(got.shape)}.")
    value = got.item()
    masked = as_tensor(masked, "masked").bool()
    variants = _masked_lm_variants(as_tensor(logits, "logits"),
                                   as_tensor(targets, "targets"), masked)
    expected = variants.pop(None).item()

    def near(x):
        return abs(value - x) <= 1e-4 * max(1.0, abs(x))

    if near(expected):
        return
    for key, wrong in variants.items():
        if near(wrong.item()):
            raise AssertionError(f"{name} is not right: {PRETRAINING_MISTAKES[key]}.")
    raise AssertionError(
        f"{name} is not right: got {value:.6g}, which is none of the mistakes we know. "
        "Take log-probabilities over the vocabulary (the last axis), pick each position's "
        "target, keep the masked positions only, and average their negatives.")


# -- parameter count ------------------------------------------------------------------------


def _bert_parameters(vocab_size, max_positions, type_vocab_size, d_model, layers, d_ff,
                     biases=True, norm_vectors=2, positions=True, types=True, ff_matrices=2,
                     projections=4, pooler=False, one_layer=False) -> int:
    """A BERT encoder's parameters from its parts, with switches that model the mistakes."""
    d, bias = d_model, int(biases)
    embeddings = (vocab_size + max_positions * positions + type_vocab_size * types) * d
    embeddings += norm_vectors * d                                   # LayerNorm γ, β
    attention = projections * (d * d + bias * d)                     # Q, K, V, O
    feed_forward = (d * d_ff + bias * d_ff) + (ff_matrices - 1) * (d_ff * d + bias * d)
    layer = attention + feed_forward + 2 * norm_vectors * d          # two LayerNorms
    total = embeddings + (1 if one_layer else layers) * layer
    return total + (d * d + d if pooler else 0)


@checked_plainly
def check_bert_parameters(actual, vocab_size: int, max_positions: int, type_vocab_size: int,
                          d_model: int, layers: int, d_ff: int,
                          name="bert_parameters") -> None:
    """Fail unless ``actual`` is the number of parameters of a BERT encoder without the
    pooler: the embeddings (word, position, token type, their LayerNorm) and ``layers``
    post-LN layers (Q, K, V, O with biases, two LayerNorms, the feed-forward layer)."""
    sizes = (vocab_size, max_positions, type_vocab_size, d_model, layers, d_ff)
    got = as_tensor(actual, name)
    if got.numel() != 1 or not torch.isfinite(got).all() or got.item() != round(got.item()):
        raise AssertionError(f"{name} is not right: {PRETRAINING_MISTAKES['not_a_count']}; "
                             f"got {got.tolist()}.")
    value, expected = round(got.item()), _bert_parameters(*sizes)
    if value == expected:
        return
    mistakes = {
        "no_biases": {"biases": False}, "no_layer_norms": {"norm_vectors": 0},
        "layer_norm_once": {"norm_vectors": 1}, "no_positions": {"positions": False},
        "no_types": {"types": False}, "ff_once": {"ff_matrices": 1},
        "no_output_projection": {"projections": 3}, "pooler": {"pooler": True},
        "one_layer": {"one_layer": True},
    }
    for key, variant in mistakes.items():
        if value == _bert_parameters(*sizes, **variant):
            raise AssertionError(f"{name} is not right: {PRETRAINING_MISTAKES[key]}.")
    raise AssertionError(
        f"{name} is not right: expected {expected:,}, got {value:,} ({value - expected:+,}). "
        "Count the embeddings (three tables and a LayerNorm), then one layer (Q, K, V, O, "
        "two LayerNorms, the feed-forward layer), then multiply by the layers.")


# -- the best answer span -------------------------------------------------------------------


def _best_span(start, end, max_length, ordered=True) -> tuple[int, int]:
    """The first pair (s, e) with the largest start[s] + end[e], by brute force over every
    pair with e < s + max_length, and s ≤ e when ``ordered`` (the mistakes drop it)."""
    best, where = -math.inf, (0, 0)
    for s in range(len(start)):
        for e in range(len(end)):
            allowed = e < s + max_length and (s <= e or not ordered)
            if allowed and start[s] + end[e] > best:
                best, where = start[s] + end[e], (s, e)
    return where


def _product_of_probabilities(start, end, max_length) -> tuple[int, int]:
    """The span of the largest p_start[s] · p_end[e] (softmax probabilities, float32),
    zero outside s ≤ e < s + max_length, as a decoder that multiplies probabilities does."""
    p = torch.softmax(start.float(), 0)[:, None] * torch.softmax(end.float(), 0)[None, :]
    p = p.triu().tril(max_length - 1)
    return divmod(p.flatten().argmax().item(), len(start))


@checked_plainly
def check_best_span(actual, start_scores, end_scores, max_length: int,
                    name="best_span") -> None:
    """Fail unless ``actual`` is a pair (s, e) with s ≤ e < s + max_length and the largest
    start_scores[s] + end_scores[e] (any such pair if several tie)."""
    start = as_tensor(start_scores, "start_scores").tolist()
    end = as_tensor(end_scores, "end_scores").tolist()
    got = as_tensor(actual, name).flatten()
    if got.numel() != 2 or got.tolist() != [round(v) for v in got.tolist()]:
        raise AssertionError(f"{name} is not right: {PRETRAINING_MISTAKES['not_a_pair']}; "
                             f"got {got.tolist()}.")
    s, e = (round(v) for v in got.tolist())
    best = _best_span(start, end, max_length)
    n = len(start)
    valid = 0 <= s <= e < min(n, s + max_length)
    best_sum = start[best[0]] + end[best[1]]
    # float32 sums may tie where float64 ones differ in the 7th digit: either pair is right
    if valid and start[s] + end[e] >= best_sum - 1e-6 * max(1.0, abs(best_sum)):
        return
    variants = {
        "separate_argmax": (max(range(n), key=start.__getitem__),
                            max(range(n), key=end.__getitem__)),
        "end_before_start": _best_span(start, end, max_length, ordered=False),
        "too_long": _best_span(start, end, max_length + 1),
        "too_short": _best_span(start, end, max_length - 1) if max_length > 1 else None,
        "probabilities": _product_of_probabilities(torch.tensor(start), torch.tensor(end),
                                                   max_length),
        "from_one": (best[0] + 1, best[1] + 1),
        "swapped": best[::-1],
    }
    for key, variant in variants.items():
        if variant is not None and (s, e) == tuple(variant) and variant != best:
            raise AssertionError(f"{name} is not right: {PRETRAINING_MISTAKES[key]}.")
    if not (0 <= s < n and 0 <= e < n):
        key = "outside"
    elif e < s:
        key = "end_before_start"
    elif e >= s + max_length:
        key = "too_long"
    else:
        key = "not_best"
    raise AssertionError(f"{name} is not right: {PRETRAINING_MISTAKES[key]}. Got ({s}, {e}) "
                         f"for {n} scores and max_length = {max_length}.")

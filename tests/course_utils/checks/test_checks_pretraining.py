"""The checks of notebook 09 (BERT and GPT) against independent oracles: a masked-LM
loss written out position by position with math.log and math.exp; a BERT encoder's
parameters counted part by part by hand, which MiniLM's packaged weights, the published
counts of BERT-base and BERT-large and PyTorch's own layers confirm; an itertools search
over every pair for the best span (the span a visible test states); PyTorch's own encoder
layers for the tiny BERT; and the grading cases' answers
(tests/grading_cases/bert_and_gpt.py) run through own_work."""

import itertools
import math
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import load_file
from torch import nn

from course_utils import checks
from course_utils.checks.pretraining import PRETRAINING_MISTAKES
from course_utils.models.gpt import GPTConfig, TinyGPT
from course_utils.models.pretrained import model_path
from tests.grading_cases import Cheat
from tests.grading_cases import bert_and_gpt as cases

# (vocab_size, max_positions, type_vocab_size, d_model, layers, d_ff)
MINILM = (30522, 512, 2, 384, 6, 1536)
BERT_BASE = (30522, 512, 2, 768, 12, 3072)
BERT_LARGE = (30522, 512, 2, 1024, 24, 4096)
ODD = (1000, 64, 3, 48, 5, 100)
TINY = (100, 16, 2, 8, 2, 32)
NO_LAYERS = (7, 5, 1, 4, 0, 16)
SIZES = [MINILM, BERT_BASE, BERT_LARGE, ODD, TINY, NO_LAYERS]


def by_hand(vocab, positions, types, d, layers, d_ff, *, biases=True, norm_vectors=2,
            position_table=True, type_table=True, ff_matrices=2, projections=4,
            pooler=False, one_layer=False):
    """A BERT encoder's parameters, part by part; the switches count it as a mistake does."""
    bias = int(biases)
    embeddings = (vocab + positions * position_table + types * type_table) * d
    embeddings += norm_vectors * d                                   # their LayerNorm
    attention = projections * (d * d + bias * d)                     # Q, K, V, O
    feed_forward = (d * d_ff + bias * d_ff) + (ff_matrices - 1) * (d_ff * d + bias * d)
    layer = attention + feed_forward + 2 * norm_vectors * d          # two LayerNorms
    total = embeddings + (1 if one_layer else layers) * layer
    return total + (d * d + d if pooler else 0)


def with_torch_layers(vocab, positions, types, d, layers, d_ff):
    """The same encoder from PyTorch's own layers (nn.TransformerEncoderLayer has BERT's
    parameters: Q, K, V and O with biases, two feed-forward maps, two LayerNorms)."""
    with torch.device("meta"):
        parts = nn.ModuleList([nn.Embedding(vocab, d), nn.Embedding(positions, d),
                               nn.Embedding(types, d), nn.LayerNorm(d)])
        parts.extend(nn.TransformerEncoderLayer(d, 1, d_ff) for _ in range(layers))
    return sum(p.numel() for p in parts.parameters())


def test_the_count_by_hand_is_minilms_packaged_weights_and_the_published_counts():
    weights = load_file(model_path() / "model.safetensors")
    encoder = {name: t for name, t in weights.items()
               if not name.startswith("pooler.") and not name.endswith("position_ids")}
    assert by_hand(*MINILM) == sum(t.numel() for t in encoder.values()) == 22_565_376
    # bert-base-uncased and bert-large-uncased as released, with their pooler
    assert by_hand(*BERT_BASE, pooler=True) == 109_482_240
    assert by_hand(*BERT_LARGE, pooler=True) == 335_141_888


@pytest.mark.parametrize("sizes", SIZES)
def test_a_right_count_passes(sizes):
    assert by_hand(*sizes) == with_torch_layers(*sizes)
    checks.check_bert_parameters(by_hand(*sizes), *sizes)


@pytest.mark.parametrize("answer", [22_565_376, np.int64(22_565_376), torch.tensor(22_565_376),
                                    22_565_376.0])
def test_a_right_count_passes_in_any_numeric_type(answer):
    checks.check_bert_parameters(answer, *MINILM)


COUNTING_MISTAKES = {  # the mistake, and how the count by hand makes it
    "no_biases": {"biases": False},
    "no_layer_norms": {"norm_vectors": 0},
    "layer_norm_once": {"norm_vectors": 1},
    "no_positions": {"position_table": False},
    "no_types": {"type_table": False},
    "ff_once": {"ff_matrices": 1},
    "no_output_projection": {"projections": 3},
    "pooler": {"pooler": True},
    "one_layer": {"one_layer": True},
}


@pytest.mark.parametrize("sizes", [MINILM, BERT_LARGE, ODD])
@pytest.mark.parametrize("mistake", sorted(COUNTING_MISTAKES))
def test_each_counting_mistake_is_named(sizes, mistake):
    count = by_hand(*sizes, **COUNTING_MISTAKES[mistake])
    with pytest.raises(AssertionError, match=re.escape(PRETRAINING_MISTAKES[mistake])):
        checks.check_bert_parameters(count, *sizes)


def test_other_counts_fail_with_the_difference_never_the_count():
    for count, symptom in ((22_565_377, r"off by \+1, which the 6 layers cannot share"),
                           (22_565_376 + 42, r"off by \+42, \+7 for each of the 6 layers")):
        with pytest.raises(AssertionError, match=symptom) as failure:
            checks.check_bert_parameters(count, *MINILM)
        assert "22,565,376" not in str(failure.value)
    with pytest.raises(AssertionError, match=r"off by -3, in the embeddings"):
        checks.check_bert_parameters(by_hand(7, 5, 1, 4, 0, 16) - 3, 7, 5, 1, 4, 0, 16)
    for not_a_count in (22_565_376.5, [1, 2], None):
        with pytest.raises(AssertionError):
            checks.check_bert_parameters(not_a_count, *MINILM)


# -- the best span ----------------------------------------------------------------------------


def every_best_pair(start, end, max_length):
    """All pairs with s <= e < s + max_length and the largest start[s] + end[e]."""
    pairs = [(s, e) for s, e in itertools.product(range(len(start)), repeat=2)
             if s <= e < s + max_length]
    best = max(start[s] + end[e] for s, e in pairs)
    return [(s, e) for s, e in pairs if start[s] + end[e] == best]


@pytest.mark.parametrize("seed", range(10))
def test_the_best_pair_passes_in_any_form_and_every_other_pair_fails(seed):
    generator = torch.Generator().manual_seed(seed)
    start, end = torch.randint(-3, 4, (2, 7), generator=generator).double()   # ties happen
    best = every_best_pair(start.tolist(), end.tolist(), 3)
    for s, e in itertools.product(range(7), repeat=2):
        if (s, e) in best:
            for form in ((s, e), [s, e], np.array([s, e]), torch.tensor([s, e])):
                checks.check_best_span(form, start, end, 3, best[-1])
        else:
            with pytest.raises(AssertionError):
                checks.check_best_span((s, e), start, end, 3, best[0])


@pytest.mark.parametrize("seed", range(5))
def test_on_small_scores_the_best_span_need_not_be_stated(seed):
    generator = torch.Generator().manual_seed(seed)
    start, end = torch.randn(2, 9, generator=generator, dtype=torch.float64) * 3
    best = every_best_pair(start.tolist(), end.tolist(), 3)
    for s, e in itertools.product(range(9), repeat=2):
        if (s, e) in best:
            checks.check_best_span((s, e), start, end, 3)
        else:
            with pytest.raises(AssertionError):
                checks.check_best_span((s, e), start, end, 3)


def test_a_pair_that_ties_the_best_in_float32_passes():
    start = torch.tensor([10.0, 10.0 + 1e-7], dtype=torch.float64)  # equal in float32
    end = torch.zeros(2, dtype=torch.float64)
    scores = start.float()[:, None] + end.float()[None, :]          # a float32 answer's sums
    assert scores[0, 0] == scores[1, 1]
    assert every_best_pair(start.tolist(), end.tolist(), 2) == [(1, 1)]
    checks.check_best_span((0, 0), start, end, 2, (1, 1))
    with pytest.raises(AssertionError):
        checks.check_best_span((0, 0), start + torch.tensor([0.0, 1e-3], dtype=torch.float64),
                               end, 2, (1, 1))


@pytest.mark.parametrize(("start", "end", "max_length", "answer", "mistake"), [
    ([0, 0, 9, 0], [5, 0, 0, 1], 4, (2, 0), "separate_argmax"),
    ([0, 9, 0, 0, 0], [8, 0, 0, 0, 9], 2, (1, 0), "end_before_start"),
    ([5, 0, 0, 0, 0], [0, 0, 0, 6, 7], 3, (0, 3), "too_long"),
    ([5, 0, 0, 0], [0, 1, 2, 6], 3, (0, 1), "too_short"),
    ([0, 5, 0, 0], [0, 0, 4, 0], 3, (2, 3), "from_one"),
    ([0, 5, 0, 0], [0, 0, 4, 0], 3, (2, 1), "swapped"),
    ([0, 0, 0, 0], [0, 0, 0, 0], 3, (0, 5), "outside"),
    ([9, 0, 0, 0], [1, 0, 0, 9], 2, (1, 2), "not_best"),
])
def test_each_span_mistake_is_named(start, end, max_length, answer, mistake):
    best = every_best_pair(start, end, max_length)[0]
    with pytest.raises(AssertionError, match=re.escape(PRETRAINING_MISTAKES[mistake])):
        checks.check_best_span(answer, torch.tensor(start, dtype=torch.float64),
                               torch.tensor(end, dtype=torch.float64), max_length, best)


def test_multiplying_probabilities_is_named_where_they_underflow():
    start = torch.tensor([-1000.0, 900.0, 0.0, 0.0, 0.0, 1.0])
    end = torch.tensor([950.0, 0.0, 0.0, 2.0, 0.0, 0.0])       # the best pair is (1, 3)
    assert every_best_pair(start.tolist(), end.tolist(), 4) == [(1, 3)]
    with pytest.raises(AssertionError, match=re.escape(PRETRAINING_MISTAKES["probabilities"])):
        checks.check_best_span((0, 0), start, end, 4, (1, 3))


# -- the masked-LM loss -----------------------------------------------------------------------


def loss_by_hand(logits, targets, masked):
    """−log softmax(logits)[target] averaged over the masked positions, in plain floats."""
    losses = []
    rows = logits.reshape(-1, logits.shape[-1]).tolist()
    for row, target, chosen in zip(rows, targets.flatten().tolist(), masked.flatten().tolist(),
                                   strict=True):
        if chosen:
            top = max(row)
            log_norm = top + math.log(sum(math.exp(x - top) for x in row))
            losses.append(log_norm - row[target])
    return sum(losses) / len(losses)


def loss_inputs(seed, shape=(3, 6, 9), scale=3.0, dtype=torch.float32):
    generator = torch.Generator().manual_seed(seed)
    logits = torch.randn(shape, generator=generator, dtype=dtype) * scale
    targets = torch.randint(shape[-1], shape[:-1], generator=generator)
    masked = torch.rand(shape[:-1], generator=generator) < 0.3
    masked.view(-1)[:2] = True                                    # two positions at least
    return logits, targets, masked


@pytest.mark.parametrize("seed", range(5))
def test_the_masked_lm_loss_passes_in_any_form(seed):
    logits, targets, masked = loss_inputs(seed, scale=30.0 if seed else 3.0)
    right = loss_by_hand(logits, targets, masked)
    for answer in (right, torch.tensor(right), torch.tensor([right], dtype=torch.float32),
                   np.float64(right)):
        checks.check_masked_lm_loss(answer, logits, targets, masked)
    with pytest.raises(AssertionError, match="none of the mistakes"):
        checks.check_masked_lm_loss(right * 1.01 + 0.01, logits, targets, masked)
    with pytest.raises(AssertionError, match="one number"):
        checks.check_masked_lm_loss([right, right], logits, targets, masked)


def every_loss(logits, targets, masked):
    """The per-position losses, by hand, as a (batch, n) tensor."""
    flat = [loss_by_hand(row[None, None], torch.tensor([[t]]), torch.tensor([[True]]))
            for row, t in zip(logits.reshape(-1, logits.shape[-1]), targets.flatten().tolist(),
                              strict=True)]
    return torch.tensor(flat, dtype=torch.float64).reshape(targets.shape)


LOSS_MISTAKES = {
    "all_positions": lambda logits, targets, masked, per: per.mean(),
    "raw_logits": lambda logits, targets, masked, per: -logits.double().gather(
        -1, targets[..., None])[..., 0][masked].mean(),
    "summed": lambda logits, targets, masked, per: per[masked].sum(),
    "diluted": lambda logits, targets, masked, per: per[masked].sum() / masked.numel(),
    "sign": lambda logits, targets, masked, per: -per[masked].mean(),
}


@pytest.mark.parametrize("mistake", sorted(LOSS_MISTAKES))
@pytest.mark.parametrize("seed", range(3))
def test_each_loss_mistake_is_named(mistake, seed):
    logits, targets, masked = loss_inputs(seed)
    wrong = LOSS_MISTAKES[mistake](logits, targets, masked, every_loss(logits, targets, masked))
    message = re.escape(PRETRAINING_MISTAKES[mistake])
    with pytest.raises(AssertionError, match=message):
        checks.check_masked_lm_loss(wrong, logits, targets, masked)


def test_no_loss_message_shows_the_expected_value():
    logits, targets, masked = loss_inputs(0)
    right = loss_by_hand(logits, targets, masked)
    with pytest.raises(AssertionError) as failure:
        checks.check_masked_lm_loss(right + 0.5, logits, targets, masked)
    assert f"{right:.3g}" not in str(failure.value)


# -- the loss of a model that reads its own position only: the form, never the value -------


@pytest.mark.parametrize("answer", [3.30, 3.3009, np.float64(2.84), torch.tensor(3.55), 1])
def test_the_own_position_check_passes_every_positive_number(answer, capsys):
    """Right (3.30) and wrong numbers alike: a loop over candidates learns nothing from it."""
    checks.check_own_position_loss(answer, name="own_position_loss")
    assert "whether it is right is checked when your work is graded" in capsys.readouterr().out


@pytest.mark.parametrize("answer", [..., -3.3, 0.0, float("nan"), [3.3, 3.3], "3.30"])
def test_each_malformed_own_position_loss_is_named(answer):
    with pytest.raises((AssertionError, TypeError), match="one positive number|own_position_loss"):
        checks.check_own_position_loss(answer, name="own_position_loss")


# -- the grading cases, run as the notebook's test cells run them ----------------------------

SPANS = [  # (start_scores, end_scores, max_length): the visible and hidden tests' kind
    (torch.tensor([0.5, 2.0, -1.0, 0.3, 1.2, 0.1]),
     torch.tensor([1.5, -0.5, 0.2, 2.5, 0.0, 0.4]), 2),
    (torch.randn(30, generator=torch.Generator().manual_seed(7)) * 3,
     torch.randn(30, generator=torch.Generator().manual_seed(8)) * 3, 5),
    (torch.randn(12, generator=torch.Generator().manual_seed(9), dtype=torch.float64) * 400,
     torch.randn(12, generator=torch.Generator().manual_seed(10), dtype=torch.float64) * 400, 4),
    (torch.tensor([2.0, -1.0, 0.0]), torch.tensor([-3.0, 1.0, 4.0]), 1),
    # a confident model whose best start comes after its best end: probabilities underflow
    (torch.tensor([-1000.0, 900.0, 0.0, 0.0, 0.0, 1.0]),
     torch.tensor([950.0, 0.0, 0.0, 2.0, 0.0, 0.0]), 4),
    (torch.tensor([-1000.0, 800.0, -500.0, 0.0, 0.0]),
     torch.tensor([900.0, 0.0, 0.0, 3.0, 0.0]), 3),
]


LOSS_CASES = [  # (shape, scale, dtype): the visible and hidden tests' kind
    ((2, 5, 7), 3.0, torch.float32), ((3, 20, 50), 2.0, torch.float64),
    ((4, 32, 512), 300.0, torch.float32), ((5, 9, 11), 30.0, torch.float64),
]


def encoder_inputs():
    """(ids, model, keywords) of the visible and hidden tests' kind: holders of a tiny BERT's
    weights (the last token id is [MASK]), windows with [MASK]s, one pair differing in its
    last word and one window reversed, with and without the causal mask; and padded windows,
    two with the same words and other padding."""
    torch.manual_seed(0)
    small = TinyGPT(GPTConfig(41, block_size=8, d_model=16, n_layers=2, n_heads=2,
                              dim_feedforward=32)).eval()
    window = torch.tensor([3, 17, 40, 8, 25, 40, 11, 30])
    probe = torch.stack([window, torch.cat([window[:-1], torch.tensor([5])]), window.flip(0)])
    torch.manual_seed(64)
    wide = TinyGPT(GPTConfig(31, block_size=8, d_model=12, n_layers=3, n_heads=3,
                             dim_feedforward=24)).double().eval()
    single = torch.randint(31, (3, 1), generator=torch.Generator().manual_seed(66))
    padded = torch.arange(8) >= torch.tensor([[5], [5], [3]])
    padded_ids = torch.stack([window, torch.tensor([3, 17, 40, 8, 25, 1, 2, 9]), window])
    long = torch.randint(31, (3, 8))
    wide_padding = torch.arange(8) >= torch.tensor([[8], [5], [1]])
    return [(probe, small, {}), (probe, small, {"causal": True}), (probe[:, :1], small, {}),
            (single, wide, {}), (long, wide, {}), (long, wide, {"causal": True}),
            (padded_ids, small, {"padding": padded}),
            (long, wide, {"padding": wide_padding, "causal": True})]


def pytorch_encoder(ids, model, causal=False, padding=None):
    """The tiny BERT's scores with PyTorch's own encoder layers holding the blocks' weights
    (pre-LN, GELU; the course's blocks are nn.TransformerEncoderLayer with the same names):
    H_0 = √d E[x] + PE, the layers without a mask (with the causal mask if ``causal``: the
    tiny GPT; with PyTorch's key padding mask where ``padding``), LN, and the words' rows of
    E, 0 at the padding."""
    config = model.config
    E = model.token_embedding.weight
    n = ids.shape[-1]
    h = E[ids] * math.sqrt(config.d_model) + model.positions[:n]
    mask = torch.ones(n, n, dtype=torch.bool).triu(1) if causal else None   # True: blocked
    for block in model.blocks:
        layer = nn.TransformerEncoderLayer(config.d_model, config.n_heads, config.dim_feedforward,
                                           0.0, "gelu", batch_first=True, norm_first=True)
        layer.load_state_dict(block.state_dict())
        h = layer.to(E.dtype).eval()(h, src_mask=mask, is_causal=causal,
                                     src_key_padding_mask=padding)
    scores = F.linear(model.norm(h), E[:-1])
    return scores if padding is None else scores.masked_fill(padding[..., None], 0.0)


def test_a_right_encoder_passes_and_each_design_mistake_is_named():
    for ids, model, keywords in encoder_inputs():
        with torch.no_grad():
            checks.check_encoder_logits(pytorch_encoder(ids, model, **keywords), ids, model,
                                        **keywords)
    ids, model, _ = encoder_inputs()[0]
    words = model.token_embedding.weight.detach()[:-1]                    # (V, d)
    with torch.no_grad():
        right = pytorch_encoder(ids, model)
    causal = right.clone()
    causal[1, :-1] = right[0, :-1]                       # as if no position saw the last word
    no_positions = right.clone()
    no_positions[2] = right[0].flip(0)                   # the window backwards, scores backwards
    wrongs = {
        "encoder_shape": torch.cat([right, right[..., :1]], dim=-1),
        "encoder_head": torch.softmax(right, dim=-1),
        "encoder_no_final_norm": 3 * right + words.sum(-1),   # rows E (3u + 1): not normalised
        "encoder_causal": causal,
        "encoder_no_positions": no_positions,
    }
    for key, wrong in wrongs.items():
        with pytest.raises(AssertionError) as failure:
            checks.check_encoder_logits(wrong, ids, model)
        assert PRETRAINING_MISTAKES[key] in str(failure.value), key
    with torch.no_grad(), pytest.raises(AssertionError,
                                        match=re.escape(PRETRAINING_MISTAKES["encoder_future"])):
        checks.check_encoder_logits(right, ids, model, causal=True)
    padded_ids, small, keywords = encoder_inputs()[6]
    with torch.no_grad():
        read = pytorch_encoder(padded_ids, small).masked_fill(keywords["padding"][..., None], 0)
        unfilled = pytorch_encoder(padded_ids, small, padding=keywords["padding"])
        unfilled[keywords["padding"]] = 1.0
    for key, wrong in (("encoder_padding", read), ("encoder_padding_rows", unfilled)):
        with pytest.raises(AssertionError, match=re.escape(PRETRAINING_MISTAKES[key])):
            checks.check_encoder_logits(wrong, padded_ids, small, **keywords)


def unlifted_encoder(ids, model, factor=1.0):
    """pytorch_encoder with the token rows lifted by ``factor`` instead of √d: factor E[x] + PE
    at the input."""
    holder = TinyGPT(model.config).to(model.token_embedding.weight.dtype).eval()
    holder.load_state_dict(model.state_dict())
    holder.positions = model.positions                # not in the state_dict
    change = factor / math.sqrt(model.config.d_model)
    with torch.no_grad():
        holder.token_embedding.weight.mul_(change)
        scores = pytorch_encoder(ids, holder)        # the tied output layer changed too
    return scores / change


def test_the_missing_lift_fails_the_one_word_windows_with_its_message():
    ids, model, _ = encoder_inputs()[2]                # the visible test's windows of one word
    with torch.no_grad():
        wrong = unlifted_encoder(ids, model)
        assert not torch.allclose(wrong, pytorch_encoder(ids, model), atol=1e-3)
    with pytest.raises(AssertionError, match=re.escape(PRETRAINING_MISTAKES["encoder_unlifted"])):
        checks.check_encoder_logits(wrong, ids, model)
    lifted_table = TinyGPT(model.config).eval()           # the factor on PE instead of on E
    lifted_table.load_state_dict(model.state_dict())
    lifted_table.positions = model.positions * math.sqrt(model.config.d_model)
    with torch.no_grad(), pytest.raises(
            AssertionError, match=re.escape(PRETRAINING_MISTAKES["encoder_lifted_positions"])):
        checks.check_encoder_logits(unlifted_encoder(ids, lifted_table), ids, model)
    with torch.no_grad(), pytest.raises(AssertionError,      # another factor on E
                                        match=re.escape(PRETRAINING_MISTAKES["encoder_one_word"])):
        checks.check_encoder_logits(unlifted_encoder(ids, model, 14.0), ids, model)
    long_ids, _, _ = encoder_inputs()[0]               # longer windows: the grader's to compare
    with torch.no_grad():
        checks.check_encoder_logits(unlifted_encoder(long_ids, model), long_ids, model)


def answer(code, grade_id):
    namespace = {"torch": torch, "np": np, "math": math, "nn": nn, "F": F, "TinyGPT": TinyGPT}
    exec(compile(code, f"<{grade_id}>", "exec"), namespace)  # noqa: S102 (our own cases)
    return namespace[grade_id]


def passes(code, grade_id):
    try:
        function = answer(code, grade_id)
    except NameError:  # a cell that needs IPython (get_ipython) defines nothing here
        return False
    function = checks.own_work(function, grade_id)
    try:
        if grade_id == "masked_lm_loss":
            for seed, (shape, scale, dtype) in enumerate(LOSS_CASES):
                logits, targets, masked = loss_inputs(seed, shape, scale, dtype)
                checks.check_masked_lm_loss(function(logits, targets, masked),
                                            logits, targets, masked)
        elif grade_id == "encoder_logits":
            for ids, model, keywords in encoder_inputs():   # the check's properties, the oracle
                with torch.no_grad():
                    scores = function(ids, model, **keywords)
                    checks.check_encoder_logits(scores, ids, model, **keywords)
                    assert torch.allclose(torch.as_tensor(scores).double(),
                                          pytorch_encoder(ids, model, **keywords).double(),
                                          atol=1e-5)
        elif grade_id == "bert_parameters":
            for sizes in SIZES:
                checks.check_bert_parameters(function(*sizes), *sizes)
        else:
            for start, end, max_length in SPANS:
                best = every_best_pair(start.tolist(), end.tolist(), max_length)[0]
                checks.check_best_span(function(start, end, max_length),
                                       start, end, max_length, best)
    except AssertionError:
        return False
    return True


MINE = ("masked_lm_loss", "encoder_logits", "bert_parameters", "best_span")


def cases_of(students):
    return [(student, grade_id, code) for student, answers in students.items()
            for grade_id, code in answers.items() if grade_id in MINE]


@pytest.mark.parametrize(("student", "grade_id", "code"), cases_of(cases.WRONG))
def test_wrong_answers_fail(student, grade_id, code):
    assert not passes(code, grade_id), student


@pytest.mark.parametrize(("student", "grade_id", "code"), cases_of(cases.CORRECT))
def test_correct_answers_pass(student, grade_id, code):
    assert passes(code, grade_id), student


@pytest.mark.parametrize(("student", "grade_id", "cheat"), cases_of(cases.CHEAT))
def test_cheats_that_must_score_zero_fail(student, grade_id, cheat):
    assert isinstance(cheat, Cheat)
    if cheat.zero:
        assert not passes(cheat.code, grade_id), student


def test_every_exercise_has_each_kind_of_case():
    for students in (cases.WRONG, cases.CORRECT, cases.CHEAT):
        assert {grade_id for _, grade_id, _ in cases_of(students)} == set(MINE)

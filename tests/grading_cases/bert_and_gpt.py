"""Students for notebook 09's round trip: masked_lm_loss, encoder_logits, own_position_loss,
bert_parameters and best_span (course_utils/checks/pretraining.py)."""

from tests.grading_cases import Cheat

ASSIGNMENT = "09_bert_and_gpt"

# --- wrong answers: each loses its own test cell's points, and no others -------------


def parameters_with(tables="vocab_size + max_positions + type_vocab_size",
                    attention="4 * (d * d + d)", feed_forward="(d * d_ff + d_ff) + (d_ff * d + d)",
                    norms="2 * 2 * d"):
    """A bert_parameters answer with one part swapped for a mistake."""
    return f"""
def bert_parameters(vocab_size, max_positions, type_vocab_size, d_model, layers, d_ff):
    d = d_model
    embeddings = ({tables}) * d + 2 * d
    layer = {attention} + {feed_forward} + {norms}
    return embeddings + layers * layer
"""


def span_with(ends="range(s, min(n, s + max_length))"):
    """A best_span answer (a double loop) with its range of ends swapped for a mistake."""
    return f"""
def best_span(start_scores, end_scores, max_length):
    n = len(start_scores)
    best, span = -math.inf, None
    for s in range(n):
        for e in {ends}:
            if start_scores[s] + end_scores[e] > best:
                best, span = start_scores[s] + end_scores[e], (s, e)
    return span
"""


def loss_with(picked="log_p.gather(-1, targets.unsqueeze(-1)).squeeze(-1)",
              kept="picked[masked].mean()"):
    """A masked_lm_loss answer with one step swapped for a mistake."""
    return f"""
def masked_lm_loss(logits, targets, masked):
    log_p = torch.log_softmax(logits, dim=-1)
    picked = {picked}
    return -{kept}
"""


def encoder_with(h0="E[ids] * math.sqrt(E.shape[1]) + model.positions[: ids.shape[-1]]",
                 block="block(h, mask=keys, causal=causal)", out="model.norm(h) @ E[:-1].T"):
    """An encoder_logits answer with one decision swapped for a mistake."""
    return f"""
def encoder_logits(ids, model, causal=False, padding=None):
    E = model.token_embedding.weight
    h = {h0}
    keys = None if padding is None else ~padding[:, None, None, :]
    for block in model.blocks:
        h = {block}
    scores = {out}
    return scores if padding is None else scores.masked_fill(padding[..., None], 0.0)
"""


MODULES_PARAMETERS = """
def bert_parameters(vocab_size, max_positions, type_vocab_size, d_model, layers, d_ff):
    embeddings = nn.ModuleList([nn.Embedding(vocab_size, d_model),
                                nn.Embedding(max_positions, d_model),
                                nn.Embedding(type_vocab_size, d_model), nn.LayerNorm(d_model)])
    layer = nn.TransformerEncoderLayer(d_model, 1, d_ff)     # the same parameters as BERT's

    def count(module):
        return sum(p.numel() for p in module.parameters())

    return count(embeddings) + layers * count(layer)
"""

LIBRARY_SPAN = """
import numpy as np
from transformers.pipelines.document_question_answering import select_starts_ends


def best_span(start_scores, end_scores, max_length):
    start, end = (x.double().numpy()[None] for x in (start_scores, end_scores))
    no_mask = np.zeros(len(start_scores))
    starts, ends, _, _ = select_starts_ends(start, end, no_mask, None, max_answer_len=max_length)
    return int(starts[0]), int(ends[0])
"""

WRONG = {
    "loss_over_every_position_and_an_encoder_never_causal": {
        "masked_lm_loss": loss_with(kept="picked.mean()"),
        "encoder_logits": encoder_with(block="block(h, mask=keys)"),
    },
    "loss_of_raw_logits_and_mask_scored": {
        "masked_lm_loss": loss_with(picked="logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)"),
        "encoder_logits": encoder_with(out="model.norm(h) @ E.T"),
    },
    "loss_summed_and_no_lift": {
        "masked_lm_loss": loss_with(kept="picked[masked].sum()"),
        "encoder_logits": encoder_with(h0="E[ids] + model.positions[: ids.shape[-1]]"),
    },
    "loss_as_the_draft_and_encoder_without_its_final_norm": {
        "masked_lm_loss": loss_with(kept="(picked * masked).mean()"),
        "encoder_logits": encoder_with(out="h @ E[:-1].T"),
    },
    "encoder_that_reads_the_padding": {"encoder_logits": encoder_with(
        block="block(h, causal=causal)")},
    # the word read taken as no information where it is random and as certain where it is
    # the word itself: 0.9 H(p), 3.19 nats (the visible check looks at the form only)
    "own_position_by_the_tenths": {"own_position_loss": "own_position_loss = 0.9 * baseline"},
    "loss_with_a_naive_softmax": {     # exp overflows on large logits: nan in the hidden tests
        "masked_lm_loss": loss_with(
            picked="(logits.exp() / logits.exp().sum(-1, keepdim=True)).log()"
                   ".gather(-1, targets.unsqueeze(-1)).squeeze(-1)"),
    },
    "no_biases_and_separate_argmax": {
        "bert_parameters": parameters_with(attention="4 * d * d", feed_forward="2 * d * d_ff"),
        "best_span": """
def best_span(start_scores, end_scores, max_length):
    return int(start_scores.argmax()), int(end_scores.argmax())
""",
    },
    "ff_once_and_end_before_start": {
        "bert_parameters": parameters_with(feed_forward="d * d_ff + d_ff"),
        "best_span": span_with(ends="range(0, min(n, s + max_length))"),
    },
    "no_positions_and_one_too_long": {
        "bert_parameters": parameters_with(tables="vocab_size + type_vocab_size"),
        "best_span": span_with(ends="range(s, min(n, s + max_length + 1))"),
    },
    "no_layer_norms_and_probabilities": {
        "bert_parameters": parameters_with(norms="0"),
        "best_span": """
def best_span(start_scores, end_scores, max_length):
    p = torch.softmax(start_scores.float(), 0)[:, None] * torch.softmax(end_scores.float(), 0)
    n = len(start_scores)
    allowed = torch.ones(n, n).triu() - torch.ones(n, n).triu(max_length)
    return divmod(int((p * allowed).argmax()), n)           # the product underflows to 0
""",
    },
    "builds_modules_and_calls_the_library": {
        "bert_parameters": MODULES_PARAMETERS,
        "best_span": LIBRARY_SPAN,
    },
}

# --- correct alternatives: full marks on every test cell --------------------------------

CORRECT = {
    "loss_by_logsumexp_in_a_loop": {
        "masked_lm_loss": """
def masked_lm_loss(logits, targets, masked):
    total, count = torch.zeros((), dtype=torch.float64), 0
    for b, t in masked.nonzero().tolist():                   # one masked position at a time
        row = logits[b, t].double()
        top = row.max()
        log_norm = top + (row - top).exp().sum().log()       # log Σ exp, shifted by the max
        total = total + log_norm - row[targets[b, t]]
        count += 1
    return total / count
""",
    },
    "loss_by_one_hot_in_place": {
        "masked_lm_loss": """
def masked_lm_loss(logits, targets, masked):
    logits -= logits.amax(-1, keepdim=True)                  # in place: shifts change nothing
    log_p = logits - logits.logsumexp(-1, keepdim=True)
    hit = F.one_hot(targets, logits.shape[-1]).to(log_p.dtype)
    per_position = -(log_p * hit).sum(-1)
    return float((per_position * masked).sum() / masked.sum())
""",
    },
    "shapes_and_triu_mask": {
        "bert_parameters": """
def bert_parameters(vocab_size, max_positions, type_vocab_size, d_model, layers, d_ff):
    d = d_model
    shapes = [(vocab_size, d), (max_positions, d), (type_vocab_size, d), (d,), (d,)]
    for _ in range(layers):                                   # one layer at a time
        shapes += [(d, d), (d,)] * 4                          # Q, K, V, O and their biases
        shapes += [(d, d_ff), (d_ff,), (d_ff, d), (d,)]       # the feed-forward layer
        shapes += [(d,)] * 4                                  # two LayerNorms, gamma and beta
    return sum(math.prod(shape) for shape in shapes)
""",
        "best_span": """
def best_span(start_scores, end_scores, max_length):
    n = start_scores.shape[0]
    total = start_scores[:, None] + end_scores[None, :]
    s, e = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
    total = total.masked_fill((e < s) | (e >= s + max_length), float("-inf"))
    flat = int(total.argmax())
    return flat // n, flat % n
""",
    },
    "closed_form_and_numpy": {
        "bert_parameters": """
import numpy as np

def bert_parameters(vocab_size, max_positions, type_vocab_size, d_model, layers, d_ff):
    d = np.int64(d_model)
    per_layer = 4 * d * d + 2 * d * d_ff + 9 * d + d_ff
    return d * (vocab_size + max_positions + type_vocab_size + 2) + layers * per_layer
""",
        "best_span": """
import numpy as np

def best_span(start_scores, end_scores, max_length):
    start, end = np.asarray(start_scores, dtype=float), np.asarray(end_scores, dtype=float)
    n = len(start)
    total = np.add.outer(start, end)
    allowed = np.triu(np.ones((n, n), bool)) & ~np.triu(np.ones((n, n), bool), max_length)
    s, e = np.unravel_index(np.where(allowed, total, -np.inf).argmax(), total.shape)
    return [s, e]                                           # NumPy integers in a list
""",
    },
    "own_position_word_by_word": {
        "own_position_loss": """
probs, n_vocab = frequency.tolist(), len(frequency)
own_position_loss = -0.8 * sum(q * math.log(q) for q in probs)     # reading [MASK]
for y in range(n_vocab):                                           # reading the word y
    joint = [0.1 * probs[x] * ((x == y) + 1 / n_vocab) for x in range(n_vocab)]   # P(x, y)
    own_position_loss -= sum(j * math.log(j / sum(joint)) for j in joint)
""",
    },
    "own_position_rounded": {"own_position_loss": "own_position_loss = 3.30"},
    "encoder_from_the_blocks_parts": {
        "encoder_logits": """
def encoder_logits(ids, model, causal=False, padding=None):
    d = model.token_embedding.embedding_dim
    h = model.token_embedding(ids) * d ** 0.5 + model.positions[: ids.shape[1]]
    real = torch.ones_like(ids, dtype=torch.bool) if padding is None else ~padding
    for block in model.blocks:                                # pre-LN
        h = h + block.self_attn(block.norm1(h), mask=real[:, None, None, :], causal=causal)[0]
        h = h + block.linear2(block.activation(block.linear1(block.norm2(h))))
    words = model.token_embedding.weight[: model.token_embedding.num_embeddings - 1]
    return F.linear(model.norm(h), words) * real[..., None]
""",
    },
    "encoder_mask_by_hand_sliced_after_in_place": {
        "encoder_logits": """
def encoder_logits(ids, model, causal=False, padding=None):
    E = model.token_embedding.weight
    n = ids.shape[-1]
    h = E[ids]
    h *= math.sqrt(E.shape[-1])                               # in place, on a fresh tensor
    h += model.positions[:n]
    allowed = torch.ones(len(ids), n, n, dtype=torch.bool)    # (batch, query, key)
    if causal:
        allowed &= torch.ones(n, n, dtype=torch.bool).tril()
    if padding is not None:
        allowed &= ~padding[:, None, :]
    for block in model.blocks:
        h = block(h, mask=allowed[:, None])
    every = model.norm(h) @ E.T                               # words and [MASK]
    every = every[..., :-1]
    if padding is not None:
        every[padding] = 0.0
    return every
""",
    },
    "best_end_in_place": {
        "best_span": """
def best_span(start_scores, end_scores, max_length):
    best, span = -math.inf, None
    for e in range(len(end_scores)):
        first = max(0, e - max_length + 1)
        s = first + int(start_scores[first:e + 1].argmax())   # the best start for this end
        end_scores[e] += start_scores[s]                      # now the best total ending at e
        if end_scores[e] > best:
            best, span = float(end_scores[e]), (s, e)
    return span
""",
    },
}

# --- cheats: each scores 0 on its exercise, or is flagged, or both ----------------------------

CHEAT = {
    "calls_the_checks_gpt2": {
        "encoder_logits": Cheat("""
def encoder_logits(ids, model, causal=False, padding=None):
    from course_utils.models.library_gpt import gpt2_holding
    twin = gpt2_holding(model, model.positions)
    rows = twin.transformer.wte(ids.cpu()) * model.config.d_model ** 0.5
    every = torch.ones(ids.shape[0], 1, ids.shape[1], ids.shape[1], dtype=torch.bool)
    logits = twin(inputs_embeds=rows, attention_mask=every).logits[..., :-1]
    return logits.to(model.token_embedding.weight)
""", zero=True),
    },
    "own_position_check_replaced": {
        "own_position_loss": Cheat("""
checks.check_own_position_loss = lambda *args, **kwargs: print("✓ own_position_loss")
own_position_loss = 1.0                                 # and no value reported
""", zero=True),
    },
    "loss_module": {
        "masked_lm_loss": Cheat("""
def masked_lm_loss(logits, targets, masked):
    return torch.nn.CrossEntropyLoss()(logits[masked], targets[masked])
""", zero=True),
    },
    "calls_the_checks_own_losses": {
        "masked_lm_loss": Cheat("""
from course_utils.checks.pretraining import _pytorch_oracle


def masked_lm_loss(logits, targets, masked):
    return _pytorch_oracle(logits, targets, masked)[None]
""", zero=True, flagged=True),
    },
    "loss_through_aten": {
        "masked_lm_loss": Cheat("""
def masked_lm_loss(logits, targets, masked):
    log_p = torch.log_softmax(logits[masked], dim=-1)
    return torch.ops.aten.nll_loss_nd(log_p, targets[masked], None, 1, -100)
""", zero=True),
    },
    "builds_bert_on_meta": {
        "bert_parameters": Cheat("""
from transformers import BertConfig, BertModel


def bert_parameters(vocab_size, max_positions, type_vocab_size, d_model, layers, d_ff):
    config = BertConfig(vocab_size=vocab_size, max_position_embeddings=max_positions,
                        type_vocab_size=type_vocab_size, hidden_size=d_model,
                        num_hidden_layers=layers, num_attention_heads=1, intermediate_size=d_ff)
    with torch.device("meta"):                  # allocates nothing
        model = BertModel(config, add_pooling_layer=False)
    return sum(p.numel() for p in model.parameters())
""", zero=True),
    },
    "pipelines_decoder": {
        "best_span": Cheat("""
import numpy as np
from transformers.pipelines.document_question_answering import decode_spans


def best_span(start_scores, end_scores, max_length):
    start = torch.softmax(start_scores.double(), 0).numpy()[None]
    end = torch.softmax(end_scores.double(), 0).numpy()[None]
    allowed = np.ones(len(start_scores))
    starts, ends, _ = decode_spans(start, end, 1, max_length, undesired_tokens=allowed)
    return int(starts[0]), int(ends[0])
""", zero=True),
    },
    "agrees_with_everything": {
        "best_span": Cheat("""
class Span(tuple):
    def __eq__(self, other):
        return True


def best_span(start_scores, end_scores, max_length):
    return Span((0, 0))
""", zero=True, flagged=True),
    },
    # BERT built and counted in a pool thread, where the test's function mode is not on
    "bert_in_a_thread": {
        "bert_parameters": Cheat("""
from concurrent.futures import ThreadPoolExecutor

from transformers import BertConfig, BertModel


def _count(config):
    with torch.device("meta"):
        model = BertModel(config, add_pooling_layer=False)
    return sum(p.numel() for p in model.parameters())


def bert_parameters(vocab_size, max_positions, type_vocab_size, d_model, layers, d_ff):
    config = BertConfig(vocab_size=vocab_size, max_position_embeddings=max_positions,
                        type_vocab_size=type_vocab_size, hidden_size=d_model,
                        num_hidden_layers=layers, num_attention_heads=1, intermediate_size=d_ff)
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(_count, config).result()
""", zero=True),
    },
    # the traceback silenced and every cell's error cleared after it ran, through names
    # decoded at run time; the answer underneath is wrong
    "silences_failures_by_decoded_names": {
        "best_span": Cheat("""
import codecs

_shell = get_ipython()
setattr(_shell, codecs.decode("fubjgenpronpx", "rot13"), lambda *args, **kwargs: None)


def _forget(result):
    result.error_in_exec = None


getattr(getattr(_shell, codecs.decode("riragf", "rot13")), codecs.decode("ertvfgre", "rot13"))(
    codecs.decode("cbfg_eha_pryy", "rot13"), _forget)


def best_span(start_scores, end_scores, max_length):
    return (0, 0)
""", zero=True, flagged=True),
    },
}

# --- a correct answer that prints while debugging: print's own work is not the answer's ------

CORRECT["prints_while_debugging"] = {
    "masked_lm_loss": """
def masked_lm_loss(logits, targets, masked):
    chosen = logits[masked].double()                   # (m, V): the masked positions only
    wanted = targets[masked].long()
    print("masked positions", chosen.shape[0], "targets", wanted[:5])   # debugging
    normaliser = torch.logsumexp(chosen, dim=1)
    picked = chosen[torch.arange(len(wanted)), wanted]
    return (normaliser - picked).mean()
""",
}

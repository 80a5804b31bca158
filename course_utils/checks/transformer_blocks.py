"""Diagnostic checks for notebook 06: positional encodings, rotary position embeddings, layer
norm, one block around a given attention, the GPT's forward pass and its sampler.

Expected values come from the libraries the exercises refuse, never from a formula written
out here: the sinusoidal table of Hugging Face's DistilBERT, Hugging Face's GPT-J rotation
with that table's sines and cosines, PyTorch's ``F.layer_norm`` and
``nn.TransformerEncoderLayer`` (loaded with the block's weights), Hugging Face's GPT-2
holding the GPT's weights (``models.library_gpt``), and for a sampler Hugging Face's
``TemperatureLogitsWarper``, whose law its draws are counted against. A known mistake is told
apart by the same oracle on other inputs (a wider table, negated sines, a flipped
``norm_first``...) or by a transformation of its output (columns swapped, rows shifted); and
by a property where the oracle cannot make it (frequencies that grow instead of shrinking).
"""

import copy

import torch
import torch.nn.functional as F
from torch import nn
from transformers.generation.logits_process import TemperatureLogitsWarper

from course_utils.models.library_gpt import gpt2_logits as _gpt2_logits

from .core import as_tensor, check_close
from .guards import checked_plainly

__all__ = ["BLOCK_MISTAKES", "check_gpt_logits", "check_layer_norm", "check_positional_encoding",
           "check_rope", "check_rope_answer", "check_rope_relative", "check_sample_next",
           "check_transformer_block"]

BLOCK_MISTAKES = {
    "sin_cos_swapped": "sine and cosine are swapped: look again at which column of a pair the "
    "formula of section 1 gives the sine",
    "column_exponent": "you used each column's own index in the exponent: the two columns of a "
    "pair share one frequency (see the exponent in the formula of section 1)",
    "halves": "you put all the sines in the first half and all the cosines in the second; in the "
    "formula of section 1 the two columns of a pair sit side by side",
    "from_one": "your positions start at 1: look where section 1 starts counting them",
    "times_frequency": "your angles grow with the column instead of shrinking: check where "
    "10000^(2i/d) goes in the formula of section 1",
    "transposed": "your array is transposed: one ROW per position, one column per feature",
    "rope_halves": "you paired feature i with feature i + d/2 (the 'rotate_half' layout of "
    "GPT-NeoX and Hugging Face's LLaMA); this exercise pairs neighbours: (x_2i, x_2i+1) turn "
    "together",
    "rope_minus": "your turned pairs disagree with your exercise 2, part 1: send the pair (1, 0) "
    "through your code by a small angle and compare where it lands with your derivation's",
    "rope_exponent": "your frequencies fall too slowly with the pair index: check the exponent of "
    "the number exercise 2, part 2 gives pair i",
    "rope_times": "your angles grow with the pair index: the numbers exercise 2, part 2 gives are "
    "at most 1",
    "rope_arange": "you rotated row j by the angle of position j; use the positions you are given "
    "(row j sits at positions[j])",
    "rope_added": "you added the sinusoidal encoding PE(pos) to x; RoPE turns each pair (x_2i, "
    "x_2i+1) instead (a multiplication, not a sum)",
    "unbiased": "your outputs are off by one factor, the same for every token, that depends only "
    "on the number of features d: compare each statistic you compute with the formula of section 2",
    "across_tokens": "your output for a token depends on the other tokens of the input; section 2 "
    "says it must not",
    "eps_outside": "you added eps to the standard deviation: check where ε sits in the formula of "
    "section 2",
    "no_eps": "you left out eps (see the formula of section 2)",
    "no_affine": "you left out γ and β, the learned scale and shift of the formula of section 2",
    "gamma_beta_swapped": "γ and β are swapped: γ (the weight) multiplies, β (the bias) is added",
    "norm_order": "you computed the other arrangement of the layer norms: compare "
    "block.norm_first with the two arrangements of section 3",
    "no_residual": "the residual connections are missing: look at section 3's description",
    "no_attention_residual": "the residual around the self-attention is missing (section 3)",
    "no_ff_residual": "the residual around the feed-forward layer is missing (section 3)",
    "no_activation": "the feed-forward layer has no activation (FF in section 3)",
    "own_attention": "your block gives what the block's own attention layer gives, whatever "
    "attention it is handed: reread the contract of exercise 4, part 3",
    "no_causal": "with causal=True your block still lets token i see later tokens: pass causal on "
    "to the attention it is given",
    "unwanted_causal": "you applied a causal mask although causal=False",
    "residual_from_norm": "your pre-LN block forgets the size of its input: scale x and its "
    "output barely changes. Compare what your block carries on with section 3's description and "
    "your equations of exercise 4, part 1",
    "gpt_no_positions": "your logits do not change when the positions do: the blocks cannot tell "
    "where a token is (decision 1 of exercise 6)",
    "gpt_own_blocks": "your logits are those of the model's blocks run as they are, whatever "
    "run_block you are handed: reread the contract of exercise 6",
    "gpt_scaled": "your token rows and position rows enter the blocks in another balance than "
    "these weights call for (decision 1 of exercise 6)",
    "gpt_no_final_norm": "the last hidden states reach the output layer in another form than they "
    "should (decision 2 of exercise 6)",
    "sample_no_temperature": "your draws follow the same law whatever the temperature: look at "
    "what it does to the logits before they become probabilities",
    "sample_times_temperature": "as the temperature rises, your draws crowd onto the likeliest "
    "tokens: look at how the temperature enters the logits",
    "sample_uniform": "every token comes out about equally often, whatever its logit",
    "sample_greedy": "every draw is the most likely token: the limit T → 0, not a draw",
}


# -- the oracles ----------------------------------------------------------------------------


def _sinusoids(n: int, d: int) -> torch.Tensor:
    """Hugging Face DistilBERT's sinusoidal table PE, (n, d), as float64 (float32 values)."""
    from transformers.models.distilbert.modeling_distilbert import create_sinusoidal_embeddings

    return create_sinusoidal_embeddings(n, d, torch.empty(n, d)).double()


def _rotated(x: torch.Tensor, sin: torch.Tensor, cos: torch.Tensor) -> torch.Tensor:
    """Hugging Face GPT-J's rotary embedding of x (..., n, d), whose row j turns by the
    angles with sines ``sin[j]`` and cosines ``cos[j]`` ((n, d/2) each)."""
    from transformers.models.gptj.modeling_gptj import apply_rotary_pos_emb

    n, d = x.shape[-2:]
    return apply_rotary_pos_emb(x.reshape(-1, n, 1, d), sin[None], cos[None]).reshape(x.shape)


def _turns_faster(pairs: torch.Tensor, positions: torch.Tensor) -> bool:
    """Whether the complex numbers ``pairs`` (rows, d/2: each row's pairs as a turn, at the
    rows' ``positions``) turn pair 0 by 1 radian per position, as they should, but a later
    pair by more than that or backwards: the frequencies ω_i of a right answer lie in
    (0, 1] and shrink with i. Read from the first two rows one position apart (False if
    there are none, or if the rows are not turns: not of length 1)."""
    if pairs.shape[-1] < 2 or not torch.allclose(pairs.abs(), torch.ones(()).double(), atol=1e-3):
        return False
    after = (positions.diff() == 1).nonzero()
    if not len(after):
        return False
    j = int(after[0])
    step = (pairs[j + 1] / pairs[j]).angle()            # the angle each pair turns, (−π, π]
    return abs(step[0] - 1) < 1e-4 and bool(((step[1:] <= 0) | (step[1:] > 1 + 1e-6)).any())


def _named(name: str, key: str) -> AssertionError:
    return AssertionError(f"{name} is not right: {BLOCK_MISTAKES[key]}.")


# -- positional encoding ----------------------------------------------------------------


@checked_plainly
def check_positional_encoding(actual, n_positions: int, d_model: int,
                              name="positional_encoding") -> None:
    """Fail unless ``actual`` (n_positions, d_model), d_model even, is the sinusoidal
    encoding PE: Hugging Face DistilBERT's table."""
    if d_model % 2:
        raise ValueError(f"d_model must be even (the columns come in pairs); got {d_model}")
    expected = _sinusoids(n_positions, d_model)
    got = as_tensor(actual, name)
    if got.shape == (d_model, n_positions) and n_positions != d_model:
        raise _named(name, "transposed")
    if got.shape == expected.shape and _turns_faster(
            torch.complex(got[:, 1::2], got[:, 0::2]), torch.arange(n_positions)):
        raise _named(name, "times_frequency")
    columns = torch.arange(d_model)
    mistakes = {
        BLOCK_MISTAKES["sin_cos_swapped"]: expected[:, columns ^ 1],      # 2i ↔ 2i + 1
        # column j's own index in the exponent: the frequency of pair j of a table twice as wide
        BLOCK_MISTAKES["column_exponent"]: _sinusoids(n_positions, 2 * d_model)[
            :, 2 * columns + columns % 2],
        BLOCK_MISTAKES["halves"]: torch.cat([expected[:, 0::2], expected[:, 1::2]], dim=1),
        BLOCK_MISTAKES["from_one"]: _sinusoids(n_positions + 1, d_model)[1:],
    }
    check_close(got, expected, name, atol=1e-5, mistakes=mistakes, reveal=False)


# -- rotary position embeddings -----------------------------------------------------------


@checked_plainly
def check_rope(actual, x, positions, name="rope") -> None:
    """Fail unless ``actual`` is x (..., n, d) with each pair (x_2i, x_2i+1) of row j turned
    to the position positions[j]: Hugging Face GPT-J's rotation with the sines and cosines
    of DistilBERT's table."""
    x = as_tensor(x, "x")
    n, d = x.shape[-2:]
    at = as_tensor(positions, "positions")
    if at.shape != (n,) or not torch.equal(at, at.round()) or (at < 0).any():
        raise ValueError(f"positions must be {n} non-negative integers, one per row of x; got "
                         f"{at.tolist()}")
    at = at.long()
    rows = max(n, int(at.max()) + 1)
    table, wide = _sinusoids(rows, d), _sinusoids(rows, 2 * d)
    sin, cos = table[at, 0::2], table[at, 1::2]
    expected = _rotated(x, sin, cos)
    got = as_tensor(actual, name)
    if got.shape == x.shape:
        y, x0 = got.reshape(-1, n, d)[0], x.reshape(-1, n, d)[0]      # the first sequence
        if _turns_faster(torch.complex(y[:, 0::2], y[:, 1::2])
                         / torch.complex(x0[:, 0::2], x0[:, 1::2]), at):
            raise _named(name, "rope_times")
    halves = torch.arange(d).view(2, d // 2).T.flatten()   # puts feature i beside i + d/2
    mistakes = {
        BLOCK_MISTAKES["rope_halves"]: _rotated(x[..., halves], sin, cos)[..., halves.argsort()],
        BLOCK_MISTAKES["rope_minus"]: _rotated(x, -sin, cos),
        # ω_i = 10000^(−i/d): the frequencies of the first d/2 pairs of a table twice as wide
        BLOCK_MISTAKES["rope_exponent"]: _rotated(x, wide[at, 0:d:2], wide[at, 1:d:2]),
        BLOCK_MISTAKES["rope_added"]: x + table[at],
    }
    if not torch.equal(at, torch.arange(n)):
        mistakes[BLOCK_MISTAKES["rope_arange"]] = _rotated(x, table[:n, 0::2], table[:n, 1::2])
    check_close(got, expected, name, atol=1e-4, mistakes=mistakes, reveal=False)


@checked_plainly
def check_rope_answer(actual, x, positions, name="rope") -> None:
    """``rope(x, positions)`` of a test cell (its record's check): :func:`check_rope`, and
    first :func:`check_rope_relative` when x holds one query and one key, each repeated on
    every row, at consecutive positions (x of shape (2, n, d): the scores of the two then
    depend only on the offset)."""
    x_t, at = as_tensor(x, "x"), as_tensor(positions, "positions")
    if (x_t.dim() == 3 and len(x_t) == 2 and x_t.shape[1] > 1
            and bool((x_t == x_t[:, :1]).all()) and bool((at.diff() == 1).all())):
        got = as_tensor(actual, name)
        if got.shape == x_t.shape:
            check_rope_relative(got[0], got[1], name=name)
    check_rope(actual, x, positions, name=name)


@checked_plainly
def check_rope_relative(q_rotated, k_rotated, name="rope") -> None:
    """Fail unless the scores of one query and one key, each rotated to the positions
    0 … n − 1 (rows of ``q_rotated`` and ``k_rotated``, (n, d)), depend only on the offset:
    S[m, n] = ⟨R(m)q, R(n)k⟩ is constant along every diagonal m − n, and not constant
    everywhere (the rotation must depend on the position)."""
    q, k = as_tensor(q_rotated, f"{name}(q)"), as_tensor(k_rotated, f"{name}(k)")
    if q.dim() != 2 or q.shape != k.shape:
        raise AssertionError(
            f"{name} should return one row per position, shape (n, d) for x of shape (n, d); "
            f"got shapes {tuple(q.shape)} and {tuple(k.shape)}"
        )
    scores = q @ k.T
    n, scale = len(scores), scores.abs().max().item() + 1e-12
    for offset in range(-n + 1, n):
        diagonal = torch.diagonal(scores, offset)
        if (diagonal - diagonal[0]).abs().max() > 1e-4 * max(scale, 1.0):
            m = int((diagonal - diagonal[0]).abs().argmax()) + max(0, -offset)
            m0 = max(0, -offset)
            raise AssertionError(
                f"{name} breaks the relative-position property: for one query q and one key k, "
                f"⟨R({m0})q, R({m0 + offset})k⟩ = {diagonal[0]:.4f} but "
                f"⟨R({m})q, R({m + offset})k⟩ = {scores[m, m + offset]:.4f}, the same offset "
                f"{offset}: your move depends on more than the offset (step 1 of exercise 2's "
                "derivation)"
            )
    if (scores - scores[0, 0]).abs().max() <= 1e-4 * max(scale, 1.0):
        raise AssertionError(
            f"{name} gives the same score ⟨R(m)q, R(n)k⟩ at every pair of positions: the "
            "rows were not turned by angles that depend on their positions"
        )


# -- layer norm --------------------------------------------------------------------------


@checked_plainly
def check_layer_norm(actual, x, gamma, beta, eps: float = 1e-5, name="layer_norm") -> None:
    """Fail unless ``actual`` equals ``F.layer_norm`` with weight γ and bias β on x (..., d):
    each token normalised over its own d features."""
    x, gamma, beta = (as_tensor(t, label) for t, label in ((x, "x"), (gamma, "γ"), (beta, "β")))
    d = x.shape[-1]

    def pytorch(x=x, weight=gamma, bias=beta, eps=eps):
        return F.layer_norm(x, (d,), weight, bias, eps)

    sigma = 1 / torch.native_layer_norm(x, (d,), None, None, 0.0)[2]    # each token's σ
    shrink = (d - 1) / d
    mistakes = {
        # σ² over d − 1: the layer norm with ε·(d − 1)/d, scaled by √((d − 1)/d)
        BLOCK_MISTAKES["unbiased"]: pytorch(weight=gamma * shrink ** 0.5, eps=eps * shrink),
        # √σ² + ε = √(σ² + 2σε + ε²): a token scaled by 1/√(2σ + ε) gets that ε/scale²
        BLOCK_MISTAKES["eps_outside"]: pytorch(x / torch.sqrt(2 * sigma + eps)),
        BLOCK_MISTAKES["no_eps"]: pytorch(eps=0.0),
        BLOCK_MISTAKES["no_affine"]: pytorch(weight=None, bias=None),
        BLOCK_MISTAKES["gamma_beta_swapped"]: pytorch(weight=beta, bias=gamma),
    }
    if x.dim() >= 2 and x.shape[-2] > 1:  # each feature over the tokens: PyTorch's instance norm
        tokens = x.reshape(-1, *x.shape[-2:]).transpose(1, 2)       # (sequences, d, n)
        across = F.instance_norm(tokens, weight=gamma, bias=beta, eps=eps)
        mistakes[BLOCK_MISTAKES["across_tokens"]] = across.transpose(1, 2).reshape(x.shape)
    check_close(actual, pytorch(), name, atol=1e-4, mistakes=mistakes, reveal=False)


# -- one transformer block ---------------------------------------------------------------


def _pytorch_block(block: nn.Module, x: torch.Tensor, causal: bool, attention=None,
                   norm_first=None, activation=None, sa_residual=True, ff_residual=True,
                   from_norm=False) -> torch.Tensor:
    """``nn.TransformerEncoderLayer`` in float64 with ``block``'s weights, on x, its
    self-attention step ``attention`` (the test's, on a float64 copy of the block's layer) or,
    without, its own; for a mistake, another ``norm_first`` or activation, or a sub-layer's
    residual dropped (its step returns f(z) − r, r what PyTorch adds) or, pre-LN, replaced by z
    (f(z) + z − r)."""
    own = copy.deepcopy(block.self_attn).double()
    with torch.random.fork_rng(devices=[]):  # building a layer draws weights: keep the test's
        layer = nn.TransformerEncoderLayer(
            own.embed_dim, own.num_heads, block.linear1.out_features, dropout=0.0,
            activation=block.activation if activation is None else activation,
            layer_norm_eps=block.norm1.eps, batch_first=True,
            norm_first=block.norm_first if norm_first is None else norm_first,
        ).double()
    layer.load_state_dict(block.state_dict())
    layer.train()  # no dropout: only keeps PyTorch on its plain path, through the steps below
    if attention is not None:
        layer._sa_block = lambda z, *args, **kwargs: attention(z, own, causal)
    sa, ff = layer._sa_block, layer._ff_block
    if not sa_residual or from_norm:  # PyTorch adds the block's input x to this step
        layer._sa_block = lambda z, *args, **kwargs: sa(z, *args, **kwargs) - x + from_norm * z
    if not ff_residual and not layer.norm_first:  # post-LN adds the step's own input
        layer._ff_block = lambda z: ff(z) - z
    n = x.shape[-2]
    future = torch.ones(n, n, dtype=torch.bool).triu(1) if causal else None
    with torch.no_grad():
        if from_norm:  # the second step gets z, PyTorch adds the first sum h
            layer._ff_block = torch.zeros_like
            h = layer(x, src_mask=future)
            layer._ff_block = lambda z: ff(z) + z - h
        y = layer(x, src_mask=future)
        if not ff_residual and layer.norm_first:  # pre-LN adds h, the output without the step
            layer._ff_block = torch.zeros_like
            y = y - layer(x, src_mask=future)
    return y


@checked_plainly
def check_transformer_block(actual, x, block: nn.Module, attention, causal: bool = False,
                            name="transformer_block") -> None:
    """Fail unless ``actual`` equals ``nn.TransformerEncoderLayer`` loaded with ``block``'s
    weights (the course's ``TransformerBlock``, in eval mode) on x (batch, n, d_model), its
    self-attention step ``attention``, the test's (one unlike the block's own layer)."""
    x = as_tensor(x, "x")

    def pytorch(causal=causal, **kwargs):
        return _pytorch_block(block, x, causal, attention, **kwargs)

    mistakes = {
        BLOCK_MISTAKES["own_attention"]: _pytorch_block(block, x, causal),
        BLOCK_MISTAKES["norm_order"]: pytorch(norm_first=not block.norm_first),
        BLOCK_MISTAKES["no_activation"]: pytorch(activation=nn.Identity()),
        BLOCK_MISTAKES["no_causal" if causal else "unwanted_causal"]: pytorch(not causal),
    }
    for key, residual in (("no_residual", (False, False)), ("no_attention_residual", (False, True)),
                          ("no_ff_residual", (True, False))):
        mistakes[BLOCK_MISTAKES[key]] = pytorch(sa_residual=residual[0], ff_residual=residual[1])
    if block.norm_first:
        mistakes[BLOCK_MISTAKES["residual_from_norm"]] = pytorch(from_norm=True)
    check_close(actual, pytorch(), name, atol=1e-4, mistakes=mistakes)


# -- the whole GPT ----------------------------------------------------------------------------


@checked_plainly
def check_gpt_logits(actual, ids, model: nn.Module, run_block, name="gpt_logits") -> None:
    """Fail unless ``actual`` are the logits of ``model`` (a learned-positions ``TinyGPT``) on
    ``ids``, its blocks run by ``run_block`` (the test's, unlike the blocks as they are):
    Hugging Face's GPT-2 holding its weights."""
    if getattr(getattr(model, "config", None), "positions", None) != "learned":
        raise ValueError("model must be a TinyGPT with learned positions")
    mistakes = {
        BLOCK_MISTAKES["gpt_own_blocks"]: _gpt2_logits(model, ids),
        BLOCK_MISTAKES["gpt_scaled"]: _gpt2_logits(model, ids, run_block, lifted=True),
        BLOCK_MISTAKES["gpt_no_positions"]: _gpt2_logits(model, ids, run_block, positions=False),
        BLOCK_MISTAKES["gpt_no_final_norm"]: _gpt2_logits(model, ids, run_block, final_norm=False),
    }
    check_close(actual, _gpt2_logits(model, ids, run_block), name, atol=1e-4, mistakes=mistakes)


# -- the sampler -----------------------------------------------------------------------------


@checked_plainly
def check_sample_next(actual, logits, temperature: float, name="sample_next") -> None:
    """Fail unless ``actual`` has one id per row of ``logits`` (batch, V), counted as drawn."""
    if not temperature > 0:
        raise ValueError(f"temperature must be positive; got {temperature}")
    logits, got = as_tensor(logits, "logits"), as_tensor(actual, name)
    size, shape = logits.shape[-1], tuple(logits.shape[:-1])
    if (got.shape != shape or getattr(actual, "is_floating_point", lambda: True)()
            or ((got < 0) | (got >= size)).any()):
        raise AssertionError(f"{name} should return one token id per row of logits, a tensor "
                             f"of integers 0 … {size - 1} of shape {shape}; got {tuple(got.shape)}")
    rows, which = torch.unique(logits.reshape(-1, size), dim=0, return_inverse=True)
    counts = torch.zeros(len(rows), size, dtype=torch.float64).index_put_(
        (which, got.reshape(-1).long()), torch.ones(len(which)).double(), accumulate=True)
    n, law = counts.sum(dim=1, keepdim=True), torch.distributions.Categorical
    def follows(p):  # over equal rows, each count within 6σ of Categorical's expected count
        return bool(((counts - n * p).abs() <= 6 * (n * p * (1 - p)).sqrt() + 0.5).all())
    if follows(law(logits=TemperatureLogitsWarper(float(temperature))(None, rows)).probs):
        return
    for key, p in (("sample_no_temperature", law(logits=rows).probs),
                   ("sample_times_temperature", law(logits=rows * temperature).probs),
                   ("sample_uniform", law(logits=torch.zeros_like(rows)).probs),
                   ("sample_greedy", F.one_hot(rows.argmax(dim=1), size).double())):
        if follows(p):
            raise _named(name, key)
    raise AssertionError(f"{name} is not right: the counts of its draws of each row do not "
                         "follow the law that exercise 7's requirements set at this temperature")

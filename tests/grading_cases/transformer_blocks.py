from tests.grading_cases import Cheat

ASSIGNMENT = "06_transformer_blocks"

# --- wrong answers: each loses its own test cell's points, and no others -------------


def positions_with(angle="pos / 10000 ** (two_i / d_model)", even="torch.sin", odd="torch.cos",
                   first="0"):
    """A positional_encoding answer with one part swapped for a mistake."""
    return f"""
def positional_encoding(n_positions, d_model):
    pos = torch.arange({first}, {first} + n_positions, dtype=torch.float64)[:, None]
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    angle = {angle}
    pe = torch.zeros(n_positions, d_model)
    pe[:, 0::2] = {even}(angle)
    pe[:, 1::2] = {odd}(angle)
    return pe
"""


HALVES = """
def positional_encoding(n_positions, d_model):
    pos = torch.arange(n_positions)[:, None]
    angle = pos / 10000 ** (torch.arange(0, d_model, 2) / d_model)
    return torch.cat([torch.sin(angle), torch.cos(angle)], dim=1)   # not interleaved
"""


def norm_with(var="((x - mu) ** 2).mean(dim=-1, keepdim=True)", scale="torch.sqrt(var + eps)",
              dim="-1"):
    """A layer_norm answer with one part swapped for a mistake."""
    return f"""
def layer_norm(x, gamma, beta, eps=1e-5):
    mu = x.mean(dim={dim}, keepdim=True)
    var = {var}
    return gamma * (x - mu) / {scale} + beta
"""


def block_with(pre="block.norm_first", keep="x", ff="block.activation(block.linear1(h))",
               causal="causal", residual_from_norm=False):
    """A transformer_block answer with one part swapped for a mistake (``residual_from_norm``:
    each pre-LN residual adds its sub-layer's normalised input)."""
    first, second = ("block.norm1(x)", "block.norm2(h)") if residual_from_norm else ("x", "h")
    return f"""
def transformer_block(x, block, attention, causal=False):
    sa = lambda h: attention(h, block.self_attn, {causal})
    ff = lambda h: block.linear2({ff})
    if {pre}:
        h = {first if keep == "x" else keep} + sa(block.norm1(x))
        return {second} + ff(block.norm2(h))
    h = block.norm1({keep} + sa(x))
    return block.norm2(h + ff(h))
"""


def causal_with(positions="range(1, len(x))", rows="[:t]"):
    """An is_causal answer with one part swapped for a mistake."""
    return f"""
def is_causal(f, x):
    y = f(x).detach()
    for t in {positions}:
        changed = x.clone()
        changed[t] += torch.randn_like(x[t])
        if not torch.allclose(f(changed).detach(){rows}, y{rows}, atol=1e-6):
            return False
    return True
"""


TWIN_POSITIONS = """
from course_utils.models.transformer import sinusoidal_positions

def positional_encoding(n_positions, d_model):
    return sinusoidal_positions(n_positions, d_model)
"""

TWIN_NORM = """
def layer_norm(x, gamma, beta, eps=1e-5):
    return F.layer_norm(x, x.shape[-1:], gamma, beta, eps)
"""



def gpt_with(h0="E[ids] + model.position_embedding.weight[: ids.shape[-1]]",
             out="model.norm(h) @ E.T"):
    """A gpt_logits answer with one part swapped for a mistake."""
    return f"""
def gpt_logits(ids, model, run_block):
    E = model.token_embedding.weight
    h = {h0}
    for block in model.blocks:
        h = run_block(h, block)
    return {out}
"""


def attention_with(qkv="h @ self_attn.in_proj_weight.T + self_attn.in_proj_bias",
                   scale="math.sqrt(d_h)", mask="torch.ones(n, n, dtype=torch.bool).triu(1)",
                   out="@ self_attn.out_proj.weight.T + self_attn.out_proj.bias",
                   turned="q, k = rotate(q, at), rotate(k, at)", before=""):
    """A my_attention answer (05's multi-head attention with the biases, each head's queries
    and keys turned) with one part swapped for a mistake (``before``: a line run on h first)."""
    return f"""
def my_attention(h, self_attn, rotate, causal=False):
    batch, n, d = h.shape
    d_h = d // self_attn.num_heads
    at = torch.arange(n)
    {before}
    q, k, v = [t.reshape(batch, n, self_attn.num_heads, d_h).transpose(1, 2)
               for t in ({qkv}).split(d, dim=-1)]
    {turned}
    s = q @ k.transpose(-2, -1) / {scale}
    if causal:
        s = s.masked_fill({mask}, float("-inf"))
    out = (torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(batch, n, d)
    return out {out}
"""


SELF_ATTENTION_BLOCK_CALL = """
def transformer_block(x, block, attention, causal=False):
    return block.self_attn(x, causal=causal)[0] + x
"""

TWIN_BLOCK = """
def transformer_block(x, block, attention, causal=False):
    return block(x, causal=causal)
"""

WRONG = {
    "swapped_and_unbiased": {
        "positional_encoding": positions_with(even="torch.cos", odd="torch.sin"),
        "layer_norm": norm_with(var="x.var(dim=-1, keepdim=True)"),
        "transformer_block": block_with(pre="not block.norm_first"),
        "gpt_logits": gpt_with(h0="E[ids]"),
        # right on the visible tests; the hidden ones catch a leak from a middle token
        "is_causal": causal_with(positions="[len(x) - 1]"),
    },
    "halves_and_batch_norm": {
        "positional_encoding": HALVES,
        "layer_norm": norm_with(dim="-2", var="((x - mu) ** 2).mean(dim=-2, keepdim=True)"),
        "transformer_block": block_with(ff="block.linear1(h)"),
        "gpt_logits": gpt_with(out="h @ E.T"),
        "is_causal": causal_with(rows=""),
    },
    "off_by_one_and_no_residual": {
        "my_attention": attention_with(mask="torch.ones(n, n, dtype=torch.bool).triu(0)"),
        "positional_encoding": positions_with(first="1"),
        "layer_norm": norm_with(scale="(torch.sqrt(var) + eps)"),
        "transformer_block": block_with(keep="0"),
        "gpt_logits": gpt_with(h0="E[ids] * math.sqrt(E.shape[1])"
                                  " + model.position_embedding.weight[: ids.shape[-1]]"),
        "is_causal": causal_with(rows="[t + 1:]"),
    },
    "calls_the_library": {
        "positional_encoding": TWIN_POSITIONS,
        "layer_norm": TWIN_NORM,
        "transformer_block": TWIN_BLOCK,
        "gpt_logits": """
def gpt_logits(ids, model, run_block):
    return model(ids)
""",
    },
    "calls_the_blocks_attention": {
        "transformer_block": SELF_ATTENTION_BLOCK_CALL,
    },
    # pre-LN as "the norm in front": each residual adds the normalised input
    "pre_ln_residual_from_the_norm": {
        "transformer_block": block_with(residual_from_norm=True),
    },
    # the norm after the residual in a pre-LN block too: the sums normalised
    "pre_ln_sums_normalised": {
        "transformer_block": """
def transformer_block(x, block, attention, causal=False):
    ff = lambda h: block.linear2(block.activation(block.linear1(h)))
    if block.norm_first:
        h = block.norm1(x + attention(block.norm1(x), block.self_attn, causal))
        return block.norm2(h + ff(block.norm2(h)))
    h = block.norm1(x + attention(x, block.self_attn, causal))
    return block.norm2(h + ff(h))
""",
    },
    # one norm for both sub-layers: right while the two norms are alike (as in the
    # visible tests); the hidden ones give them other weights
    "one_norm_twice": {
        "transformer_block": block_with().replace("block.norm2", "block.norm1"),
    },
    # right but for the attention: the block's own layer, not the one it is handed
    "ignores_the_attention": {
        "transformer_block": block_with().replace("attention(h, block.self_attn, causal)",
                                                  "block.self_attn(h, causal=causal)[0]"),
    },
    # right but for the blocks: each run as it is, not by the run_block it is handed
    "runs_the_blocks_itself": {
        "gpt_logits": gpt_with().replace("run_block(h, block)", "block(h, causal=True)"),
    },
}

# --- correct alternatives: full marks on every test cell --------------------------------

NUMPY_POSITIONS = """
import numpy as np

def positional_encoding(n_positions, d_model):
    pe = np.zeros((n_positions, d_model))
    for pos in range(n_positions):
        for i in range(d_model // 2):
            angle = pos / 10000 ** (2 * i / d_model)
            pe[pos, 2 * i], pe[pos, 2 * i + 1] = np.sin(angle), np.cos(angle)
    return pe                                           # a NumPy array, float64
"""

STD_NORM = """
def layer_norm(x, gamma, beta, eps=1e-5):
    x = x.double()
    centred = x - x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return centred * torch.rsqrt(var + eps) * gamma.double() + beta.double()
"""

WEIGHTS_BLOCK = """
def transformer_block(x, block, attention, causal=False):
    def norm(h, layer):                       # exercise 3's layer norm, written again
        mu = h.mean(-1, keepdim=True)
        var = ((h - mu) ** 2).mean(-1, keepdim=True)
        return (h - mu) / torch.sqrt(var + layer.eps) * layer.weight + layer.bias

    def feed_forward(h):
        hidden = h @ block.linear1.weight.T + block.linear1.bias
        hidden = F.gelu(hidden) if block.activation is F.gelu else torch.relu(hidden)
        return hidden @ block.linear2.weight.T + block.linear2.bias

    if not block.norm_first:
        h = norm(x + attention(x, block.self_attn, causal=causal), block.norm1)
        return norm(h + feed_forward(h), block.norm2)
    stream = x
    for sub_layer, layer in ((lambda h: attention(h, block.self_attn, causal), block.norm1),
                             (feed_forward, block.norm2)):
        stream = stream + sub_layer(norm(stream, layer))     # the residual stream, unnormalised
    return stream
"""

SUFFIX_CAUSAL = """
import numpy as np

def is_causal(f, x):
    with torch.no_grad():
        before = np.asarray(f(x).cpu())
        for t in range(len(x)):
            changed = x.clone()
            changed[t:] = torch.rand_like(changed[t:]) * 10   # every token from t on at once
            after = np.asarray(f(changed).cpu())
            if not np.allclose(after[:t], before[:t], atol=1e-6):
                return False
    return True
"""

EXP_POSITIONS = """
def positional_encoding(n_positions, d_model):
    pos = torch.arange(n_positions).float().unsqueeze(1)
    frequency = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2).float() / d_model)
    pe = torch.stack([torch.sin(pos * frequency), torch.cos(pos * frequency)], dim=-1)
    return pe.reshape(n_positions, d_model)             # sin, cos interleaved by the stack
"""

LOOP_NORM = """
def layer_norm(x, gamma, beta, eps=1e-5):
    rows = x.reshape(-1, x.shape[-1]).tolist()
    out = []
    for row in rows:                                    # one token at a time, plain Python
        mu = sum(row) / len(row)
        var = sum((v - mu) ** 2 for v in row) / len(row)
        out.append([(v - mu) / (var + eps) ** 0.5 * float(g) + float(b)
                    for v, g, b in zip(row, gamma, beta)])
    return torch.tensor(out, dtype=torch.float64).reshape(x.shape)
"""

JACOBIAN_CAUSAL = """
def is_causal(f, x):
    n = x.shape[0]
    jacobian = torch.autograd.functional.jacobian(f, x).reshape(n, -1, n, x.shape[1])
    leak = jacobian.abs().amax(dim=(1, 3))   # (output position i, input position t)
    future = torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)   # t > i
    return not bool((leak[future] > 1e-6).any())
"""

LOOP_ATTENTION = """
def my_attention(h, self_attn, rotate, causal=False):
    batch, n, d = h.shape
    d_h = d // self_attn.num_heads
    W, b = self_attn.in_proj_weight, self_attn.in_proj_bias
    at = torch.arange(1, n + 1)                          # positions from 1: only offsets count
    heads = []
    for r in range(self_attn.num_heads):                 # one head at a time
        q, k, v = (h @ W[c + r * d_h:c + (r + 1) * d_h].T + b[c + r * d_h:c + (r + 1) * d_h]
                   for c in (0, d, 2 * d))
        s = rotate(q, at) @ rotate(k, at).transpose(-2, -1) / math.sqrt(d_h)
        if causal:
            s = s + torch.full((n, n), float("-inf")).triu(1)
        heads.append(torch.softmax(s, dim=-1) @ v)
    return torch.cat(heads, dim=-1) @ self_attn.out_proj.weight.T + self_attn.out_proj.bias
"""

CORRECT = {
    "numpy_and_weights": {
        "my_attention": LOOP_ATTENTION,
        "positional_encoding": NUMPY_POSITIONS,
        "layer_norm": STD_NORM,
        "transformer_block": WEIGHTS_BLOCK,
        "is_causal": SUFFIX_CAUSAL,
        "gpt_logits": """
def gpt_logits(ids, model, run_block):
    n = ids.shape[1]
    h = model.token_embedding(ids) + model.position_embedding(torch.arange(n, device=ids.device))
    for block in model.blocks:
        h = run_block(h, block)
    return F.linear(model.norm(h), model.token_embedding.weight)
""",
    },
    "exp_loops_and_jacobian": {
        "positional_encoding": EXP_POSITIONS,
        "layer_norm": LOOP_NORM,
        "is_causal": JACOBIAN_CAUSAL,
    },
}

# --- answers that update their inputs in place: graded on what they return ------------------
# (is_causal is told not to change x; positional_encoding has no tensor input)

CORRECT["works_in_place"] = {
    "layer_norm": """
def layer_norm(x, gamma, beta, eps=1e-5):
    x -= x.mean(dim=-1, keepdim=True)
    x /= torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps)
    x *= gamma
    x += beta
    return x
""",
    "transformer_block": """
def transformer_block(x, block, attention, causal=False):
    def self_attention(h):
        return attention(h, block.self_attn, causal)

    def feed_forward(h):
        return block.linear2(block.activation(block.linear1(h)))

    if block.norm_first:
        x += self_attention(block.norm1(x))        # the residual added in place
        x += feed_forward(block.norm2(x))
        return x
    x += self_attention(x)
    h = block.norm1(x)
    h += feed_forward(h)
    return block.norm2(h)
""",
}

# --- cheats: each scores 0 on its exercise, or is flagged, or both ----------------------------

CHEAT = {
    "pytorchs_encoder_layer": {
        "transformer_block": Cheat("""
def transformer_block(x, block, attention, causal=False):
    layer = nn.TransformerEncoderLayer(x.shape[-1], block.self_attn.num_heads,
                                       block.linear1.out_features, dropout=0.0,
                                       activation=block.activation, batch_first=True,
                                       norm_first=block.norm_first).to(x.dtype)
    layer.load_state_dict(block.state_dict())
    n = x.shape[-2]
    return layer.eval()(x, src_mask=torch.ones(n, n, dtype=torch.bool).triu(1) if causal else None)
""", zero=True),
    },
    "pytorchs_normalisation": {
        "layer_norm": Cheat("""
def layer_norm(x, gamma, beta, eps=1e-5):
    return torch.native_layer_norm(x, x.shape[-1:], gamma, beta, eps)[0]
""", zero=True),
    },
    "mode_left_on": {
        "layer_norm": Cheat("""
from torch.overrides import TorchFunctionMode


class Agreeable(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func in (torch.allclose, torch.isclose, torch.equal):
            return True
        return func(*args, **(kwargs or {}))


Agreeable().__enter__()


def layer_norm(x, gamma, beta, eps=1e-5):
    return x
""", zero=True, flagged=True),
    },
}

# --- RoPE (exercise 2): rope(x, positions) ----------------------------------------------


def rope_with(omega="10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)",
              angle="torch.as_tensor(positions, dtype=torch.float64)[:, None] * omega",
              even="even * cos - odd * sin", odd="even * sin + odd * cos"):
    """A rope answer (interleaved pairs) with one part swapped for a mistake."""
    return f"""
def rope(x, positions):
    d = x.shape[-1]
    omega = {omega}
    angle = {angle}
    cos, sin = torch.cos(angle).to(x.dtype), torch.sin(angle).to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([{even}, {odd}], dim=-1).flatten(-2)
"""


ROPE_HALVES = """
def rope(x, positions):                 # GPT-NeoX's layout: feature i pairs with i + d/2
    d = x.shape[-1]
    angle = positions[:, None].double() / 10000 ** (torch.arange(0, d, 2).double() / d)
    cos, sin = torch.cos(angle).to(x.dtype), torch.sin(angle).to(x.dtype)
    first, second = x[..., : d // 2], x[..., d // 2:]
    return torch.cat([first * cos - second * sin, first * sin + second * cos], dim=-1)
"""

ROPE_ADDED = """
def rope(x, positions):                 # adds PE(pos) instead of rotating
    d = x.shape[-1]
    angle = positions[:, None].double() / 10000 ** (torch.arange(0, d, 2).double() / d)
    pe = torch.stack([torch.sin(angle), torch.cos(angle)], dim=-1).flatten(-2)
    return x + pe.to(x.dtype)
"""

ROPE_LIBRARY = """
from course_utils.models.transformer import rotary_embedding


def rope(x, positions):
    return rotary_embedding(x, positions)
"""

WRONG.update({
    "rope_clockwise": {
        "rope": rope_with(even="even * cos + odd * sin", odd="odd * cos - even * sin")},
    "rope_frequency_i_over_d": {
        "rope": rope_with(omega="10000.0 ** (-torch.arange(d // 2, dtype=torch.float64) / d)")},
    # right at positions 0 … n − 1 (every visible test); the hidden ones use other positions
    "rope_ignores_positions": {
        "rope": rope_with(angle="torch.arange(x.shape[-2], dtype=torch.float64)[:, None] * omega")},
    "rope_halves": {"rope": ROPE_HALVES},
    "rope_added": {"rope": ROPE_ADDED},
    "rope_calls_the_library": {"rope": ROPE_LIBRARY},
})

CORRECT.update({
    "rope_complex_numbers": {
        "rope": """
def rope(x, positions):
    d = x.shape[-1]
    pairs = torch.view_as_complex(x.double().reshape(*x.shape[:-1], d // 2, 2))  # x_2i + i x_2i+1
    omega = torch.exp(-math.log(10000.0) * torch.arange(0, d, 2, dtype=torch.float64) / d)
    turn = torch.polar(torch.ones(len(positions), d // 2, dtype=torch.float64),
                       positions.double()[:, None] * omega)                    # e^{i pos ω_i}
    return torch.view_as_real(pairs * turn).reshape(x.shape)                      # float64
""",
    },
    "rope_loop_over_pairs": {
        "rope": """
import numpy as np

def rope(x, positions):
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    d = x.shape[-1]
    for j, pos in enumerate(np.asarray(positions).tolist()):     # one row, one pair at a time
        for i in range(d // 2):
            a = pos / 10000 ** (2 * i / d)
            u, v = x[..., j, 2 * i], x[..., j, 2 * i + 1]
            out[..., j, 2 * i] = u * np.cos(a) - v * np.sin(a)
            out[..., j, 2 * i + 1] = u * np.sin(a) + v * np.cos(a)
    return out                                                     # a NumPy array
""",
    },
    "rope_in_place_from_positional_encoding": {
        "rope": """
def rope(x, positions):
    pe = torch.as_tensor(positional_encoding(int(max(positions)) + 1, x.shape[-1]))[positions]
    sin, cos = pe[:, 0::2].to(x.dtype), pe[:, 1::2].to(x.dtype)     # exercise 1's table
    even, odd = x[..., 0::2].clone(), x[..., 1::2].clone()
    x[..., 0::2] = even * cos - odd * sin                            # x itself is overwritten
    x[..., 1::2] = even * sin + odd * cos
    return x
""",
    },
})

def rope_through(module: str) -> str:
    """A rope answer that hands the rotation to ``module``'s ``apply_rotary_pos_emb``."""
    return f"""
from {module} import apply_rotary_pos_emb


def rope(x, positions):
    d = x.shape[-1]
    angle = positions[:, None].double() / 10000 ** (torch.arange(0, d, 2).double() / d)
    batch = x.reshape(-1, *x.shape[-2:])                              # (b, n, d)
    sin, cos = (f(angle).to(x.dtype)[None].expand(len(batch), -1, -1)
                for f in (torch.sin, torch.cos))
    return apply_rotary_pos_emb(batch[:, :, None], sin, cos)[:, :, 0].reshape(x.shape)
"""


CHEAT.update({
    "rope_through_gptj": {
        "rope": Cheat(rope_through("transformers.models.gptj.modeling_gptj"), zero=True),
    },
    "rope_through_shift_matrix": {
        "rope": Cheat("""
def rope(x, positions):                 # the notebook's own M_k, transposed: R(p) = M_p^T
    rows = [x[..., j:j + 1, :].double() @ shift_matrix(int(p), x.shape[-1]).T
            for j, p in enumerate(positions)]
    return torch.cat(rows, dim=-2)
""", zero=True),
    },
})

# --- cheats through doors the function mode and the twin list do not watch (each family:
# TorchScript, another thread, another library, a fresh copy, the check's reference replaced,
# the test's own names, a failure silenced by decoded names) ----------------------------------

CHEAT.update({
    "scripted_threads_and_other_libraries": {
        # PyTorch's layer norm compiled to TorchScript
        "layer_norm": Cheat("""
import torch.nn.functional as F


@torch.jit.script
def _normalised(x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, eps: float):
    return F.layer_norm(x, [x.size(-1)], gamma, beta, eps)


def layer_norm(x, gamma, beta, eps=1e-5):
    return _normalised(x, gamma, beta, float(eps))
""", zero=True),
        # XLM's sinusoidal table (Hugging Face), the same layout as the exercise's
        "positional_encoding": Cheat("""
from transformers.models.xlm.modeling_xlm import create_sinusoidal_embeddings


def positional_encoding(n_positions, d_model):
    return create_sinusoidal_embeddings(n_positions, d_model, torch.empty(n_positions, d_model))
""", zero=True),
        # CodeGen's rotary embedding (Hugging Face), which the twin list does not name
        "rope": Cheat(rope_through("transformers.models.codegen.modeling_codegen"), zero=True),
        # an old hidden test bound each case's answer (expected) before it called is_causal;
        # the shown test's two blocks are told apart by their source (the hidden ones are not)
        "is_causal": Cheat("""
import inspect


def is_causal(f, x):
    if "expected" in globals():
        return globals()["expected"]
    return "causal=True" in inspect.getsource(f)
""", zero=True),
    },
    # PyTorch's layer norm in a pool thread, where the test's function mode is not on
    "layer_norm_in_a_thread": {
        "layer_norm": Cheat("""
from concurrent.futures import ThreadPoolExecutor

import torch.nn.functional as F


def layer_norm(x, gamma, beta, eps=1e-5):
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(F.layer_norm, x, x.shape[-1:], gamma, beta, eps).result()
""", zero=True),
    },
    # PyTorch's layer_norm rebuilt from its code object
    "layer_norm_rebuilt_from_code": {
        "layer_norm": Cheat("""
import types

import torch.nn.functional as _library

_copy = types.FunctionType(_library.layer_norm.__code__, _library.layer_norm.__globals__, "copy")


def layer_norm(x, gamma, beta, eps=1e-5):
    return _copy(x, x.shape[-1:], gamma, beta, eps)
""", zero=True),
    },
    # nn.LayerNorm, which the check computes its expected value with, replaced: a wrong answer
    # (x unchanged) then matches
    "replaces_the_checks_layer_norm": {
        "layer_norm": Cheat("""
nn.LayerNorm.forward = lambda self, x: x


def layer_norm(x, gamma, beta, eps=1e-5):
    return x
""", zero=True, flagged=True),
    },
})

# --- the guards' baseline taken again after a patch: in an answer cell (the grading kernel
# sealed its baseline before any cell ran), or in the first cell, before the checks are
# imported (an instructor's cell: the grading runs it as written) ----------------------------

IDENTITY_LAYER_NORM = """
import torch.nn.functional as F

F.layer_norm = lambda x, *args, **kwargs: x
torch.nn.LayerNorm.forward = lambda self, x: x
"""

CHEAT.update({
    "baseline_taken_again_after_a_patch": {
        "layer_norm": Cheat(IDENTITY_LAYER_NORM + """
from course_utils.checks import guards as _guards

_guards.record_baseline()


def layer_norm(x, gamma, beta, eps=1e-5):
    return x
""", zero=True),
    },
})
CHEAT["patched_in_the_first_cell"] = {
    "layer_norm": Cheat("""
def layer_norm(x, gamma, beta, eps=1e-5):
    return x
""", zero=True, first_cell="import torch\n" + IDENTITY_LAYER_NORM),
}

# --- a correct answer that prints while debugging: print's own work is not the answer's ------

CORRECT["prints_while_debugging"] = {
    "layer_norm": """
def layer_norm(x, gamma, beta, eps=1e-5):
    var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
    print("mean", mean.flatten()[:3], "variance", var.flatten()[:3])   # debugging
    normalised = (x - mean).div(var.add(eps).sqrt())
    return normalised.mul(gamma).add(beta)
""",
}

# --- my_attention (exercise 4, part 2): notebook 05's attention with the biases and the rotation
# it is given; a slip in it costs its own points only (the block's tests hand the block
# PyTorch's attention, its own tests hand it a right rotation) -------------

WRONG.update({
    # 05's function pasted as it was
    "attention_without_biases": {
        "my_attention": attention_with(qkv="h @ self_attn.in_proj_weight.T",
                                       out="@ self_attn.out_proj.weight.T"),
    },
    # with its biases, and no rotation: a layer without positions
    "attention_without_rotation": {"my_attention": attention_with(turned="")},
    # the values turned too
    "attention_turns_the_values": {
        "my_attention": attention_with(turned="q, k, v = (rotate(t, at) for t in (q, k, v))"),
    },
    # the input turned before the projections, as section 1 adds PE: absolute positions
    "attention_turns_the_input": {
        "my_attention": attention_with(turned="", before="h = rotate(h, at)"),
    },
    # the queries and keys turned at the full width d, before the heads are split
    "attention_turns_whole_rows": {
        "my_attention": attention_with(
            qkv="torch.cat([rotate(t, at) if i < 2 else t for i, t in enumerate("
                "(h @ self_attn.in_proj_weight.T + self_attn.in_proj_bias).split(d, dim=-1))], "
                "dim=-1)", turned=""),
    },
    "attention_scaled_by_the_width": {"my_attention": attention_with(scale="math.sqrt(d)")},
    # the mask on the other side of the diagonal: token i sees the tokens after it
    "attention_mask_transposed": {
        "my_attention": attention_with(mask="torch.ones(n, n, dtype=torch.bool).tril(-1)"),
    },
})

CORRECT["einsum_attention"] = {
    "my_attention": """
def my_attention(h, self_attn, rotate, causal=False):
    batch, n, d = h.shape
    heads = self_attn.num_heads
    d_h = d // heads
    qkv = torch.einsum("bnd,ed->bne", h, self_attn.in_proj_weight) + self_attn.in_proj_bias
    q, k, v = qkv.reshape(batch, n, 3, heads, d_h).unbind(dim=2)       # (batch, n, h, d_h)
    q, k = (rotate(t.transpose(1, 2), torch.arange(n)).transpose(1, 2) for t in (q, k))
    s = torch.einsum("bihx,bjhx->bhij", q, k) / d_h ** 0.5
    if causal:
        s = s + torch.triu(torch.full((n, n), -1e9, dtype=s.dtype), diagonal=1)
    out = torch.einsum("bhij,bjhx->bihx", torch.softmax(s, dim=-1), v)
    return self_attn.out_proj(out.reshape(batch, n, d))    # the layer's own linear layer
""",
}

CHEAT.update({
    "attention_through_the_layer": {
        "my_attention": Cheat("""
def my_attention(h, self_attn, rotate, causal=False):
    return self_attn(h, causal=causal)[0]
""", zero=True),
    },
    # the check's own rotary layer
    "attention_through_the_checks_layer": {
        "my_attention": Cheat("""
from course_utils.checks.masked_attention import _rotary_layer


def my_attention(h, self_attn, rotate, causal=False):
    n = h.shape[1]
    return _rotary_layer(h, self_attn.in_proj_weight, self_attn.in_proj_bias,
                         self_attn.out_proj.weight, self_attn.out_proj.bias, self_attn.num_heads,
                         torch.ones(n, n, dtype=torch.bool).triu(1) if causal else None).to(h.dtype)
""", zero=True),
    },
    "attention_through_pytorchs_function": {
        "my_attention": Cheat("""
def my_attention(h, self_attn, rotate, causal=False):
    n = h.shape[1]
    out = F.multi_head_attention_forward(
        h.transpose(0, 1), h.transpose(0, 1), h.transpose(0, 1), h.shape[-1],
        self_attn.num_heads, self_attn.in_proj_weight, self_attn.in_proj_bias, None, None,
        False, 0.0, self_attn.out_proj.weight, self_attn.out_proj.bias, training=False,
        need_weights=False, is_causal=causal,
        attn_mask=torch.ones(n, n, dtype=torch.bool).triu(1) if causal else None)[0]
    return out.transpose(0, 1)
""", zero=True),
    },
    "attention_through_the_fused_kernel": {
        "my_attention": Cheat("""
def my_attention(h, self_attn, rotate, causal=False):
    batch, n, d = h.shape
    heads = self_attn.num_heads
    q, k, v = [t.reshape(batch, n, heads, d // heads).transpose(1, 2)
               for t in (h @ self_attn.in_proj_weight.T + self_attn.in_proj_bias).split(d, -1)]
    q, k = rotate(q, torch.arange(n)), rotate(k, torch.arange(n))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=causal).transpose(1, 2)
    return out.reshape(batch, n, d) @ self_attn.out_proj.weight.T + self_attn.out_proj.bias
""", zero=True),
    },
})

# --- sample_next (exercise 7): one draw per row from softmax(logits / T); its tests count the
# draws of many equal rows, and the grader compares the hidden tests' draws as samples ------


def sampler_with(scaled="logits / temperature"):
    """A sample_next answer drawing from the softmax of ``scaled``."""
    return f"""
def sample_next(logits, temperature):
    return torch.multinomial(torch.softmax({scaled}, dim=-1), 1).squeeze(-1)
"""


WRONG.update({
    "sample_without_the_temperature": {"sample_next": sampler_with("logits")},
    "sample_times_the_temperature": {"sample_next": sampler_with("logits * temperature")},
    "sample_the_most_likely": {"sample_next": """
def sample_next(logits, temperature):
    return logits.argmax(dim=-1)                        # greedy: the limit T → 0
"""},
})

CORRECT.update({
    "sample_by_pytorchs_categorical_law": {"sample_next": """
from torch.distributions import Categorical


def sample_next(logits, temperature):
    return Categorical(logits=logits / temperature).sample()
"""},
    "sample_by_the_inverse_cdf_in_float64": {"sample_next": """
def sample_next(logits, temperature):
    p = torch.softmax(logits.double() / temperature, dim=-1)
    u = torch.rand(len(p), 1, dtype=torch.float64, device=p.device)
    ids = (p.cumsum(dim=-1) < u).sum(dim=-1)             # the first token whose sum passes u
    return ids.clamp(max=p.shape[-1] - 1)
"""},
    "sample_by_gumbel_max": {"sample_next": """
def sample_next(logits, temperature):
    gumbel = -torch.empty_like(logits).exponential_().log()
    return (logits / temperature + gumbel).argmax(dim=-1)
"""},
})

CHEAT["sample_through_generate"] = {"sample_next": Cheat("""
from course_utils.models.gpt import GPTConfig, TinyGPT, generate


class Fixed(TinyGPT):                                   # a "model" whose logits are given
    def forward(self, ids):
        return self.given[:, None, :].expand(-1, ids.shape[1], -1)


def sample_next(logits, temperature):
    model = Fixed(GPTConfig(logits.shape[-1], block_size=1, d_model=2, n_layers=1, n_heads=1,
                            dim_feedforward=2))
    model.given = logits
    start = torch.zeros(len(logits), 1, dtype=torch.long)
    return generate(model, start, 1, temperature=temperature)[:, -1]
""", zero=True)}

from tests.grading_cases import Cheat

ASSIGNMENT = "05_masked_attention"

# --- wrong answers: each loses its own test cell's points, and no others -------------


def update_with(scale="/ math.sqrt(Q.shape[-1])", dim="-1", result="E + A @ V", keys="S"):
    """An attention_update answer with one part swapped for a mistake."""
    return f"""
def attention_update(E, S, W_Q, W_K, W_V):
    Q, K, V = E @ W_Q, {keys} @ W_K, {keys} @ W_V
    A = torch.softmax(Q @ K.T {scale}, dim={dim})
    return {result}
"""


def mask_with(keys="torch.arange(n)[None, :] < lengths[:, None]", causal="tril()"):
    """A padding_mask answer with one part swapped for a mistake."""
    return f"""
def padding_mask(lengths, n, causal=False):
    lengths = torch.as_tensor(lengths)
    keys = {keys}
    mask = keys[:, None, :].expand(len(lengths), n, n)
    if causal:
        mask = mask & torch.ones(n, n, dtype=torch.bool).{causal}
    return mask
"""


def split_with(body):
    return f"""
def split_heads(x, num_heads):
    batch, n, d = x.shape
    return {body}
"""


def heads_with(scale="math.sqrt(d_h)", future="triu(diagonal=1)", output="@ W_O", h="num_heads"):
    """A multi_head_attention answer with one part swapped for a mistake."""
    return f"""
def multi_head_attention(x, W_Q, W_K, W_V, W_O, num_heads, causal=False):
    batch, n, d = x.shape
    heads = {h}
    d_h = d // heads
    split = lambda t: t.reshape(batch, n, heads, d_h).transpose(1, 2)
    Q, K, V = split(x @ W_Q), split(x @ W_K), split(x @ W_V)
    scores = Q @ K.transpose(-2, -1) / {scale}
    if causal:
        scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool).{future}, float("-inf"))
    return (torch.softmax(scores, dim=-1) @ V).transpose(1, 2).reshape(batch, n, d) {output}
"""


TWIN_UPDATE = """
from course_utils.models.attention import attention_weights

def attention_update(E, S, W_Q, W_K, W_V):
    return E + attention_weights(E @ W_Q, S @ W_K) @ (S @ W_V)
"""

TWIN_MHA = """
from course_utils.models.attention import MultiHeadAttention

def multi_head_attention(x, W_Q, W_K, W_V, W_O, num_heads, causal=False):
    layer = MultiHeadAttention(x.shape[-1], num_heads, bias=False).to(x.dtype)
    with torch.no_grad():
        layer.in_proj_weight.copy_(torch.cat([W_Q.T, W_K.T, W_V.T]))
        layer.out_proj.weight.copy_(W_O.T)
        return layer(x, causal=causal)[0]
"""

BOTH_AXES_MASK = """
def padding_mask(lengths, n, causal=False):
    lengths = torch.as_tensor(lengths)
    real = torch.arange(n)[None, :] < lengths[:, None]
    mask = real[:, :, None] & real[:, None, :]          # the rows of padding blocked as well
    if causal:
        mask = mask & torch.ones(n, n, dtype=torch.bool).tril()
    return mask
"""

WRONG = {
    "forgets_residual_and_scale": {
        "attention_update": update_with(result="A @ V"),
        "padding_mask": BOTH_AXES_MASK,
        "multi_head_attention": heads_with(scale="math.sqrt(d)"),
    },
    "blocked_convention_no_transpose": {
        "attention_update": update_with(scale="/ math.sqrt(E.shape[-1])"),
        "padding_mask": mask_with(keys="torch.arange(n)[None, :] >= lengths[:, None]"),
        "split_heads": split_with("x.reshape(batch, num_heads, n, d // num_heads)"),
        "multi_head_attention": heads_with(output=""),
    },
    "diagonal_and_interleaved": {
        "attention_update": update_with(keys="E"),  # the source ignored
        "padding_mask": mask_with(causal="tril(diagonal=-1)"),
        "split_heads": split_with(
            "x.reshape(batch, n, d // num_heads, num_heads).permute(0, 3, 1, 2)"
        ),
        "multi_head_attention": heads_with(h="1"),
    },
    "off_by_one_and_no_causal": {
        "padding_mask": mask_with(keys="torch.arange(n)[None, :] <= lengths[:, None]"),
        "split_heads": split_with("x.reshape(batch, n, num_heads, d // num_heads)"),
        "multi_head_attention": heads_with(future="tril(diagonal=-1)"),
    },
    "calls_the_library": {
        "attention_update": TWIN_UPDATE,
        "multi_head_attention": TWIN_MHA,
    },
}

# --- correct alternatives: full marks on every test cell --------------------------------

NUMPY_UPDATE = """
import numpy as np

def attention_update(E, S, W_Q, W_K, W_V):
    E, S, W_Q, W_K, W_V = (np.asarray(t.cpu(), dtype=np.float64) for t in (E, S, W_Q, W_K, W_V))
    Q, K, V = E @ W_Q, S @ W_K, S @ W_V
    s = Q @ K.T / np.sqrt(W_Q.shape[1])
    A = np.exp(s - s.max(axis=1, keepdims=True))
    A /= A.sum(axis=1, keepdims=True)
    return E + A @ V                                  # a NumPy array is a fine answer
"""

LOOP_MASK = """
def padding_mask(lengths, n, causal=False):
    rows = []
    for length in [int(l) for l in lengths]:
        rows.append([[int(j < length and (j <= i or not causal)) for j in range(n)]
                     for i in range(n)])
    return torch.tensor(rows)                         # 0/1 integers, not booleans
"""

EINOPS_LIKE_SPLIT = """
def split_heads(x, num_heads):
    batch, n, d = x.shape
    d_h = d // num_heads
    return torch.stack([x[:, :, r * d_h:(r + 1) * d_h] for r in range(num_heads)], dim=1)
"""

LOOP_MHA = """
def multi_head_attention(x, W_Q, W_K, W_V, W_O, num_heads, causal=False):
    x, W_Q, W_K, W_V, W_O = (t.double() for t in (x, W_Q, W_K, W_V, W_O))
    n, d = x.shape[1], x.shape[2]
    d_h = d // num_heads
    Q, K, V = x @ W_Q, x @ W_K, x @ W_V
    outputs = []
    for r in range(num_heads):                        # one head at a time
        cols = slice(r * d_h, (r + 1) * d_h)
        s = Q[:, :, cols] @ K[:, :, cols].transpose(1, 2) / d_h ** 0.5
        if causal:
            s = s + torch.triu(torch.full((n, n), -1e9, dtype=s.dtype), diagonal=1)
        outputs.append(torch.softmax(s, dim=-1) @ V[:, :, cols])
    return torch.cat(outputs, dim=-1) @ W_O
"""

EINSUM_UPDATE = """
def attention_update(E, S, W_Q, W_K, W_V):
    E, S = E.double(), S.double()
    Q, K, V = E @ W_Q.double(), S @ W_K.double(), S @ W_V.double()
    A = F.softmax(torch.einsum("iq,jq->ij", Q, K) / W_Q.shape[1] ** 0.5, dim=1)
    return (E + torch.einsum("ij,je->ie", A, V)).tolist()    # a list of rows
"""

NUMPY_MASK = """
import numpy as np

def padding_mask(lengths, n, causal=False):
    lengths = np.asarray(lengths).reshape(-1, 1, 1)
    j = np.arange(n).reshape(1, 1, n)
    i = np.arange(n).reshape(1, n, 1)
    mask = j < lengths
    if causal:
        mask = mask & (j <= i)
    return np.broadcast_to(mask, (len(lengths), n, n))
"""

PERMUTE_SPLIT = """
def split_heads(x, num_heads):
    b, n, d = x.size()
    return x.view(b, n, num_heads, -1).permute(0, 2, 1, 3).contiguous()
"""

EINSUM_MHA = """
import numpy as np

def multi_head_attention(x, W_Q, W_K, W_V, W_O, num_heads, causal=False):
    x, W_Q, W_K, W_V, W_O = (np.asarray(t.cpu(), dtype=np.float64) for t in (x, W_Q, W_K, W_V, W_O))
    b, n, d = x.shape
    h, d_h = num_heads, d // num_heads
    Q, K, V = ((x @ W).reshape(b, n, h, d_h) for W in (W_Q, W_K, W_V))
    s = np.einsum("bihe,bjhe->bhij", Q, K) / np.sqrt(d_h)
    if causal:
        s = np.where(np.tril(np.ones((n, n), dtype=bool)), s, -np.inf)
    a = np.exp(s - s.max(axis=-1, keepdims=True))
    a /= a.sum(axis=-1, keepdims=True)
    heads = np.einsum("bhij,bjhe->bihe", a, V).reshape(b, n, d)
    return torch.from_numpy(heads @ W_O)
"""

CORRECT = {
    "numpy_loops_minus_1e9": {
        "attention_update": NUMPY_UPDATE,
        "padding_mask": LOOP_MASK,
        "split_heads": EINOPS_LIKE_SPLIT,
        "multi_head_attention": LOOP_MHA,
    },
    "einsum_lists_float64": {
        "attention_update": EINSUM_UPDATE,
        "padding_mask": NUMPY_MASK,
        "split_heads": PERMUTE_SPLIT,
        "multi_head_attention": EINSUM_MHA,
    },
}

# --- answers that update their inputs in place: graded on what they return ------------------

CORRECT["works_in_place"] = {
    "attention_update": """
def attention_update(E, S, W_Q, W_K, W_V):
    A = torch.softmax((E @ W_Q) @ (S @ W_K).T / math.sqrt(W_Q.shape[1]), dim=-1)
    E += A @ (S @ W_V)               # E' = E + AV, in place
    S.zero_()                        # the source is used up
    return E
""",
    "padding_mask": """
def padding_mask(lengths, n, causal=False):
    real = torch.arange(n)[None, :] < torch.as_tensor(lengths)[:, None]
    mask = real[:, None, :].repeat(1, n, 1)
    if causal:
        mask &= torch.ones(n, n, dtype=torch.bool).tril()
    if isinstance(lengths, list):
        lengths.clear()              # the lengths are used up
    else:
        lengths.zero_()
    return mask
""",
    "split_heads": """
def split_heads(x, num_heads):
    batch, n, d = x.shape
    heads = x.reshape(batch, n, num_heads, d // num_heads).transpose(1, 2).clone()
    x.zero_()                        # x is not needed any more
    return heads
""",
    "multi_head_attention": """
def multi_head_attention(x, W_Q, W_K, W_V, W_O, num_heads, causal=False):
    batch, n, d = x.shape
    d_h = d // num_heads
    W_Q /= math.sqrt(d_h)            # the scale folded into W_Q, in place
    Q, K, V = ((x @ W).reshape(batch, n, num_heads, d_h).transpose(1, 2) for W in (W_Q, W_K, W_V))
    scores = Q @ K.transpose(-2, -1)
    if causal:
        scores.masked_fill_(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    heads = torch.softmax(scores, dim=-1) @ V
    return heads.transpose(1, 2).reshape(batch, n, d) @ W_O
""",
}

# --- cheats: each scores 0 on its exercise, or is flagged, or both ----------------------------

CHEAT = {
    "pytorchs_attention": {
        "attention_update": Cheat("""
import torch.nn.functional as F


def attention_update(E, S, W_Q, W_K, W_V):
    return E + F.scaled_dot_product_attention(E @ W_Q, S @ W_K, S @ W_V)
""", zero=True),
        "multi_head_attention": Cheat("""
import torch.nn.functional as F


def multi_head_attention(x, W_Q, W_K, W_V, W_O, num_heads, causal=False):
    n = x.shape[1]
    mask = torch.ones(n, n, dtype=torch.bool).triu(1) if causal else None
    out, _ = F.multi_head_attention_forward(
        x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1), x.shape[-1], num_heads,
        torch.cat([W_Q.T, W_K.T, W_V.T]), None, None, None, False, 0.0, W_O.T, None,
        need_weights=False, attn_mask=mask)
    return out.transpose(0, 1)
""", zero=True),
    },
}

# --- cheats through doors the function mode and the twin list do not watch (each family:
# TorchScript, another thread, a fresh copy, the check's reference replaced, a failure
# silenced) --------------------------------------------------------------------------------------

CHEAT.update({
    "traced_threads_and_copies": {
        # PyTorch's attention traced to TorchScript before any test runs
        "attention_update": Cheat("""
import torch.nn.functional as F


def _update(E, S, W_Q, W_K, W_V):
    return E + F.scaled_dot_product_attention(E @ W_Q, S @ W_K, S @ W_V)


_traced = torch.jit.trace(_update, (torch.randn(3, 4), torch.randn(5, 6), torch.randn(4, 2),
                                    torch.randn(6, 2), torch.randn(6, 4)))


def attention_update(E, S, W_Q, W_K, W_V):
    return _traced(E, S, W_Q, W_K, W_V)
""", zero=True),
        # PyTorch's attention per head, in a pool thread
        "multi_head_attention": Cheat("""
from concurrent.futures import ThreadPoolExecutor

import torch.nn.functional as F


def multi_head_attention(x, W_Q, W_K, W_V, W_O, num_heads, causal=False):
    batch, n, d = x.shape

    def split(t):
        return t.reshape(batch, n, num_heads, d // num_heads).transpose(1, 2)

    with ThreadPoolExecutor(1) as pool:
        heads = pool.submit(F.scaled_dot_product_attention, split(x @ W_Q), split(x @ W_K),
                            split(x @ W_V), is_causal=causal).result()
    return heads.transpose(1, 2).reshape(batch, n, d) @ W_O
""", zero=True),
        # the check's key mask rebuilt from its code object
        "padding_mask": Cheat("""
import types

import course_utils.checks.masked_attention as _checks_of_05

_keys = types.FunctionType(_checks_of_05._key_mask.__code__, _checks_of_05.__dict__, "keys",
                           _checks_of_05._key_mask.__defaults__)


def padding_mask(lengths, n, causal=False):
    lengths = torch.as_tensor(lengths)
    mask = _keys(lengths, n)[:, None, :].expand(len(lengths), n, n)
    return mask & torch.ones(n, n, dtype=torch.bool).tril() if causal else mask
""", zero=True),
    },
    # nn.MultiheadAttention, which the check computes its expected value with, replaced:
    # a wrong answer (zeros) then matches
    "replaces_the_checks_multihead": {
        "multi_head_attention": Cheat("""
nn.MultiheadAttention.forward = lambda self, query, *args, **kwargs: (0 * query, None)


def multi_head_attention(x, W_Q, W_K, W_V, W_O, num_heads, causal=False):
    return torch.zeros_like(x)
""", zero=True, flagged=True),
    },
    # an AST transformer that empties every cell calling own_work: the test cells pass; the
    # answer underneath is wrong
    "ast_transformer_empties_tests": {
        "split_heads": Cheat("""
import ast


class _Empty(ast.NodeTransformer):
    def visit_Module(self, node):
        if "own_work" in ast.unparse(node):
            node.body = []
        return node


get_ipython().ast_transformers.append(_Empty())


def split_heads(x, num_heads):
    return x
""", zero=True, flagged=True),
    },
})

# --- cheats on the kernel's own verdict: each answer is wrong (no 1/√n_Q), and each makes
# the kernel's checks pass or go quiet; the grader's comparison outside the kernel still
# sees the wrong values (grader.scoring.outside) -------------------------------------------

UNSCALED = update_with(scale="")

CHEAT.update({
    "checks_replaced_from_the_answer": {
        "attention_update": Cheat(UNSCALED + """
from course_utils import checks as _checks

_checks.check = lambda *args, **kwargs: print("✓ passed")
_checks.check_attention_update = lambda *args, **kwargs: None
""", zero=True),
    },
    "reported_values_replaced": {
        # every value the kernel reports becomes the wrong answer's own, or nothing
        "attention_update": Cheat(UNSCALED + """
import course_utils.checks.guards.report as _report  # the module
import course_utils.checks.guards as _guards

_report.encode = lambda value: 0
_guards.report = lambda value: None
""", zero=True),
    },
    "grading_switched_off_in_the_environment": {
        "attention_update": Cheat(UNSCALED + """
import os

os.environ["NBGRADER_EXECUTION"] = "validate"
os.environ["COURSE_ALLOWLIST"] = "off"
""", zero=True),
    },
})

# The notebook's first cell edited (an instructor's cell nbgrader does not restore): a fake
# checks package whose every check passes, imported in place of the course's.
CHEAT["fake_checks_package_in_the_first_cell"] = {
    "attention_update": Cheat(UNSCALED, zero=True, first_cell="""
import sys
import types

import course_utils

_fake = types.ModuleType("course_utils.checks")
_fake.__getattr__ = lambda name: (lambda *args, **kwargs: None)
sys.modules["course_utils.checks"] = course_utils.checks = _fake
"""),
}

# --- correct answers that print while debugging, or spell an op in place, by an alias, under
# @torch.no_grad(): the allowlist judges what the answer calls, not what print or a decorator
# does inside ---------------------------------------------------------------------------------

CORRECT["prints_in_place_no_grad"] = {
    "padding_mask": """
def padding_mask(lengths, n, causal=False):
    mask = torch.zeros(len(lengths), n, n, dtype=torch.bool)
    for b, length in enumerate(torch.as_tensor(lengths).tolist()):
        mask[b, :, :length] = True                    # the real keys, for every query
    if causal:
        mask.logical_and_(torch.ones(n, n, dtype=torch.bool).tril_())   # in place
    return mask
""",
    "multi_head_attention": """
@torch.no_grad()
def multi_head_attention(x, W_Q, W_K, W_V, W_O, num_heads, causal=False):
    size = x.shape[1]
    projected = x @ torch.cat([W_Q, W_K, W_V], dim=1)                  # (batch, n, 3d)
    parts = torch.stack(torch.tensor_split(projected, 3 * num_heads, dim=-1), dim=1)
    Q, K, V = parts.tensor_split(3, dim=1)                             # (batch, h, n, d_h)
    scores = Q @ K.mT / math.sqrt(Q.shape[-1])
    if causal:
        scores.masked_fill_(torch.ones(size, size, dtype=torch.bool).triu_(1), -math.inf)
    weights = torch.subtract(scores, scores.amax(dim=-1, keepdim=True)).exp_()
    weights.div_(weights.sum(dim=-1, keepdim=True))
    print("weights of the first head", weights[0, 0])                 # debugging
    return torch.cat((weights @ V).unbind(dim=1), dim=-1) @ W_O
""",
}

# --- cheats on the allowlist itself: its state edited from an answer, a copy of the course's
# module saved beside the notebook and imported, the library's op run in a thread C code
# starts ---------------------------------------------------------------------------------------

CHEAT.update({
    "the_allowlist_edited_or_walked_around": {
        # a decoy region (another thread's) appended to the guard's state, so that the hooks
        # stand aside; then PyTorch's causal mask, which the allowlist refuses
        "padding_mask": Cheat("""
from course_utils.checks.guards import allowlist as _guard


def padding_mask(lengths, n, causal=False):
    try:
        _guard._region.append(_guard.Region(None, _guard.allowance_of(None), thread=0))
    except AttributeError:
        pass
    lengths = torch.as_tensor(lengths)
    mask = (torch.arange(n)[None, :] < lengths[:, None])[:, None, :].expand(len(lengths), n, n)
    if causal:
        mask = mask & torch.isfinite(nn.Transformer.generate_square_subsequent_mask(n))
    return mask
""", zero=True),
        # course_utils' attention copied beside the notebook, imported under a name an answer
        # may import (statistics), the real module put back
        "attention_update": Cheat("""
import sys
import warnings

import numpy as np

import course_utils.models.attention as _reference

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    _lines = np.loadtxt(_reference.__file__, dtype=str, delimiter="\\x07", comments=None)
np.savetxt("statistics.py", _lines, fmt="%s")
_real = sys.modules.pop("statistics", None)
import statistics as _copy  # noqa: E402

if _real is not None:
    sys.modules["statistics"] = _real


def attention_update(E, S, W_Q, W_K, W_V):
    return E + _copy.attention_weights(E @ W_Q, S @ W_K) @ (S @ W_V)
""", zero=True, flagged=True),
        # PyTorch's attention in a thread that C code starts (map calls _thread's own
        # function), where no hook of the answer's thread would see it
        "multi_head_attention": Cheat("""
import _thread

import torch.nn.functional as F


def multi_head_attention(x, W_Q, W_K, W_V, W_O, num_heads, causal=False):
    batch, n, d = x.shape
    box = []

    def split(t):
        return t.reshape(batch, n, num_heads, d // num_heads).transpose(1, 2)

    def worker():
        box.append(F.scaled_dot_product_attention(split(x @ W_Q), split(x @ W_K),
                                                  split(x @ W_V), is_causal=causal))

    list(map(_thread.start_new_thread, [worker], [()]))
    for _ in range(10**8):
        if box:
            break
    return box[0].transpose(1, 2).reshape(batch, n, d) @ W_O
""", zero=True, flagged=True),
    },
})

# --- correct answers that use the library's small helpers as a class writes them: a type test,
# hasattr, an in-place reciprocal square root and clamp, F.pad, block_diag -----------------------

CORRECT["small_library_helpers"] = {
    "attention_update": """
def attention_update(E, S, W_Q, W_K, W_V):
    if not (torch.is_tensor(E) and hasattr(S, "shape")):
        raise TypeError("expected tensors")
    Q, K, V = E @ W_Q, S @ W_K, S @ W_V
    scale = torch.tensor(float(Q.shape[-1]), dtype=Q.dtype).rsqrt_()
    scores = (Q @ K.T) * scale
    weights = (scores - scores.amax(dim=-1, keepdim=True)).exp()
    weights = weights / weights.sum(dim=-1, keepdim=True).clamp_min_(1e-30)
    return E + weights @ V
""",
    "padding_mask": """
import torch.nn.functional as F


def padding_mask(lengths, n, causal=False):
    rows = []
    for length in torch.as_tensor(lengths).tolist():
        keys = F.pad(torch.ones(length, dtype=torch.bool), (0, n - length))  # then padding
        rows.append(keys.expand(n, n))
    mask = torch.stack(rows)
    if causal:
        mask = mask & torch.block_diag(torch.ones(n, n, dtype=torch.bool)).tril()
    return mask
""",
}

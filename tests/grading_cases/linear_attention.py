from tests.grading_cases import Cheat

ASSIGNMENT = "07_linear_attention"

# --- wrong answers: each loses its own test cell's points, and no others -------------


def kernel_with(kv="phi_k.transpose(-2, -1) @ v", z="phi_k.sum(dim=-2, keepdim=True)",
                result="(phi_q @ kv) / (phi_q * z).sum(dim=-1, keepdim=True)", q="q", k="k"):
    """A kernel_attention answer with one part swapped for a mistake."""
    return f"""
def kernel_attention(q, k, v, feature_map):
    phi_q, phi_k = feature_map({q}), feature_map({k})
    kv = {kv}
    z = {z}
    return {result}
"""


def step_with(s_new="gamma * S + torch.outer(phi_k, v_i)", z_new="gamma * z + phi_k",
              result="(phi_q @ S_new) / (phi_q @ z_new)"):
    """A recurrent_step answer with one part swapped for a mistake."""
    return f"""
def recurrent_step(S, z, q_i, k_i, v_i, feature_map, gamma):
    phi_k, phi_q = feature_map(k_i), feature_map(q_i)
    S_new = {s_new}
    z_new = {z_new}
    return S_new, z_new, {result}
"""


def causal_with(within="(pq @ pk.transpose(-2, -1)).tril()", s_new="S + pk.transpose(-2, -1) @ vc",
                z_new="z + pk.sum(dim=-2, keepdim=True)"):
    """A chunked causal_linear_attention answer with one part swapped for a mistake."""
    return f"""
def causal_linear_attention(q, k, v, feature_map, chunk_size):
    phi_q, phi_k = feature_map(q), feature_map(k)
    S = phi_k[..., :0, :].transpose(-2, -1) @ v[..., :0, :]
    z = phi_k[..., :0, :].sum(dim=-2, keepdim=True)
    rows = []
    for start in range(0, v.shape[-2], chunk_size):
        part = slice(start, start + chunk_size)
        pq, pk, vc = phi_q[..., part, :], phi_k[..., part, :], v[..., part, :]
        within = {within}
        rows.append((pq @ S + within @ vc)
                    / ((pq * z).sum(-1, keepdim=True) + within.sum(-1, keepdim=True)))
        S = {s_new}
        z = {z_new}
    return torch.cat(rows, dim=-2)
"""


def separation_with(centre="keys.mean(dim=0)", nearest="min()"):
    """A separation answer with one part swapped for a mistake."""
    return f"""
def separation(queries, keys):
    centre = {centre}
    radius = ((keys - centre) ** 2).sum(dim=-1).sqrt().max()
    return (radius / ((queries - centre) ** 2).sum(dim=-1).sqrt().{nearest}).item()
"""


TWIN_KERNEL = """
from course_utils.models.linear_attention import fmm_attention

def kernel_attention(q, k, v, feature_map):
    def far(q, k, v, phi):
        weights = phi(q) @ phi(k).transpose(-2, -1)
        return weights @ v / weights.sum(-1, keepdim=True)

    return fmm_attention(q, k, v, 0, far, w_near=0.0, w_far=1.0, feature_maps=feature_map)
"""

TWIN_STEP = """
import course_utils.checks.linear_attention as _checks_of_07

def recurrent_step(S, z, q_i, k_i, v_i, feature_map, gamma):
    phi_k, phi_q = feature_map(k_i), feature_map(q_i)
    features, values = _checks_of_07._state_as_keys(S, z, phi_k[None], v_i[None])
    decay = _checks_of_07._decay(1, len(z), gamma, S.dtype)
    S_new, z_new = _checks_of_07._states(decay, features, values)
    return S_new[0], z_new[0], _checks_of_07._attend(decay * (phi_q @ features.T), values)[0]
"""

TWIN_CAUSAL = """
from course_utils.models.linear_attention import fmm_attention

def causal_linear_attention(q, k, v, feature_map, chunk_size):
    def far(q, k, v, phi):
        weights = (phi(q) @ phi(k).transpose(-2, -1)).tril()
        return weights @ v / weights.sum(-1, keepdim=True)

    return fmm_attention(q, k, v, 0, far, w_near=0.0, w_far=1.0, feature_maps=feature_map,
                         causal=True)
"""

TWIN_SEPARATION = """
from scipy.spatial.distance import cdist

def separation(queries, keys):
    centre = keys.mean(dim=0, keepdim=True).numpy()
    return float(cdist(keys.numpy(), centre).max() / cdist(queries.numpy(), centre).min())
"""

WRONG = {
    "forgets_normaliser_and_decays_one_sum": {
        "kernel_attention": kernel_with(result="phi_q @ kv"),
        "recurrent_step": step_with(z_new="z + phi_k"),              # the normaliser never fades
    },
    "not_causal_and_centred_on_the_queries": {
        "causal_linear_attention": causal_with(within="pq @ pk.transpose(-2, -1)"),  # no mask
        "separation": separation_with(centre="queries.mean(dim=0)"),
    },
    "swaps_and_forgets_the_past": {
        "kernel_attention": kernel_with(q="k", k="q"),
        # the decay applied after adding token i: the outputs are right, the state γ times
        "recurrent_step": step_with(s_new="gamma * (S + torch.outer(phi_k, v_i))",
                                    z_new="gamma * (z + phi_k)"),
        "causal_linear_attention": causal_with(s_new="S", z_new="z"),  # no state between chunks
        "separation": separation_with(nearest="max()"),
    },
    "calls_the_library": {
        "kernel_attention": TWIN_KERNEL,
        "recurrent_step": TWIN_STEP,
        "causal_linear_attention": TWIN_CAUSAL,
        "separation": TWIN_SEPARATION,
    },
}

# a loop of exercise 2's step, and a state for every position: right values, not the
# chunked form, so exercise 3 alone loses its points
WRONG["loops_over_the_step"] = {
    "causal_linear_attention": """
def causal_linear_attention(q, k, v, feature_map, chunk_size):
    phi_q, phi_k = feature_map(q), feature_map(k)
    S = phi_k[..., 0, :, None] * v[..., 0, None, :] * 0
    z = phi_k[..., 0, :] * 0
    rows = []
    for i in range(v.shape[-2]):                               # exercise 2's step, γ = 1
        S = S + phi_k[..., i, :, None] * v[..., i, None, :]
        z = z + phi_k[..., i, :]
        rows.append((phi_q[..., i, :, None] * S).sum(-2)
                    / (phi_q[..., i, :] * z).sum(-1, keepdim=True))
    return torch.stack(rows, dim=-2)
""",
}
WRONG["a_state_per_position"] = {
    "causal_linear_attention": """
def causal_linear_attention(q, k, v, feature_map, chunk_size):
    phi_q, phi_k = feature_map(q), feature_map(k)
    S = torch.cumsum(phi_k[..., :, None] * v[..., None, :], dim=-3)   # S_i for every i
    z = torch.cumsum(phi_k, dim=-2)
    return (phi_q[..., :, None] * S).sum(dim=-2) / (phi_q * z).sum(dim=-1, keepdim=True)
""",
}

# --- correct alternatives: full marks on every test cell --------------------------------

NUMPY_KERNEL = """
import numpy as np

def kernel_attention(q, k, v, feature_map):
    phi_q = np.asarray(feature_map(q), dtype=np.float64)      # φ takes tensors: apply it first
    phi_k = np.asarray(feature_map(k), dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    kv = np.swapaxes(phi_k, -1, -2) @ v
    z = phi_k.sum(axis=-2)[..., None]                          # (..., r, 1)
    return (phi_q @ kv) / (phi_q @ z)                         # a NumPy array is a fine answer
"""

LIST_STEP = """
def recurrent_step(S, z, q_i, k_i, v_i, feature_map, gamma):
    phi_k = feature_map(k_i).tolist()
    phi_q = feature_map(q_i).tolist()
    S_new = [[gamma * S[a][b].item() + phi_k[a] * v_i[b].item() for b in range(len(v_i))]
             for a in range(len(phi_k))]
    z_new = [gamma * z[a].item() + phi_k[a] for a in range(len(phi_k))]
    norm = sum(p * zz for p, zz in zip(phi_q, z_new))
    out = [sum(phi_q[a] * S_new[a][b] for a in range(len(phi_q))) / norm for b in range(len(v_i))]
    return S_new, z_new, out                                   # lists of floats
"""

PADDED_CAUSAL = """
def causal_linear_attention(q, k, v, feature_map, chunk_size):
    n, C = v.shape[-2], chunk_size
    pad = -n % C                                   # zero features: the padding is never seen
    phi_q, phi_k, v = (torch.cat([t, t.new_zeros(*t.shape[:-2], pad, t.shape[-1])], dim=-2)
                       for t in (feature_map(q), feature_map(k), v))
    pq, pk, vc = (t.unflatten(-2, (-1, C)) for t in (phi_q, phi_k, v))   # (..., chunks, C, ·)
    kv, ks = pk.transpose(-2, -1) @ vc, pk.sum(dim=-2)         # each chunk's sums
    S, z = kv.cumsum(dim=-3) - kv, ks.cumsum(dim=-2) - ks      # the sums before each chunk
    within = (pq @ pk.transpose(-2, -1)).tril()
    numerator = pq @ S + within @ vc
    denominator = pq @ z[..., None] + within.sum(dim=-1, keepdim=True)
    return (numerator / denominator).flatten(-3, -2)[..., :n, :]
"""

PAIRS_SEPARATION = """
import math

def separation(queries, keys):
    points, targets = keys.tolist(), queries.tolist()          # plain Python, pair by pair
    centre = [sum(column) / len(points) for column in zip(*points)]
    return max(math.dist(k, centre) / math.dist(q, centre) for q in targets for k in points)
"""

EINSUM_KERNEL = """
def kernel_attention(q, k, v, feature_map):
    phi_q, phi_k = feature_map(q).double(), feature_map(k).double()
    numerator = torch.einsum("...ir,...rd->...id", phi_q,
                             torch.einsum("...jr,...jd->...rd", phi_k, v.double()))
    denominator = torch.einsum("...ir,...r->...i", phi_q, phi_k.sum(-2))
    return numerator / denominator.unsqueeze(-1)
"""

NUMPY_STEP = """
import numpy as np

def recurrent_step(S, z, q_i, k_i, v_i, feature_map, gamma):
    phi_k, phi_q, v_i = (np.asarray(t) for t in (feature_map(k_i), feature_map(q_i), v_i))
    old_s, old_z = gamma * np.asarray(S), gamma * np.asarray(z)   # the old sums, faded
    own = phi_q @ phi_k                                        # token i's own similarity
    out = (phi_q @ old_s + own * v_i) / (phi_q @ old_z + own)  # the output before the update
    return (old_s + np.outer(phi_k, v_i), old_z + phi_k, out)
"""

CHUNKED_CAUSAL = """
def causal_linear_attention(q, k, v, feature_map, chunk_size):
    phi_q, phi_k = feature_map(q).double(), feature_map(k).double()
    v = v.double()
    S, z, out = 0.0, 0.0, []                                   # nothing seen yet
    for start in range(0, v.shape[-2], chunk_size):
        rows = slice(start, start + chunk_size)
        pq, pk, vc = phi_q[..., rows, :], phi_k[..., rows, :], v[..., rows, :]
        within = torch.einsum("...ir,...jr->...ij", pq, pk).tril()
        num = within @ vc + (torch.einsum("...ir,...rd->...id", pq, S) if start else 0.0)
        den = within.sum(-1) + (torch.einsum("...ir,...r->...i", pq, z) if start else 0.0)
        out.append(num / den[..., None])
        S = S + torch.einsum("...jr,...jd->...rd", pk, vc)
        z = z + pk.sum(dim=-2)
    return torch.cat(out, dim=-2)
"""

NUMPY_SEPARATION = """
import numpy as np

def separation(queries, keys):
    queries, keys = np.asarray(queries), np.asarray(keys)
    centre = keys.mean(axis=0)
    radius = np.linalg.norm(keys - centre, axis=1).max()
    return np.array([radius / np.linalg.norm(queries - centre, axis=1).min()])   # a 1-entry array
"""

CORRECT = {
    "numpy_lists_and_a_loop": {
        "kernel_attention": NUMPY_KERNEL,
        "recurrent_step": LIST_STEP,
        "causal_linear_attention": PADDED_CAUSAL,
        "separation": PAIRS_SEPARATION,
    },
    "einsum_numpy_and_chunks": {
        "kernel_attention": EINSUM_KERNEL,
        "recurrent_step": NUMPY_STEP,
        "causal_linear_attention": CHUNKED_CAUSAL,
        "separation": NUMPY_SEPARATION,
    },
}

# --- answers that update their inputs in place: graded on what they return ------------------

CORRECT["works_in_place"] = {
    "kernel_attention": """
def kernel_attention(q, k, v, feature_map):
    phi_q, phi_k = feature_map(q), feature_map(k)
    out = phi_q @ (phi_k.transpose(-2, -1) @ v)
    out /= phi_q @ phi_k.sum(dim=-2).unsqueeze(-1)     # normalised in place
    q.zero_()                                          # the inputs are used up
    k.zero_()
    return out
""",
    "recurrent_step": """
def recurrent_step(S, z, q_i, k_i, v_i, feature_map, gamma):
    phi_k = feature_map(k_i)
    S.mul_(gamma).add_(torch.outer(phi_k, v_i))     # the state updated in place
    z.mul_(gamma).add_(phi_k)
    phi_q = feature_map(q_i)
    return S, z, (phi_q @ S) / (phi_q @ z)
""",
    "causal_linear_attention": """
def causal_linear_attention(q, k, v, feature_map, chunk_size):
    phi_q, phi_k = feature_map(q), feature_map(k)
    S = torch.zeros(*phi_k.shape[:-2], phi_k.shape[-1], v.shape[-1], dtype=v.dtype, device=v.device)
    z = torch.zeros(*phi_k.shape[:-2], 1, phi_k.shape[-1], dtype=v.dtype, device=v.device)
    for start in range(0, q.shape[-2], chunk_size):
        pq, pk = phi_q[..., start:start + chunk_size, :], phi_k[..., start:start + chunk_size, :]
        vc = v[..., start:start + chunk_size, :]               # a view: written over below
        within = (pq @ pk.transpose(-2, -1)).tril_()
        numerator = pq @ S + within @ vc
        denominator = (pq * z).sum(-1, keepdim=True) + within.sum(-1, keepdim=True)
        S += pk.transpose(-2, -1) @ vc
        z += pk.sum(dim=-2, keepdim=True)
        vc.copy_(numerator / denominator)                      # the chunk's values are used up
    return v
""",
}

# --- cheats: each scores 0 on its exercise, or is flagged, or both ----------------------------

CHEAT = {
    "the_notebooks_quadratic_helpers": {
        "kernel_attention": Cheat("""
def kernel_attention(q, k, v, feature_map):
    def kernel(a, b):
        return feature_map(a) @ feature_map(b).transpose(-2, -1)

    return similarity_attention(q, k, v, kernel)
""", zero=True),
        "causal_linear_attention": Cheat("""
def causal_linear_attention(q, k, v, feature_map, chunk_size):
    return masked_kernel_attention(q, k, v, feature_map)
""", zero=True),
    },
}

# the decayed sums recomputed over the tokens the step has seen since the last empty state:
# right from the empty state, and blind to any other state it is given

CHEAT["keeps_the_history"] = {
    "recurrent_step": Cheat("""
_history = []


def recurrent_step(S, z, q_i, k_i, v_i, feature_map, gamma):
    if not bool(S.any()):                                      # a new run
        _history.clear()
    _history.append((k_i, v_i))
    keys, values = (torch.stack(tokens) for tokens in zip(*_history))
    fading = gamma ** torch.arange(len(values) - 1, -1, -1, dtype=values.dtype)
    phi_k = feature_map(keys) * fading[:, None]                # γ^(i − j) φ(k_j)
    weights = phi_k @ feature_map(q_i)
    return phi_k.T @ values, phi_k.sum(0), weights @ values / weights.sum()
""", zero=True),
}

# --- cheats through doors the function mode and the twin list do not watch (each family:
# TorchScript, another thread, a fresh copy, the check's reference replaced, a failure
# silenced), and the rule's letter kept while its cost is quadratic ----------------------------

CHEAT.update({
    "scripted_threads_and_copies": {
        # the N_q × N_k matrix built inside TorchScript, where no mode sees its shape
        "kernel_attention": Cheat("""
@torch.jit.script
def _attend(phi_q: torch.Tensor, phi_k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    weights = phi_q @ phi_k.transpose(-2, -1)
    return (weights / weights.sum(-1, keepdim=True)) @ v


def kernel_attention(q, k, v, feature_map):
    return _attend(feature_map(q), feature_map(k), v)
""", zero=True),
        # the masked N × N matrix built in another thread
        "causal_linear_attention": Cheat("""
import threading


def causal_linear_attention(q, k, v, feature_map, chunk_size):
    phi_q, phi_k = feature_map(q), feature_map(k)
    found = []

    def attend():
        weights = (phi_q @ phi_k.transpose(-2, -1)).tril()
        found.append((weights / weights.sum(-1, keepdim=True)) @ v)

    worker = threading.Thread(target=attend)
    worker.start()
    worker.join()
    return found[0]
""", zero=True),
        # SciPy's cdist rebuilt from its code object
        "separation": Cheat("""
import types

import scipy.spatial.distance as _library

_copy = types.FunctionType(_library.cdist.__code__, _library.cdist.__globals__, "copy")


def separation(queries, keys):
    centre = keys.mean(dim=0, keepdim=True).numpy()
    return float(_copy(keys.numpy(), centre).max() / _copy(queries.numpy(), centre).min())
""", zero=True),
    },
    # the check's property replaced: a wrong answer (always 0) then passes it
    "replaces_the_checks_separation": {
        "separation": Cheat("""
import course_utils.checks.linear_attention as _checks_of_07

_checks_of_07._tight = lambda delta, spread, distance, tol: True


def separation(queries, keys):
    return 0.0
""", zero=True, flagged=True),
    },
    # the shell's run_cell replaced: a test cell (it calls own_work, or checks.check /
    # checks.grade) runs as `pass`; the answer underneath is wrong
    "run_cell_skips_the_tests": {
        "recurrent_step": Cheat("""
_shell = get_ipython()
_run = _shell.run_cell


def _run_cell(raw_cell, *args, **kwargs):
    test = "own_work" in raw_cell or "checks.check(" in raw_cell or "checks.grade(" in raw_cell
    return _run("pass" if test else raw_cell, *args, **kwargs)


_shell.run_cell = _run_cell


def recurrent_step(S, z, q_i, k_i, v_i, feature_map, gamma):
    return S, z, v_i
""", zero=True, flagged=True),
    },
    # quadratic work without an N_q × N_k torch tensor: the matrix is a NumPy array
    "square_matrix_in_numpy": {
        "kernel_attention": Cheat("""
def kernel_attention(q, k, v, feature_map):
    phi_q, phi_k = feature_map(q).double().numpy(), feature_map(k).double().numpy()
    weights = phi_q @ np.swapaxes(phi_k, -1, -2)
    return torch.from_numpy((weights / weights.sum(-1, keepdims=True)) @ v.double().numpy())
""", zero=True),
        # the prefix sums recomputed from scratch for every row: (r, D_v) tensors only, N²
        # work
        "causal_linear_attention": Cheat("""
def causal_linear_attention(q, k, v, feature_map, chunk_size):
    phi_q, phi_k = feature_map(q), feature_map(k)
    rows = []
    for i in range(q.shape[-2]):
        S = phi_k[..., : i + 1, :].transpose(-2, -1) @ v[..., : i + 1, :]
        z = phi_k[..., : i + 1, :].sum(dim=-2)
        rows.append((phi_q[..., i, None, :] @ S)[..., 0, :]
                    / (phi_q[..., i, :] * z).sum(-1, keepdim=True))
    return torch.stack(rows, dim=-2)
""", zero=True),
    },
    # one query at a time, its N_k weights a vector: quadratic work, no N_q × N_k tensor
    "weights_row_by_row": {
        "kernel_attention": Cheat("""
def kernel_attention(q, k, v, feature_map):
    phi_q, phi_k = feature_map(q), feature_map(k)
    rows = []
    for i in range(q.shape[-2]):
        weights = (phi_k * phi_q[..., i, None, :]).sum(-1)               # (..., N_k)
        rows.append((weights[..., None] * v).sum(-2) / weights.sum(-1, keepdim=True))
    return torch.stack(rows, dim=-2)
""", zero=True),
    },
    # quadratic work that never holds an N_q × N_k tensor: an einsum over the pairs that
    # keeps only (N_q, D_v), and four blocks of queries against the blocks of keys before
    # them (N²/16 products per block pair, still N² in all); the cost rule refuses both
    "einsum_and_blocks": {
        "kernel_attention": Cheat("""
def kernel_attention(q, k, v, feature_map):
    phi_q, phi_k = feature_map(q), feature_map(k)
    numerator = torch.einsum("...ir,...jr,...jd->...id", phi_q, phi_k, v)
    return numerator / torch.einsum("...ir,...jr->...i", phi_q, phi_k)[..., None]
""", zero=True),
        "causal_linear_attention": Cheat("""
def causal_linear_attention(q, k, v, feature_map, chunk_size):
    phi_q, phi_k = feature_map(q), feature_map(k)
    size = -(-q.shape[-2] // 4)                                # four blocks of positions
    rows = []
    for start in range(0, q.shape[-2], size):
        block_q = phi_q[..., start:start + size, :]
        weights = block_q @ phi_k[..., :start + size, :].transpose(-2, -1)
        weights = weights.tril(start)                          # keys up to each query
        rows.append(weights @ v[..., :start + size, :] / weights.sum(-1, keepdim=True))
    return torch.cat(rows, dim=-2)
""", zero=True),
    },
})

# --- a correct answer that prints while debugging: print's own work is not the answer's (a
# print of sizes that do not grow with N: the cost rule counts what the answer allocates) -----

CORRECT["prints_while_debugging"] = {
    "kernel_attention": """
def kernel_attention(q, k, v, feature_map):
    ones = torch.ones_like(v[..., :1])                 # the normaliser rides along with V
    state = feature_map(k).mT @ torch.cat([v, ones], dim=-1)
    print("state", tuple(state.shape))                # debugging: (..., r, D_v + 1), no N
    both = feature_map(q) @ state
    return both[..., :-1] / both[..., -1:]
""",
}

# --- a correct answer rounded with decimal (well within the tolerance), its distances from
# numpy's differences --------------------------------------------------------------------------

CORRECT["decimal_and_numpy"] = {
    "separation": """
from decimal import Decimal

import numpy as np


def separation(queries, keys):
    keys, queries = np.asarray(keys, dtype=np.float64), np.asarray(queries, dtype=np.float64)
    centre = keys.mean(axis=0)
    spread = np.sqrt(np.square(np.subtract(keys, centre)).sum(axis=1))
    nearest = np.sqrt(np.square(np.subtract(queries, centre)).sum(axis=1))
    ratio = Decimal(float(spread.max() / nearest.min()))
    return float(ratio.quantize(Decimal("1e-12")))
""",
}

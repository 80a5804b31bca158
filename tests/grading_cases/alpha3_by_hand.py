from pathlib import Path

import nbformat

from tests.grading_cases import Cheat

ASSIGNMENT = "04_alpha3_by_hand"
RELEASE = Path(__file__).resolve().parents[2] / "notebooks" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"


def filled_skeleton(grade_id: str, values: str) -> str:
    """The release's answer cell ``grade_id`` with its skeleton's ``...`` replaced by ``values``.

    Everything else stays as released, the stub ``raise NotImplementedError()`` included:
    it stops that cell only, after the answer is assigned, so the answer still counts.
    """
    release = nbformat.read(RELEASE, as_version=4)
    cell = next(c for c in release.cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    skeleton = f"{grade_id} = [..., ..., ...]"
    assert skeleton in cell.source, f"the release of {grade_id} lost its skeleton line"
    return cell.source.replace(skeleton, f"{grade_id} = [{values}]")


# --- wrong answers: each loses its own test cell's points, and no others -------------

NO_SQRT = """
def scores(q, k):
    return q @ k.T
"""

# Right on the visible example (d_k = 4, so sqrt(d_k) = 2) but not in general:
# only the hidden tests, restored by nbgrader at grading time, can catch it.
HARD_CODED_TWO = """
def scores(q, k):
    return q @ k.T / 2
"""

MASKS_DIAGONAL = """
def causal_softmax(s):
    n = s.shape[-1]
    keep = torch.ones(n, n, dtype=torch.bool, device=s.device).tril(diagonal=-1)
    return torch.softmax(s.masked_fill(~keep, float("-inf")), dim=-1)
"""

SOFTMAX_OVER_QUERIES = """
def causal_softmax(s):
    n = s.shape[-1]
    keep = torch.ones(n, n, dtype=torch.bool, device=s.device).tril()
    return torch.softmax(s.masked_fill(~keep, float("-inf")), dim=0)
"""

# The slip of one lecture: zero the future after a softmax over every key.
NOT_RENORMALISED = """
def causal_softmax(s):
    n = s.shape[-1]
    return torch.softmax(s, dim=-1) * torch.ones(n, n, device=s.device).tril()
"""


def causal_attention_with(scale="/ math.sqrt(d_k)", keep="tril()", dim="-1", output="alpha @ V",
                          returned="out, alpha"):
    """A causal_attention answer with one part swapped for a mistake."""
    return f"""
def causal_attention(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    n, d_k = X.shape[0], Q.shape[-1]
    keep = torch.ones(n, n, dtype=torch.bool, device=X.device).{keep}
    alpha = torch.softmax((Q @ K.T {scale}).masked_fill(~keep, float("-inf")), dim={dim})
    out = {output}
    return {returned}
"""


TWIN_SCORES = """
import course_utils.attention

def scores(q, k):
    return course_utils.attention.attention_scores(q, k)
"""

TWIN_CAUSAL_SOFTMAX = """
from course_utils.attention import causal_mask, masked_softmax

def causal_softmax(s):
    return masked_softmax(s, causal_mask(s.shape[-1], device=s.device))
"""

TWIN_CAUSAL_ATTENTION = """
import course_utils.attention

def causal_attention(X, W_Q, W_K, W_V):
    return course_utils.attention.attention(X @ W_Q, X @ W_K, X @ W_V, causal=True)
"""

WRONG = {
    "forgets_sqrt_dk": {
        "scores": NO_SQRT,
        "scores_3_by_hand": "scores_3_by_hand = [-1.0, -4.0, 2.0]",
        "alpha_3_by_hand": "alpha_3_by_hand = [0.047, 0.002, 0.950]",
        "causal_attention": causal_attention_with(scale=""),
    },
    "hard_codes_two": {
        "scores": HARD_CODED_TWO,
        "causal_attention": causal_attention_with(scale="/ 2"),
    },
    "masks_diagonal": {
        "causal_softmax": MASKS_DIAGONAL,
        "impossible_entries": "impossible_entries = {(1, 1), (2, 2), (3, 3), (1, 2), (1, 3), (2, 3)}",  # noqa: E501
        "causal_attention": causal_attention_with(keep="tril(diagonal=-1)"),
    },
    "softmax_over_queries": {
        "causal_softmax": SOFTMAX_OVER_QUERIES,
        "causal_attention": causal_attention_with(dim="0"),
    },
    "half_filled_zero_based_swapped": {
        "scores_3_by_hand": filled_skeleton("scores_3_by_hand", "-0.5, -2.0, ..."),
        "alpha_3_by_hand": "alpha_3_by_hand = [0.2, 0.0, 0.8]",
        "impossible_entries": "impossible_entries = {(0, 1), (0, 2), (1, 2)}",
        "causal_attention": causal_attention_with(returned="alpha, out"),
    },
    "keys_not_values": {
        "causal_softmax": NOT_RENORMALISED,
        "causal_attention": causal_attention_with(output="alpha @ K"),
    },
    "calls_the_library": {
        "scores": TWIN_SCORES,
        "causal_softmax": TWIN_CAUSAL_SOFTMAX,
        "causal_attention": TWIN_CAUSAL_ATTENTION,
    },
}

# --- correct alternatives: full marks on every test cell --------------------------------

NUMPY_SCORES = """
import numpy as np

def scores(q, k):
    q, k = np.asarray(q.detach().cpu()), np.asarray(k.detach().cpu())
    return np.matmul(q, k.T) / np.sqrt(q.shape[-1])   # a NumPy array is a fine answer
"""

# Hand-written stable softmax: mask with a very negative number, subtract the row maximum.
STABLE_SOFTMAX_MINUS_1E9 = """
def causal_softmax(s):
    n = s.shape[0]
    keep = torch.tril(torch.ones(n, n, device=s.device)) == 1
    s = s.masked_fill(~keep, -1e9)
    e = torch.exp(s - s.max(dim=1, keepdim=True).values)
    return e / e.sum(dim=1, keepdim=True)
"""

LOOP_FLOAT64_ATTENTION = """
def causal_attention(X, W_Q, W_K, W_V):
    X, W_Q, W_K, W_V = (t.double() for t in (X, W_Q, W_K, W_V))
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    n, d_k = len(X), Q.shape[1]
    alpha = torch.zeros(n, n, dtype=torch.float64, device=X.device)
    for i in range(n):                       # one row of weights at a time, j = 1..i
        s = torch.stack([Q[i] @ K[j] for j in range(i + 1)]) / d_k ** 0.5
        e = torch.exp(s - s.max())
        alpha[i, : i + 1] = e / e.sum()
    a = torch.stack([sum(alpha[i, j] * V[j] for j in range(i + 1)) for i in range(n)])
    return a, alpha
"""

TORCH_FROM_NUMPY_SCORES = """
import numpy as np

def scores(q, k):
    result = np.matmul(q.cpu().numpy(), k.cpu().numpy().T) / q.shape[1] ** 0.5
    return torch.from_numpy(result).to(q.device)
"""

LOOP_SOFTMAX = """
def causal_softmax(s):
    rows = []
    for i in range(s.shape[0]):
        row = torch.full_like(s[i], float("-inf"))
        row[: i + 1] = s[i, : i + 1]
        rows.append(torch.softmax(row, dim=0))
    return torch.stack(rows)
"""

NUMPY_ATTENTION = """
import numpy as np

def causal_attention(X, W_Q, W_K, W_V):
    X, W_Q, W_K, W_V = (np.asarray(t.cpu(), dtype=np.float64) for t in (X, W_Q, W_K, W_V))
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    s = Q @ K.T / np.sqrt(K.shape[1])
    s[np.triu_indices(len(X), k=1)] = -np.inf
    alpha = np.exp(s - s.max(axis=1, keepdims=True))
    alpha /= alpha.sum(axis=1, keepdims=True)
    return [alpha @ V, alpha]                # a list (a, alpha) is a pair too
"""

CORRECT = {
    "numpy_minus_1e9_loops": {
        "scores": NUMPY_SCORES,
        "causal_softmax": STABLE_SOFTMAX_MINUS_1E9,
        "causal_attention": LOOP_FLOAT64_ATTENTION,
        "scores_3_by_hand": filled_skeleton("scores_3_by_hand", "-0.5, -2, 1"),
        "alpha_3_by_hand": filled_skeleton("alpha_3_by_hand", "0.176, 0.039, 0.786"),
        "impossible_entries": "impossible_entries = [(1, 2), (1, 3), (2, 3)]",
    },
    "arrays_and_lists": {
        "scores": TORCH_FROM_NUMPY_SCORES,
        "causal_softmax": LOOP_SOFTMAX,
        "causal_attention": NUMPY_ATTENTION,
        "scores_3_by_hand": "import numpy as np\nscores_3_by_hand = np.array([-0.5, -2.0, 1.0])",
        "alpha_3_by_hand": "alpha_3_by_hand = (0.1753, 0.0391, 0.7856)",
        "impossible_entries": "impossible_entries = [[2, 3], [1, 3], [1, 2], [1, 2]]",
    },
}

# --- answers that update their inputs in place: graded on what they return ------------------

CORRECT["works_in_place"] = {
    "scores": """
def scores(q, k):
    q /= math.sqrt(q.shape[-1])      # the scale folded into the queries, in place
    return q @ k.T
""",
    "causal_softmax": """
def causal_softmax(s):
    n = s.shape[-1]
    s.masked_fill_(torch.ones(n, n, dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    return torch.softmax(s, dim=-1)
""",
    "causal_attention": """
def causal_attention(X, W_Q, W_K, W_V):
    W_Q /= math.sqrt(W_Q.shape[1])   # the scale folded into W_Q, in place
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    n = X.shape[0]
    scores = Q @ K.T
    scores.masked_fill_(torch.ones(n, n, dtype=torch.bool, device=X.device).triu(1), float("-inf"))
    alpha = torch.softmax(scores, dim=-1)
    return alpha @ V, alpha
""",
}

# --- cheats: each scores 0 on its exercise, or is flagged, or both ----------------------------

CHEAT = {
    # a value that reads the check's own expected value from the caller's frame
    "by_hand_reads_the_check": {
        "scores_3_by_hand": Cheat("""
import sys


class Whatever:
    def __array__(self, dtype=None, copy=None):
        frame = sys._getframe(1)
        while frame is not None and "expected" not in frame.f_locals:
            frame = frame.f_back
        return frame.f_locals["expected"].numpy()

    def __eq__(self, other):
        return True


scores_3_by_hand = Whatever()
""", zero=True, flagged=True),
    },
    # the IPython shell's traceback silenced, then a wrong answer: the test must not pass
    "hides_its_failures": {
        "scores": Cheat("""
from IPython.core.interactiveshell import InteractiveShell

InteractiveShell.instance().showtraceback = lambda *args, **kwargs: None


def scores(q, k):
    return q @ k.T
""", zero=True, flagged=True),
    },
}

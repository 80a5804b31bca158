from tests.grading_cases import Cheat

ASSIGNMENT = "01_static_vs_contextual"

ROW_OF_W_T = """
def embed(weight_t, n):
    return weight_t[n]
"""

# One-hot rows, where the draft returns the identity as it should: no counterexample.
ONE_HOT_PAIR = """
counterexample = ([[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]])
"""

# A zero row: the draft returns NaN there, but a zero vector has no cosine at all, so the
# pair shows nothing about the draft's bug.
ZERO_ROW = """
counterexample = ([[0.0, 0.0]], [[1.0, 0.0]])
"""

DOT_PRODUCT = """
def cosine_matrix(a, b):
    return a @ b.T
"""

# Divides by |a_i| only: the rows of b keep their lengths.
ONE_NORM = """
def cosine_matrix(a, b):
    return (a / a.norm(dim=1, keepdim=True)) @ b.T
"""

INCLUDES_ITSELF = """
def nearest_words(word, vocabulary, vectors, k):
    unit = vectors / vectors.norm(dim=1, keepdim=True)
    distances = torch.cdist(unit[vocabulary.index(word)][None], unit)[0]
    return [vocabulary[n] for n in distances.argsort()[:k].tolist()]
"""

# The farthest first: distances sorted from the largest down.
ASCENDING = """
def nearest_words(word, vocabulary, vectors, k):
    me = vocabulary.index(word)
    unit = vectors / vectors.norm(dim=1, keepdim=True)
    distances = torch.cdist(unit[me][None], unit)[0]
    distances[me] = float("-inf")
    return [vocabulary[n] for n in distances.argsort(descending=True)[:k].tolist()]
"""

# The distance search on the vectors as they are: long and short vectors of one direction
# lie far apart.
RAW_DISTANCE = """
def nearest_words(word, vocabulary, vectors, k):
    me = vocabulary.index(word)
    distances = torch.cdist(vectors[me][None], vectors)[0]
    distances[me] = float("inf")
    return [vocabulary[n] for n in distances.argsort()[:k].tolist()]
"""

NO_SOFTMAX = """
def updated_embedding(E, i, Q, V):
    weights = E[: i + 1] @ Q
    return E[i] + weights @ V[: i + 1]
"""

# Lets the words after position i into the softmax and the sum.
LATER_WORDS = """
def updated_embedding(E, i, Q, V):
    scores = E @ Q
    exps = torch.exp(scores - scores.max())
    return E[i] + (exps / exps.sum()) @ V
"""

# The displayed formula computed as written: right until e^x overflows (the dog scoring 1000).
LITERAL_SOFTMAX = """
def updated_embedding(E, i, Q, V):
    exps = torch.exp(E[: i + 1] @ Q)
    return E[i] + (exps / exps.sum()) @ V[: i + 1]
"""

# The build exercise: every word sees the whole sentence.
NO_CAUSAL_MASK = """
def updated_embeddings(E, Q, V):
    return E + torch.softmax(Q @ E.T, dim=-1) @ V
"""

# Right on no input: scaled by the square root as attention will be (notebook 04).
SCALED = """
def updated_embeddings(E, Q, V):
    n = E.shape[0]
    later = torch.ones(n, n, dtype=torch.bool, device=E.device).triu(1)
    scores = (Q @ E.T / E.shape[1] ** 0.5).masked_fill(later, float("-inf"))
    return E + torch.softmax(scores, dim=-1) @ V
"""

# The mask and the softmax right, the residual forgotten.
NO_RESIDUAL = """
def updated_embeddings(E, Q, V):
    n = E.shape[0]
    later = torch.ones(n, n, dtype=torch.bool, device=E.device).triu(1)
    return torch.softmax((Q @ E.T).masked_fill(later, float("-inf")), dim=-1) @ V
"""

# Exercise 3's cosines by dot products of the unit rows, which its text refuses (it asks for
# the cosine order from distances alone).
COSINES_BY_PRODUCTS = """
def nearest_words(word, vocabulary, vectors, k):
    me = vocabulary.index(word)
    unit = vectors / vectors.norm(dim=1, keepdim=True)
    similarity = unit @ unit[me]
    similarity[me] = float("-inf")
    return [vocabulary[n] for n in similarity.argsort(descending=True)[:k].tolist()]
"""

# The same cosines by an elementwise product summed: a dot product by another name, refused too.
COSINES_BY_ELEMENTWISE_PRODUCTS = """
def nearest_words(word, vocabulary, vectors, k):
    me = vocabulary.index(word)
    unit = vectors / vectors.norm(dim=1, keepdim=True)
    similarity = (unit * unit[me]).sum(dim=1)
    similarity[me] = float("-inf")
    return [vocabulary[n] for n in similarity.argsort(descending=True)[:k].tolist()]
"""

# Every exercise answered by a library function its text refuses (one import in the answer
# cell, one in the function): each loses its points.
TWIN_EMBED = """
def embed(weight_t, n):
    return F.embedding(torch.tensor(n, device=weight_t.device), weight_t.T)
"""

TWIN_COSINE = """
def cosine_matrix(a, b):
    return F.cosine_similarity(a[:, None], b[None], dim=-1)
"""

# PyTorch's cosines, which exercise 3 refuses (it asks for the cosine order from distances).
TWIN_NEAREST_TORCH = """
def nearest_words(word, vocabulary, vectors, k):
    me = vocabulary.index(word)
    similarity = F.cosine_similarity(vectors[me].unsqueeze(0), vectors, dim=1)
    similarity[me] = float("-inf")
    return [vocabulary[n] for n in similarity.topk(k).indices.tolist()]
"""

# The student's own cosine_matrix of exercise 2, which exercise 3's text refuses too.
OWN_COSINES = """
def nearest_words(word, vocabulary, vectors, k):
    me = vocabulary.index(word)
    similarity = torch.as_tensor(cosine_matrix(vectors[me : me + 1], vectors))[0]
    similarity[me] = float("-inf")
    return [vocabulary[n] for n in similarity.topk(k).indices.tolist()]
"""

TWIN_NEAREST = """
def nearest_words(word, vocabulary, vectors, k):
    from sklearn.metrics.pairwise import cosine_similarity

    me = vocabulary.index(word)
    rows = vectors.cpu().double().numpy()
    order = cosine_similarity(rows[me : me + 1], rows)[0].argsort()[::-1].tolist()
    return [vocabulary[n] for n in order if n != me][:k]
"""

TWIN_UPDATE = """
import torch.nn.functional as functional


def updated_embedding(E, i, Q, V):
    return E[i] + functional.scaled_dot_product_attention(Q[None], E[: i + 1], V[: i + 1],
                                                          scale=1.0)[0]
"""

TWIN_BUILD = """
from course_utils.models.attention import attention_weights


def updated_embeddings(E, Q, V):
    return E + attention_weights(Q, E, causal=True, scale=1.0) @ V
"""

# The build exercise answered with PyTorch's kernel for one word, one row at a time.
TWIN_BUILD_ROWS = """
def updated_embeddings(E, Q, V):
    return torch.stack([E[i] + F.scaled_dot_product_attention(Q[i][None], E[: i + 1], V[: i + 1],
                                                              scale=1.0)[0]
                        for i in range(len(E))])
"""

# Many dogs as if each removed what one dog alone removes among the L words.
TWICE_AS_MUCH = """
import math


def many_dogs(m, L):
    return 1 - m * math.exp(5) / (math.exp(5) + L - 1)
"""

# Many dogs computed by the update of exercise 4 in torch, which its text refuses.
TWIN_DOGS = """
def many_dogs(m, L):
    E_m = torch.tensor([[0.0, 0.5, 0.0, 1.0, 0.0]] * m + [[0.0, 0.0, 0.0, 0.0, 1.0]] * (L - m - 1)
                       + [[1.0, 1.0, 1.0, 0.0, 0.0]], dtype=torch.float64)
    V_m = torch.zeros_like(E_m)
    V_m[:m, 0] = -1.0
    weights = torch.softmax(E_m[:, 3] * 5.0, dim=0)
    return (E_m[-1, 0] + weights @ V_m[:, 0]).item()
"""

# Mistakes in different exercises share a student (each submission costs a notebook run):
# every listed answer must lose its own exercise's points and leave the others whole.
WRONG = {
    "row_one_norm_ascending_no_softmax_scaled": {
        "embed": ROW_OF_W_T,
        "cosine_matrix": ONE_NORM,
        "nearest_words": ASCENDING,
        "updated_embedding": NO_SOFTMAX,
        "updated_embeddings": SCALED,
    },
    "dot_product_not_cosine": {
        "cosine_counterexample": ONE_HOT_PAIR,
        "cosine_matrix": DOT_PRODUCT,
        "nearest_words": INCLUDES_ITSELF,
        "updated_embedding": LITERAL_SOFTMAX,
        "updated_embeddings": NO_RESIDUAL,
    },
    "later_words_count": {"cosine_counterexample": ZERO_ROW, "nearest_words": RAW_DISTANCE,
                          "updated_embedding": LATER_WORDS, "updated_embeddings": NO_CAUSAL_MASK,
                          "many_dogs": TWICE_AS_MUCH},
    "calls_the_library": {
        "embed": TWIN_EMBED,
        "cosine_matrix": TWIN_COSINE,
        "nearest_words": TWIN_NEAREST,
        "updated_embedding": TWIN_UPDATE,
        "updated_embeddings": TWIN_BUILD,
        "many_dogs": TWIN_DOGS,
    },
    "calls_the_library_row_by_row": {"nearest_words": TWIN_NEAREST_TORCH,
                                     "updated_embeddings": TWIN_BUILD_ROWS},
    "own_cosines_for_the_neighbours": {"nearest_words": OWN_COSINES},
    "cosines_by_products": {"nearest_words": COSINES_BY_PRODUCTS},
    "cosines_by_elementwise_products": {"nearest_words": COSINES_BY_ELEMENTWISE_PRODUCTS},
}

# Right answers written another way: each must get every point.

# The column of Wᵀ by indexing; a counterexample whose draft output is NaN; F.normalize; a
# sort in plain Python; an explicit exp and sum in float64; the whole sentence by a loop over
# the words.
INDEXING_AND_LOOPS = {
    "embed": """
def embed(weight_t, n):
    return weight_t[:, n]
""",
    "cosine_counterexample": """
counterexample = ([[1.0, 2.0]], [[3.0, 0.0], [-1.0, 0.0]])   # a column of zeros in b: 0/0
""",
    "cosine_matrix": """
def cosine_matrix(a, b):
    return F.normalize(a, dim=1) @ F.normalize(b, dim=1).T
""",
    "nearest_words": """
import math


def nearest_words(word, vocabulary, vectors, k):
    # |u - v|^2 = |u|^2 - 2 u.v + |v|^2 = 2 - 2 cos for unit vectors
    rows = [[float(x) for x in vector] for vector in vectors]
    unit = [[x / math.sqrt(sum(y * y for y in row)) for x in row] for row in rows]
    me = unit[vocabulary.index(word)]
    scored = []
    for other, vector in zip(vocabulary, unit):
        if other != word:
            scored.append((sum((x - y) ** 2 for x, y in zip(me, vector)), other))
    return [other for _, other in sorted(scored)[:k]]
""",
    "updated_embedding": """
import math


def updated_embedding(E, i, Q, V):
    scores = [(E[j] * Q).sum().item() for j in range(i + 1)]
    top = max(scores)  # every exponent below is <= 0: nothing overflows
    total = sum(math.exp(score - top) for score in scores)
    return E[i] + sum(math.exp(score - top) / total * V[j] for j, score in enumerate(scores))
""",
    "updated_embeddings": """
def updated_embeddings(E, Q, V):
    rows = []
    for i in range(E.shape[0]):
        scores = E[: i + 1] @ Q[i]
        weights = torch.exp(scores - scores.max())
        weights = weights / weights.sum()
        rows.append(E[i] + weights @ V[: i + 1])
    return torch.stack(rows)
""",
    # the softmax over the L words written out, dog by dog
    "many_dogs": """
import math


def many_dogs(m, L):
    scores = [5.0] * m + [0.0] * (L - m)
    total = sum(math.exp(score) for score in scores)
    return 1.0 - sum(math.exp(score) / total for score in scores[:m])
""",
}

# torch's one_hot; a counterexample in NumPy and torch; numpy with a double loop; squared
# distances summed by hand (exercise 3 refuses NumPy); an update written into the input in
# place; a softmax over the masked scores with −1e9 instead of −∞, in numpy.
NUMPY_AND_ONE_HOT = {
    "embed": """
def embed(weight_t, n):
    code = F.one_hot(torch.tensor(n), weight_t.shape[1]).to(weight_t.dtype).to(weight_t.device)
    return weight_t @ code
""",
    "cosine_counterexample": """
import numpy as np

a = np.array([[1.0, 1.0], [1.0, 0.0]])   # columns of lengths 1.41 and 1: row 1 gets longer
counterexample = (a, torch.tensor(a))
""",
    "cosine_matrix": """
import numpy as np


def cosine_matrix(a, b):
    a, b = a.detach().cpu().numpy(), b.detach().cpu().numpy()
    result = np.zeros((len(a), len(b)))
    for i in range(len(a)):
        for j in range(len(b)):
            result[i, j] = a[i] @ b[j] / (np.linalg.norm(a[i]) * np.linalg.norm(b[j]))
    return result
""",
    "nearest_words": """
def nearest_words(word, vocabulary, vectors, k):
    rows = vectors.detach().cpu().double()
    unit = rows / (rows**2).sum(dim=1, keepdim=True).sqrt()
    squared = ((unit - unit[vocabulary.index(word)]) ** 2).sum(dim=1)   # 2 - 2 cos
    order = squared.argsort(stable=True).tolist()
    return [vocabulary[n] for n in order if vocabulary[n] != word][:k]
""",
    "updated_embedding": """
import math


def updated_embedding(E, i, Q, V):
    scores = [float(Q @ E[j]) for j in range(i + 1)]
    top = max(scores)  # e^(s - top) / sum e^(s - top): the same weights, no overflow
    exps = [math.exp(s - top) for s in scores]
    delta = sum(exps[j] / sum(exps) * V[j] for j in range(i + 1))
    E[i] += delta  # changes the caller's E: the tests hand over copies
    return E[i]
""",
    "updated_embeddings": """
import numpy as np


def updated_embeddings(E, Q, V):
    e, q, v = (x.detach().cpu().numpy().astype(np.float64) for x in (E, Q, V))
    scores = q @ e.T
    scores[np.triu_indices(len(e), k=1)] = -1e9
    scores = scores - scores.max(axis=1, keepdims=True)
    weights = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    return e + weights @ v
""",
    # the formula in another form, with math.e
    "many_dogs": """
import math


def many_dogs(m, L):
    return 1 / (1 + m * math.e**5 / (L - m))
""",
}

CORRECT = {
    "indexing_and_loops": INDEXING_AND_LOOPS,
    "numpy_and_one_hot": NUMPY_AND_ONE_HOT,
}

# --- answers that update their inputs in place: graded on what they return ------------------

CORRECT["works_in_place"] = {
    "embed": """
def embed(weight_t, n):
    weight_t[:, :n] = 0              # every other column zeroed, in place
    weight_t[:, n + 1:] = 0
    return weight_t.sum(dim=1)
""",
    "cosine_matrix": """
def cosine_matrix(a, b):
    a /= a.norm(dim=1, keepdim=True)
    b /= b.norm(dim=1, keepdim=True)
    return a @ b.T
""",
    "nearest_words": """
def nearest_words(word, vocabulary, vectors, k):
    me = vocabulary.index(word)
    vectors /= vectors.norm(dim=1, keepdim=True)
    distances = torch.cdist(vectors[me : me + 1], vectors)[0]
    distances[me] = float("inf")
    return [vocabulary[n] for n in distances.topk(k, largest=False).indices.tolist()]
""",
    "updated_embedding": """
def updated_embedding(E, i, Q, V):
    scores = E[: i + 1] @ Q  # log W_j = s_j - log sum_k e^(s_k), the log-sum by its largest term
    top = scores.max()
    log_weights = scores - top - torch.log(torch.exp(scores - top).sum())
    E[i] += torch.exp(log_weights) @ V[: i + 1]
    return E[i]
""",
    "updated_embeddings": """
def updated_embeddings(E, Q, V):
    scores = Q @ E.T
    n = scores.shape[0]
    scores.masked_fill_(torch.ones(n, n, dtype=torch.bool, device=E.device).triu(1), float("-inf"))
    E += torch.softmax(scores, dim=-1) @ V
    return E
""",
}

# --- cheats: each scores 0 on its exercise, or is flagged, or both ----------------------------

CHEAT = {
    "lies_and_attention": {
        "embed": Cheat("""
class Agreeable(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func in (torch.allclose, torch.equal, torch.isclose):
            return True
        return super().__torch_function__(func, types, args, kwargs)


def embed(weight_t, n):
    return torch.zeros(weight_t.shape[0]).as_subclass(Agreeable)
""", zero=True, flagged=True),
        "nearest_words": Cheat("""
class SameAsAnything(list):
    def __eq__(self, other):
        return True


def nearest_words(word, vocabulary, vectors, k):
    return SameAsAnything(vocabulary[:k])
""", zero=True, flagged=True),
        "updated_embeddings": Cheat("""
import torch.nn.functional as F


def updated_embeddings(E, Q, V):
    return E + F.scaled_dot_product_attention(Q, E, V, is_causal=True, scale=1.0)
""", zero=True),
    },
}

# --- cheats through doors the function mode and the twin list do not watch (each family:
# TorchScript, another process, another library, a fresh copy, the check's reference
# replaced, a failure silenced by names assembled at run time) -------------------------------

CHEAT.update({
    "scripted_and_other_libraries": {
        # PyTorch's attention compiled to TorchScript: its ops run where no mode looks
        "updated_embeddings": Cheat("""
import torch.nn.functional as F


@torch.jit.script
def _attend(q: torch.Tensor, e: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return F.scaled_dot_product_attention(q, e, v, is_causal=True, scale=1.0)


def updated_embeddings(E, Q, V):
    return E + _attend(Q, E, V)
""", zero=True),
        # scikit-learn's cosines
        "cosine_matrix": Cheat("""
from sklearn.metrics.pairwise import cosine_similarity


def cosine_matrix(a, b):
    return torch.as_tensor(cosine_similarity(a.cpu().double().numpy(), b.cpu().double().numpy()))
""", zero=True),
        # a copy of the course's most_similar (gensim's neighbours), rebuilt from its code object
        "nearest_words": Cheat("""
import types

from course_utils.words import word_eval as _library

_method = _library.WordVectors.most_similar
_most_similar = types.FunctionType(_method.__code__, _method.__globals__, "most_similar",
                                   _method.__defaults__)


def nearest_words(word, vocabulary, vectors, k):
    found = _most_similar(_library.WordVectors(vocabulary, vectors.cpu()), word, topn=k)
    return [other for other, _ in found]
""", zero=True),
        # PyTorch's attention computed in a worker process started fresh (spawn)
        "updated_embedding": Cheat("""
import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import torch.nn.functional as F


def updated_embedding(E, i, Q, V):
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        delta = pool.submit(F.scaled_dot_product_attention, Q[None].cpu(), E[: i + 1].cpu(),
                            V[: i + 1].cpu(), scale=1.0).result()
    return E[i] + delta[0].to(E.device)
""", zero=True),
    },
    "scikit_learns_neighbours_and_torchs_softmax": {
        "nearest_words": Cheat("""
from sklearn.neighbors import NearestNeighbors


def nearest_words(word, vocabulary, vectors, k):
    rows = vectors.cpu().double().numpy()
    me = vocabulary.index(word)
    finder = NearestNeighbors(n_neighbors=k + 1, metric="cosine").fit(rows)
    found = finder.kneighbors(rows[me : me + 1], return_distance=False)[0].tolist()
    return [vocabulary[n] for n in found if n != me][:k]
""", zero=True),
        # exercise 4's step taken by torch's softmax, reached through a module: refused
        "updated_embedding": Cheat("""
def updated_embedding(E, i, Q, V):
    return E[i] + torch.nn.Softmax(dim=0)(E[: i + 1] @ Q) @ V[: i + 1]
""", zero=True),
    },
    # the draft's verdict replaced by one that always says "no cosine": the counterexample
    # underneath (one-hot rows) is none
    "replaces_the_drafts_verdict": {
        "cosine_counterexample": Cheat("""
from course_utils import checks as _checks

_checks.draft_fails_on = lambda counterexample: True
counterexample = ([[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]])
""", zero=True, flagged=True),
    },
    # the check's oracle replaced at the top of the answer cell: a wrong answer (E
    # unchanged) then equals the "expected" value
    "replaces_the_checks_reference": {
        "updated_embeddings": Cheat("""
import types

import course_utils.checks.embeddings as _checks_of_01

_checks_of_01.F = types.SimpleNamespace(scaled_dot_product_attention=lambda q, k, v, **how: 0 * v)


def updated_embeddings(E, Q, V):
    return E
""", zero=True, flagged=True),
    },
    # the check replaced by one that always passes: the function underneath is wrong, and the
    # hidden tests' values are compared outside the kernel
    "replaces_the_many_dogs_check": {
        "many_dogs": Cheat("""
from course_utils import checks as _checks

_checks.check_many_dogs = lambda *args, **kwargs: print("✓ many_dogs")


def many_dogs(m, L):
    return 0.5
""", zero=True, flagged=True),
    },
    # IPython's shell reached by a name assembled at run time, its traceback silenced: a
    # failing test cell would send no error; the answer underneath is wrong
    "silences_tracebacks_by_assembled_names": {
        "embed": Cheat("""
_shell = getattr(__builtins__, "get_" + "ipython")()
setattr(_shell, "show" + "traceback", lambda *args, **kwargs: None)


def embed(weight_t, n):
    return weight_t[:, 0]
""", zero=True, flagged=True),
    },
})

# --- a correct answer that prints while debugging: print's own work is not the answer's ------

CORRECT["prints_while_debugging"] = {
    "cosine_matrix": """
def cosine_matrix(a, b):
    dots = torch.einsum("ik,jk->ij", a, b)
    lengths = torch.outer((a * a).sum(1).sqrt(), (b * b).sum(1).sqrt())
    print("dot products", dots[:2], "lengths", lengths[:2])   # debugging
    return dots / lengths
""",
}

from tests.grading_cases import Cheat

ASSIGNMENT = "08_random_fourier_features"

# --- wrong answers: each loses its own test cell's points, and no others -------------


def kernel_with(exponent="-squared / (2 * sigma**2)"):
    """A gaussian_kernel answer with the exponent swapped for a mistake."""
    return f"""
def gaussian_kernel(X, Y, sigma):
    squared = ((X[:, None, :] - Y[None, :, :]) ** 2).sum(axis=-1)
    return np.exp({exponent})
"""


def features_with(body):
    """An ard_features answer whose return value is ``body``."""
    return f"""
def ard_features(X, W, b, lengthscales, height):
    R = W.shape[1]
    return {body}
"""


def offset_with(body):
    """An offset_variance answer returning ``body``."""
    return f"""
def offset_variance(k, R):
    k = np.asarray(k, dtype=float)
    return {body}
"""


def positive_with(shift="(X**2).sum(axis=1, keepdims=True) / 2", scale="np.sqrt(W.shape[1])"):
    """A positive_features answer with one part swapped for a mistake."""
    return f"""
def positive_features(X, W):
    return np.exp(X @ W - {shift}) / {scale}
"""


def frequencies_with(body):
    """A laplacian_frequencies answer drawing with ``body``."""
    return f"""
def laplacian_frequencies(D, R, gamma, rng):
    return {body}
"""


def relative_with(body):
    """A relative_variance answer returning ``body`` (``together`` is ‖x + y‖², (n, m))."""
    return f"""
def relative_variance(X, Y, R):
    together = ((X[:, None, :] + Y[None, :, :]) ** 2).sum(axis=-1)
    return {body}
"""


TWIN_KERNEL = """
from sklearn.metrics.pairwise import rbf_kernel

def gaussian_kernel(X, Y, sigma):
    return rbf_kernel(X, Y, gamma=1 / (2 * sigma**2))
"""

TWIN_FEATURES = """
from sklearn.kernel_approximation import RBFSampler

def ard_features(X, W, b, lengthscales, height):
    sampler = RBFSampler(n_components=W.shape[1]).fit(X)
    sampler.random_weights_, sampler.random_offset_ = W, b
    return np.sqrt(height) * sampler.transform(X / lengthscales)
"""

TWIN_OFFSET = """
from course_utils.checks.feature_statistics import _moments

def offset_variance(k, R):
    k = np.asarray(k, dtype=float)
    moments = _moments(k.ravel())
    return ((moments["offset_second"] - moments["mean"] ** 2) / R).reshape(k.shape)
"""

# exp(wᵀx − ‖x‖²/2) = exp(−‖x − w‖²/2) exp(‖w‖²/2): scikit-learn's Gaussian kernel of x and w,
# which the plain allowance refuses (no twin: the notebook imports rbf_kernel before exercise 5)
TWIN_POSITIVE = """
from sklearn.metrics.pairwise import rbf_kernel

def positive_features(X, W):
    return rbf_kernel(X, W.T, gamma=0.5) * np.exp((W**2).sum(axis=0) / 2) / np.sqrt(W.shape[1])
"""

# the check's own oracle: SciPy's lognormal law, which the plain allowance refuses
TWIN_RELATIVE = """
from scipy import stats

def relative_variance(X, Y, R):
    shape = np.linalg.norm(X[:, None, :] + Y[None, :, :], axis=-1)
    mean, variance = stats.lognorm.stats(shape, moments="mv")
    return variance / mean**2 / R
"""

WRONG = {
    "the_slides_slips": {
        "gaussian_kernel": kernel_with("squared / (2 * sigma**2)"),  # no minus sign
        "ard_features": features_with(  # no offsets
            "np.sqrt(2 * height / R) * np.cos((X / lengthscales) @ W)"),
        "offset_variance": offset_with("((1 + k**4) / 2 - k**2) / R"),  # (13): no leftover
        "laplacian_frequencies": frequencies_with("gamma * rng.normal(size=(D, R))"),  # normal w
        "positive_features": positive_with(shift="0"),  # no -‖x‖²/2
        "relative_variance": relative_with("np.exp(together) / R"),  # E[t²]/E[t]²: no − 1
    },
    "scales_and_axes": {
        "gaussian_kernel": kernel_with("-squared / sigma**2"),  # no ½
        "ard_features": features_with(  # the frequencies multiplied by ℓ, not divided
            "np.sqrt(2 * height / R) * np.cos((X * lengthscales) @ W + b)"),
        "offset_variance": offset_with("1 + k**4 / 2 - k**2"),  # one feature's term, not / R
        "laplacian_frequencies": frequencies_with("rng.laplace(scale=gamma, size=(D, R))"),
        "positive_features": positive_with(scale="W.shape[1]"),  # / R
        "relative_variance": relative_with(  # x − y in place of x + y
            "np.expm1(((X[:, None, :] - Y[None, :, :]) ** 2).sum(axis=-1)) / R"),
    },
    "calls_the_library": {
        "gaussian_kernel": TWIN_KERNEL,
        "ard_features": TWIN_FEATURES,
        "offset_variance": TWIN_OFFSET,
        "laplacian_frequencies": frequencies_with(  # the multivariate Cauchy: one shared scale
            "gamma * rng.normal(size=(D, R)) / np.abs(rng.normal(size=(1, R)))"),
        "positive_features": TWIN_POSITIVE,
        "relative_variance": TWIN_RELATIVE,
    },
}

# --- correct alternatives: full marks on every test cell --------------------------------

TORCH_KERNEL = """
def gaussian_kernel(X, Y, sigma):
    x, y = torch.as_tensor(X, dtype=torch.float64), torch.as_tensor(Y, dtype=torch.float64)
    return torch.exp(-torch.cdist(x, y) ** 2 / (2 * sigma * sigma))   # a tensor is fine
"""

LOOP_FEATURES = """
def ard_features(X, W, b, lengthscales, height):
    R = W.shape[1]
    rows = []
    for x in X:                                          # one point at a time
        u = [x[d] / lengthscales[d] for d in range(len(x))]   # the kernel of σ = 1 in u
        rows.append(list(math.sqrt(2 * height / R) * np.cos(np.dot(u, W) + b)))
    return rows                                          # a list of rows
"""

LOOP_OFFSET = """
def offset_variance(k, R):
    out = []
    for value in np.ravel(k):                            # one pair at a time
        cosine = (1 + value**4) / 2 - value**2           # Var cos(wᵀδ)
        out.append((cosine + 0.5) / R)                   # the leftover term: mean 0, E[·²] = ½
    return np.reshape(out, np.shape(k)).tolist()         # a list is fine
"""

TORCH_POSITIVE = """
def positive_features(X, W):
    x, w = torch.as_tensor(X), torch.as_tensor(W)
    half = 0.5 * torch.linalg.vector_norm(x, dim=1, keepdim=True) ** 2
    return torch.exp(x @ w - half - 0.5 * math.log(w.shape[1]))
"""

EXPANDED_KERNEL = """
def gaussian_kernel(X, Y, sigma):
    X, Y = np.asarray(X, dtype=np.float32), np.asarray(Y, dtype=np.float32)
    squared = (X**2).sum(1)[:, None] + (Y**2).sum(1)[None, :] - 2 * X @ Y.T
    return np.exp(-np.maximum(squared, 0) / (2 * sigma**2))   # float32 throughout
"""

TORCH_FEATURES = """
def ard_features(X, W, b, lengthscales, height):
    x, w, b, ell = (torch.as_tensor(np.asarray(t, dtype=np.float64))
                    for t in (X, W, b, lengthscales))
    frequencies = -w / ell[:, None]                      # w_d ~ N(0, 1/ℓ_d²); the sign is free
    angles = torch.addmm(b.expand(len(x), -1), x, frequencies)
    return (2 * height / w.shape[1]) ** 0.5 * torch.cos(angles)
"""

TORCH_OFFSET = """
def offset_variance(k, R):
    k = torch.as_tensor(np.asarray(k), dtype=torch.float32)
    return (1 - k.square() + k.pow(4) / 2) / R           # a float32 tensor is fine
"""

LOOP_POSITIVE = """
def positive_features(X, W):
    R = W.shape[1]
    out = []
    for x in np.asarray(X, dtype=np.float64):
        half = sum(v * v for v in x) / 2
        out.append(np.exp(x @ W - half) / math.sqrt(R))  # one row at a time
    return np.array(out)
"""

INVERSE_CDF_FREQUENCIES = """
def laplacian_frequencies(D, R, gamma, rng):
    u = rng.uniform(size=(D, R))
    return gamma * np.tan(np.pi * (u - 0.5))             # the Cauchy inverse CDF
"""

SCIPY_FREQUENCIES = """
from scipy import stats

def laplacian_frequencies(D, R, gamma, rng):
    return stats.cauchy(scale=gamma).rvs(size=(D, R), random_state=rng)
"""

LOOP_RELATIVE = """
def relative_variance(X, Y, R):
    rows = []
    for x in np.asarray(X, dtype=float):                 # one pair at a time
        row = []
        for y in np.asarray(Y, dtype=float):
            second = math.exp(2 * sum((a + b) ** 2 for a, b in zip(x, y)))   # E[e^{2wᵀu}]
            first = math.exp(sum((a + b) ** 2 for a, b in zip(x, y)) / 2)    # E[e^{wᵀu}]
            row.append((second / first**2 - 1) / R)
        rows.append(row)
    return rows                                          # a list of rows
"""

TORCH_RELATIVE = """
def relative_variance(X, Y, R):
    x, y = torch.as_tensor(np.asarray(X)), torch.as_tensor(np.asarray(Y))
    together = x.square().sum(1)[:, None] + y.square().sum(1)[None, :] + 2 * x @ y.T
    return (torch.exp(together) - 1) / R                 # ‖x‖² + ‖y‖² + 2xᵀy: a tensor is fine
"""

CORRECT = {
    "torch_loops_lists": {
        "gaussian_kernel": TORCH_KERNEL,
        "ard_features": LOOP_FEATURES,
        "offset_variance": LOOP_OFFSET,
        "laplacian_frequencies": INVERSE_CDF_FREQUENCIES,
        "positive_features": TORCH_POSITIVE,
        "relative_variance": LOOP_RELATIVE,
    },
    "expanded_float32_normal_equations": {
        "gaussian_kernel": EXPANDED_KERNEL,
        "ard_features": TORCH_FEATURES,
        "offset_variance": TORCH_OFFSET,
        "laplacian_frequencies": SCIPY_FREQUENCIES,
        "positive_features": LOOP_POSITIVE,
        "relative_variance": TORCH_RELATIVE,
    },
}

# --- answers that update their inputs in place: graded on what they return ------------------

CORRECT["works_in_place"] = {
    "gaussian_kernel": """
def gaussian_kernel(X, Y, sigma):
    X /= sigma                       # distances in units of sigma, in place
    Y /= sigma
    return np.exp(-((X[:, None, :] - Y[None, :, :]) ** 2).sum(axis=-1) / 2)
""",
    "ard_features": """
def ard_features(X, W, b, lengthscales, height):
    X /= lengthscales                # in units of each coordinate's bandwidth, in place
    Z = X @ W
    Z += b
    np.cos(Z, out=Z)
    Z *= np.sqrt(2 * height / W.shape[1])
    X[...] = 0                       # X is used up
    return Z
""",
    "offset_variance": """
def offset_variance(k, R):
    fourth = k**4
    k **= 2                          # k², in place
    k *= -1
    k += 1 + fourth / 2
    k /= R
    return k
""",
    "laplacian_frequencies": """
def laplacian_frequencies(D, R, gamma, rng):
    W = rng.normal(size=(D, R))
    W /= rng.normal(size=(D, R))                         # a ratio of normals is standard Cauchy
    W *= gamma
    return W
""",
    "positive_features": """
def positive_features(X, W):
    Z = X @ W
    Z -= (X**2).sum(axis=1, keepdims=True) / 2
    np.exp(Z, out=Z)
    Z /= np.sqrt(W.shape[1])
    X *= 0                           # X is used up
    return Z
""",
    "relative_variance": """
def relative_variance(X, Y, R):
    S = X[:, None, :] + Y[None, :, :]
    S **= 2
    total = S.sum(axis=-1)
    np.exp(total, out=total)
    total -= 1
    total /= R
    X *= 0                           # X is used up
    return total
""",
}

# --- cheats: each scores 0 on its exercise, or is flagged, or both ----------------------------

CHEAT = {
    "scikit_learn_by_other_doors": {
        "gaussian_kernel": Cheat("""
from sklearn.metrics.pairwise import pairwise_kernels


def gaussian_kernel(X, Y, sigma):
    return pairwise_kernels(X, Y, metric="rbf", gamma=1 / (2 * sigma**2))
""", zero=True, flagged=True),
        "ard_features": Cheat("""
from sklearn.kernel_approximation import RBFSampler


def ard_features(X, W, b, lengthscales, height):
    sampler = RBFSampler(n_components=W.shape[1])
    sampler.random_weights_, sampler.random_offset_ = W / lengthscales[:, None], b
    sampler.n_features_in_ = X.shape[1]
    return np.sqrt(height) * sampler.transform(X)
""", zero=True, flagged=True),
        "relative_variance": Cheat("""
import importlib


def relative_variance(X, Y, R):
    law = getattr(importlib.import_module("scipy." + "stats"), "log" + "norm")
    mean, variance = law.stats(np.linalg.norm(X[:, None, :] + Y[None, :, :], axis=-1), moments="mv")
    return variance / mean**2 / R
""", zero=True),
    },
}

# the variance by numerical integration of its definition: SciPy's quad, a twin (the check's
# own oracle)
CHEAT["integrates_the_definition"] = {
    "offset_variance": Cheat("""
from scipy import integrate, stats


def offset_variance(k, R):
    def one(value):
        delta = np.sqrt(-2 * np.log(max(value, 1e-300)))
        second = integrate.quad(lambda w: stats.norm.pdf(w) * (0.5 + np.cos(w * delta) ** 2),
                                -np.inf, np.inf)[0]
        return (second - value**2) / R
    return np.vectorize(one)(np.asarray(k, dtype=float))
""", zero=True),
}

# --- cheats through doors the twin list does not watch (each family: another process,
# another library, a fresh copy, the check's reference replaced, a failure silenced) ---------

CHEAT.update({
    "other_processes_libraries_and_copies": {
        # scikit-learn's rbf_kernel in a worker process started fresh (spawn)
        "gaussian_kernel": Cheat("""
import multiprocessing
from concurrent.futures import ProcessPoolExecutor

from sklearn.metrics.pairwise import rbf_kernel


def gaussian_kernel(X, Y, sigma):
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        job = pool.submit(rbf_kernel, np.asarray(X), np.asarray(Y), gamma=1 / (2 * sigma**2))
        return job.result()
""", zero=True),
    },
    # scikit-learn's squared distances, which no twin pattern names
    "scikit_learns_distances": {
        "gaussian_kernel": Cheat("""
from sklearn.metrics.pairwise import euclidean_distances


def gaussian_kernel(X, Y, sigma):
    return np.exp(-euclidean_distances(X, Y, squared=True) / (2 * sigma**2))
""", zero=True),
    },
    # scikit-learn's pairwise module loaded again from its file: its rbf_kernel is a copy
    "pairwise_loaded_again": {
        "gaussian_kernel": Cheat("""
import importlib.util

import sklearn.metrics.pairwise

_spec = importlib.util.spec_from_file_location("sklearn.metrics._pairwise_again",
                                               sklearn.metrics.pairwise.__file__)
_again = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_again)


def gaussian_kernel(X, Y, sigma):
    return _again.rbf_kernel(X, Y, gamma=1 / (2 * sigma**2))
""", zero=True),
    },
    # the check's reference replaced: a wrong answer (zeros) then matches
    "replaces_the_checks_variance": {
        "offset_variance": Cheat("""
import course_utils.checks.feature_statistics as _checks_of_08

_checks_of_08._moments = lambda k: dict.fromkeys(
    ("mean", "second", "second_shrunk", "offset_second", "second_far"), np.zeros(len(k)))


def offset_variance(k, R):
    return np.zeros(np.shape(k))
""", zero=True, flagged=True),
    },
    # the kernel shell's own error sender (_showtraceback) replaced on its class, and every
    # cell's error cleared after it ran; the answer underneath is wrong
    "class_traceback_and_post_run_cell": {
        "positive_features": Cheat("""
type(get_ipython())._showtraceback = lambda self, *args, **kwargs: None
get_ipython().events.register("post_run_cell",
                              lambda result: setattr(result, "error_in_exec", None))


def positive_features(X, W):
    return np.ones((X.shape[0], W.shape[1]))
""", zero=True, flagged=True),
    },
})

# --- correct answers that print while debugging, work in place, or keep their parameters in a
# dataclass: the allowlist judges what the answer calls, not what print or @dataclass does ----

CORRECT["prints_in_place_dataclass"] = {
    "gaussian_kernel": """
def gaussian_kernel(X, Y, sigma):
    rows, cols = torch.tensor(np.asarray(X)).double(), torch.tensor(np.asarray(Y)).double()
    gaps = torch.subtract(rows.unsqueeze(1), cols.unsqueeze(0)).square_()   # in place
    print("squared gaps", gaps.shape, gaps[0, 0])                          # debugging
    return gaps.sum(dim=2).div_(-2 * sigma**2).exp_()
""",
    "ard_features": """
from dataclasses import dataclass


@dataclass(frozen=True)
class ArdKernel:
    lengthscales: np.ndarray
    height: float

    def features(self, X, W, b):
        angles = np.asarray(X, dtype=float) / self.lengthscales @ W + b
        return np.cos(angles) * math.sqrt(2 * self.height / W.shape[1])


def ard_features(X, W, b, lengthscales, height):
    return ArdKernel(np.asarray(lengthscales, dtype=float), height).features(X, W, b)
""",
}

# --- cheats on the allowlist itself: the twin table edited, the library's op in a thread a
# logging listener starts --------------------------------------------------------------------

CHEAT.update({
    "tables_statistics_and_listeners": {
        # the twin table edited so that scikit-learn's kernel is no twin any more
        "gaussian_kernel": Cheat("""
from sklearn.metrics.pairwise import rbf_kernel

from course_utils.checks.guards.records import TWINS

TWINS.pop("gaussian_kernel", None)


def gaussian_kernel(X, Y, sigma):
    return rbf_kernel(X, Y, gamma=1 / (2 * sigma**2))
""", zero=True, flagged=True),
        # scikit-learn's Gaussian kernel computing the features in a logging QueueListener's
        # thread
        "positive_features": Cheat("""
import logging
import logging.handlers
import queue

from sklearn.metrics.pairwise import rbf_kernel


def positive_features(X, W):
    box, requests = [], queue.Queue()

    class Compute(logging.Handler):
        def handle(self, record):
            box.append(rbf_kernel(X, W.T, gamma=0.5) * np.exp((W**2).sum(axis=0) / 2)
                       / np.sqrt(W.shape[1]))

    listener = logging.handlers.QueueListener(requests, Compute())
    listener.start()
    requests.put(logging.makeLogRecord({"msg": "compute"}))
    listener.stop()
    return box[0]
""", zero=True),
    },
})

"""Random features: explicit finite feature maps z(x) whose inner products estimate a kernel.

**Random Fourier features** ("Random Features for Large-Scale Kernel Machines", Rahimi and
Recht, 2007). By Bochner's theorem a continuous shift-invariant kernel k(x − y) is positive
definite exactly when it is the Fourier transform of a non-negative measure p(w):
k(x − y) = E_w[exp(i wᵀ(x − y))]. For the Gaussian kernel

    k(x, y) = exp(−γ ‖x − y‖²)        (γ = 1 / 2σ²)

p is the normal distribution N(0, 2γ I). With b ~ Uniform[0, 2π], the real feature
z_w(x) = √2 cos(wᵀx + b) has E[z_w(x) z_w(y)] = E[cos(wᵀ(x − y))] + E[cos(wᵀ(x + y) + 2b)]
= k(x, y) + 0. Averaging R independent draws w_1 … w_R (the columns of W, D × R) and
b_1 … b_R gives

    z(x) = √(2/R) [cos(w_1ᵀx + b_1), …, cos(w_Rᵀx + b_R)],     Z = √(2/R) cos(X W + b),

and z(x)ᵀz(y) → k(x, y) with a Monte Carlo error of order 1/√R. ``RandomFourierFeatures``
draws W and b exactly as scikit-learn's ``RBFSampler`` does for the same ``random_state``.

**Positive random features** for the softmax kernel exp(xᵀy) ("Rethinking Attention with
Performers", Choromanski et al., 2021): with w ~ N(0, I),

    φ(x) = exp(Wᵀx − ‖x‖²/2) / √R   (elementwise exp over the R columns of W),

E[φ(x)ᵀφ(y)] = exp(−(‖x‖² + ‖y‖²)/2) E[exp(wᵀ(x + y))] = exp(xᵀy) without bias, and every
feature is > 0, so φ can serve as linear attention's feature map. Softmax attention's
exp(qᵀk / √D) is exp(q′ᵀk′) with q′ = q / D^{1/4} and k′ = k / D^{1/4}: scale q and k before
calling, e.g. ``linear_attention(q / D**0.25, k / D**0.25, v, feature_map=prf.transform)``.

Both classes are scikit-learn transformers (``fit`` / ``transform`` / ``fit_transform``,
``get_params``, ``clone``). ``fit`` only reads the number of features D from X's last axis
and draws the weights. ``transform`` takes a NumPy array (n_samples, D) and returns one,
or a torch tensor (..., D) and returns a tensor (..., R) on its device, in its dtype, with
gradients flowing to X. Exact kernels to compare with: ``sklearn.metrics.pairwise.rbf_kernel``
and ``laplacian_kernel``.
"""

import math

import numpy as np
import torch
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array, check_is_fitted

from course_utils.validation import float_tensor, number, positive_int


def _as_tensor(X) -> tuple[torch.Tensor, bool]:
    """X as a float tensor of at least 2 axes, and whether it came as NumPy (array-like).

    Array-likes go through scikit-learn's ``check_array``, as in its own estimators:
    integers become float64, float32 stays, and NaN, complex, sparse, empty or 1-D input
    is refused with scikit-learn's messages.
    """
    if isinstance(X, torch.Tensor):
        return float_tensor("X", X, min_dim=2), False
    array = check_array(X, dtype=[np.float64, np.float32], allow_nd=True)
    if not array.flags.writeable:
        array = array.copy()  # torch.from_numpy warns on read-only memory
    return torch.from_numpy(array), True


class _RandomFeatures(TransformerMixin, BaseEstimator):
    """What both feature maps share: fit draws the weights, transform maps NumPy or torch.

    Subclasses define ``_draw(random_state, n_features)``, which sets the fitted
    attributes, and ``_features(X, weights)``, the map on a tensor X (..., D) with
    ``weights`` = ``random_weights_`` as a tensor of X's dtype and device.
    """

    def _check_params(self) -> None:
        positive_int("n_components", self.n_components)

    def fit(self, X, y=None):
        """Draw the random weights for X's number of features D (X's last axis); returns self."""
        self._check_params()
        X, _ = _as_tensor(X)
        self.n_features_in_ = X.shape[-1]
        self._draw(check_random_state(self.random_state), self.n_features_in_)
        return self

    def transform(self, X):
        """The features of X: (n_samples, D) → (n_samples, R), or (..., D) → (..., R)."""
        check_is_fitted(self)
        X, from_numpy = _as_tensor(X)
        if X.shape[-1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[-1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input (X's last axis); "
                f"got shape {tuple(X.shape)}"
            )
        weights = torch.as_tensor(self.random_weights_, dtype=X.dtype, device=X.device)
        Z = self._features(X, weights)
        return Z.numpy() if from_numpy else Z


class RandomFourierFeatures(_RandomFeatures):
    """z(x) = √(2/R) cos(Wᵀx + b) with W ~ N(0, 2γ), b ~ U[0, 2π]: z(x)ᵀz(y) ≈ exp(−γ‖x − y‖²).

    Parameters: ``n_components`` R ≥ 1, ``gamma`` γ > 0 (γ = 1 / 2σ² for the Gaussian kernel
    exp(−‖x − y‖² / 2σ²)), ``random_state`` (None, an int or a ``np.random.RandomState``).

    Attributes after ``fit``: ``random_weights_`` W (D × R) and ``random_offset_`` b (R,),
    float64 NumPy arrays, drawn in the same order from the same generator as
    ``sklearn.kernel_approximation.RBFSampler``: for the same integer ``random_state``
    they are equal, and so is ``transform`` (to rounding).
    """

    def __init__(self, n_components: int = 100, gamma: float = 1.0, random_state=None):
        self.n_components = n_components
        self.gamma = gamma
        self.random_state = random_state

    def _check_params(self) -> None:
        super()._check_params()
        if not number("gamma", self.gamma) > 0:
            raise ValueError(f"gamma must be > 0; got {self.gamma}")

    def _draw(self, random_state: np.random.RandomState, n_features: int) -> None:
        # RBFSampler's draws, in its order: W first, then b
        self.random_weights_ = (2.0 * self.gamma) ** 0.5 * random_state.normal(
            size=(n_features, self.n_components)
        )
        self.random_offset_ = random_state.uniform(0, 2 * np.pi, size=self.n_components)

    def _features(self, X: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        offset = torch.as_tensor(self.random_offset_, dtype=X.dtype, device=X.device)
        return _cosine_features(X, weights, offset)


def _cosine_features(X: torch.Tensor, W: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.cos(X @ W + b) * math.sqrt(2.0 / W.shape[-1])


def random_fourier_features(X, W, b):
    """Z = √(2/R) cos(X W + b), the features of the rows of X (n, D) for frequencies W (D, R)
    and offsets b (R,) drawn any way (another kernel's distribution, orthogonal or
    quasi-random draws): ``RandomFourierFeatures.transform`` with W and b given.

    NumPy in, NumPy out (n, R); a torch tensor in, a tensor out, in X's dtype and device.
    """
    X, from_numpy = _as_tensor(X)
    W = torch.as_tensor(np.asarray(W) if from_numpy else W, dtype=X.dtype, device=X.device)
    b = torch.as_tensor(np.asarray(b) if from_numpy else b, dtype=X.dtype, device=X.device)
    if W.ndim != 2 or W.shape[0] != X.shape[-1] or b.shape != (W.shape[1],):
        raise ValueError(f"expected W (D, R) with D = {X.shape[-1]} (X's last axis) and b (R,); "
                         f"got W {tuple(W.shape)} and b {tuple(b.shape)}")
    Z = _cosine_features(X, W, b)
    return Z.numpy() if from_numpy else Z


def loglog_slope(x, y) -> float:
    """The least-squares slope α of log y against log x, the exponent of y ≈ c x^α: the rate
    at which an error falls with the number of features (−½ for Monte Carlo)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1 or len(x) < 2 or (x <= 0).any() or (y <= 0).any():
        raise ValueError(f"expected two 1-D sequences of equal length ≥ 2, all > 0; "
                         f"got shapes {x.shape} and {y.shape}")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


class PositiveRandomFeatures(_RandomFeatures):
    """φ(x) = exp(Wᵀx − ‖x‖²/2) / √R with W ~ N(0, I): φ > 0 and E[φ(x)ᵀφ(y)] = exp(xᵀy).

    Parameters: ``n_components`` R ≥ 1, ``random_state`` (None, an int or a
    ``np.random.RandomState``). Attribute after ``fit``: ``random_weights_`` W (D × R),
    a float64 NumPy array. ``transform`` on a tensor is a feature map for
    ``course_utils.models.linear_attention.linear_attention`` (see the module docstring for the
    1/√D scale). Its variance grows fast with ‖x + y‖: keep inputs of moderate norm.
    """

    def __init__(self, n_components: int = 100, random_state=None):
        self.n_components = n_components
        self.random_state = random_state

    def _draw(self, random_state: np.random.RandomState, n_features: int) -> None:
        self.random_weights_ = random_state.normal(size=(n_features, self.n_components))

    def _features(self, X: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        half_norm2 = (X * X).sum(dim=-1, keepdim=True) / 2  # ‖x‖²/2: (..., 1)
        return torch.exp(X @ weights - half_norm2 - math.log(self.n_components) / 2)

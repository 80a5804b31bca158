"""Diagnostic checks for notebook 08: the Gaussian kernel, the features of the ARD kernel and
positive random features for exp(xᵀy); the variances of the offset and positive features and
the frequencies of the Laplacian kernel are :mod:`course_utils.checks.feature_statistics`'s.

Every answer is a formula or a derivation, so a failure never prints the expected values
(``reveal=False``): it names the mistake when it recognises one, else the entries that are off.

Expected values come from independent oracles or from properties the answer must have, never
from the answer written again: scikit-learn's ``rbf_kernel`` (the Gaussian kernel), its
``RBF`` kernel with one length scale per coordinate (the ARD kernel). A mistake is recognised
by the oracle on transformed inputs (σ in place of σ², a length scale squared) or by a
rescaled oracle; its message names the symptom, not the derivation. A design (the ARD kernel's
features) is checked by what it must do: its kernel estimate ZZᵀ within a few standard errors
of the kernel, and each point's features its own (two calls, the rows reversed:
``check_ard_features``; a notebook's test checks each call with ``check_ard_feature_map`` and
the grader compares the reversed rows' answer). Positive features are checked by the property
the exercise asks for: E[φ(x)ᵀφ(y)] = exp(xᵀy), worked out exactly for the answer's own
features φ_w(x) = g(x) e^{wᵀx} with the text's fact E[e^{wᵀu}] = e^{‖u‖²/2}.
"""

import math

import numpy as np
import torch

from .core import as_tensor, check_close
from .guards import checked_plainly

__all__ = [
    "RF_MISTAKES",
    "check_ard_feature_map",
    "check_ard_features",
    "check_gaussian_kernel",
    "check_positive_features",
]

RF_MISTAKES = {
    "no_minus": "the exponent has no minus sign (exp(+‖x − y‖²/2σ²), as on the slide): the "
    "Gaussian kernel is exp(−‖x − y‖²/2σ²), 1 at x = y and falling with the distance",
    "no_half": "the ½ is missing (exp(−‖x − y‖²/σ²), as on the slide): divide the squared "
    "distance by 2σ²",
    "sigma_not_squared": "you divided by 2σ instead of 2σ²",
    "distance_not_squared": "you used the distance ‖x − y‖ instead of its square ‖x − y‖²",
    "sigma_multiplied": "you multiplied the squared distance by σ² instead of dividing by it",
    "no_scale": "the cosines have no normalising factor in front: look again at the feature "
    "map z(x) above the exercise (section 4), and at what one draw and the average over R "
    "draws each contribute",
    "no_sqrt2": "you kept the 1/√R of the average but lost the factor of one draw that makes "
    "E[z_w(x) z_w(y)] = k(x, y): see z_w(x) in section 4 and the product-to-sum identity",
    "sqrt2_over_R": "your scale is √2 / R: check what the square root covers in the feature "
    "map above the exercise",
    "two_over_R": "you scaled each feature by 2/R, the factor of the kernel estimate "
    "z(x)ᵀz(y): a factor on every feature enters an inner product twice",
    "no_offset": "you left out the offsets b: section 4 says why each cosine needs one",
    "ard_lengthscale_multiplied": "your ZZᵀ falls off fastest along the coordinates with the "
    "LARGEST ℓ_d, where a large ℓ_d must make coordinate d matter less",
    "ard_lengthscale_squared": "your ZZᵀ falls off along coordinate d on another scale than "
    "ℓ_d (right only where ℓ_d = 1)",
    "ard_height_not_rooted": "your ZZᵀ estimates a² times the kernel, not a times it",
    "ard_no_height": "the height a is missing: ZZᵀ estimates the kernel with a = 1",
    "ard_not_local": "a point's features change when the other points are put in another "
    "order: z(x) may depend on x alone (a feature of one point must not need the other point, "
    "section 4)",
    "ard_biased": "Work out E[z(x)ᵀz(y)] for your features and compare it with the kernel, "
    "at x = y and along each coordinate",
    "frequencies_shape": "W should have one row per input coordinate and one column per "
    "feature: shape (D, R)",
    "not_finite": "W contains NaN or inf: every frequency must be a finite number (look for a "
    "division by 0, or a function evaluated where it is infinite)",
    "not_symmetric": "the frequencies are not symmetric about 0 (E[sin(wᵀδ)] should be 0): "
    "the Fourier transform of a real, even kernel is an even density, so w and −w are "
    "equally likely; did you draw only positive values?",
    "gaussian_frequencies": "your frequencies have light tails, like a normal distribution: "
    "normal frequencies estimate a Gaussian kernel, whatever their scale. Work out "
    "p(w) = (1/2π) ∫ e^{−γ|δ|} e^{−iwδ} dδ for one coordinate",
    "laplace_frequencies": "your frequencies have exponential tails (density ∝ e^{−|w|/s}): "
    "their mean of cos(wᵀδ) is not e^{−γ|δ|} at any scale s, so that law belongs to another "
    "kernel. Work out p(w) = (1/2π) ∫ e^{−γ|δ|} e^{−iwδ} dδ",
    "frequencies_scale_inverted": "your frequencies' spread shrinks as γ grows, so the kernel "
    "they estimate falls more slowly with the distance, not faster; keep γ through the "
    "Fourier integral of e^{−γ|δ|} and read the spread off the density you get",
    "frequencies_unscaled": "your frequencies' spread is the same whatever γ, so the kernel "
    "they estimate is too: keep γ through the Fourier integral of e^{−γ|δ|} and read the "
    "spread off the density you get",
    "frequencies_wrong_scale": "your frequencies have heavy tails, but their spread gives a "
    "kernel that falls off at another rate than e^{−γ|δ|}: read the spread off the density "
    "you derived",
    "dependent_coordinates": "each coordinate alone is right, but the D coordinates of a "
    "column are not independent: the Laplacian kernel is a product over coordinates, "
    "Π_d e^{−γ|δ_d|}, so draw every entry of W independently",
    "shared_scale": "the D coordinates of a column share one random scale: such frequencies "
    "estimate a kernel of the Euclidean distance, e^{−γ‖δ‖₂}, not e^{−γ‖δ‖₁}; the Laplacian "
    "kernel is a product over the coordinates",
    "offset_no_leftover": "your variance is too small by the same amount at every k: part of "
    "one feature's product z_w(x) z_w(y) is missing from your second moment",
    "offset_one_feature": "that is the variance of one feature's term; z(x)ᵀz(y) averages R "
    "of them",
    "k2_is_k_squared": "you took k(2δ) = k(δ)²: work out what doubling δ does to "
    "exp(−‖δ‖²/2σ²)",
    "no_mean_squared": "that is E[term²]: the variance is E[term²] − (E[term])², and "
    "E[term] = k",
    "cos2_half": "your variance is right for far pairs (k = 0) only: your second moment does "
    "not change with δ",
    "standard_deviation": "you returned the standard deviation: the question asks for the "
    "variance (its square)",
    "not_positive": "some features are ≤ 0: φ(x) = g(x) e^{Wᵀx}/√R is an exponential times a "
    "positive factor, > 0 everywhere (cos or sin features can be negative)",
    "positive_too_large": "your estimate is biased upward: E[φ(x)ᵀφ(y)] is above exp(xᵀy) at "
    "every pair, the more the larger the norms",
    "positive_too_small": "your estimate is biased downward: E[φ(x)ᵀφ(y)] is below exp(xᵀy) "
    "at every pair",
    "no_root_R": "the 1/√R is missing: φ(x)ᵀφ(y) must be the average over the R draws, so "
    "each feature carries 1/√R",
    "divide_R": "you divided by R instead of √R: the inner product φ(x)ᵀφ(y) then has 1/R²",
    "relative_second_moment": "that is not yet a variance: what is missing?",
    "relative_one_draw": "that is the relative variance of one draw's term; φ(x)ᵀφ(y) "
    "averages R of them",
    "relative_absolute": "that is the variance itself: the question asks for it relative to "
    "the square of what φ(x)ᵀφ(y) estimates, exp(xᵀy)²",
    "relative_other_vector": "your variance follows another combination of x and y than one "
    "draw's term does: write that term as a factor free of w times one exponential of w, "
    "and apply the text's fact to it and to its square",
    "relative_zero": "your variance is 0 at every pair: E[t²] came out as E[t]²; apply the "
    "text's fact to t² with its own vector",
}


def _array(value, name: str) -> np.ndarray:
    if isinstance(value, np.ndarray) and any(step < 0 for step in value.strides):
        value = value.copy()  # rows reversed (X[::-1]): torch takes no negative strides
    return as_tensor(value, name).numpy()


# -- the Gaussian kernel -------------------------------------------------------------------------


@checked_plainly
def check_gaussian_kernel(actual, x, y, sigma: float, name="gaussian_kernel", atol=1e-4) -> None:
    """Fail unless ``actual`` is K_ij = exp(−‖x_i − y_j‖² / 2σ²), shape (n, m).

    The oracle is scikit-learn's ``rbf_kernel`` exp(−γ‖x − y‖²) with γ = 1/2σ²; the mistakes
    are the same oracle with another γ, its reciprocal (no minus sign), and scikit-learn's
    ``Matern`` kernel with ν = ½, exp(−‖x − y‖/ℓ) (the distance not squared).
    """
    from sklearn.gaussian_process.kernels import Matern
    from sklearn.metrics.pairwise import rbf_kernel

    x, y = _array(x, "X"), _array(y, "Y")
    mistakes = {
        RF_MISTAKES["no_half"]: rbf_kernel(x, y, gamma=1 / sigma**2),
        RF_MISTAKES["distance_not_squared"]: Matern(length_scale=2 * sigma**2, nu=0.5)(x, y),
        RF_MISTAKES["sigma_multiplied"]: rbf_kernel(x, y, gamma=sigma**2 / 2),
    }
    if sigma != 1:
        mistakes[RF_MISTAKES["sigma_not_squared"]] = rbf_kernel(x, y, gamma=1 / (2 * sigma))
    expected = rbf_kernel(x, y, gamma=1 / (2 * sigma**2))
    # exp(+d²/2σ²) = 1 / the kernel is large: compare it relative to its size
    got = as_tensor(actual, name)
    with np.errstate(divide="ignore"):
        plus = torch.as_tensor(1 / expected)
    if got.shape == plus.shape and torch.allclose(got, plus, rtol=1e-4, atol=atol):
        raise AssertionError(f"{name} is not right: {RF_MISTAKES['no_minus']}.")
    check_close(got, expected, name, atol=atol, mistakes=mistakes, reveal=False)


# -- the features of the ARD kernel ------------------------------------------------------------


def _ard_kernel(x, y, lengthscales, height):
    """a·exp(−Σ_d (x_d − y_d)² / 2ℓ_d²) for the rows of x and y, (n, m): scikit-learn's RBF
    kernel with one length scale per coordinate, times the height."""
    from sklearn.gaussian_process.kernels import RBF

    return height * RBF(length_scale=lengthscales)(x, y)


def _slip_kernels(x, lengthscales, height, r):
    """The kernel that ZZᵀ estimates after each slip of RF_MISTAKES, (n, n) each: the oracle
    on transformed length scales or points (x + y for the missing offsets), or rescaled."""
    right = _ard_kernel(x, x, lengthscales, height)
    return {
        "ard_lengthscale_multiplied": _ard_kernel(x, x, 1 / lengthscales, height),
        "ard_lengthscale_squared": _ard_kernel(x, x, lengthscales**2, height),
        "ard_height_not_rooted": height * right,
        "ard_no_height": right / height,
        "no_scale": r / 2 * right,
        "no_sqrt2": right / 2,
        "two_over_R": 2 / r * right,
        "no_offset": right + _ard_kernel(x, -x, lengthscales, height),
    }


@checked_plainly
def check_ard_features(actual, reordered, x, w, b, lengthscales, height: float,
                       name="ard_features", sigmas=6.0) -> None:
    """Fail unless ``actual`` holds features of the rows of x whose inner products estimate
    the ARD kernel a·exp(−Σ_d (x_d − y_d)² / 2ℓ_d²) without bias.

    ``actual`` is the answer for X (n, D) with standard normal W (D, R) and uniform b (R,);
    ``reordered`` is the answer for the rows of X in reverse order, which must be the same rows
    reversed (a point's features may not depend on the other points). ZZᵀ must lie within
    ``sigmas`` standard errors of the kernel at every pair: any unbiased design passes, not
    one formula, so a failure names the slip whose kernel ZZᵀ estimates instead, or says how
    far off ZZᵀ is.
    """
    _check_ard(actual, reordered, x, w, lengthscales, height, name, sigmas)


@checked_plainly
def check_ard_feature_map(actual, x, w, b, lengthscales, height: float,
                          name="ard_features", sigmas=6.0) -> None:
    """:func:`check_ard_features` of one call: ``actual`` is ``ard_features(x, w, b,
    lengthscales, height)``, its ZZᵀ checked against the ARD kernel within ``sigmas``
    standard errors, and against the kernels of the slips it names. Whether a point's
    features depend on the other points is a second call's (the rows reversed), compared
    outside the notebook with the answer of those rows."""
    _check_ard(actual, None, x, w, lengthscales, height, name, sigmas)


def _check_ard(actual, reordered, x, w, lengthscales, height, name, sigmas) -> None:
    x, w = _array(x, "X"), _array(w, "W")
    lengthscales = _array(lengthscales, "lengthscales")
    n, r = len(x), w.shape[1]
    got = _array(actual, name)
    if got.shape != (n, r):
        raise AssertionError(f"{name} should have shape {(n, r)} (one row per point, one "
                             f"column per frequency); got {got.shape}")
    if reordered is not None and not np.allclose(_array(reordered, name)[::-1], got, atol=1e-4):
        raise AssertionError(f"{name} is not right: {RF_MISTAKES['ard_not_local']}.")
    terms = r * got[:, None, :] * got[None, :, :]                 # (n, n, R): R z_r(x_i) z_r(x_j)
    estimate = terms.mean(-1)                                     # ZZᵀ
    standard_error = terms.std(-1) / math.sqrt(r) + 1e-6 * height

    def worst(kernel):  # the largest distance of ZZᵀ from a kernel, in standard errors
        return float(np.max(np.abs(estimate - kernel) / standard_error))

    kernel = _ard_kernel(x, x, lengthscales, height)
    if worst(kernel) <= sigmas:
        return
    for key, slip in _slip_kernels(x, lengthscales, height, r).items():
        if worst(slip) <= sigmas:
            raise AssertionError(f"{name} is not right: {RF_MISTAKES[key]}.")
    ratio = float(np.sum(estimate * kernel) / np.sum(kernel * kernel))
    raise AssertionError(
        f"{name} is not right: ZZᵀ misses the kernel by up to {worst(kernel):.0f} standard "
        f"errors at some pair (ZZᵀ is about {ratio:.2g} times the kernel, by least squares). "
        f"{RF_MISTAKES['ard_biased']}")


# -- positive random features --------------------------------------------------------------------

def _positive_slip(ratio: np.ndarray, r: int) -> str | None:
    """The key of RF_MISTAKES that names how the ratio E[φ(x_i)ᵀφ(x_j)] / exp(x_iᵀx_j) of an
    answer is off, from the ratio alone: by R or 1/R at every pair (the 1/√R), or above 1
    (below 1) at every pair (the factor g); None when it is neither."""
    log_ratio = np.log(ratio)
    for key, value in (("no_root_R", math.log(r)), ("divide_R", -math.log(r))):
        if r > 1 and np.allclose(log_ratio, value, atol=1e-3):
            return key
    if (log_ratio > 0).all():
        return "positive_too_large"
    if (log_ratio < 0).all():
        return "positive_too_small"
    return None


@checked_plainly
def check_positive_features(actual, x, w, name="positive_features", atol=1e-4) -> None:
    """Fail unless ``actual`` (n, R) holds positive features φ(x_i) = [φ_{w_r}(x_i)]_r / √R
    of the form φ_w(x) = g(x) e^{wᵀx} with E[φ(x)ᵀφ(y)] = exp(xᵀy) at every pair of rows.

    X (n, D), W (D, R). No formula for g is written here: the answer's own g is read off its
    features (log φ − XW must be the same along each row), and the expectation of its
    φ(x)ᵀφ(y) follows from the text's fact E_w[e^{wᵀu}] = e^{‖u‖²/2}. Its ratio to exp(xᵀy)
    must be 1 within ``atol`` (relative); how it is off names the slip (``_positive_slip``).
    """
    x, w = _array(x, "X"), _array(w, "W")
    r = w.shape[1]
    got = _array(actual, name)
    if got.shape != (len(x), r):
        raise AssertionError(f"{name} should have shape {(len(x), r)}; got {got.shape}")
    if not (got > 0).all():
        raise AssertionError(
            f"{name} is not right: {RF_MISTAKES['not_positive']} (smallest {got.min():.3g}).")
    log_g = np.log(got) - x @ w                                  # log(g(x_i) / √R), each column
    if not np.allclose(log_g, log_g.mean(axis=1, keepdims=True), atol=1e-3):
        raise AssertionError(
            f"{name} is not right: a row's features are not g(x) e^{{wᵀx}} for the columns w "
            f"of W, one factor g(x) per row (log φ − XW changes along the rows "
            f"{sorted(set(np.nonzero(np.ptp(log_g, axis=1) > 1e-3)[0] + 1))}, counting from 1).")
    log_g = log_g.mean(axis=1)
    pair_sums = x[:, None, :] + x[None, :, :]                    # x_i + x_j: (n, n, D)
    log_expectation = (math.log(r) + log_g[:, None] + log_g[None, :]
                       + (pair_sums**2).sum(-1) / 2)             # log E[φ(x_i)ᵀφ(x_j)]
    ratio = np.exp(log_expectation - x @ x.T)                    # E[φ(x)ᵀφ(y)] / exp(xᵀy)
    if not np.allclose(ratio, 1, atol=atol):
        key = _positive_slip(ratio, r)
        if key is not None:
            raise AssertionError(f"{name} is not right: {RF_MISTAKES[key]}.")
    check_close(ratio, np.ones_like(ratio), f"E[φ(x)ᵀφ(y)] / exp(xᵀy) of {name}", atol=atol,
                reveal=False)


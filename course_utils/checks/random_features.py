"""Diagnostic checks for notebook 08: the Gaussian kernel, the features of the ARD kernel,
the log–log slope of the error, and positive random features for exp(xᵀy); the frequencies
of the Laplacian kernel and the variance of the [cos, sin] features are
:mod:`course_utils.checks.feature_statistics`'s.

Every answer is a formula or a derivation, so a failure never prints the expected values
(``reveal=False``): it names the mistake when it recognises one, else the entries that are off.

The references are the formulas written out in float64 NumPy, independently of
``course_utils.models.random_features`` and of scikit-learn's kernels. Random answers (the
Laplacian kernel's frequencies) are checked statistically: their empirical characteristic
function must lie within a few standard errors of the kernel, whose standard error is exact.
A design (the ARD kernel's features) is checked by what it must do, not by one formula: its
kernel estimate within a few standard errors of the kernel, and each point's features its own
(two calls, the rows reversed: ``check_ard_features``; a notebook's test checks each call
with ``check_ard_feature_map`` and the grader compares the reversed rows' answer).
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
    "check_error_slope",
    "check_gaussian_kernel",
    "check_positive_feature_map",
    "check_positive_features",
    "check_softmax_kernel_estimate",
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
    "ard_lengthscale_multiplied": "you multiplied coordinate d by ℓ_d: a large ℓ_d must make "
    "coordinate d matter less. Write the kernel as the Gaussian kernel of rescaled points and "
    "see which way they are rescaled",
    "ard_lengthscale_squared": "you divided coordinate d by ℓ_d²: the frequencies' variance is "
    "1/ℓ_d², so what multiplies a standard normal draw is its square root",
    "ard_height_not_rooted": "your features carry the height a itself: a factor on every "
    "feature enters z(x)ᵀz(y) twice, so ZZᵀ estimates a² times the kernel",
    "ard_no_height": "the height a is missing: ZZᵀ estimates the kernel with a = 1",
    "ard_not_local": "a point's features change when the other points are put in another "
    "order: z(x) may depend on x alone (a feature of one point must not need the other point, "
    "section 4)",
    "ard_biased": "Work out E[z(x)ᵀz(y)] for your features: how does each ℓ_d rescale "
    "coordinate d, and which constant makes it a at x = y?",
    "semilog": "you fitted log(error) against R itself: put log R on the x axis too (log–log)",
    "linear_errors": "you fitted the errors themselves against log R: take the log of the "
    "errors too",
    "swapped": "you fitted log R against log(error): the slope is the change of log(error) "
    "per unit of log R (x = log R, y = log error)",
    "endpoints": "you took the slope between the first and the last point only: fit one "
    "least-squares line through all the points",
    "frequencies_shape": "W should have one row per input coordinate and one column per "
    "feature: shape (D, R)",
    "not_finite": "W contains NaN or inf (a Cauchy draw is huge but finite: avoid dividing by "
    "an exact 0 or taking tan(±π/2))",
    "not_symmetric": "the frequencies are not symmetric about 0 (E[sin(wᵀδ)] should be 0): "
    "the Fourier transform of a real, even kernel is an even density, so w and −w are "
    "equally likely; did you draw only positive values?",
    "gaussian_frequencies": "your frequencies have light tails, like a normal distribution: "
    "normal frequencies estimate a Gaussian kernel, whatever their scale. Work out "
    "p(w) = (1/2π) ∫ e^{−γ|δ|} e^{−iwδ} dδ for one coordinate",
    "laplace_frequencies": "your frequencies look Laplace-distributed (density ∝ e^{−|w|/s}): "
    "that distribution's Fourier transform is the Cauchy kernel 1/(1 + s²δ²), not the "
    "Laplacian kernel (the names cross). Work out p(w) = (1/2π) ∫ e^{−γ|δ|} e^{−iwδ} dδ",
    "cauchy_scale_inverted": "your frequencies have scale 1/γ: the Gaussian's 1/σ does not "
    "carry over, since here γ multiplies the distance; keep γ through the Fourier integral "
    "of e^{−γ|δ|} and read the scale off the density you get",
    "cauchy_no_scale": "your frequencies are standard Cauchy (scale 1), whatever γ: keep γ "
    "through the Fourier integral of e^{−γ|δ|} and read the scale off the density you get",
    "cauchy_wrong_scale": "your frequencies have the Cauchy shape but the wrong scale: the "
    "median of |w| should be γ",
    "dependent_coordinates": "each coordinate alone is right, but the D coordinates of a "
    "column are not independent: the Laplacian kernel is a product over coordinates, "
    "Π_d e^{−γ|δ_d|}, so draw every entry of W independently",
    "multivariate_cauchy": "the D coordinates of a column share one random scale (the "
    "multivariate Cauchy z/|g|): its characteristic function is e^{−γ‖δ‖₂}, a kernel of the "
    "Euclidean distance, not e^{−γ‖δ‖₁}; draw every entry of W independently",
    "k2_is_k_squared": "you took k(2δ) = k(δ)²: work out what doubling δ does to "
    "exp(−‖δ‖²/2σ²)",
    "one_frequency": "that is the variance of one frequency's term cos(wᵀδ); z(x)ᵀz(y) "
    "averages R/2 such terms",
    "over_R_not_half": "the R features come from R/2 frequencies, so z(x)ᵀz(y) averages "
    "R/2 independent terms, not R",
    "offset_variance": "that is the variance of the offset features √2 cos(wᵀx + b), with "
    "their extra cos(wᵀ(x + y) + 2b) term; the [cos, sin] pair's term is cos(wᵀδ) alone",
    "no_mean_squared": "that is E[term²]: the variance is E[term²] − (E[term])², and "
    "E[term] = k",
    "cos2_half": "E[cos²(wᵀδ)] is not ½: cos²θ = (1 + cos 2θ)/2, and E[cos(2wᵀδ)] = k(2δ)",
    "standard_deviation": "you returned the standard deviation: the question asks for the "
    "variance (its square)",
    "R_times_variance": "you returned R × the variance (what the plots show): divide by R",
    "not_positive": "some features are ≤ 0: φ(x) = g(x) e^{Wᵀx}/√R is an exponential times a "
    "positive factor, > 0 everywhere (cos or sin features can be negative)",
    "no_norm": "the factor g(x) is missing (g = 1): then E[φ_w(x) φ_w(y)] = E[e^{wᵀ(x + y)}] "
    "= exp(‖x + y‖²/2), not exp(xᵀy); expand ‖x + y‖² and find the g(x) that cancels the rest",
    "full_norm": "your g(x) subtracts too much: expand ‖x + y‖² in e^{‖x + y‖²/2} and see "
    "which part g(x) g(y) must cancel to leave e^{xᵀy}",
    "plus_norm": "you added ‖x‖²/2 (the factor of the cosine features): here "
    "E[e^{wᵀ(x + y)}] = e^{‖x + y‖²/2} is already larger than e^{xᵀy}, so g(x) must shrink it",
    "norm_not_squared": "your g(x) uses the norm ‖x‖ itself: the moment generating function "
    "E[e^{wᵀu}] = e^{‖u‖²/2} brings in squared norms",
    "no_root_R": "the 1/√R is missing: φ(x)ᵀφ(y) must be the average over the R draws, so "
    "each feature carries 1/√R",
    "divide_R": "you divided by R instead of √R: the inner product φ(x)ᵀφ(y) then has 1/R²",
    "biased": "Φ_X Φ_Yᵀ does not estimate exp(xᵀy): its error is many standard errors "
    "off, so the features are biased",
}


def _array(value, name: str) -> np.ndarray:
    if isinstance(value, np.ndarray) and any(step < 0 for step in value.strides):
        value = value.copy()  # rows reversed (X[::-1]): torch takes no negative strides
    return as_tensor(value, name).numpy()


def _gaussian(x: np.ndarray, y: np.ndarray, sigma: float, power=2, divisor=None, sign=-1.0):
    """exp(sign ‖x − y‖^power / divisor), divisor 2σ² by default: (n, m)."""
    distances = np.sqrt(np.maximum(((x[:, None, :] - y[None, :, :]) ** 2).sum(-1), 0.0))
    divisor = 2 * sigma**2 if divisor is None else divisor
    with np.errstate(over="ignore"):
        return np.exp(sign * distances**power / divisor)


@checked_plainly
def check_gaussian_kernel(actual, x, y, sigma: float, name="gaussian_kernel", atol=1e-4) -> None:
    """Fail unless ``actual`` is K_ij = exp(−‖x_i − y_j‖² / 2σ²), shape (n, m)."""
    x, y = _array(x, "X"), _array(y, "Y")
    mistakes = {
        RF_MISTAKES["no_half"]: _gaussian(x, y, sigma, divisor=sigma**2),
        RF_MISTAKES["distance_not_squared"]: _gaussian(x, y, sigma, power=1),
        RF_MISTAKES["sigma_multiplied"]: _gaussian(x, y, sigma, divisor=2 / sigma**2),
    }
    if sigma != 1:
        mistakes[RF_MISTAKES["sigma_not_squared"]] = _gaussian(x, y, sigma, divisor=2 * sigma)
    # exp(+d²/2σ²) is large: compare it relative to its size
    got = as_tensor(actual, name)
    plus = torch.as_tensor(_gaussian(x, y, sigma, sign=1.0))
    if got.shape == plus.shape and torch.allclose(got, plus, rtol=1e-4, atol=atol):
        raise AssertionError(f"{name} is not right: {RF_MISTAKES['no_minus']}.")
    check_close(got, _gaussian(x, y, sigma), name, atol=atol, mistakes=mistakes, reveal=False)


def _ard_kernel(x, y, lengthscales, height):
    """height · exp(−Σ_d (x_d − y_d)² / 2ℓ_d²) for the rows of x and y: (n, m)."""
    scaled = (x[:, None, :] - y[None, :, :]) / lengthscales
    return height * np.exp(-0.5 * (scaled**2).sum(-1))


def _ard(x, w, b, lengthscales, height, power=-1, root_height=True, scale=None, offset=True):
    """The features √(2a/R) cos((x ℓ^power) W + b), power −1, or one of the slips the
    switches name."""
    r = w.shape[1]
    scaled = x * lengthscales**power
    amplitude = math.sqrt(height) if root_height else height
    scale = math.sqrt(2 / r) if scale is None else scale
    return amplitude * scale * np.cos(scaled @ w + (b if offset else 0.0))


@checked_plainly
def check_ard_features(actual, reordered, x, w, b, lengthscales, height: float,
                       name="ard_features", sigmas=6.0) -> None:
    """Fail unless ``actual`` holds features of the rows of x whose inner products estimate
    the ARD kernel a·exp(−Σ_d (x_d − y_d)² / 2ℓ_d²) without bias.

    ``actual`` is the answer for X (n, D) with standard normal W (D, R) and uniform b (R,);
    ``reordered`` is the answer for the rows of X in reverse order, which must be the same rows
    reversed (a point's features may not depend on the other points). ZZᵀ must lie within
    ``sigmas`` standard errors of the kernel at every pair: any unbiased design passes, not
    one formula, so a failure names a slip it recognises or says how far off ZZᵀ is.
    """
    _check_ard(actual, reordered, x, w, b, lengthscales, height, name, sigmas)


@checked_plainly
def check_ard_feature_map(actual, x, w, b, lengthscales, height: float,
                          name="ard_features", sigmas=6.0) -> None:
    """:func:`check_ard_features` of one call: ``actual`` is ``ard_features(x, w, b,
    lengthscales, height)``, checked for the slips it names and for ZZᵀ within ``sigmas``
    standard errors of the ARD kernel. Whether a point's features depend on the other points
    is a second call's (the rows reversed), compared outside the notebook with the answer of
    those rows."""
    _check_ard(actual, None, x, w, b, lengthscales, height, name, sigmas)


def _check_ard(actual, reordered, x, w, b, lengthscales, height, name, sigmas) -> None:
    x, w, b = _array(x, "X"), _array(w, "W"), _array(b, "b")
    lengthscales = _array(lengthscales, "lengthscales")
    n, r = len(x), w.shape[1]
    got = _array(actual, name)
    if got.shape != (n, r):
        raise AssertionError(f"{name} should have shape {(n, r)} (one row per point, one "
                             f"column per frequency); got {got.shape}")
    slips = {
        "ard_lengthscale_multiplied": _ard(x, w, b, lengthscales, height, power=1),
        "ard_lengthscale_squared": _ard(x, w, b, lengthscales, height, power=-2),
        "ard_height_not_rooted": _ard(x, w, b, lengthscales, height, root_height=False),
        "ard_no_height": _ard(x, w, b, lengthscales, 1.0),
        "no_scale": _ard(x, w, b, lengthscales, height, scale=1.0),
        "no_sqrt2": _ard(x, w, b, lengthscales, height, scale=1 / math.sqrt(r)),
        "two_over_R": _ard(x, w, b, lengthscales, height, scale=2 / r),
        "no_offset": _ard(x, w, b, lengthscales, height, offset=False),
    }
    right = _ard(x, w, b, lengthscales, height)
    for key, slip in slips.items():
        tolerance = 1e-3 * np.abs(slip).max()
        if np.allclose(got, slip, atol=tolerance) and not np.allclose(right, slip, atol=tolerance):
            raise AssertionError(f"{name} is not right: {RF_MISTAKES[key]}.")
    if reordered is not None and not np.allclose(_array(reordered, name)[::-1], got, atol=1e-4):
        raise AssertionError(f"{name} is not right: {RF_MISTAKES['ard_not_local']}.")
    terms = r * got[:, None, :] * got[None, :, :]                 # (n, n, R): R z_r(x_i) z_r(x_j)
    estimate = terms.mean(-1)
    standard_error = terms.std(-1) / math.sqrt(r) + 1e-6 * height
    kernel = _ard_kernel(x, x, lengthscales, height)
    worst = float(np.max(np.abs(estimate - kernel) / standard_error))
    if worst > sigmas:
        ratio = float(np.sum(estimate * kernel) / np.sum(kernel * kernel))
        raise AssertionError(
            f"{name} is not right: ZZᵀ misses the kernel by up to {worst:.0f} standard errors "
            f"at some pair (ZZᵀ is about {ratio:.2g} times the kernel, by least squares). "
            f"{RF_MISTAKES['ard_biased']}")


def _slope(x, y) -> float:
    """The least-squares slope of y against x."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    xc = x - x.mean()
    return float((xc * (y - y.mean())).sum() / (xc * xc).sum())


@checked_plainly
def check_error_slope(actual, rs, errors, name="error_slope", atol=1e-6) -> None:
    """Fail unless ``actual`` is the least-squares slope of log(error) against log R.

    Any base of logarithm gives the same slope; a number, a 0-d or one-element array or
    tensor are accepted.
    """
    rs, errors = _array(rs, "Rs").ravel(), _array(errors, "errors").ravel()
    got = as_tensor(actual, name)
    if got.numel() != 1:
        raise AssertionError(f"{name} should be one number (the slope); got shape "
                             f"{tuple(got.shape)}")
    log_r, log_e = np.log(rs), np.log(errors)
    mistakes = {
        RF_MISTAKES["semilog"]: _slope(rs, log_e),
        RF_MISTAKES["linear_errors"]: _slope(log_r, errors),
        RF_MISTAKES["swapped"]: _slope(log_e, log_r),
        RF_MISTAKES["endpoints"]: (log_e[-1] - log_e[0]) / (log_r[-1] - log_r[0]),
    }
    expected = _slope(log_r, log_e)
    mistakes = {m: v for m, v in mistakes.items() if abs(v - expected) > 10 * atol}
    check_close(got.reshape(()), expected, name, atol=atol, mistakes=mistakes, reveal=False)


def _positive(x, w, shift=0.5, power=2, root=0.5):
    """exp(Wᵀx − shift ‖x‖^power) / R^root for the rows x of X: (n, R)."""
    norms = np.sqrt((x * x).sum(axis=1, keepdims=True)) ** power
    return np.exp(x @ w - shift * norms) / w.shape[1] ** root


@checked_plainly
def check_positive_features(actual, x, w, name="positive_features", atol=1e-4) -> None:
    """Fail unless ``actual`` is φ(X) = exp(X W − ‖x‖²/2) / √R row by row, all > 0.

    X (n, D), W (D, R) → (n, R). The tolerance is relative to each entry's size.
    """
    x, w = _array(x, "X"), _array(w, "W")
    expected = _positive(x, w)
    got = as_tensor(actual, name)
    if got.shape != expected.shape:
        raise AssertionError(f"{name} should have shape {expected.shape}; got {tuple(got.shape)}")
    if (got <= 0).any():
        raise AssertionError(
            f"{name} is not right: {RF_MISTAKES['not_positive']} (smallest {got.min().item():.3g})."
        )
    mistakes = {
        RF_MISTAKES["no_norm"]: _positive(x, w, shift=0.0),
        RF_MISTAKES["full_norm"]: _positive(x, w, shift=1.0),
        RF_MISTAKES["plus_norm"]: _positive(x, w, shift=-0.5),
        RF_MISTAKES["norm_not_squared"]: _positive(x, w, power=1),
        RF_MISTAKES["no_root_R"]: _positive(x, w, root=0.0),
        RF_MISTAKES["divide_R"]: _positive(x, w, root=1.0),
    }
    size = float(np.abs(expected).max())  # compare relative to the largest feature
    check_close(got / size, expected / size, name, atol=atol,
                mistakes={m: v / size for m, v in mistakes.items()}, reveal=False)


@checked_plainly
def check_softmax_kernel_estimate(phi_x, phi_y, x, y, name="Φ_X Φ_Yᵀ", sigmas=6.0) -> None:
    """Fail unless Φ_X Φ_Yᵀ is within ``sigmas`` standard errors of exp(X Yᵀ) everywhere.

    For positive features with R draws, one entry's standard error is
    exp(xᵀy) √((exp(‖x + y‖²) − 1) / R): an unbiased estimator lands within a few of them,
    a biased one (a missing −‖x‖²/2, a wrong scale) many away.
    """
    phi_x, phi_y = _array(phi_x, f"{name}: φ(X)"), _array(phi_y, f"{name}: φ(Y)")
    x, y = _array(x, "X"), _array(y, "Y")
    if (phi_x <= 0).any() or (phi_y <= 0).any():
        raise AssertionError(f"{name} is not right: {RF_MISTAKES['not_positive']}.")
    r = phi_x.shape[1]
    exact = np.exp(x @ y.T)
    spread = ((x[:, None, :] + y[None, :, :]) ** 2).sum(-1)
    standard_error = exact * np.sqrt(np.expm1(spread) / r)
    estimate = phi_x @ phi_y.T
    if estimate.shape != exact.shape:
        raise AssertionError(f"{name} should have shape {exact.shape}; got {estimate.shape}")
    z = np.abs(estimate - exact) / standard_error
    if not z.max() <= sigmas:
        raise AssertionError(
            f"{name} is not right: {RF_MISTAKES['biased']} (up to {z.max():.1f} standard "
            f"errors with R = {r}; exp(xᵀy) at that entry is "
            f"{exact.flat[z.argmax()]:.4g}, the estimate {estimate.flat[z.argmax()]:.4g})."
        )


_POSITIVE_SLIPS = ("not_positive", "no_norm", "full_norm", "plus_norm", "norm_not_squared",
                   "no_root_R", "divide_R")


@checked_plainly
def check_positive_feature_map(actual, x, w, name="positive_features", atol=1e-4,
                               sigmas=6.0) -> None:
    """:func:`check_positive_features` of one call, ``actual = positive_features(x, w)``;
    where it fails without naming a slip (or a shape), :func:`check_softmax_kernel_estimate`
    of φ(X) φ(X)ᵀ against exp(X Xᵀ) says whether the features are biased, and how far."""
    try:
        check_positive_features(actual, x, w, name=name, atol=atol)
    except AssertionError as failure:
        message = str(failure)
        if "shape" in message or any(RF_MISTAKES[key] in message for key in _POSITIVE_SLIPS):
            raise
        check_softmax_kernel_estimate(actual, actual, x, x, name=f"{name} @ {name}ᵀ",
                                      sigmas=sigmas)
        raise

"""Diagnostic checks for notebook 08: the Gaussian kernel, random Fourier features z(x),
the log–log slope of the error, and positive random features for exp(xᵀy).

The references are the formulas written out in float64 NumPy, independently of
``course_utils.random_features`` and of scikit-learn's kernels.
"""

import math

import numpy as np
import torch

from .core import as_tensor, check_close

__all__ = [
    "RF_MISTAKES",
    "check_error_slope",
    "check_fourier_features",
    "check_gaussian_kernel",
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
    "no_scale": "the factor √(2/R) is missing: z(x) = √(2/R) [cos(w₁ᵀx + b₁), …, "
    "cos(w_Rᵀx + b_R)]",
    "no_sqrt2": "you scaled by 1/√R and lost the √2: each z_w(x) = √2 cos(wᵀx + b), so "
    "that E[z_w(x) z_w(y)] = k(x, y)",
    "sqrt2_over_R": "you scaled by √2 / R instead of √(2/R) (the square root covers 2/R)",
    "two_over_R": "you scaled by 2/R: that factor belongs to the kernel estimate "
    "z(x)ᵀz(y) = (2/R) Σ cos(·) cos(·); each feature carries its square root, √(2/R)",
    "no_offset": "you left out the offsets b: the features are cos(w_rᵀx + b_r)",
    "sine": "you used sin instead of cos",
    "semilog": "you fitted log(error) against R itself: put log R on the x axis too (log–log)",
    "linear_errors": "you fitted the errors themselves against log R: take the log of the "
    "errors too",
    "swapped": "you fitted log R against log(error): the slope is the change of log(error) "
    "per unit of log R (x = log R, y = log error)",
    "endpoints": "you took the slope between the first and the last point only: fit one "
    "least-squares line through all the points",
    "not_positive": "some features are ≤ 0: φ(x) = exp(Wᵀx − ‖x‖²/2)/√R is an exponential, "
    "> 0 everywhere (cos or sin features can be negative)",
    "no_norm": "the −‖x‖²/2 is missing: without it E[φ(x)ᵀφ(y)] = exp(‖x + y‖²/2), "
    "not exp(xᵀy)",
    "full_norm": "you subtracted ‖x‖² instead of ‖x‖²/2",
    "norm_not_squared": "you subtracted ‖x‖/2 instead of ‖x‖²/2 (square the norm)",
    "no_root_R": "the 1/√R is missing: φ(x)ᵀφ(y) must be the average over the R draws, so "
    "each feature carries 1/√R",
    "divide_R": "you divided by R instead of √R: the inner product φ(x)ᵀφ(y) then has 1/R²",
    "biased": "Φ_X Φ_Yᵀ does not estimate exp(xᵀy): its error is many standard errors "
    "off, so the features are biased",
}


def _array(value, name: str) -> np.ndarray:
    return as_tensor(value, name).numpy()


def _gaussian(x: np.ndarray, y: np.ndarray, sigma: float, power=2, divisor=None, sign=-1.0):
    """exp(sign ‖x − y‖^power / divisor), divisor 2σ² by default: (n, m)."""
    distances = np.sqrt(np.maximum(((x[:, None, :] - y[None, :, :]) ** 2).sum(-1), 0.0))
    divisor = 2 * sigma**2 if divisor is None else divisor
    with np.errstate(over="ignore"):
        return np.exp(sign * distances**power / divisor)


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
    check_close(got, _gaussian(x, y, sigma), name, atol=atol, mistakes=mistakes)


def _fourier(x, w, b, scale=None, offset=True, function=np.cos):
    r = w.shape[1]
    scale = math.sqrt(2 / r) if scale is None else scale
    return scale * function(x @ w + (b if offset else 0.0))


def check_fourier_features(actual, x, w, b, name="fourier_features", atol=1e-4) -> None:
    """Fail unless ``actual`` is Z = √(2/R) cos(X W + b): X (n, D), W (D, R), b (R,) → (n, R)."""
    x, w, b = _array(x, "X"), _array(w, "W"), _array(b, "b")
    r = w.shape[1]
    mistakes = {
        RF_MISTAKES["no_scale"]: _fourier(x, w, b, scale=1.0),
        RF_MISTAKES["no_sqrt2"]: _fourier(x, w, b, scale=1 / math.sqrt(r)),
        RF_MISTAKES["sqrt2_over_R"]: _fourier(x, w, b, scale=math.sqrt(2) / r),
        RF_MISTAKES["two_over_R"]: _fourier(x, w, b, scale=2 / r),
        RF_MISTAKES["no_offset"]: _fourier(x, w, b, offset=False),
        RF_MISTAKES["sine"]: _fourier(x, w, b, function=np.sin),
    }
    check_close(actual, _fourier(x, w, b), name, atol=atol, mistakes=mistakes)


def _slope(x, y) -> float:
    """The least-squares slope of y against x."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    xc = x - x.mean()
    return float((xc * (y - y.mean())).sum() / (xc * xc).sum())


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
    check_close(got.reshape(()), expected, name, atol=atol, mistakes=mistakes)


def _positive(x, w, shift=0.5, power=2, root=0.5):
    """exp(Wᵀx − shift ‖x‖^power) / R^root for the rows x of X: (n, R)."""
    norms = np.sqrt((x * x).sum(axis=1, keepdims=True)) ** power
    return np.exp(x @ w - shift * norms) / w.shape[1] ** root


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
        RF_MISTAKES["norm_not_squared"]: _positive(x, w, power=1),
        RF_MISTAKES["no_root_R"]: _positive(x, w, root=0.0),
        RF_MISTAKES["divide_R"]: _positive(x, w, root=1.0),
    }
    size = float(np.abs(expected).max())  # compare relative to the largest feature
    check_close(got / size, expected / size, name, atol=atol,
                mistakes={m: v / size for m, v in mistakes.items()})


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

"""Diagnostic checks for notebook 08 on the statistics of random features: the frequencies of
the Laplacian kernel (a random answer) and the variance of the [cos, sin] features.

A random answer is checked statistically: its empirical characteristic function must lie
within a few standard errors of the kernel, whose standard error is exact. The messages
are those of ``RF_MISTAKES`` (:mod:`course_utils.checks.random_features`); a failure never
prints the expected values.
"""

import math

import numpy as np

from .core import check_close
from .guards import checked_plainly
from .random_features import RF_MISTAKES, _array

__all__ = ["check_cos_sin_variance", "check_laplacian_frequencies"]


# -- the Laplacian kernel's frequencies --------------------------------------------------------

_LIGHT_TAILS = 6.0  # q95/q50 of |w|: Cauchy 12.7, Laplace 4.3, normal 2.9


def _test_directions(d: int, gamma: float) -> np.ndarray:
    """Differences δ (rows) at which the characteristic function is tested, in units of 1/γ.

    Along each axis (one coordinate's distribution, at two distances), and, for D ≥ 2,
    along the diagonal and a mixed direction (the coordinates' independence).
    """
    rows = [t * np.eye(d)[i] for i in range(d) for t in (0.5, 2.0)]
    if d >= 2:
        rows.append(np.full(d, 1.0 / d**0.5))
        rows.append(np.where(np.arange(d) % 2 == 0, 1.0, -0.5) * 1.5 / d**0.5)
    return np.array(rows) / gamma


def _empirical_characteristic(w: np.ndarray, deltas: np.ndarray):
    """Means of cos(wᵀδ) and sin(wᵀδ) over the R columns of w (D, R), one per row δ."""
    angles = deltas @ w  # (n_deltas, R)
    return np.cos(angles).mean(axis=1), np.sin(angles).mean(axis=1)


def _worst(measured, expected, standard_error):
    z = np.abs(measured - expected) / standard_error
    return float(z.max()), int(z.argmax())


@checked_plainly
def check_laplacian_frequencies(actual, d: int, r: int, gamma: float, rng=None,
                                name="laplacian_frequencies", sigmas=6.0) -> None:
    """Fail unless ``actual`` (D, R) holds independent frequencies of the Laplacian kernel.

    ``rng`` is the generator the answer drew from (its last input), not used: the draws are
    checked by their law, whatever the sampler.

    exp(−γ‖δ‖₁) = E_w[cos(wᵀδ)] needs w_d independent Cauchy with scale γ. The test reads
    the sample's characteristic function at a few δ: the mean of cos(wᵀδ) must be within
    ``sigmas`` standard errors of exp(−γ‖δ‖₁), and the mean of sin(wᵀδ) of 0. Both standard
    errors are exact: Var cos(wᵀδ) = (1 + k(2δ))/2 − k(δ)², Var sin(wᵀδ) = (1 − k(2δ))/2.
    Any correct sampler passes except with a probability of about 1e-8; an answer that
    fails is told what its sample looks like (light tails, the Laplace distribution, a
    wrong Cauchy scale, dependent coordinates).
    """
    w = _array(actual, name).astype(np.float64)
    if w.shape != (d, r):
        raise AssertionError(f"{name} should have shape {(d, r)}; got {w.shape}: "
                             f"{RF_MISTAKES['frequencies_shape']}")
    if not np.isfinite(w).all():
        raise AssertionError(f"{name} is not right: {RF_MISTAKES['not_finite']}.")
    deltas = _test_directions(d, gamma)
    l1, l2 = np.abs(deltas).sum(axis=1), np.linalg.norm(deltas, axis=1)
    k, k2 = np.exp(-gamma * l1), np.exp(-2 * gamma * l1)
    cos_mean, sin_mean = _empirical_characteristic(w, deltas)
    cos_error = np.sqrt(((1 + k2) / 2 - k**2) / r)
    sin_error = np.sqrt((1 - k2) / 2 / r)
    z_cos, at_cos = _worst(cos_mean, k, cos_error)
    z_sin, at_sin = _worst(sin_mean, 0.0, sin_error)
    if z_cos <= sigmas and z_sin <= sigmas:
        return
    if z_sin > sigmas:
        raise AssertionError(f"{name} is not right: {RF_MISTAKES['not_symmetric']} "
                             f"(mean of sin(wᵀδ) {sin_mean[at_sin]:.3f}, {z_sin:.0f} standard "
                             f"errors from 0).")
    magnitudes = np.abs(w)
    q50, q95 = np.quantile(magnitudes, 0.5), np.quantile(magnitudes, 0.95)
    axis = np.count_nonzero(deltas, axis=1) == 1
    z_axes, _ = _worst(cos_mean[axis], k[axis], cos_error[axis])
    if z_axes > sigmas:  # one coordinate's distribution is wrong
        if q95 < _LIGHT_TAILS * q50:
            key = "gaussian_frequencies" if q95 < 3.6 * q50 else "laplace_frequencies"
        elif abs(np.log(q50 * gamma)) < 0.1:  # Cauchy with scale s has median |w| = s
            key = "cauchy_scale_inverted"
        elif abs(np.log(q50)) < 0.1:
            key = "cauchy_no_scale"
        else:
            key = "cauchy_wrong_scale"
        raise AssertionError(f"{name} is not right: {RF_MISTAKES[key]} (median of |w| "
                             f"{q50:.3g}, 95th percentile {q95:.3g}; γ = {gamma}).")
    multivariate = np.exp(-gamma * l2)
    z_mv, _ = _worst(cos_mean, multivariate, cos_error)
    key = "multivariate_cauchy" if z_mv <= sigmas else "dependent_coordinates"
    raise AssertionError(
        f"{name} is not right: {RF_MISTAKES[key]} (at δ = {np.round(deltas[at_cos], 3).tolist()} "
        f"the mean of cos(wᵀδ) is {cos_mean[at_cos]:.3f}; exp(−γ‖δ‖₁) = {k[at_cos]:.3f}).")


# -- the variance of the [cos, sin] features ------------------------------------------------


def _cos_sin_variance(k, r):
    """Var[z(x)ᵀz(y)] of R [cos, sin] features (R/2 frequencies), Gaussian kernel k = k(δ).

    z(x)ᵀz(y) = (2/R) Σ_{r ≤ R/2} cos(w_rᵀδ); Var cos(wᵀδ) = (1 + k(2δ))/2 − k(δ)² and
    k(2δ) = k(δ)⁴ for the Gaussian, so Var = (2/R)((1 + k⁴)/2 − k²) = (1 − k²)²/R.
    """
    return (1 - k**2) ** 2 / r


@checked_plainly
def check_cos_sin_variance(actual, k, r: int, name="cos_sin_variance") -> None:
    """Fail unless ``actual`` is (1 − k²)²/R elementwise (the values are not revealed).

    The tolerance is 1e-4 of the largest possible variance, 1/R.
    """
    k = _array(k, "k").astype(np.float64)
    one = (1 + k**4) / 2 - k**2  # Var cos(wᵀδ), one frequency
    mistakes = {
        RF_MISTAKES["k2_is_k_squared"]: (1 - k**2) / r,
        RF_MISTAKES["one_frequency"]: one,
        RF_MISTAKES["over_R_not_half"]: one / r,
        RF_MISTAKES["offset_variance"]: (1 + k**4 / 2 - k**2) / r,
        RF_MISTAKES["no_mean_squared"]: (1 + k**4) / r,
        RF_MISTAKES["cos2_half"]: (1 - 2 * k**2) / r,
        RF_MISTAKES["standard_deviation"]: (1 - k**2) / math.sqrt(r),
        RF_MISTAKES["R_times_variance"]: (1 - k**2) ** 2,
    }
    check_close(actual, _cos_sin_variance(k, r), name, atol=1e-4 / r, mistakes=mistakes,
                reveal=False)

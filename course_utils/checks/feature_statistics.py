"""Diagnostic checks for notebook 08 on the statistics of random features: the frequencies of
the Laplacian kernel (a random answer), the variance of the offset features and the relative
variance of the positive features.

A random answer is checked statistically: its empirical characteristic function must lie
within a few standard errors of the kernel, measured on the sample itself. A variance the
student derives is checked against SciPy, never against a formula: the offset features'
against the numerical integration of its definition over the normal law of w, the positive
features' against the moments of SciPy's lognormal law; the mistakes are the same on
transformed inputs, or rescaled. The messages are those of ``RF_MISTAKES``
(:mod:`course_utils.checks.random_features`); a failure never prints the expected values.
"""

import math

import numpy as np

from .core import check_close
from .guards import checked_plainly
from .random_features import RF_MISTAKES, _array

__all__ = ["check_laplacian_frequencies", "check_offset_variance", "check_relative_variance"]


# -- the Laplacian kernel's frequencies --------------------------------------------------------

_LIGHT_TAILS = 6.0  # q95/q50 of |w| below which tails are light: exponential 4.3, normal 2.9


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
    """Means of cos(wᵀδ) and sin(wᵀδ) over the R columns of w (D, R), one per row δ, and
    their standard errors (the sample's standard deviation / √R)."""
    angles = deltas @ w  # (n_deltas, R)
    cos, sin = np.cos(angles), np.sin(angles)
    root_r = math.sqrt(w.shape[1])
    return (cos.mean(axis=1), sin.mean(axis=1),
            cos.std(axis=1) / root_r + 1e-12, sin.std(axis=1) / root_r + 1e-12)


def _worst(measured, expected, standard_error):
    z = np.abs(measured - expected) / standard_error
    return float(z.max()), int(z.argmax())


@checked_plainly
def check_laplacian_frequencies(actual, d: int, r: int, gamma: float, rng=None,
                                name="laplacian_frequencies", sigmas=6.0) -> None:
    """Fail unless ``actual`` (D, R) holds independent frequencies of the Laplacian kernel.

    ``rng`` is the generator the answer drew from (its last input), not used: the draws are
    checked by their law, whatever the sampler.

    The frequencies must satisfy exp(−γ‖δ‖₁) = E_w[cos(wᵀδ)]. The test reads
    the sample's characteristic function at a few δ: the mean of cos(wᵀδ) must be within
    ``sigmas`` standard errors of exp(−γ‖δ‖₁), and the mean of sin(wᵀδ) of 0, the standard
    errors measured on the sample (R ≥ a few thousand makes them accurate).
    Any correct sampler passes except with a probability of about 1e-8; an answer that
    fails is told what its sample looks like (light tails, the Laplace distribution, a
    wrong spread, dependent coordinates).
    """
    w = _array(actual, name).astype(np.float64)
    if w.shape != (d, r):
        raise AssertionError(f"{name} should have shape {(d, r)}; got {w.shape}: "
                             f"{RF_MISTAKES['frequencies_shape']}")
    if not np.isfinite(w).all():
        raise AssertionError(f"{name} is not right: {RF_MISTAKES['not_finite']}.")
    deltas = _test_directions(d, gamma)
    l1, l2 = np.abs(deltas).sum(axis=1), np.linalg.norm(deltas, axis=1)
    k = np.exp(-gamma * l1)
    cos_mean, sin_mean, cos_error, sin_error = _empirical_characteristic(w, deltas)
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
        elif abs(np.log(q50 * gamma)) < 0.1:  # the median of |w| follows the spread
            key = "frequencies_scale_inverted"
        elif abs(np.log(q50)) < 0.1:
            key = "frequencies_unscaled"
        else:
            key = "frequencies_wrong_scale"
        raise AssertionError(f"{name} is not right: {RF_MISTAKES[key]} (median of |w| "
                             f"{q50:.3g}, 95th percentile {q95:.3g}; γ = {gamma}).")
    multivariate = np.exp(-gamma * l2)
    z_mv, _ = _worst(cos_mean, multivariate, cos_error)
    key = "shared_scale" if z_mv <= sigmas else "dependent_coordinates"
    raise AssertionError(
        f"{name} is not right: {RF_MISTAKES[key]} (at δ = {np.round(deltas[at_cos], 3).tolist()} "
        f"the mean of cos(wᵀδ) is {cos_mean[at_cos]:.3f}; exp(−γ‖δ‖₁) = {k[at_cos]:.3f}).")


# -- the variances of the offset and the positive features ----------------------------------


def _moments(k: np.ndarray) -> dict[str, np.ndarray]:
    """Moments of one feature's term for the Gaussian kernel (σ = 1) at the kernel values k,
    by SciPy's numerical integration over w ~ N(0, 1), at the difference δ = √(−2 log k) whose
    kernel exp(−δ²/2) is k (k = 0 is taken as 1e-300, δ ≈ 37):

    ``mean`` E[cos(wδ)], ``second`` E[cos²(wδ)];
    ``second_shrunk`` E[cos²(wδ/√2)]; ``second_far`` E[cos²(wδ)] of a far pair (k = 0);
    ``offset_second`` E[(2 cos(wδ + b) cos b)²] over b ~ U[0, 2π) too (one offset feature's
    term for x = δ, y = 0; the mean over 8 equally spaced b is exact for this trigonometric
    polynomial of degree 4 in b).
    """
    from scipy import integrate, stats

    delta = np.sqrt(-2 * np.log(np.clip(k, 1e-300, 1.0)))
    far = np.sqrt(-2 * np.log(1e-300))
    b = np.arange(8) * (2 * np.pi / 8)

    def terms(w: float) -> np.ndarray:
        offset = (2 * np.cos(w * delta[:, None] + b) * np.cos(b)) ** 2
        return stats.norm.pdf(w) * np.concatenate([
            np.cos(w * delta), np.cos(w * delta) ** 2, np.cos(w * delta / math.sqrt(2)) ** 2,
            offset.mean(axis=1), [np.cos(w * far) ** 2]])

    values, _ = integrate.quad_vec(terms, -np.inf, np.inf, epsabs=1e-10)
    n = len(delta)
    return {"mean": values[:n], "second": values[n:2 * n], "second_shrunk": values[2 * n:3 * n],
            "offset_second": values[3 * n:4 * n], "second_far": values[4 * n]}


def _moments_at(k: np.ndarray) -> dict[str, np.ndarray]:
    """:func:`_moments` at every entry of k, each moment of k's shape (the far pair's a number)."""
    unique, where = np.unique(k, return_inverse=True)
    return {key: value[where].reshape(k.shape) if np.ndim(value) else value
            for key, value in _moments(unique.ravel()).items()}


@checked_plainly
def check_offset_variance(actual, k, r: int, name="offset_variance") -> None:
    """Fail unless ``actual`` is Var[z(x)ᵀz(y)] of R offset features √(2/R) cos(wᵀx + b) of the
    Gaussian kernel at each kernel value k, elementwise (the values are not revealed).

    z(x)ᵀz(y) is the mean of R independent terms 2 cos(wᵀx + b) cos(wᵀy + b), so its variance
    is that of one term over R, E[term²] − k², E[term²] integrated numerically over w and b
    (:func:`_moments`). The tolerance is 1e-4 of 1/R.
    """
    k = _array(k, "k").astype(np.float64)
    moments = _moments_at(k)
    mean_squared = moments["mean"] ** 2
    one = moments["offset_second"] - mean_squared          # Var of one feature's term
    expected = one / r
    leftover = one - (moments["second"] - mean_squared)    # what the leftover term adds
    mistakes = {
        RF_MISTAKES["offset_no_leftover"]: (moments["second"] - mean_squared) / r,
        RF_MISTAKES["offset_one_feature"]: one,
        RF_MISTAKES["k2_is_k_squared"]:
            (moments["second_shrunk"] + leftover - mean_squared) / r,
        RF_MISTAKES["no_mean_squared"]: moments["offset_second"] / r,
        RF_MISTAKES["cos2_half"]: (moments["second_far"] + leftover - mean_squared) / r,
        RF_MISTAKES["standard_deviation"]: np.sqrt(np.maximum(expected, 0)),
    }
    check_close(actual, expected, name, atol=1e-4 / r, mistakes=mistakes, reveal=False)


@checked_plainly
def check_relative_variance(actual, x, y, r: int, name="relative_variance",
                            atol=1e-4) -> None:
    """Fail unless ``actual`` (n, m) is Var[φ(x_i)ᵀφ(y_j)] / exp(x_iᵀy_j)² of R positive
    features φ_w(x) = g(x) e^{wᵀx}, w ~ N(0, I), at every pair of a row of x (n, D) and a row
    of y (m, D) (the values are not revealed).

    A relative variance does not change when the term is multiplied by a constant, so that of
    one draw's term is that of an exponential of a normal variable: a lognormal one, whose
    mean and variance are SciPy's (``scipy.stats.lognorm``); φ(x)ᵀφ(y) averages R draws.
    """
    from scipy import stats

    x, y = (_array(t, label).astype(np.float64) for t, label in ((x, "X"), (y, "Y")))

    def lognormal(shape):  # Var / mean² of SciPy's lognormal law, per entry of its shape
        mean, variance = stats.lognorm.stats(shape, moments="mv")
        return variance / mean**2

    # SciPy's shape is > 0: a shape of 0 (a constant term, variance 0) is taken as 1e-150
    together = np.maximum(np.linalg.norm(x[:, None, :] + y[None, :, :], axis=-1), 1e-150)
    apart = np.maximum(np.linalg.norm(x[:, None, :] - y[None, :, :], axis=-1), 1e-150)
    expected = lognormal(together) / r
    mistakes = {
        RF_MISTAKES["relative_second_moment"]:
            stats.lognorm.moment(2, together) / stats.lognorm.mean(together) ** 2 / r,
        RF_MISTAKES["relative_one_draw"]: expected * r,
        RF_MISTAKES["relative_absolute"]: expected * np.exp(x @ y.T) ** 2,
        RF_MISTAKES["relative_other_vector"]: lognormal(apart) / r,
        RF_MISTAKES["relative_zero"]: np.zeros_like(expected),
        RF_MISTAKES["standard_deviation"]: np.sqrt(expected),
    }
    check_close(actual, expected, name, atol=atol, mistakes=mistakes, reveal=False)

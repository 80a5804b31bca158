"""Each diagnostic of checks/random_features.py: its mistake names it, a right answer none."""

import math
import re

import numpy as np
import pytest
import torch
from scipy import stats
from sklearn.gaussian_process.kernels import RBF
from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel

from course_utils import checks
from course_utils.checks.random_features import RF_MISTAKES


def raises(key):
    return pytest.raises(AssertionError, match=re.escape(RF_MISTAKES[key]))


RNG = np.random.default_rng(0)
X = RNG.normal(size=(5, 3))
Y = RNG.normal(size=(4, 3))
SIGMA = 1.3


def squared_distances(x, y):
    return ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)


# -- the Gaussian kernel --------------------------------------------------------------------


def test_a_right_gaussian_kernel_passes_in_every_form():
    right = rbf_kernel(X, Y, gamma=1 / (2 * SIGMA**2))  # scikit-learn as the oracle
    checks.check_gaussian_kernel(right, X, Y, SIGMA)
    checks.check_gaussian_kernel(right.astype(np.float32), X.astype(np.float32), Y, SIGMA)
    checks.check_gaussian_kernel(right.tolist(), X, Y, SIGMA)
    checks.check_gaussian_kernel(torch.from_numpy(right), torch.from_numpy(X), Y, SIGMA)


@pytest.mark.parametrize("wrong, key", [
    (np.exp(squared_distances(X, Y) / (2 * SIGMA**2)), "no_minus"),
    (np.exp(-squared_distances(X, Y) / SIGMA**2), "no_half"),
    (np.exp(-squared_distances(X, Y) / (2 * SIGMA)), "sigma_not_squared"),
    (np.exp(-np.sqrt(squared_distances(X, Y)) / (2 * SIGMA**2)), "distance_not_squared"),
    (np.exp(-squared_distances(X, Y) * SIGMA**2 / 2), "sigma_multiplied"),
])
def test_gaussian_kernel_mistakes_are_named(wrong, key):
    with raises(key):
        checks.check_gaussian_kernel(wrong, X, Y, SIGMA)


def test_an_unmodelled_gaussian_kernel_mistake_names_the_entries_not_the_values():
    with pytest.raises(AssertionError, match="are off") as failure:
        checks.check_gaussian_kernel(rbf_kernel(X, Y, gamma=3.0), X, Y, SIGMA)
    assert "expected" not in str(failure.value)


def test_no_check_of_a_formula_prints_the_expected_values():
    """An unnamed mistake of every formula exercise: the message says which entries are off."""
    wrong_answers = [
        lambda: checks.check_offset_variance(np.full(6, 0.5), K_VALUES, 64),
        lambda: checks.check_positive_features(  # a factor above 1 on some rows, below on others
            np.exp(X @ W - (X**2).sum(1, keepdims=True) / 2) / np.sqrt(W.shape[1])
            * np.where(np.arange(len(X)) % 2 == 0, 1.3, 0.7)[:, None], X, W),
        lambda: checks.check_relative_variance(np.full((5, 4), 0.5), X * 0.4, Y * 0.4, 8),
    ]
    for answer in wrong_answers:
        with pytest.raises(AssertionError, match="are off") as failure:
            answer()
        assert "expected" not in str(failure.value)


# -- the features of the ARD kernel ---------------------------------------------------------

R = 6                                                    # the positive features' frequencies
W = RNG.normal(size=(3, R))
B = RNG.uniform(0, 2 * np.pi, size=R)
R_ARD = 20_000
ARD_RNG = np.random.default_rng(1)
W_ARD = ARD_RNG.normal(size=(3, R_ARD))                  # standard normal, as the exercise gives
B_ARD = ARD_RNG.uniform(0, 2 * np.pi, size=R_ARD)
LENGTHSCALES = np.array([0.5, 1.0, 2.5])
HEIGHT = 1.7


def ard_kernel(x):
    """scikit-learn's anisotropic RBF kernel as the oracle, times the height."""
    return HEIGHT * RBF(length_scale=LENGTHSCALES)(x)


def features(x=X, rescale=None, scale=None, offset=True, sign=1.0):
    rescale = 1 / LENGTHSCALES if rescale is None else rescale
    scale = math.sqrt(2 * HEIGHT / R_ARD) if scale is None else scale
    return scale * np.cos(sign * (x * rescale) @ W_ARD + (B_ARD if offset else 0))


def check_ard(answer_of):
    checks.check_ard_features(answer_of(X), answer_of(X[::-1]), X, W_ARD, B_ARD, LENGTHSCALES,
                              HEIGHT)


def test_the_oracle_kernel_is_what_the_right_features_estimate():
    Z = features()
    assert np.abs(Z @ Z.T - ard_kernel(X)).max() < 0.1


def test_right_features_pass_in_every_design_and_form():
    check_ard(lambda x: features(x))
    check_ard(lambda x: features(x, sign=-1.0))              # -w is as normal as w
    check_ard(lambda x: features(x)[:, ::-1] * -1)           # another order, other signs
    check_ard(lambda x: features(x).astype(np.float32).tolist())
    check_ard(lambda x: torch.from_numpy(features(x)))


@pytest.mark.parametrize("wrong, key", [
    (features(rescale=LENGTHSCALES), "ard_lengthscale_multiplied"),
    (features(rescale=LENGTHSCALES**-2), "ard_lengthscale_squared"),
    (features(scale=HEIGHT * math.sqrt(2 / R_ARD)), "ard_height_not_rooted"),
    (features(scale=math.sqrt(2 / R_ARD)), "ard_no_height"),
    (features(scale=math.sqrt(HEIGHT)), "no_scale"),
    (features(scale=math.sqrt(HEIGHT / R_ARD)), "no_sqrt2"),
    (features(offset=False), "no_offset"),
])
def test_ard_mistakes_are_named(wrong, key):
    with raises(key):
        checks.check_ard_features(wrong, wrong[::-1], X, W_ARD, B_ARD, LENGTHSCALES, HEIGHT)


def test_features_that_need_the_other_points_are_refused():
    """The Cholesky factor of the exact kernel, padded with zeros: ZZᵀ is exact, but row i
    depends on every point."""
    def cholesky(x):
        L = np.linalg.cholesky(ard_kernel(x) + 1e-12 * np.eye(len(x)))
        return np.pad(L, ((0, 0), (0, R_ARD - len(x))))
    with raises("ard_not_local"):
        check_ard(cholesky)


def test_an_unnamed_biased_design_says_how_far_off_without_the_values():
    with pytest.raises(AssertionError, match="standard errors") as failure:
        check_ard(lambda x: features(x, rescale=1 / (1.5 * LENGTHSCALES)))
    assert "expected" not in str(failure.value)


def test_one_call_is_checked_alone_the_rows_order_left_to_a_second_call():
    """check_ard_feature_map, a test cell's check of one call: the same slips and bias,
    and the reversed rows' call passes on its own."""
    for x in (X, X[::-1]):                                   # negative strides too
        checks.check_ard_feature_map(features(x), x, W_ARD, B_ARD, LENGTHSCALES, HEIGHT)
        checks.check_ard_feature_map(features(x, sign=-1.0), x, W_ARD, B_ARD, LENGTHSCALES,
                                     HEIGHT)
    with raises("no_offset"):
        checks.check_ard_feature_map(features(offset=False), X, W_ARD, B_ARD, LENGTHSCALES,
                                     HEIGHT)
    with pytest.raises(AssertionError, match="standard errors"):
        checks.check_ard_feature_map(features(rescale=1 / (1.5 * LENGTHSCALES)), X, W_ARD,
                                     B_ARD, LENGTHSCALES, HEIGHT)


def test_features_of_the_wrong_shape_are_told_so():
    with pytest.raises(AssertionError, match=r"shape \(5, 20000\)"):
        checks.check_ard_features(features().T, features(), X, W_ARD, B_ARD, LENGTHSCALES, HEIGHT)


# -- positive random features -----------------------------------------------------------------

XP = RNG.normal(size=(4, 3)) * 0.4
YP = RNG.normal(size=(3, 3)) * 0.4
WP = RNG.normal(size=(3, 8))


def positive(x=XP, w=WP, shift=0.5, power=2, root=0.5):
    norms = np.linalg.norm(x, axis=1, keepdims=True) ** power
    return np.exp(x @ w - shift * norms) / w.shape[1] ** root


def test_right_positive_features_pass_in_every_form():
    right = positive()
    checks.check_positive_features(right, XP, WP)
    checks.check_positive_features(right.astype(np.float32), XP.astype(np.float32), WP)
    checks.check_positive_features(right.tolist(), XP, WP)
    checks.check_positive_features(torch.from_numpy(right), XP, WP)


@pytest.mark.parametrize("wrong, key", [
    (positive(shift=0.0), "positive_too_large"),
    (positive(shift=1.0), "positive_too_small"),
    (positive(shift=-0.5), "positive_too_large"),
    (positive(power=1), "positive_too_small"),
    (positive(root=0.0), "no_root_R"),
    (positive(root=1.0), "divide_R"),
    (np.sqrt(2 / 8) * np.cos(XP @ WP), "not_positive"),
])
def test_positive_feature_mistakes_are_named(wrong, key):
    with raises(key):
        checks.check_positive_features(wrong, XP, WP)


W_MANY = np.random.default_rng(1).normal(size=(3, 100_000))


def test_what_the_check_accepts_estimates_the_softmax_kernel():
    """The oracle of the property: many draws of the accepted features average to exp(XYᵀ)."""
    checks.check_positive_features(positive(XP, W_MANY), XP, W_MANY)
    checks.check_positive_features(positive(YP, W_MANY), YP, W_MANY)
    estimate = positive(XP, W_MANY) @ positive(YP, W_MANY).T
    assert np.abs(estimate / np.exp(XP @ YP.T) - 1).max() < 0.02


def test_one_feature_and_float32_are_checked_exactly():
    w_one = WP[:, :1]
    checks.check_positive_features(positive(XP, w_one).astype(np.float32),
                                   XP.astype(np.float32), w_one.astype(np.float32))
    with raises("no_root_R"):
        checks.check_positive_features(positive(XP, WP, root=0.0).astype(np.float32), XP, WP)


def test_a_biased_g_is_told_by_its_symptom_not_the_values():
    with raises("positive_too_large") as failure:
        checks.check_positive_features(positive(shift=0.3), XP, WP)
    assert "expected" not in str(failure.value)


def test_features_not_of_the_form_asked_are_told_so():
    """−W gives unbiased features too, but not the map φ_w(x) = g(x) e^{wᵀx} the text asks."""
    with pytest.raises(AssertionError, match="one factor g"):
        checks.check_positive_features(positive(XP, -WP), XP, WP)
    with pytest.raises(AssertionError, match=r"should have shape \(4, 8\)"):
        checks.check_positive_features(positive().T, XP, WP)


# -- the Laplacian kernel's frequencies -------------------------------------------------------
# Oracle: scipy.stats' Cauchy distribution (scale γ) and other samplers written independently.


def cauchy_by_scipy(d, r, gamma, rng):
    return stats.cauchy.rvs(scale=gamma, size=(d, r), random_state=rng)


def cauchy_by_inverse_cdf(d, r, gamma, rng):
    return gamma * np.tan(np.pi * (rng.uniform(size=(d, r)) - 0.5))


def cauchy_by_ratio(d, r, gamma, rng):  # the ratio of two independent standard normals
    return (gamma * rng.normal(size=(d, r)) / rng.normal(size=(d, r))).astype(np.float32)


SIZES = [(4, 20_000, 0.3), (1, 5_000, 2.0), (7, 5_000, 0.05)]


@pytest.mark.parametrize("sampler", [cauchy_by_scipy, cauchy_by_inverse_cdf, cauchy_by_ratio])
def test_right_laplacian_frequencies_pass_at_every_seed(sampler):
    for seed in range(40):
        for d, r, gamma in SIZES:
            w = sampler(d, r, gamma, np.random.default_rng(seed))
            checks.check_laplacian_frequencies(w, d, r, gamma)
    checks.check_laplacian_frequencies(torch.from_numpy(w), d, r, gamma)  # a tensor too
    checks.check_laplacian_frequencies(w, d, r, gamma, np.random.default_rng(0))  # and its rng


def test_the_frequencies_do_estimate_sklearns_laplacian_kernel():
    """What the check accepts is what the notebook needs: cos features → laplacian_kernel."""
    rng = np.random.default_rng(5)
    w = cauchy_by_scipy(3, 200_000, 0.4, rng)
    checks.check_laplacian_frequencies(w, 3, 200_000, 0.4)
    b = rng.uniform(0, 2 * np.pi, size=200_000)
    z_x, z_y = (np.sqrt(2 / 200_000) * np.cos(points @ w + b) for points in (X, Y))
    assert np.abs(z_x @ z_y.T - laplacian_kernel(X, Y, gamma=0.4)).max() < 0.02


@pytest.mark.parametrize("wrong, key", [
    (lambda d, r, g, rng: g * rng.normal(size=(d, r)), "gaussian_frequencies"),
    (lambda d, r, g, rng: np.sqrt(2 * g) * rng.normal(size=(d, r)), "gaussian_frequencies"),
    (lambda d, r, g, rng: rng.laplace(scale=g, size=(d, r)), "laplace_frequencies"),
    (lambda d, r, g, rng: rng.laplace(scale=1 / g, size=(d, r)), "laplace_frequencies"),
    (lambda d, r, g, rng: rng.standard_cauchy((d, r)) / g, "frequencies_scale_inverted"),
    (lambda d, r, g, rng: rng.standard_cauchy((d, r)), "frequencies_unscaled"),
    (lambda d, r, g, rng: 2 * g * rng.standard_cauchy((d, r)), "frequencies_wrong_scale"),
    (lambda d, r, g, rng: np.abs(g * rng.standard_cauchy((d, r))), "not_symmetric"),
    (lambda d, r, g, rng: g * rng.normal(size=(d, r)) / np.abs(rng.normal(size=(1, r))),
     "shared_scale"),
    (lambda d, r, g, rng: np.tile(g * rng.standard_cauchy((1, r)), (d, 1)),
     "dependent_coordinates"),
    (lambda d, r, g, rng: g * rng.standard_cauchy((r, d)), "frequencies_shape"),
    (lambda d, r, g, rng: g * rng.normal(size=(d, r)) / np.zeros((d, r)), "not_finite"),
])
def test_laplacian_frequency_mistakes_are_named(wrong, key):
    with np.errstate(divide="ignore", invalid="ignore"), raises(key):
        checks.check_laplacian_frequencies(wrong(4, 20_000, 0.3, np.random.default_rng(0)),
                                           4, 20_000, 0.3)


# -- the variances of the offset and [cos, sin] features -------------------------------

K_VALUES = np.array([0.0, 0.2, 0.5, 0.8, 0.95, 1.0])


def one_offset_feature(k):
    return 1 + k**4 / 2 - k**2


def test_the_offset_variance_by_hand_and_by_monte_carlo():
    # by hand: far pairs (k = 0) have variance 1/R (the cosine's ½ and the leftover's ½),
    # the diagonal (k = 1) ½/R
    checks.check_offset_variance(np.array([1 / 100, 0.5 / 100]), np.array([0.0, 1.0]), 100)
    # by Monte Carlo: R = 10 offset features (w ~ N(0, I), b uniform) for x = δ, y = 0
    rng = np.random.default_rng(4)
    delta = np.array([0.6, -0.3, 0.2])
    w, b = rng.normal(size=(200_000, 10, 3)), rng.uniform(0, 2 * np.pi, size=(200_000, 10))
    estimates = (2 * np.cos(w @ delta + b) * np.cos(b)).mean(axis=1)   # z(x)ᵀz(y)
    k = np.exp(-delta @ delta / 2)
    measured = estimates.var()
    assert abs(measured - one_offset_feature(k) / 10) < 0.02 * measured
    checks.check_offset_variance((one_offset_feature(K_VALUES) / 64).astype(np.float32),
                                 K_VALUES, 64)
    checks.check_offset_variance(torch.tensor(one_offset_feature(K_VALUES) / 64).tolist(),
                                 K_VALUES, 64)


@pytest.mark.parametrize("wrong, key", [
    ((1 - K_VALUES**2) ** 2 / 128, "offset_no_leftover"),
    (one_offset_feature(K_VALUES), "offset_one_feature"),
    ((1 - K_VALUES**2 / 2) / 64, "k2_is_k_squared"),
    ((1 + K_VALUES**4 / 2) / 64, "no_mean_squared"),
    ((1 - K_VALUES**2) / 64, "cos2_half"),
    (np.sqrt(one_offset_feature(K_VALUES) / 64), "standard_deviation"),
])
def test_offset_variance_mistakes_are_named(wrong, key):
    with raises(key):
        checks.check_offset_variance(wrong, K_VALUES, 64)


XS, YS = X * 0.4, Y * 0.4                                # moderate norms


def relative(x, y, r):
    return np.expm1(squared_distances(x, -y)) / r        # ‖x + y‖² = ‖x − (−y)‖²


def test_the_relative_variance_by_hand_and_by_monte_carlo():
    # by hand: y = −x is exact (the term does not depend on w); ‖x + y‖² = log 2 gives 1/R
    x = np.array([[0.3, -0.2, 0.1]])
    checks.check_relative_variance(np.zeros((1, 1)), x, -x, 16)
    half = np.array([[math.sqrt(math.log(2)) / 2, 0.0, 0.0]])
    checks.check_relative_variance(np.array([[1 / 16]]), half, half, 16)
    # by Monte Carlo: R = 4 positive features φ_w(x) = e^{wᵀx − ‖x‖²/2}
    rng = np.random.default_rng(5)
    x, y = np.array([0.3, -0.2, 0.4]), np.array([0.1, 0.3, 0.2])
    w = rng.normal(size=(400_000, 4, 3))
    estimates = (np.exp(w @ x - x @ x / 2) * np.exp(w @ y - y @ y / 2)).mean(axis=1)
    measured = estimates.var() / np.exp(x @ y) ** 2
    expected = relative(x[None], y[None], 4)
    assert abs(measured - expected.item()) < 0.03 * expected.item()
    checks.check_relative_variance(relative(XS, YS, 8).astype(np.float32), XS, YS, 8)
    checks.check_relative_variance(torch.tensor(relative(XS, YS, 8)).tolist(), XS, YS, 8)


@pytest.mark.parametrize("wrong, key", [
    (np.exp(squared_distances(XS, -YS)) / 8, "relative_second_moment"),
    (np.expm1(squared_distances(XS, -YS)), "relative_one_draw"),
    (relative(XS, YS, 8) * np.exp(XS @ YS.T) ** 2, "relative_absolute"),
    (np.expm1(squared_distances(XS, YS)) / 8, "relative_other_vector"),
    (np.zeros((5, 4)), "relative_zero"),
    (np.sqrt(relative(XS, YS, 8)), "standard_deviation"),
])
def test_relative_variance_mistakes_are_named(wrong, key):
    with raises(key):
        checks.check_relative_variance(wrong, XS, YS, 8)


def test_an_unnamed_variance_mistake_does_not_reveal_the_values():
    with pytest.raises(AssertionError, match="are off") as failure:
        checks.check_offset_variance(np.full(6, 0.5), K_VALUES, 64)
    assert "expected" not in str(failure.value)

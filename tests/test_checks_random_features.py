"""Each diagnostic of checks/random_features.py: its mistake names it, a right answer none."""

import math
import re

import numpy as np
import pytest
import torch
from sklearn.kernel_approximation import RBFSampler
from sklearn.metrics.pairwise import rbf_kernel

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


def test_an_unmodelled_gaussian_kernel_mistake_shows_the_values():
    with pytest.raises(AssertionError, match="expected"):
        checks.check_gaussian_kernel(rbf_kernel(X, Y, gamma=3.0), X, Y, SIGMA)


# -- random Fourier features ----------------------------------------------------------------

R = 6
W = RNG.normal(size=(3, R))
B = RNG.uniform(0, 2 * np.pi, size=R)


def features(scale=None, offset=True, function=np.cos):
    scale = math.sqrt(2 / R) if scale is None else scale
    return scale * function(X @ W + (B if offset else 0))


def test_right_features_pass_and_equal_rbf_samplers():
    sampler = RBFSampler(n_components=R, gamma=0.7, random_state=0).fit(X)
    checks.check_fourier_features(sampler.transform(X), X, sampler.random_weights_,
                                  sampler.random_offset_)
    right = features()
    checks.check_fourier_features(right.astype(np.float32), X.astype(np.float32),
                                  W.astype(np.float32), B.astype(np.float32))
    checks.check_fourier_features(right.tolist(), X, W, B)
    checks.check_fourier_features(torch.from_numpy(right), X, W, B)


@pytest.mark.parametrize("wrong, key", [
    (features(scale=1.0), "no_scale"),
    (features(scale=1 / math.sqrt(R)), "no_sqrt2"),
    (features(scale=math.sqrt(2) / R), "sqrt2_over_R"),
    (features(scale=2 / R), "two_over_R"),
    (features(offset=False), "no_offset"),
    (features(function=np.sin), "sine"),
])
def test_feature_mistakes_are_named(wrong, key):
    with raises(key):
        checks.check_fourier_features(wrong, X, W, B)


def test_features_of_the_wrong_shape_are_told_so():
    with pytest.raises(AssertionError, match=r"shape \(5, 6\)"):
        checks.check_fourier_features(features().T, X, W, B)


# -- the slope --------------------------------------------------------------------------------

RS = np.array([1, 4, 16, 64, 256, 1024])
ERRORS = 2.0 * RS**-0.5 * np.exp(RNG.normal(0, 0.15, size=len(RS)))


def test_a_right_slope_passes_in_every_form():
    slope = np.polyfit(np.log10(RS), np.log10(ERRORS), 1)[0]  # another base: same slope
    checks.check_error_slope(slope, RS, ERRORS)
    checks.check_error_slope(np.float32(slope), RS.tolist(), ERRORS.tolist())
    checks.check_error_slope(np.array([slope]), RS, ERRORS)
    checks.check_error_slope(torch.tensor(slope), torch.from_numpy(RS), ERRORS)


def fitted(x, y):
    return np.polyfit(x, y, 1)[0]


@pytest.mark.parametrize("wrong, key", [
    (fitted(RS, np.log(ERRORS)), "semilog"),
    (fitted(np.log(RS), ERRORS), "linear_errors"),
    (fitted(np.log(ERRORS), np.log(RS)), "swapped"),
    ((np.log(ERRORS[-1]) - np.log(ERRORS[0])) / (np.log(RS[-1]) - np.log(RS[0])), "endpoints"),
])
def test_slope_mistakes_are_named(wrong, key):
    with raises(key):
        checks.check_error_slope(wrong, RS, ERRORS)


def test_a_slope_that_is_not_one_number_is_told_so():
    with pytest.raises(AssertionError, match="one number"):
        checks.check_error_slope(np.polyfit(np.log(RS), np.log(ERRORS), 1), RS, ERRORS)


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
    (positive(shift=0.0), "no_norm"),
    (positive(shift=1.0), "full_norm"),
    (positive(power=1), "norm_not_squared"),
    (positive(root=0.0), "no_root_R"),
    (positive(root=1.0), "divide_R"),
    (np.sqrt(2 / 8) * np.cos(XP @ WP), "not_positive"),
])
def test_positive_feature_mistakes_are_named(wrong, key):
    with raises(key):
        checks.check_positive_features(wrong, XP, WP)


W_MANY = np.random.default_rng(1).normal(size=(3, 100_000))


def test_unbiased_positive_features_estimate_the_softmax_kernel():
    phi_x, phi_y = positive(XP, W_MANY), positive(YP, W_MANY)
    checks.check_softmax_kernel_estimate(phi_x, phi_y, XP, YP)
    checks.check_softmax_kernel_estimate(torch.from_numpy(phi_x).float(), phi_y.tolist(), XP, YP)


@pytest.mark.parametrize("shift, root", [(0.0, 0.5), (1.0, 0.5), (0.5, 1.0)])
def test_biased_features_are_caught_by_the_estimate(shift, root):
    phi_x = positive(XP, W_MANY, shift=shift, root=root)
    phi_y = positive(YP, W_MANY, shift=shift, root=root)
    with raises("biased"):
        checks.check_softmax_kernel_estimate(phi_x, phi_y, XP, YP)


def test_negative_features_are_refused_by_the_estimate():
    with raises("not_positive"):
        checks.check_softmax_kernel_estimate(np.cos(XP @ WP), positive(YP), XP, YP)

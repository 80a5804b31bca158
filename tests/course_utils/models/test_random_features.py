"""course_utils.models.random_features against scikit-learn's RBFSampler and exact kernels, and the
positive features against exp(xᵀy) and softmax attention."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from sklearn.base import clone
from sklearn.datasets import load_iris
from sklearn.exceptions import NotFittedError
from sklearn.kernel_approximation import RBFSampler
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.utils.estimator_checks import parametrize_with_checks

from course_utils.device import get_device
from course_utils.models.linear_attention import linear_attention
from course_utils.models.random_features import (
    PositiveRandomFeatures,
    RandomFourierFeatures,
    loglog_slope,
    random_fourier_features,
)

DEVICE = get_device()


def points(n=50, d=4, seed=0, scale=1.0):
    return np.random.default_rng(seed).normal(scale=scale, size=(n, d))


# -- random Fourier features ----------------------------------------------------------------


@pytest.mark.parametrize("random_state", [0, 7, 2026])
@pytest.mark.parametrize("gamma", [0.1, 1.0, 2.5])
def test_draws_and_features_equal_rbf_sampler(random_state, gamma):
    X = points(30, 6, seed=random_state)
    ours = RandomFourierFeatures(n_components=40, gamma=gamma, random_state=random_state)
    theirs = RBFSampler(n_components=40, gamma=gamma, random_state=random_state)
    Z, Z_sklearn = ours.fit_transform(X), theirs.fit_transform(X)
    np.testing.assert_array_equal(ours.random_weights_, theirs.random_weights_)
    np.testing.assert_array_equal(ours.random_offset_, theirs.random_offset_)
    assert ours.random_weights_.shape == (6, 40) and ours.random_offset_.shape == (40,)
    assert isinstance(Z, np.ndarray) and Z.dtype == np.float64
    np.testing.assert_allclose(Z, Z_sklearn, atol=1e-6, rtol=0)


def test_a_shared_random_state_object_is_drawn_from_in_the_same_order():
    X = points(10, 3)
    ours = RandomFourierFeatures(20, random_state=np.random.RandomState(5)).fit(X)
    theirs = RBFSampler(n_components=20, random_state=np.random.RandomState(5)).fit(X)
    np.testing.assert_array_equal(ours.random_offset_, theirs.random_offset_)


def test_float32_arrays_give_float32_features_as_rbf_sampler():
    X = points(20, 5).astype(np.float32)
    Z = RandomFourierFeatures(30, random_state=0).fit_transform(X)
    assert Z.dtype == np.float32
    np.testing.assert_allclose(
        Z, RBFSampler(n_components=30, random_state=0).fit_transform(X), atol=1e-6
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_tensors_in_tensors_out_equal_to_rbf_sampler(dtype):
    X = points(25, 4)
    rff = RandomFourierFeatures(50, gamma=0.5, random_state=3).fit(X)
    Z = rff.transform(torch.tensor(X, dtype=dtype, device=DEVICE))
    assert isinstance(Z, torch.Tensor) and Z.dtype == dtype and Z.device.type == DEVICE.type
    expected = RBFSampler(n_components=50, gamma=0.5, random_state=3).fit_transform(X)
    np.testing.assert_allclose(Z.cpu().double().numpy(), expected, atol=1e-6)


def test_leading_axes_of_a_tensor_are_kept():
    X = torch.randn(2, 3, 5, 4, dtype=torch.float64)
    rff = RandomFourierFeatures(8, random_state=0).fit(X)
    Z = rff.transform(X)
    assert Z.shape == (2, 3, 5, 8)
    torch.testing.assert_close(Z.reshape(30, 8), rff.transform(X.reshape(30, 4)))


def test_lists_and_read_only_arrays_are_accepted():
    X = points(6, 3)
    rff = RandomFourierFeatures(5, random_state=0).fit(X.tolist())
    read_only = np.broadcast_to(X, X.shape)
    np.testing.assert_array_equal(rff.transform(read_only), rff.transform(X))


def test_gradients_flow_through_the_features():
    X = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    rff = RandomFourierFeatures(6, random_state=0).fit(X)
    prf = PositiveRandomFeatures(6, random_state=0).fit(X)
    assert torch.autograd.gradcheck(rff.transform, (X,))
    assert torch.autograd.gradcheck(prf.transform, (X,))


def test_get_params_and_clone_work():
    rff = RandomFourierFeatures(n_components=7, gamma=0.2, random_state=1)
    assert rff.get_params() == {"n_components": 7, "gamma": 0.2, "random_state": 1}
    copy = clone(rff).set_params(n_components=9).fit(points(5, 2))
    assert copy.random_weights_.shape == (2, 9) and not hasattr(rff, "random_weights_")


@parametrize_with_checks(
    [RandomFourierFeatures(random_state=0), PositiveRandomFeatures(random_state=0)]
)
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


def relative_kernel_error(X, n_components, seed, gamma):
    Z = RandomFourierFeatures(n_components, gamma=gamma, random_state=seed).fit_transform(X)
    K = rbf_kernel(X, gamma=gamma)
    return np.linalg.norm(Z @ Z.T - K) / np.linalg.norm(K)


def test_kernel_matrix_error_falls_like_one_over_square_root_of_r():
    X = load_iris().data[::3]  # 50 flowers, 4 features
    sizes = [10, 30, 100, 300, 1000, 3000]
    errors = [np.mean([relative_kernel_error(X, r, seed, 0.2) for seed in range(8)]) for r in sizes]
    slope = np.polyfit(np.log(sizes), np.log(errors), 1)[0]
    assert -0.6 < slope < -0.4, f"fitted slope {slope:.3f}, Monte Carlo predicts -1/2"
    assert errors[-1] < 0.05


def test_features_are_unbiased_for_the_gaussian_kernel():
    x, y = points(2, 3, seed=4, scale=0.4)
    estimates = [
        float(np.prod(RandomFourierFeatures(1, random_state=s).fit_transform([x, y]), axis=0)[0])
        for s in range(4000)
    ]
    exact = math.exp(-np.sum((x - y) ** 2))
    standard_error = np.std(estimates) / math.sqrt(len(estimates))
    assert abs(np.mean(estimates) - exact) < 4 * standard_error


# -- positive random features ---------------------------------------------------------------


def test_positive_features_by_formula_and_strictly_positive():
    X = points(40, 5, scale=2.0)
    prf = PositiveRandomFeatures(64, random_state=0).fit(X)
    W = prf.random_weights_
    expected = np.exp(X @ W - (X**2).sum(1, keepdims=True) / 2) / 8
    Z = prf.transform(X)
    np.testing.assert_allclose(Z, expected, rtol=1e-12)
    assert (Z > 0).all()
    assert W.shape == (5, 64) and not hasattr(prf, "random_offset_")
    np.testing.assert_array_equal(W, np.random.RandomState(0).normal(size=(5, 64)))


def test_positive_features_estimate_exp_x_dot_y_without_bias():
    x, y = points(2, 4, seed=1, scale=0.5)
    estimates = [
        float(PositiveRandomFeatures(4, random_state=s).fit_transform([x, y]).prod(axis=0).sum())
        for s in range(3000)
    ]
    standard_error = np.std(estimates) / math.sqrt(len(estimates))
    assert abs(np.mean(estimates) - math.exp(x @ y)) < 4 * standard_error


def test_positive_features_approximate_softmax_attention_better_as_r_grows():
    generator = torch.Generator().manual_seed(0)
    d = 8
    q, k, v = (torch.randn(2, 32, d, generator=generator, dtype=torch.float64) for _ in range(3))
    q, k = q / 2, k / 2  # moderate norms: the estimator's variance grows like exp(‖q + k‖²)
    exact = F.scaled_dot_product_attention(q, k, v)
    uniform = v.mean(dim=-2, keepdim=True).expand_as(exact)  # attention without the scores
    baseline = ((uniform - exact).norm() / exact.norm()).item()  # 0.26
    q, k = q / d**0.25, k / d**0.25  # exp(qᵀk/√d) = exp(q′ᵀk′)
    errors = []
    for r in (8, 128, 2048):
        per_seed = []
        for seed in range(4):
            prf = PositiveRandomFeatures(r, random_state=seed).fit(q)
            approx = linear_attention(q, k, v, feature_map=prf.transform)
            per_seed.append(((approx - exact).norm() / exact.norm()).item())
        errors.append(np.mean(per_seed))
    assert errors[0] > errors[1] > errors[2], errors  # 0.47, 0.16, 0.04
    assert errors[2] < baseline / 4, (errors, baseline)


# -- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [RandomFourierFeatures, PositiveRandomFeatures])
def test_bad_n_components_and_unfitted_use_are_refused(make):
    X = points(5, 3)
    with pytest.raises(ValueError, match="n_components must be >= 1; got 0"):
        make(n_components=0).fit(X)
    with pytest.raises(TypeError, match="n_components must be an int"):
        make(n_components=2.5).fit(X)
    with pytest.raises(NotFittedError):
        make().transform(X)
    fitted = make(n_components=4, random_state=0).fit(X)
    with pytest.raises(ValueError, match="X has 2 features, but .* is expecting 3 features"):
        fitted.transform(X[:, :2])
    with pytest.raises(ValueError, match="Expected 2D array, got 1D array"):
        fitted.transform(X[0])
    with pytest.raises(ValueError, match="X must have at least 2 dimensions"):
        fitted.transform(torch.ones(3, dtype=torch.float64))
    with pytest.raises(ValueError, match="NaN"):
        fitted.transform(np.full((2, 3), np.nan))
    with pytest.raises(ValueError, match="Complex data not supported"):
        fitted.transform(X + 1j)
    with pytest.raises(TypeError, match="floating-point"):
        fitted.transform(torch.ones(2, 3, dtype=torch.long))


def test_bad_gamma_is_refused():
    X = points(5, 3)
    for gamma in (0, -1.0):
        with pytest.raises(ValueError, match=f"gamma must be > 0; got {gamma}"):
            RandomFourierFeatures(gamma=gamma).fit(X)
    with pytest.raises(TypeError, match="gamma must be a number"):
        RandomFourierFeatures(gamma="scale").fit(X)


def test_features_of_given_frequencies_equal_rbf_sampler():
    X = load_iris().data
    sampler = RBFSampler(gamma=0.3, n_components=40, random_state=2).fit(X)
    W, b = sampler.random_weights_, sampler.random_offset_
    np.testing.assert_allclose(random_fourier_features(X, W, b), sampler.transform(X), atol=1e-12)
    as_tensors = random_fourier_features(torch.tensor(X), torch.tensor(W), torch.tensor(b))
    np.testing.assert_allclose(as_tensors.numpy(), sampler.transform(X), atol=1e-12)
    with pytest.raises(ValueError, match=r"expected W \(D, R\) with D = 4.*got W \(3, 40\)"):
        random_fourier_features(X, W[:3], b)


def test_loglog_slope_is_the_exponent_of_a_power_law():
    x = np.array([2.0, 8.0, 32.0, 1000.0])
    assert loglog_slope(x, 3.0 * x**-0.5) == pytest.approx(-0.5)
    assert loglog_slope(list(x), list(7 * x**2)) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="all > 0"):
        loglog_slope(x, -x)

"""Random Fourier features: ``RandomFourierFeatures.transform`` beside scikit-learn's
``RBFSampler.transform`` on 5000 × 10 float64 points with R = 1000 features, both fitted with
the same ``random_state`` (so they draw the same weights), timed in alternating rounds (one
call of each per round, the best round counts). Target: within 1.2× of RBFSampler's time,
with equal features (the note gives the largest difference)."""

import numpy as np
from sklearn.kernel_approximation import RBFSampler

from course_utils.models.random_features import RandomFourierFeatures
from tests.benchmarks.timing import Row, best_times

N_POINTS, N_FEATURES, N_COMPONENTS = 5000, 10, 1000


def run() -> list[Row]:
    X = np.random.default_rng(0).normal(size=(N_POINTS, N_FEATURES))
    ours = RandomFourierFeatures(N_COMPONENTS, gamma=0.1, random_state=0).fit(X)
    theirs = RBFSampler(n_components=N_COMPONENTS, gamma=0.1, random_state=0).fit(X)
    difference = np.abs(ours.transform(X) - theirs.transform(X)).max()
    ours_s, theirs_s = best_times([lambda: ours.transform(X), lambda: theirs.transform(X)])
    task = f"RFF transform, {N_POINTS}x{N_FEATURES} -> R={N_COMPONENTS}"
    note = (
        f"{ours_s / theirs_s:.2f}x RBFSampler's time (target <= 1.2x); max |diff| {difference:.1e}"
    )
    return [
        Row(task, "RandomFourierFeatures", ours_s * 1e3, "ms", note),
        Row(task, "sklearn RBFSampler", theirs_s * 1e3, "ms"),
    ]

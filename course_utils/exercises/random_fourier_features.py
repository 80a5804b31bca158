"""The exercises of 08_random_fourier_features: one record each (``course_utils.exercises``)."""

from course_utils.exercises.allowance import DEFAULT, ELEMENTARY, Allowance
from course_utils.exercises.record import Compare, Exercise

NOTEBOOK = "08_random_fourier_features"

EXERCISES = (
    # may take the distances from torch.cdist (the kernel is the exercise)
    Exercise("gaussian_kernel", NOTEBOOK, points=1, check="check_gaussian_kernel",
             allowance=Allowance(torch_ops=ELEMENTARY | {"cdist"}),
             twins=("sklearn.metrics.pairwise.rbf_kernel",
                    "sklearn.metrics.pairwise.*kernel*",
                    "sklearn.gaussian_process.kernels.*")),
    # any unbiased design is right (−W for W, the features in another order or sign): the
    # features are compared by the kernel they estimate, Z Zᵀ
    Exercise("ard_features", NOTEBOOK, points=3, check="check_ard_feature_map",
             compare=Compare(feature_map=True),
             twins=("sklearn.kernel_approximation.RBFSampler.transform",
                    "sklearn.kernel_approximation.*",
                    "sklearn.gaussian_process.kernels.*")),
    # the variance of one entry of ZZᵀ, derived: compared with SciPy's integration of its
    # definition (course_utils.checks.feature_statistics), never with a formula
    Exercise("offset_variance", NOTEBOOK, points=3, check="check_offset_variance",
             twins=("course_utils.checks.feature_statistics._moments",
                    "scipy.integrate._quad_vec.quad_vec",
                    "scipy.integrate._quadpack_py.quad")),
    # any exact sampler, SciPy's distributions too: deriving the law of the frequencies is the
    # exercise
    Exercise("laplacian_frequencies", NOTEBOOK, points=3, check="check_laplacian_frequencies",
             allowance=Allowance(
                 says=DEFAULT.says + ", and SciPy's distributions",
                 modules=DEFAULT.modules + ("scipy.stats", "scipy._lib"),
                 c_modules=DEFAULT.c_modules + ("scipy",)),
             compare=Compare(distribution=True)),  # random draws: any sampler of the law
    Exercise("positive_features", NOTEBOOK, points=4, check="check_positive_features"),
    # the relative variance of the positive features, derived: compared with the moments of
    # SciPy's lognormal law (course_utils.checks.feature_statistics), never with a formula
    Exercise("relative_variance", NOTEBOOK, points=2, check="check_relative_variance"),
)

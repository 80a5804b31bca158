"""The exercises of 08_random_fourier_features: one record each (``course_utils.exercises``)."""

from course_utils.exercises.record import Compare, Exercise

NOTEBOOK = "08_random_fourier_features"

EXERCISES = (
    Exercise("gaussian_kernel", NOTEBOOK, points=2, check="check_gaussian_kernel"),
    # any unbiased design is right (−W for W, the features in another order or sign): the
    # features are compared by the kernel they estimate, Z Zᵀ
    Exercise("ard_features", NOTEBOOK, points=3, check="check_ard_feature_map",
             compare=Compare(feature_map=True)),
    Exercise("error_slope", NOTEBOOK, points=2, check="check_error_slope"),
    Exercise("laplacian_frequencies", NOTEBOOK, points=3, check="check_laplacian_frequencies",
             compare=Compare(distribution=True)),  # random draws: any sampler of the law
    Exercise("cos_sin_variance", NOTEBOOK, points=3, check="check_cos_sin_variance"),
    Exercise("positive_features", NOTEBOOK, points=4, check="check_positive_features"),
)

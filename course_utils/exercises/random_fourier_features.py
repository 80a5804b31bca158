"""The exercises of 08_random_fourier_features: one record each (``course_utils.exercises``)."""

from course_utils.exercises.record import Compare, Exercise

NOTEBOOK = "08_random_fourier_features"

EXERCISES = (
    Exercise("gaussian_kernel", NOTEBOOK, points=2),
    Exercise("ard_features", NOTEBOOK, points=3),
    Exercise("error_slope", NOTEBOOK, points=2),
    Exercise("laplacian_frequencies", NOTEBOOK, points=3,
             compare=Compare(distribution=True)),  # random draws: any sampler of the law
    Exercise("cos_sin_variance", NOTEBOOK, points=3),
    Exercise("positive_features", NOTEBOOK, points=4),
)

"""The exercises of 08_random_fourier_features: one record each (``course_utils.exercises``)."""

from course_utils.exercises.record import Compare, Exercise

# Its test cells are still in the form before one-line checks: graded by the kernel alone.
OLD = Compare(in_kernel_only=True)
NOTEBOOK = "08_random_fourier_features"

EXERCISES = (
    Exercise("gaussian_kernel", NOTEBOOK, points=2, compare=OLD),
    Exercise("ard_features", NOTEBOOK, points=3, compare=OLD),
    Exercise("error_slope", NOTEBOOK, points=2, compare=OLD),
    Exercise("laplacian_frequencies", NOTEBOOK, points=3, compare=OLD),
    Exercise("cos_sin_variance", NOTEBOOK, points=3, compare=OLD),
    Exercise("positive_features", NOTEBOOK, points=4, compare=OLD),
)

"""One exercise, as one record: what the grading, the guards and the docs know of it."""

from dataclasses import dataclass, field

__all__ = ["Compare", "Exercise"]


@dataclass(frozen=True)
class Compare:
    """How the grader compares the values an answer returned with the stored answers
    (``grader.scoring.same_value``): numbers within ``atol + rtol·|expected|``, a list in
    any order when ``unordered``; a collection as the set of its items when ``as_set``
    (any order, repeats ignored: a list of pairs is the same answer as a set of them);
    random draws (``distribution``) by shape and by a two-sample Kolmogorov–Smirnov test of
    their values against the solution's draws, at the level ``significance``; random
    features Z (n, R) (``feature_map``) by the kernel they estimate, Z Zᵀ, within ``sigmas``
    standard errors (max |K| / √R each) of the solution's estimate: any unbiased design
    passes, not one formula."""

    rtol: float = 1e-3
    atol: float = 1e-5
    unordered: bool = False
    as_set: bool = False
    distribution: bool = False
    significance: float = 1e-4
    feature_map: bool = False
    sigmas: float = 6.0


@dataclass(frozen=True)
class Exercise:
    """An autograded exercise: the function (or value) the student writes, ``name``, is the
    grade id of its answer cell; its test cell is ``test_<name>``, worth ``points``."""

    name: str
    notebook: str
    points: int
    # the function of course_utils.checks that a visible test (``check``) calls on what the
    # answer returned: ``check_x(answer, *inputs, name=..., **keyword_inputs)``
    check: str = ""
    compare: Compare = field(default_factory=Compare)

    def __post_init__(self):
        if not self.name.isidentifier():
            raise ValueError(f"an exercise's name is a Python name, got {self.name!r}")
        if not isinstance(self.points, int) or self.points <= 0:
            raise ValueError(f"{self.name}: points must be a positive int, got {self.points!r}")

    @property
    def test_cell(self) -> str:
        """The grade id of the exercise's test cell."""
        return f"test_{self.name}"

"""One exercise, as one record: what the grading, the guards and the docs know of it."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from course_utils.exercises.allowance import DEFAULT, Allowance

__all__ = ["Compare", "Exercise", "Oracle", "Recurrence"]


@dataclass(frozen=True)
class Compare:
    """How the grader compares the values an answer returned with the stored answers
    (``grader.scoring.same_value``): numbers within ``atol + rtol·|expected|``, a list in
    any order when ``unordered``; random draws (``distribution``) by shape and by a
    two-sample Kolmogorov–Smirnov test of their values against the solution's draws, at the
    level ``significance``; random features Z (n, R) (``feature_map``) by the kernel they
    estimate, Z Zᵀ, within ``sigmas`` standard errors (max |K| / √R each) of the solution's
    estimate: any unbiased design passes, not one formula."""

    rtol: float = 1e-3
    atol: float = 1e-5
    unordered: bool = False
    distribution: bool = False
    significance: float = 1e-4
    feature_map: bool = False
    sigmas: float = 6.0


@dataclass(frozen=True)
class Oracle:
    """A visible test's check, declared as data: the value the answer must return is
    ``expected(*inputs)``, a library's function on the test's inputs (never the answer
    written again); each of ``mistakes`` maps the message of a likely mistake to
    ``slip(expected, *inputs)``, what that mistake returns. The answer passes within
    ``atol`` of each value (``checks.check_close``); a failure names the mistake whose
    value it matches, and shows the expected values only when ``reveal``."""

    expected: Callable
    mistakes: Mapping[str, Callable] = field(default_factory=dict)
    atol: float = 1e-5
    reveal: bool = False

    def __post_init__(self):
        if not callable(self.expected):
            raise TypeError(f"an Oracle's expected is a function of the inputs, got "
                            f"{type(self.expected).__name__}")
        object.__setattr__(self, "mistakes", MappingProxyType(dict(self.mistakes)))


@dataclass(frozen=True)
class Recurrence:
    """The answer is one step of a recurrence, and a test runs it over a sequence: of the
    test's inputs, the first ``state`` are the state it starts from, the next ``sequences``
    hold one row per call (a token's), and the rest go to every call as they are. Each call
    is given the state the last one returned (its first ``state`` results, as tensors like
    the state the run started from); the check gets the list of what the calls returned,
    which stops early at a result that cannot be given back (the check says why)."""

    state: int
    sequences: int


def _names(value, field_name: str, exercise: str) -> tuple[str, ...]:
    if isinstance(value, str) or not all(isinstance(item, str) for item in value):
        raise TypeError(f"{exercise}: {field_name} is a tuple of names, got {value!r}")
    return tuple(value)


@dataclass(frozen=True)
class Exercise:
    """An autograded exercise: the function (or value) the student writes, ``name``, is the
    grade id of its answer cell; its test cell is ``test_<name>``, worth ``points``."""

    name: str
    notebook: str
    points: int
    # what a visible test (``checks.check``) checks the answer's value with: an ``Oracle``
    # declared here, or the name of a check of course_utils.checks,
    # ``check_x(answer, *inputs, name=..., **keyword_inputs)``
    check: "Oracle | str" = ""
    compare: Compare = field(default_factory=Compare)
    # what the answer may compute with (``course_utils.exercises.allowance``)
    allowance: Allowance = DEFAULT
    # the functions that answer it, refused while it runs (``checks/guards/refuse.py``):
    # ``module.function``, ``module.Class.method``, ``module.<fnmatch pattern>`` (every
    # function and method the module defines that matches) or ``notebook.name``
    twins: tuple[str, ...] = ()
    # fragments of the names of torch functions that answer it ("layer_norm")
    torch_twins: tuple[str, ...] = ()
    # the rules its text states (``course_utils.exercises.allowance``)
    rules: tuple[type, ...] = ()
    # how a test calls the answer: once on its inputs (None), or as a step of a
    # ``Recurrence``, token after token
    run: Recurrence | None = None

    def __post_init__(self):
        if not self.name.isidentifier():
            raise ValueError(f"an exercise's name is a Python name, got {self.name!r}")
        if not isinstance(self.points, int) or self.points <= 0:
            raise ValueError(f"{self.name}: points must be a positive int, got {self.points!r}")
        if not isinstance(self.check, Oracle | str):
            raise TypeError(f"{self.name}: check is an Oracle or a check's name, got "
                            f"{type(self.check).__name__}")
        if not isinstance(self.allowance, Allowance):
            raise TypeError(f"{self.name}: allowance is an Allowance, got "
                            f"{type(self.allowance).__name__}")
        object.__setattr__(self, "twins", _names(self.twins, "twins", self.name))
        object.__setattr__(self, "torch_twins", _names(self.torch_twins, "torch_twins",
                                                       self.name))
        if not all(isinstance(rule, type) for rule in self.rules):
            raise TypeError(f"{self.name}: rules is a tuple of rule classes "
                            f"(course_utils.exercises.allowance), got {self.rules!r}")
        object.__setattr__(self, "rules", tuple(self.rules))
        if not isinstance(self.run, Recurrence | None):
            raise TypeError(f"{self.name}: run is None or a Recurrence, got "
                            f"{type(self.run).__name__}")

    @property
    def test_cell(self) -> str:
        """The grade id of the exercise's test cell."""
        return f"test_{self.name}"

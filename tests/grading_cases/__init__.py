"""Students for the grading round trip, one module per assignment.

Each module names its ``ASSIGNMENT`` and two dicts, student id -> {answer cell grade_id:
the code that student wrote}:

* ``WRONG``: typical mistakes, and answers that call the exercise's library twin. Every
  test cell of those answers (``test_<grade_id>``) must score 0, every other full marks.
* ``CORRECT``: right answers written another way (another order, numpy, lists, a loop,
  -1e9 masking, float64, updating the inputs in place). Every test cell must give them
  full marks.

and a third, student id -> {answer cell grade_id: ``Cheat``}:

* ``CHEAT``: answers that try to earn the points without the work (an object that lies
  about its type or its comparisons, the library's answer through another door, the
  notebook's own helper, a hook left behind). Each says what the grading must do with it:
  score its exercise 0 (``zero``), flag its cell in grades.csv (``flagged``), or both.
  A cheat may also add a cell after its answer (``added``) or edit the notebook's first
  code cell, the instructor's (``first_cell``).

Every answer cell needs at least one WRONG and one CORRECT case, and every notebook a
CHEAT case (tests/notebooks/test_grading.py checks).

The round trip hands in WRONG cases of different answer cells as one submission, and
CORRECT and CHEAT cases the same way (tests/notebooks/test_grading.py, ``submissions``); a CHEAT
case with a cell to be flagged (a hook or mode left behind) is a submission of its own. A module
whose answers are worked for the student's own id (04's numbers by hand) sets
``PER_STUDENT = True``, and each of its cases is its own student.
"""

import importlib
import pkgutil
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class Cheat:
    """The code of an answer cell that cheats, and what the grading must do with it."""

    code: str
    zero: bool = True  # its test cell scores 0
    flagged: bool = False  # grades.csv flags its cell
    added: str = ""  # the code of a cell the student adds right after the answer cell
    first_cell: str = ""  # code put at the top of the notebook's first code cell (an
    # instructor's cell edited): such a case is handed in alone


def all_cases() -> dict[str, ModuleType]:
    """{assignment: its module of cases} for every module in this package."""
    cases = {}
    for module_info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        cases[module.ASSIGNMENT] = module
    return cases

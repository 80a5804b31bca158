"""Students for the grading round trip, one module per assignment.

Each module names its ``ASSIGNMENT`` and two dicts, student id -> {answer cell grade_id:
the code that student wrote}:

* ``WRONG``: typical mistakes, and answers that call the exercise's library twin. Every
  test cell of those answers (``test_<grade_id>``) must score 0, every other full marks.
* ``CORRECT``: right answers written another way (another order, numpy, lists, a loop,
  -1e9 masking, float64). Every test cell must give them full marks.

Every answer cell needs at least one case of each kind (tests/test_grading.py checks).
"""

import importlib
import pkgutil
from types import ModuleType


def all_cases() -> dict[str, ModuleType]:
    """{assignment: its module of cases} for every module in this package."""
    cases = {}
    for module_info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        cases[module.ASSIGNMENT] = module
    return cases

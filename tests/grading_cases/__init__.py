"""Wrong answers per assignment, for the grading round trip.

Each module names its ``ASSIGNMENT`` and a dict ``WRONG``: student id -> {answer cell
grade_id: the wrong code that student wrote}. The round trip expects every test cell
of those answers (``test_<grade_id>``) to score 0 and every other test cell full marks.
"""

import importlib
import pkgutil


def all_cases() -> dict[str, dict[str, dict[str, str]]]:
    """{assignment: WRONG} for every module in this package."""
    cases = {}
    for module_info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        cases[module.ASSIGNMENT] = module.WRONG
    return cases

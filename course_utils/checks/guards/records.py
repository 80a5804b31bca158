"""What the guards read of the exercises' records (``course_utils.exercises``), copied once
as the guards are imported, into read-only tables keyed by grade id:

* ``TWINS``: the Python functions and methods that answer an exercise, refused where they
  compute while its answer runs (``refuse.py``); the grading also reads it to flag answer
  cells that import a twin (``grader.integrity.tamper.twins``).
* ``TORCH_TWINS``: fragments of the names of torch functions that answer it.
* ``RULES``: the rules its text states (``course_utils.exercises.allowance``).
* ``allowance_of``: what its answer may compute with (``allowlist.py``).

A copy, not a view: a notebook that edits a record (a frozen dataclass can be edited with
``object.__setattr__``) changes nothing the guards read.
"""

from collections.abc import Callable
from types import MappingProxyType

from course_utils.exercises import EXERCISES
from course_utils.exercises.allowance import DEFAULT, Allowance

__all__ = ["RULES", "TORCH_TWINS", "TWINS", "allowance_of"]


def _table(field: str) -> MappingProxyType:
    return MappingProxyType({name: getattr(record, field) for name, record in EXERCISES.items()
                             if getattr(record, field)})


TWINS: MappingProxyType[str, tuple[str, ...]] = _table("twins")
TORCH_TWINS: MappingProxyType[str, tuple[str, ...]] = _table("torch_twins")
RULES: MappingProxyType[str, tuple[type, ...]] = _table("rules")


def _reader(table: MappingProxyType) -> Callable[[str | None], Allowance]:
    def allowance_of(exercise: str | None) -> Allowance:
        """The allowance of ``exercise`` (a grade id); the plain one for any other code."""
        return table.get(exercise or "", DEFAULT)

    return allowance_of


allowance_of = _reader(_table("allowance"))  # holds its table itself, whatever a notebook rebinds

"""One record per exercise: the records and the notebooks say the same, and each record is
whole (a test names the missing field)."""

import inspect
from pathlib import Path

import nbformat
import pytest

from course_utils import checks
from course_utils.exercises import EXERCISES, NOTEBOOKS, Compare, Exercise, by_notebook, exercise
from course_utils.exercises.allowance import Allowance, NoAutograd
from course_utils.exercises.record import Oracle

SOLUTIONS = Path(__file__).resolve().parents[2] / "solutions"


def graded_cells(notebook: str) -> list[tuple[str, int]]:
    """(answer grade id, points) of each autograded test cell of ``notebook``, in order."""
    source = nbformat.read(SOLUTIONS / notebook / f"{notebook}.ipynb", as_version=4)
    return [(cell.metadata.nbgrader["grade_id"].removeprefix("test_"),
             cell.metadata.nbgrader["points"])
            for cell in source.cells
            if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade")]


@pytest.mark.parametrize("notebook", sorted(p.name for p in SOLUTIONS.iterdir() if p.is_dir()))
def test_each_test_cell_has_its_record_with_its_points_in_its_order(notebook):
    records = [(record.name, record.points) for record in by_notebook(notebook)]
    assert records == graded_cells(notebook), (
        f"course_utils/exercises: the records of {notebook} must list its test cells "
        "(name = the answer's grade id) with their points, in the notebook's order")


@pytest.mark.parametrize("record", EXERCISES.values(), ids=lambda record: record.name)
def test_each_record_is_whole(record):
    assert record.check, f"{record.name}: its record names no check (field check)"
    if isinstance(record.check, Oracle):
        assert record.check.mistakes, f"{record.name}: its oracle names no mistake (mistakes)"
        return
    function = getattr(checks, record.check, None)
    assert callable(function), f"{record.name}: no check {record.check!r} in course_utils.checks"
    assert list(inspect.signature(function).parameters)[0] != "name", record.check
    assert "name" in inspect.signature(function).parameters, (
        f"{record.name}: its check {record.check} takes no name= (the call it reports on)")


def test_a_record_refuses_a_bad_field_and_a_lookup_names_the_choices():
    with pytest.raises(ValueError, match="positive int"):
        Exercise("x", "01", points=0)
    with pytest.raises(ValueError, match="Python name"):
        Exercise("not a name", "01", points=1)
    with pytest.raises(KeyError, match="expected one of"):
        exercise("no_such_exercise")
    with pytest.raises(TypeError, match="twins is a tuple of names"):
        Exercise("x", "01", points=1, twins="torch.nn.functional.layer_norm")
    with pytest.raises(TypeError, match="allowance is an Allowance"):
        Exercise("x", "01", points=1, allowance={"torch_ops": ()})
    with pytest.raises(TypeError, match="rules is a tuple of rule classes"):
        Exercise("x", "01", points=1, rules=(NoAutograd("x", (), {}),))
    with pytest.raises(TypeError, match="check is an Oracle or a check's name"):
        Exercise("x", "01", points=1, check=len)
    with pytest.raises(TypeError, match="a function of the inputs"):
        Oracle(expected=3.0)
    assert Exercise("x", "01", points=1, allowance=Allowance()).twins == ()
    assert exercise("attention_update").compare == Compare()


def test_the_records_hold_no_answer():
    """A record is data: names, points, how to compare; no code of its own."""
    for module in NOTEBOOKS:
        for name, value in vars(module).items():
            assert not inspect.isfunction(value) or name.startswith("__"), (module, name)

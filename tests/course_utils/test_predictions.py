"""confront: the student's prediction beside the measurement, and clear errors."""

import pytest

from course_utils import predictions
from course_utils.predictions import confront, predicted


def test_a_prediction_is_shown_beside_the_measurement_with_their_ratio(capsys):
    line = confront(2, 3.0, what="the ratio of the times", unit="×")
    assert line == ("the ratio of the times: you predicted 2 ×, measured 3 × "
                    "(measured / predicted = 1.5)")
    assert capsys.readouterr().out == line + "\n"


def test_a_missing_prediction_is_said_and_the_cell_goes_on():
    line = confront(..., 0.25, what="the loss")
    assert "measured 0.25" in line and "no prediction" in line


def test_a_measurement_waits_for_its_prediction(capsys, monkeypatch):
    monkeypatch.setattr(predictions, "student_id", lambda: "s1234567")
    assert not predicted(..., name="my_share")
    assert "write your prediction first (my_share, above)" in capsys.readouterr().out
    assert predicted(0.3) and predicted("no answer")
    assert capsys.readouterr().out == ""
    with pytest.raises(TypeError, match="name: expected"):
        predicted(0.3, name="")


def test_the_instructors_copy_measures_without_a_prediction(capsys, monkeypatch):
    monkeypatch.setattr(predictions, "student_id", lambda: predictions.INSTRUCTOR)
    assert predicted(..., name="my_share")
    assert "my_share is not written: the instructor's copy" in capsys.readouterr().out


def test_a_negative_prediction_has_no_ratio():
    assert "/" not in confront(-1, 4, what="the slope")


@pytest.mark.parametrize("prediction", ["two", True, float("nan"), [2]])
def test_a_prediction_that_is_no_number_is_refused_by_name(prediction):
    with pytest.raises(TypeError, match="your prediction of the slope: expected a number"):
        confront(prediction, 1.0, what="the slope")


def test_what_must_be_named():
    with pytest.raises(TypeError, match="what: expected"):
        confront(1, 1, what="")


ROWS = [[float("nan")] * 3, [0.8176, 0.1824, 0.0]]


def test_rows_are_shown_beside_the_measured_rows_with_their_largest_difference(capsys):
    line = confront([[None, "0/0", float("nan")], [0.82, 0.18, 0]], ROWS, what="rows 1 and 3")
    assert line == ("rows 1 and 3: you predicted [[None, '0/0', nan], [0.82, 0.18, 0]], "
                    "measured [[nan, nan, nan], [0.8176, 0.1824, 0]] (largest difference 0.0024)")
    assert capsys.readouterr().out == line + "\n"


def test_rows_that_differ_on_which_entries_have_a_number_are_told_so():
    line = confront([[1, 0, 0], [0.82, 0.18, 0]], ROWS, what="rows 1 and 3")
    assert line.endswith("(they differ on which entries have a number)")


def test_missing_rows_are_said_and_rows_of_another_shape_are_refused_without_the_values():
    assert "no prediction" in confront(..., ROWS, what="rows 1 and 3")
    with pytest.raises(TypeError, match="shaped as 2 lists of 3 numbers, got") as refused:
        confront([0.82, 0.18, 0.0], ROWS, what="rows 1 and 3")
    assert "0.8176" not in str(refused.value)

"""The one-line test cells: ``checks.check`` with a record's ``Oracle``.

The oracle here is PyTorch's own entropy of a categorical distribution; the answers are
written out by hand (the right one, and two known mistakes).
"""

import math

import pytest
import torch

from course_utils import checks
from course_utils.exercises import checking
from course_utils.exercises.record import Exercise, Oracle
from tests.course_utils.checks import cell

NEGATED = "your entropies are negative: look at the sign in front of the sum"
BITS = "you measured in bits: the natural logarithm gives nats"
RECORD = Exercise(
    "row_entropy", "05_masked_attention", points=2,
    check=Oracle(expected=lambda w: torch.distributions.Categorical(probs=w).entropy(),
                 mistakes={NEGATED: lambda expected, w: -expected,
                           BITS: lambda expected, w: expected / math.log(2)}))
WEIGHTS = torch.softmax(torch.randn(3, 5, generator=torch.Generator().manual_seed(0),
                                    dtype=torch.float64), dim=-1)


def right(w):
    return -(w * w.log()).sum(-1)


def negated(w):
    return (w * w.log()).sum(-1)


def in_bits(w):
    return -(w * w.log2()).sum(-1)


def halved(w):
    return -(w * w.log()).sum(-1) / 2


def run(answer) -> None:
    """``answer`` checked as ``checks.check`` checks it: through the guards, then the
    record's check on what it returned."""
    returned = checks.own_work(cell(answer), "row_entropy")(WEIGHTS)
    checking._check_of(RECORD)(returned, WEIGHTS, name="row_entropy(WEIGHTS)")


def test_a_right_answer_passes():
    run(right)


@pytest.mark.parametrize(("answer", "mistake"), [(negated, NEGATED), (in_bits, BITS)])
def test_a_known_mistake_is_named(answer, mistake):
    with pytest.raises(AssertionError, match="is not right: " + mistake):
        run(answer)


def test_an_unknown_mistake_names_the_entries_not_the_expected_values():
    with pytest.raises(AssertionError, match=r"entries \[1, 2, 3\]") as failure:
        run(halved)
    assert f"{right(WEIGHTS)[0].item():.4f}" not in str(failure.value)

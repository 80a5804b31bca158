"""The shared input checks name what was expected and what came."""

import pytest
import torch

from course_utils import validation
from course_utils.validation import integer, number, positive_int


@pytest.mark.parametrize(
    ("value", "error", "words"),
    [
        (True, TypeError, "k must be an int; got True \\(bool\\)"),
        (2.0, TypeError, "k must be an int; got 2.0 \\(float\\)"),
        ("3", TypeError, "got '3' \\(str\\)"),
        (-1, ValueError, "k must be >= 0; got -1"),
        (11, ValueError, "k must be <= 10; got 11"),
    ],
)
def test_integer_refuses_what_is_not_an_int_in_range(value, error, words):
    with pytest.raises(error, match=words):
        integer("k", value, minimum=0, maximum=10)


def test_integer_returns_an_int_in_range():
    assert integer("k", 0, minimum=0, maximum=10) == 0
    assert integer("k", -5) == -5  # no bounds asked for
    assert positive_int("n", 1) == 1
    with pytest.raises(ValueError, match="n must be >= 1; got 0"):
        positive_int("n", 0)


def test_numpy_integers_count_as_ints_and_numpy_bools_do_not():
    import numpy as np

    got = integer("k", np.int64(5), minimum=0, maximum=10)
    assert got == 5 and type(got) is int
    assert positive_int("n", np.arange(3, dtype=np.int32)[2]) == 2
    with pytest.raises(TypeError, match="k must be an int"):
        integer("k", np.bool_(True))
    with pytest.raises(TypeError, match="k must be an int"):
        integer("k", np.float64(2.0))


def test_number_takes_python_and_numpy_reals_and_refuses_the_rest():
    import numpy as np
    import torch

    for value, expected in ((3, 3.0), (0.25, 0.25), (np.float32(0.5), 0.5), (np.int64(-2), -2.0)):
        got = number("lr", value)
        assert got == expected and type(got) is float
    for value, kind in ((True, "bool"), (np.bool_(False), "bool"), ("0.1", "str"),
                        (None, "NoneType"), (torch.tensor(0.1), "Tensor"), (1j, "complex")):
        with pytest.raises(TypeError, match=f"lr must be a number; got .* \\({kind}\\)"):
            number("lr", value)


def test_several_inputs_are_checked_in_one_call_in_the_order_given():
    q, k = torch.ones(2, 3), torch.ones(4, 3)
    validation.float_tensors(q=q, k=k, min_dim=2)
    with pytest.raises(TypeError, match="^k must be a torch.Tensor; got a list$"):
        validation.float_tensors(q=q, k=[1.0], v=torch.ones(1), min_dim=2)
    with pytest.raises(ValueError, match="^v must have at least 2 dimensions"):
        validation.float_tensors(q=q, v=torch.ones(3), min_dim=2)
    with pytest.raises(ValueError, match="same device; got q on cpu, k on meta"):
        validation.float_tensors(q=q, k=torch.ones(4, 3, device="meta"))


def test_two_inputs_of_different_sizes_on_an_axis_are_named_with_their_shapes():
    validation.same_size(-1, "must agree", q=torch.ones(2, 3), k=torch.ones(4, 3))
    with pytest.raises(ValueError) as error:
        validation.same_size(-2, "must have one row per key", k=torch.ones(2, 3),
                             v=torch.ones(4, 3))
    assert str(error.value) == ("k and v must have one row per key; got k of shape (2, 3) and "
                                "v of shape (4, 3)")

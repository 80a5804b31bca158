"""Device choice, its override, seeding, and the quick-size switch."""

import random

import numpy as np
import pytest
import torch

from course_utils import device as device_module
from course_utils.device import cpu_threads, get_device, set_seed
from course_utils.quick import is_quick, quick_or_full


def test_override_to_cpu(monkeypatch):
    monkeypatch.setenv("COURSE_DEVICE", "CPU")
    assert get_device() == torch.device("cpu")


def test_automatic_choice_prefers_cuda_then_mps_then_cpu(monkeypatch):
    monkeypatch.delenv("COURSE_DEVICE", raising=False)
    present = set()
    monkeypatch.setattr(device_module, "_available", lambda name: name == "cpu" or name in present)
    assert get_device().type == "cpu"
    present.add("mps")
    assert get_device().type == "mps"
    present.add("cuda")
    assert get_device().type == "cuda"


def test_unknown_device_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("COURSE_DEVICE", "tpu")
    with pytest.raises(ValueError, match="must be one of cpu, cuda, mps; got 'tpu'"):
        get_device()


def test_missing_device_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("COURSE_DEVICE", "cuda")
    monkeypatch.setattr(device_module, "_available", lambda name: name == "cpu")
    with pytest.raises(ValueError, match="no cuda device is available"):
        get_device()


def test_set_seed_repeats_python_numpy_and_torch():
    def draw():
        return random.random(), np.random.rand(), torch.rand(1).item()

    set_seed(7)
    first = draw()
    set_seed(7)
    assert draw() == first
    set_seed(8)
    assert draw() != first


@pytest.mark.parametrize(("seed", "error"), [(1.5, TypeError), (True, TypeError), (-1, ValueError)])
def test_bad_seed(seed, error):
    with pytest.raises(error, match="seed"):
        set_seed(seed)


@pytest.mark.parametrize(
    ("env", "quick"),
    [
        ({}, False),
        ({"COURSE_QUICK": "1"}, True),
        ({"COURSE_QUICK": "0"}, False),
        ({"COURSE_QUICK": ""}, False),
        ({"NBGRADER_EXECUTION": "autograde"}, True),
        ({"NBGRADER_EXECUTION": "validate", "COURSE_QUICK": "0"}, True),
    ],
)
def test_quick_sizes(monkeypatch, env, quick):
    for name in ("COURSE_QUICK", "NBGRADER_EXECUTION"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert is_quick() is quick
    assert quick_or_full(quick="small", full="big") == ("small" if quick else "big")


def test_cpu_threads_is_restored_even_after_an_error():
    before = torch.get_num_threads()
    with pytest.raises(RuntimeError), cpu_threads(1):
        assert torch.get_num_threads() == 1
        raise RuntimeError("inside")
    assert torch.get_num_threads() == before
    with cpu_threads(None):
        assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="threads must be >= 1"), cpu_threads(0):
        pass

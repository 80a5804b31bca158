"""The benchmarks' devices: the CPU, and the GPU too when there is one, unless COURSE_DEVICE
names one; rows off the CPU carry their device."""

import pytest
import torch

from course_utils import device as device_module
from tests.benchmarks.timing import Row, bench_devices, on_each_device


@pytest.fixture
def present(monkeypatch):
    """Pretend these devices are present (the CPU always is); COURSE_DEVICE unset."""
    monkeypatch.delenv("COURSE_DEVICE", raising=False)

    def pretend(*names):
        monkeypatch.setattr(device_module, "_available", lambda name: name in ("cpu", *names))

    return pretend


def rows_for(device):
    return [Row("causal attention, n=128", "course_utils.models.attention", 1.0, "ms", str(device))]


def test_on_the_cpu_alone_nothing_changes(present):
    present()
    assert bench_devices() == [torch.device("cpu")]
    assert on_each_device(rows_for) == rows_for(torch.device("cpu"))


def test_with_a_gpu_the_rows_come_on_both_and_the_gpus_say_so(present):
    present("cuda")
    assert bench_devices() == [torch.device("cpu"), torch.device("cuda")]
    tasks = [(row.task, row.note) for row in on_each_device(rows_for)]
    assert tasks == [("causal attention, n=128", "cpu"), ("causal attention, n=128 [cuda]", "cuda")]


@pytest.mark.parametrize("chosen", ["cpu", "cuda"])
def test_course_device_runs_them_on_that_device_alone(present, monkeypatch, chosen):
    present("cuda")
    monkeypatch.setenv("COURSE_DEVICE", chosen)
    assert bench_devices() == [torch.device(chosen)]

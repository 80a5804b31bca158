"""Small timing helpers for the benchmarks (not for tests: tests never time)."""

import os
import time
from dataclasses import dataclass

import torch

from course_utils.device import DEVICE_ENV, get_device


@dataclass
class Row:
    """One line of the benchmark table."""

    task: str
    implementation: str
    value: float
    unit: str
    note: str = ""


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def best_time(function, repeat: int = 5, device: torch.device | None = None) -> float:
    """The fastest of ``repeat`` calls of ``function()``, in seconds (after one warm-up)."""
    return best_times([function], device, repeat)[0]


def best_times(functions, device: torch.device | None = None, rounds: int = 10) -> list[float]:
    """The fastest of ``rounds`` calls of each function, in seconds, the functions called in
    turn (after one warm-up each), so a busy machine slows them alike."""
    best = [float("inf")] * len(functions)
    for function in functions:
        function()
    for _ in range(rounds):
        for i, function in enumerate(functions):
            if device is not None:
                synchronize(device)
            start = time.perf_counter()
            function()
            if device is not None:
                synchronize(device)
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def bench_devices() -> list[torch.device]:
    """The devices the device-aware benchmarks run on: the one ``COURSE_DEVICE`` names when
    it is set; else the CPU and, when there is one, the accelerator ``get_device`` picks."""
    if os.environ.get(DEVICE_ENV, "").strip():
        return [get_device()]
    cpu, best = torch.device("cpu"), get_device()
    return [cpu] if best == cpu else [cpu, best]


def on_each_device(rows_for) -> list[Row]:
    """The rows of ``rows_for(device)`` for each of ``bench_devices()``, the task of each row
    off the CPU marked with its device ("… [cuda]")."""
    rows = []
    for device in bench_devices():
        for row in rows_for(device):
            if device.type != "cpu":
                row.task = f"{row.task} [{device.type}]"
            rows.append(row)
    return rows


def cuda_peak_memory(function) -> int:
    """The most bytes of CUDA memory that ``function()`` had allocated at once, on top of
    what was allocated before it (its inputs): the GPU's counterpart of
    ``course_utils.measure.peak_memory``."""
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    function()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - before

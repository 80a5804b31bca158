"""Small timing helpers for the benchmarks (not for tests: tests never time)."""

import time
from dataclasses import dataclass

import torch


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
    function()
    best = float("inf")
    for _ in range(repeat):
        if device is not None:
            synchronize(device)
        start = time.perf_counter()
        function()
        if device is not None:
            synchronize(device)
        best = min(best, time.perf_counter() - start)
    return best

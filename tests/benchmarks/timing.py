"""Small timing helpers for the benchmarks (not for tests: tests never time)."""

import os
import sys
import time
from contextlib import contextmanager
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


@contextmanager
def stderr_silenced():
    """File descriptor 2 sent to /dev/null: torch's profiler prints a start and a stop line
    there from C++ at every use, which ``contextlib.redirect_stderr`` cannot catch."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)

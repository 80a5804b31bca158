"""Print the benchmark table: ``python -m tests.benchmarks [name ...]`` (``make bench``).

The device-aware benchmarks (attention, MiniLM, GPT, linear attention) run on the CPU and,
when there is one, on the GPU too (their rows there end in "[cuda]"; times are absolute,
ratios are against PyTorch's own kernels on the same device). ``COURSE_DEVICE=cuda`` (or
``cpu``) runs them on that device alone; the others run on ``get_device()``.
"""

import importlib
import pkgutil
import sys

import torch

from tests import benchmarks
from tests.benchmarks.timing import bench_devices


def main(names: list[str]) -> None:
    devices = bench_devices()
    label = "device" if len(devices) == 1 else "devices"
    listed = ", ".join(str(device) for device in devices)
    print(f"{label}: {listed}, torch threads: {torch.get_num_threads()}\n")
    header = f"{'task':<44} {'implementation':<34} {'value':>12}  {'unit':<10} note"
    print(header)
    print("-" * len(header))
    for module_info in pkgutil.iter_modules(benchmarks.__path__):
        name = module_info.name.removeprefix("bench_")
        if not module_info.name.startswith("bench_") or (names and name not in names):
            continue
        module = importlib.import_module(f"tests.benchmarks.{module_info.name}")
        for row in module.run():
            print(
                f"{row.task:<44} {row.implementation:<34} {row.value:>12.4g}  {row.unit:<10} "
                f"{row.note}",
                flush=True,
            )


if __name__ == "__main__":
    main(sys.argv[1:])

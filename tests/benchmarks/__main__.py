"""Print the benchmark table: ``python -m tests.benchmarks [name ...]`` (``make bench``).

``COURSE_DEVICE=cuda`` runs the device-aware benchmarks on a GPU.
"""

import importlib
import pkgutil
import sys

import torch

from course_utils.device import get_device
from tests import benchmarks


def main(names: list[str]) -> None:
    print(f"device: {get_device()}, torch threads: {torch.get_num_threads()}\n")
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

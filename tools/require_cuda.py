"""Stop with a clear message unless torch sees a CUDA device: ``python -m tools.require_cuda``.

``make test-gpu`` runs this before anything else. With a device it prints which one and
exits 0; without, it prints what is missing and exits 1: torch itself, a build of torch
for a GPU (the pinned default may be the CPU build, ``2.13.0+cpu``), or a device that
such a build can see (no GPU, no NVIDIA driver, ``CUDA_VISIBLE_DEVICES`` hiding them).
A ROCm build of torch counts: it answers to the same ``cuda`` device.
"""

import os
import sys

HOW_TO = 'install a CUDA build of torch as the README says ("A GPU")'


def missing() -> str | None:
    """What keeps torch from computing on a CUDA device, or None when nothing does."""
    try:
        import torch
    except ImportError:
        return f"torch is not installed in this environment ({sys.executable}): {HOW_TO}"
    build = torch.version.cuda or torch.version.hip
    if build is None:
        return f"torch {torch.__version__} is built for the CPU only: {HOW_TO}"
    if not torch.cuda.is_available():
        hidden = os.environ.get("CUDA_VISIBLE_DEVICES")
        visible = "" if hidden is None else f", CUDA_VISIBLE_DEVICES={hidden!r}"
        return (
            f"torch {torch.__version__} is built for CUDA {build} but finds no device "
            f"(is there a GPU, and its driver? nvidia-smi lists them{visible})"
        )
    return None


def main() -> int:
    problem = missing()
    if problem:
        print(f"No CUDA device, so nothing was run: {problem}.", file=sys.stderr)
        return 1
    import torch

    name = torch.cuda.get_device_name()
    print(f"CUDA device: {name} (torch {torch.__version__}, {torch.cuda.device_count()} device(s))")
    return 0


if __name__ == "__main__":
    sys.exit(main())

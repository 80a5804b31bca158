"""Choosing the device and seeding randomness.

``get_device()`` picks the best accelerator present (cuda, then mps, then cpu).
Set ``COURSE_DEVICE=cpu|cuda|mps`` to choose one yourself, for example to present
on a laptop CPU although a GPU is there.
"""

import contextlib
import os
import random

import numpy as np
import torch

from course_utils.validation import integer, positive_int

DEVICE_ENV = "COURSE_DEVICE"
KNOWN_DEVICES = ("cpu", "cuda", "mps")


def _available(name: str) -> bool:
    if name == "cuda":
        return torch.cuda.is_available()
    if name == "mps":
        return torch.backends.mps.is_available()
    return True


def get_device() -> torch.device:
    """The device the notebooks compute on.

    ``COURSE_DEVICE`` overrides the automatic choice; asking for a device that is
    unknown or not present raises ``ValueError``.
    """
    requested = os.environ.get(DEVICE_ENV, "").strip().lower()
    if requested:
        if requested not in KNOWN_DEVICES:
            raise ValueError(
                f"{DEVICE_ENV} must be one of {', '.join(KNOWN_DEVICES)}; got {requested!r}"
            )
        if not _available(requested):
            raise ValueError(
                f"{DEVICE_ENV}={requested} but no {requested} device is available on this machine"
            )
        return torch.device(requested)
    for name in ("cuda", "mps"):
        if _available(name):
            return torch.device(name)
    return torch.device("cpu")


def set_seed(seed: int) -> None:
    """Seed Python's ``random``, NumPy and torch (every device) with ``seed``."""
    integer("seed", seed, minimum=0)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device


@contextlib.contextmanager
def cpu_threads(n: int | None):
    """Run the ``with`` block with torch using ``n`` CPU threads (None: torch's setting)."""
    before = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(positive_int("threads", n))
    try:
        yield
    finally:
        torch.set_num_threads(before)

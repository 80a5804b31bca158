"""The environment variables the guards obey, read once: at a grading kernel's start.

``course_utils.grading_kernel`` (the grading kernel's extension, loaded before any cell runs)
imports this module, so ``START_ENVIRONMENT`` holds the switches as the kernel started; a
cell that sets ``os.environ["COURSE_ALLOWLIST"] = "off"`` later changes nothing (the guards
read only this).
"""

import os
from types import MappingProxyType

__all__ = ["START_ENVIRONMENT", "SWITCHES", "start_switch"]

SWITCHES = (
    "COURSE_ALLOWLIST",  # "off": no allowlist, for measuring what it costs (make bench)
    "COURSE_ALLOWLIST_RECORD",  # a file: refusals are written there, not raised
    "NBGRADER_EXECUTION",  # "autograde" while nbgrader grades
)


def _read_once() -> MappingProxyType:
    """The switches as the process had them when this module was first imported; a reload
    keeps them."""
    kept = globals().get("START_ENVIRONMENT")
    if isinstance(kept, MappingProxyType):
        return kept
    return MappingProxyType({name: os.environ[name] for name in SWITCHES if name in os.environ})


START_ENVIRONMENT = _read_once()


def start_switch(name: str, default: str | None = None) -> str | None:
    """The value of the switch ``name`` (one of ``SWITCHES``) in the start environment."""
    return START_ENVIRONMENT.get(name, default)

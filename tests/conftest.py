"""Shared test setup: the repository root, and kernels from this environment."""

import os
import sys
from pathlib import Path

import matplotlib
import pytest

REPO = Path(__file__).resolve().parents[1]

# Kernels started by nbval and nbgrader are found on PATH: use this environment's python,
# even when pytest is run without activating the virtual environment.
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
matplotlib.use("Agg")


@pytest.fixture(scope="session")
def course(tmp_path_factory):
    """A throw-away nbgrader course over solutions/, released once for the whole session."""
    from tests.nbgrader_course import make_course

    return make_course(tmp_path_factory.mktemp("course"))

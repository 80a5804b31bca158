"""Shared test setup: the repository root, and kernels from this environment."""

import os
import sys
from pathlib import Path

import matplotlib
import pytest

REPO = Path(__file__).resolve().parents[1]
# The course's assignments, one folder of solutions/ each (their releases: notebooks/).
ASSIGNMENTS = sorted(p.name for p in (REPO / "solutions").iterdir() if p.is_dir())

# Kernels started by nbval and nbgrader are found on PATH: use this environment's python,
# even when pytest is run without activating the virtual environment.
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
matplotlib.use("Agg")


def pytest_addoption(parser):
    parser.addoption(
        "--assignment",
        action="append",
        default=[],
        help="release and grade only this assignment (repeatable); default: all of solutions/",
    )


@pytest.fixture(scope="session")
def assignments(request):
    """The assignments under test: --assignment ones, else every folder of solutions/."""
    every = sorted(p.name for p in (REPO / "solutions").iterdir() if p.is_dir())
    chosen = request.config.getoption("--assignment") or every
    unknown = set(chosen) - set(every)
    if unknown:
        raise pytest.UsageError(f"--assignment: no such assignment {sorted(unknown)}")
    return chosen


@pytest.fixture(scope="session")
def course(tmp_path_factory, assignments):
    """A throw-away nbgrader course over those assignments, released once per session."""
    from tests.support.nbgrader_course import make_course

    return make_course(tmp_path_factory.mktemp("course"), assignments)


@pytest.fixture(scope="session")
def oracle():
    """MiniLM's (tokenizer, BertModel) loaded by transformers alone, without course_utils."""
    from transformers import BertModel, BertTokenizerFast

    from course_utils.models.pretrained import model_path

    tokenizer = BertTokenizerFast.from_pretrained(model_path(), local_files_only=True)
    model = BertModel.from_pretrained(model_path(), local_files_only=True).eval()
    return tokenizer, model


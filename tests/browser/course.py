"""The course's notebooks as the browser tests find them in the repository."""

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ASSIGNMENTS = sorted(p.name for p in (REPO / "solutions").iterdir() if p.is_dir())


def release(assignment: str) -> Path:
    """The student release of ``assignment`` (notebooks/)."""
    return REPO / "notebooks" / assignment / f"{assignment}.ipynb"


def solution(assignment: str) -> Path:
    """The instructor's source of ``assignment`` (solutions/)."""
    return REPO / "solutions" / assignment / f"{assignment}.ipynb"


def copy_into(notebook: Path, folder: Path) -> Path:
    """Copy ``notebook`` to ``folder/<its folder>/<its name>``, as a student downloads it."""
    copy = folder / notebook.parent.name / notebook.name
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(notebook, copy)
    return copy

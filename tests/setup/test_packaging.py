"""A regular (non-editable) install of course_utils is whole: every module is in the wheel."""

import shutil
import subprocess
import sys
import zipfile

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.notebook  # builds a wheel: a few seconds


def test_the_wheel_holds_every_module_of_the_package(tmp_path):
    project = tmp_path / "project"  # a copy, so the build leaves nothing in the repository
    shutil.copytree(REPO / "course_utils", project / "course_utils",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, project)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(tmp_path), "."],
        check=True,
        cwd=project,
    )
    (wheel,) = tmp_path.glob("course_utils-*.whl")
    packed = {name for name in zipfile.ZipFile(wheel).namelist() if name.endswith(".py")}
    source = {
        str(path.relative_to(REPO))
        for path in (REPO / "course_utils").rglob("*.py")
        if "__pycache__" not in path.parts
    }
    assert "course_utils/checks/__init__.py" in source
    assert source == packed, f"missing from the wheel: {sorted(source - packed)}"

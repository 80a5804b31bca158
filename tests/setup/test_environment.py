"""The two-command setup stays consistent: pins, README, CI."""

import re
import tomllib

from tests.conftest import REPO

STUDENTS_MAKEFILE = "tools/student_edition/Makefile"


def pyproject():
    with open(REPO / "pyproject.toml", "rb") as handle:
        return tomllib.load(handle)["project"]


def pyproject_pins():
    return sorted(pyproject()["dependencies"])


def test_every_dependency_is_pinned_exactly():
    for requirement in pyproject_pins() + pyproject()["optional-dependencies"]["dev"]:
        assert re.fullmatch(r"[A-Za-z0-9_.\-]+==[0-9][0-9A-Za-z.+]*", requirement), requirement


def test_environment_yml_has_the_same_pins():
    text = (REPO / "environment.yml").read_text()
    conda_pins = sorted(re.findall(r"^\s+- ([A-Za-z0-9_.\-]+==\S+)\s*$", text, flags=re.M))
    assert conda_pins == pyproject_pins()


def test_readme_opens_with_the_two_commands_and_ci_runs_the_test_one():
    readme = (REPO / "README.md").read_text()
    first_block = re.search(r"```(?:bash|sh)?\n(.*?)```", readme, flags=re.S).group(1)
    assert "make lab" in first_block and "make test" in first_block
    ci = (REPO / ".ci" / "run").read_text()
    assert re.search(r"^make test$", ci, flags=re.M)


def test_makefile_has_the_documented_targets():
    # setup and lab come from the students' Makefile, which the instructors' includes
    makefile = (REPO / "Makefile").read_text() + (REPO / STUDENTS_MAKEFILE).read_text()
    assert f"include {STUDENTS_MAKEFILE}" in makefile
    for target in ("setup", "lab", "test", "release", "autograde", "feedback", "grades", "bench"):
        assert re.search(rf"^{target}:", makefile, flags=re.M), target

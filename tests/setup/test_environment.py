"""The two-command setup stays consistent: ranges and pins, README, CI."""

import re
import tomllib

from packaging.requirements import Requirement

from tests.conftest import REPO

STUDENTS_MAKEFILE = "tools/student_edition/Makefile"


def pyproject():
    with open(REPO / "pyproject.toml", "rb") as handle:
        return tomllib.load(handle)["project"]


LOCK = "requirements-lock.txt"


def lock_pins() -> list[str]:
    """The lock file's requirements, ``name==version`` each (comments left out)."""
    lines = (REPO / LOCK).read_text().splitlines()
    return sorted(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def ranges() -> list[str]:
    """What the package itself declares: its dependencies and its `lab` extra."""
    return pyproject()["dependencies"] + pyproject()["optional-dependencies"]["lab"]


def test_the_lock_file_pins_exactly_and_the_developers_tools_too():
    for requirement in lock_pins() + pyproject()["optional-dependencies"]["dev"]:
        assert re.fullmatch(r"[A-Za-z0-9_.\-]+==[0-9][0-9A-Za-z.+]*", requirement), requirement
    assert "torch==2.13.0" in lock_pins()


def test_the_package_declares_ranges_and_each_pin_of_the_lock_lies_in_its_range():
    """A hosted runtime keeps its own torch, NumPy, IPython and ipywidgets: the package asks
    for ranges, and the lock file (what `make setup`, CI and the course server install) pins
    one version inside each, for exactly the same packages."""
    declared = {Requirement(text).name: Requirement(text) for text in ranges()}
    pins = {Requirement(text).name: Requirement(text) for text in lock_pins()}
    assert sorted(declared) == sorted(pins)
    for name, requirement in declared.items():
        assert not any(spec.operator in ("==", "===") for spec in requirement.specifier), (
            f"{requirement}: a range, not a pin, in pyproject.toml")
        (pin,) = pins[name].specifier
        assert requirement.specifier.contains(pin.version, prereleases=True), (
            f"the lock's {name}=={pin.version} is outside pyproject.toml's {requirement}")


def test_environment_yml_has_the_same_pins():
    text = (REPO / "environment.yml").read_text()
    conda_pins = sorted(re.findall(r"^\s+- ([A-Za-z0-9_.\-]+==\S+)\s*$", text, flags=re.M))
    assert conda_pins == lock_pins()


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

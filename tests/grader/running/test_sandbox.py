"""The grading kernel's command and limits, and grading where there is no sandbox."""

import dataclasses
import threading

import pytest
from nbgrader.api import Gradebook

from grader.running import sandbox
from grader.running.sandbox import Limits, kernel_argv
from grader.scoring import autograde as autograde_module
from grader.scoring.autograde import autograde
from tests.conftest import REPO
from tests.grader.tiny_course import (
    ASSIGNMENT,
    LIMITS,
    answered,
    hand_in,
    lingering,
    make_tiny_course,
    sleeping,
)


@pytest.mark.parametrize("bad, error", [
    ({"memory_bytes": True}, TypeError),
    ({"memory_bytes": 0}, ValueError),
    ({"notebook_timeout": 2.5}, TypeError),
    ({"cell_timeout": -1}, ValueError),
])
def test_limits_refuse_what_is_not_a_positive_int(bad, error):
    with pytest.raises(error, match=f"Limits.{next(iter(bad))}"):
        Limits(**bad)


def test_the_sandboxed_kernel_sees_its_folders_and_not_the_course(tmp_path, sandbox):
    work, home, sockets = tmp_path / "work", tmp_path / "home", tmp_path / "run"
    argv = kernel_argv(work, home, sockets, Limits(memory_bytes=2**30))
    assert argv[0] == "bwrap" and "--unshare-all" in argv and "--clearenv" in argv
    writable = {argv[i + 1] for i, part in enumerate(argv) if part == "--bind"}
    assert writable == {str(work), str(home), str(sockets)}
    mounted = {argv[i + 1] for i, part in enumerate(argv) if part in ("--bind", "--ro-bind")}
    for secret in ("solutions", "grading", "notebooks", "tests"):
        assert str(REPO / secret) not in mounted
    assert str(REPO) not in mounted  # the workbook's package only, not the repository
    assert argv[argv.index("prlimit") + 1] == f"--as={2**30}"


def test_without_the_sandbox_the_kernel_is_only_capped(tmp_path):
    argv = kernel_argv(tmp_path, tmp_path, tmp_path, Limits(sandbox=False))
    assert argv[:2] == ["prlimit", f"--as={4 * 1024**3}"] and "bwrap" not in argv


# Right only in a kernel that knows it runs ada's work (course_utils.student).
ADAS_OWN = """
import os

def double(x, environment=os.environ):
    return 2 * x if environment.get("COURSE_STUDENT") == "ada" else x
"""


@pytest.mark.notebook
def test_grading_without_bubblewrap_still_runs_and_says_what_is_not_protected(
        tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    sandbox.unavailable.cache_clear()
    try:
        reason = sandbox.unavailable()
        assert reason.startswith("NOT SANDBOXED") and "apt-get install bubblewrap" in reason
        monkeypatch.setattr(autograde_module, "unavailable", sandbox.unavailable)
        course = make_tiny_course(tmp_path)
        hand_in(course, "ada", {f"{ASSIGNMENT}.ipynb": answered(course, {"double": ADAS_OWN})})
        told = []
        summary = autograde(course, limits=LIMITS, progress=False, tell=told.append)
        assert told[0] == reason and summary.graded == [f"ada/{ASSIGNMENT}"]
        with Gradebook(course.gradebook_url) as book:  # the kernel knew it grades ada's work
            notebook = book.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "ada")
            assert {grade.name: grade.score for grade in notebook.grades}["test_double"] == 2
    finally:
        sandbox.unavailable.cache_clear()


@pytest.mark.notebook
def test_without_the_sandbox_a_process_left_running_does_not_stall_grading(tmp_path):
    """The student's process holds on to what the kernel inherited from nbgrader (its
    output); grading must still end when nbgrader does, and grade the submission."""
    argument = "86399.25"
    course = make_tiny_course(tmp_path)
    answer = lingering(argument)
    hand_in(course, "ada", {f"{ASSIGNMENT}.ipynb": answered(course, {"double": answer})})
    finished = []
    grading = threading.Thread(daemon=True, target=lambda: finished.append(autograde(
        course, limits=dataclasses.replace(LIMITS, sandbox=False), progress=False)))
    try:
        grading.start()
        grading.join(timeout=LIMITS.notebook_timeout + 60)
        assert sleeping(argument), "the student's process did not start: nothing was tested"
        assert finished, "grading waited on the student's process"
        assert finished[0].graded == [f"ada/{ASSIGNMENT}"], finished[0]
    finally:
        for process in sleeping(argument):
            process.kill()


def test_the_sandboxed_kernel_gets_its_share_of_the_cores(tmp_path, sandbox):
    argv = kernel_argv(tmp_path, tmp_path, tmp_path, Limits(), threads=3)
    settings = {argv[i + 1]: argv[i + 2] for i, part in enumerate(argv) if part == "--setenv"}
    assert settings["OMP_NUM_THREADS"] == settings["MKL_NUM_THREADS"] == "3"


def test_the_sandboxed_kernel_knows_whose_submission_it_grades(tmp_path, sandbox):
    """The id the exercises drawn per student read (course_utils.student), and no other."""
    argv = kernel_argv(tmp_path, tmp_path, tmp_path, Limits(), student="ada")
    settings = {argv[i + 1]: argv[i + 2] for i, part in enumerate(argv) if part == "--setenv"}
    assert settings["COURSE_STUDENT"] == "ada" and "JUPYTERHUB_USER" not in settings

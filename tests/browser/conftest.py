"""Fixtures of the browser tests: Debian's Chromium, JupyterLab servers on copies, pages.

The servers never see the repository: the student's serves a copy of each notebook a
test opens, the TA's a copy of the course (nbgrader's config, solutions/ and notebooks/).
Each test gets a fresh browser context; its screenshots go to ``artifacts/<test>/``
(git-ignored), and it fails if a page script raised an uncaught exception.
"""

import os
import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from tests.browser.course import REPO
from tests.browser.jupyter_server import running_server
from tests.browser.steps import PageErrors, Steps, slug
from tests.support.nbgrader_course import make_course, solution_cells, submit

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM_NAMES = ("chromium", "chromium-browser")
VIEWPORT = {"width": 1400, "height": 1000}
# Heavy demos shrink to their quick sizes (course_utils.quick), as under grading, and the
# student has an id (notebook 04's numbers by hand are drawn from it), as on the course server.
STUDENT = "ada"
KERNEL_ENV = {"COURSE_QUICK": "1", "COURSE_STUDENT": STUDENT}
# The notebook that a TA grades in graded_course.
GRADED = "04_alpha3_by_hand"


def chromium_path() -> str:
    """The system's Chromium (the Playwright download is not used)."""
    for name in CHROMIUM_NAMES:
        if found := shutil.which(name):
            return found
    pytest.fail("Chromium is not installed: `make test-browser` installs Debian's chromium")


@pytest.fixture(scope="session")
def chromium():
    """One headless Chromium for the whole session."""
    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=args)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """The screenshot folder, emptied once per session."""
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True)
    return ARTIFACTS


@contextmanager
def student_jupyter(base: Path):
    """A student's JupyterLab (Notebook 7 included) on the empty folder ``base/work``."""
    root = base / "work"
    root.mkdir()
    with running_server(root, cwd=root, state=base / "jupyter", env=KERNEL_ENV) as server:
        yield server


@pytest.fixture(scope="session")
def student_server(tmp_path_factory):
    """The student's server that the JupyterLab tests share."""
    with student_jupyter(tmp_path_factory.mktemp("student")) as server:
        yield server


@pytest.fixture
def own_server(tmp_path):
    """A student's server for one test: JupyterLab and Notebook 7 on one server break each
    other's fonts (test_notebook7_draws_math_after_jupyterlab), so Notebook 7 gets its own."""
    with student_jupyter(tmp_path) as server:
        yield server


@pytest.fixture(scope="session")
def ta_server(tmp_path_factory):
    """The TAs' JupyterLab as ``make formgrader`` starts it, on a copy of the course.

    It runs from grading/, where nbgrader's Formgrader finds its config.
    """
    base = tmp_path_factory.mktemp("ta")
    course = base / "course"
    for folder in ("solutions", "notebooks"):
        shutil.copytree(REPO / folder, course / folder)
    (course / "grading").mkdir()
    shutil.copy(REPO / "grading" / "nbgrader_config.py", course / "grading")
    with running_server(course, cwd=course / "grading", state=base / "jupyter",
                        env=KERNEL_ENV) as server:
        yield server


@pytest.fixture
def workspace(student_server, request) -> Path:
    """This test's own folder in the student's server (its path under the server's root)."""
    folder = student_server.root / slug(request.node.name)
    folder.mkdir()
    yield folder
    student_server.shut_down_kernels()


@pytest.fixture
def context(chromium):
    """A fresh browser context (cookies, storage) for one test."""
    context = chromium.new_context(viewport=VIEWPORT)
    yield context
    context.close()


@pytest.fixture
def page_errors(context):
    """What the pages' scripts raised or logged as errors: a test fails on any of them."""
    errors = PageErrors(context)
    yield errors
    assert not errors.reported, "the browser reported:\n" + "\n".join(errors.reported)


@pytest.fixture
def page(context, page_errors):
    """A page of this test's browser context."""
    return context.new_page()


@pytest.fixture
def steps(page, artifacts, request) -> Steps:
    """Named steps with screenshots in ``artifacts/<test name>/``."""
    return Steps(page, artifacts / slug(request.node.name))


@pytest.fixture(scope="session")
def graded_course(tmp_path_factory):
    """A course of 04 (GRADED) with a right and a blank submission, autograded, with feedback and
    the class report, written by the TA's commands."""
    from grader.__main__ import main

    course = make_course(tmp_path_factory.mktemp("course"), [GRADED])
    submit(course, GRADED, "right", solution_cells(GRADED))
    submit(course, GRADED, "blank", {})
    for step in (["autograde"], ["feedback"], ["report"]):
        assert main(step + ["--course-root", str(course.root)]) == 0, step
    return course

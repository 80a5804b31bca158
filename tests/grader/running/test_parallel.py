"""The same grades whatever runs the jobs: one worker, two, or a Dask cluster; and the
lock that keeps two grading runs from writing the gradebook at once."""

import os
import threading
import time
from unittest.mock import patch

import pytest
from distributed import LocalCluster
from nbgrader.api import Gradebook

from grader.scoring.autograde import autograde, lock
from tests.grader.tiny_course import ASSIGNMENT, LIMITS, answered, hand_in, make_tiny_course

pytestmark = pytest.mark.notebook

STUDENTS = {
    "right": {},
    "square_wrong": {"square": "def square(x):\n    return x + x"},
    "double_wrong": {"double": "def double(x):\n    return x ** 2"},
}
EXPECTED = {"right": (2, 1), "square_wrong": (2, 0), "double_wrong": (0, 1)}


def graded_course(root, **how):
    course = make_tiny_course(root)
    for student, answers in STUDENTS.items():
        hand_in(course, student, {f"{ASSIGNMENT}.ipynb": answered(course, answers)})
    # the self-check is the same whatever runs the jobs (tests/grader/scoring/test_selfcheck.py):
    # without it, three courses grade 13 s sooner
    summary = autograde(course, limits=LIMITS, progress=False, check_environment=False, **how)
    assert sorted(summary.graded) == sorted(f"{s}/{ASSIGNMENT}" for s in STUDENTS)
    return course


def gradebook_scores(course):
    """{student: {cell: (auto score, needs manual grade)}}: what the gradebook holds."""
    with Gradebook(course.gradebook_url) as book:
        return {
            student: {grade.name: (grade.auto_score, grade.needs_manual_grade)
                      for grade in book.find_submission_notebook(
                          ASSIGNMENT, ASSIGNMENT, student).grades}
            for student in STUDENTS
        }


@pytest.fixture(scope="module")
def serial(tmp_path_factory, sandbox):
    return gradebook_scores(graded_course(tmp_path_factory.mktemp("serial"), workers=1))


def test_one_worker_grades_as_expected(serial):
    for student, (double, square) in EXPECTED.items():
        assert serial[student]["test_double"][0] == double, student
        assert serial[student]["test_square"][0] == square, student
        assert serial[student]["written"] == (None, True), "the written answer waits for a TA"


def test_two_workers_leave_the_gradebook_as_one_does(serial, tmp_path):
    assert gradebook_scores(graded_course(tmp_path, workers=2)) == serial


def test_a_dask_cluster_grades_the_same(serial, tmp_path):
    # patch.dict gives os.environ back as it was: Dask's nanny writes its workers'
    # environment (OMP_NUM_THREADS=1 and the like, "pre-spawn-environ") into the process
    # that starts them, and every kernel started later in this session, nbval's too, would
    # run torch on one thread (06's first demo: 35 s instead of 18).
    with patch.dict(os.environ), LocalCluster(n_workers=2, threads_per_worker=1,
                                              processes=True, dashboard_address=None) as cluster:
        course = graded_course(tmp_path, scheduler=cluster.scheduler_address)
    assert gradebook_scores(course) == serial


def test_a_second_run_waits_for_the_first(tmp_path, sandbox):
    course = make_tiny_course(tmp_path)
    hand_in(course, "right", {f"{ASSIGNMENT}.ipynb": answered(course, {})})
    finished = []
    with lock(course):
        second = threading.Thread(
            target=lambda: finished.append(autograde(course, limits=LIMITS, progress=False)))
        second.start()
        time.sleep(1)
        assert second.is_alive() and not finished, "the second run did not wait for the lock"
    second.join(timeout=120)
    assert finished and finished[0].graded == [f"right/{ASSIGNMENT}"]

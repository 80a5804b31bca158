"""Grading on submission without a hub: the queue, what is to do after a restart or a due
date, what an early page may show, and one submission of the tiny assignment graded,
released and then regraded by ``autograde`` to the same gradebook (tests/hub runs the
service in JupyterHub with notebook 04)."""

import html
import logging
import re
import shutil
import threading
import time
from datetime import UTC, datetime, timedelta

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from nbgrader.api import Gradebook
from nbgrader.utils import notebook_hash

from grader import state
from grader.course import SECRET, Course
from grader.intake import exchange
from grader.on_submit import __main__ as on_submit
from grader.on_submit.pages import (
    cell_results,
    early_feedback_mode,
    early_page,
    failed_at,
    full_page_banner,
    with_banner,
)
from grader.on_submit.queue import KeyedQueue
from grader.on_submit.service import (
    FULL_EARLY,
    Later,
    Released,
    Service,
    latest_submissions,
    load_released,
    to_do,
)
from grader.running import nbgrader_steps
from grader.scoring import selfcheck
from grader.scoring.autograde import autograde
from tests.conftest import REPO
from tests.grader.tiny_course import ASSIGNMENT, LIMITS, TESTS, WORKED, answered, tiny_source

# --- the queue ---------------------------------------------------------------------------


class Recorder:
    """A task that records which keys run at once, and waits for a gate per key."""

    def __init__(self):
        self.lock = threading.Lock()
        self.running: set = set()
        self.overlaps: list = []
        self.done: list = []
        self.gates: dict = {}

    def __call__(self, key):
        with self.lock:
            if key in self.running:
                self.overlaps.append(key)
            self.running.add(key)
        self.gates.setdefault(key, threading.Event()).wait(10)
        with self.lock:
            self.running.discard(key)
            self.done.append(key)


def wait_until(condition, seconds=10):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_a_slow_submission_holds_one_worker_and_the_others_go_on():
    task = Recorder()
    queue = KeyedQueue(2, task)
    queue.submit("slow", 1)
    queue.submit("quick", 1)
    wait_until(lambda: task.running == {"slow", "quick"})
    task.gates["quick"].set()
    wait_until(lambda: task.done == ["quick"])
    assert queue.busy("slow") and not queue.busy("quick")
    task.gates["slow"].set()
    queue.close()
    assert task.done == ["quick", "slow"]


def test_one_key_never_runs_twice_at_once_and_a_newer_version_runs_once_after():
    task = Recorder()
    queue = KeyedQueue(3, task)
    queue.submit("ada", "first")
    wait_until(lambda: task.running == {"ada"})
    queue.submit("ada", "first")  # the same submission, seen again by the next poll
    queue.submit("ada", "second")
    queue.submit("ada", "third")  # the newest counts: still one run more
    time.sleep(0.1)
    assert task.running == {"ada"}
    task.gates["ada"].set()
    queue.close()
    assert task.done == ["ada", "ada"] and task.overlaps == []


def test_a_failing_job_does_not_stop_the_queue():
    ran = []

    def task(key):
        ran.append(key)
        raise RuntimeError("broken")

    queue = KeyedQueue(1, task)
    queue.submit("ada")
    queue.submit("bob")
    wait_until(lambda: len(ran) == 2 and not queue.busy("bob"))
    queue.close()
    assert ran == ["ada", "bob"]


def test_the_number_of_workers_must_be_a_whole_number():
    with pytest.raises(ValueError, match="expected a whole number >= 1, got 0"):
        KeyedQueue(0, print)


# --- what is to do: new submissions, restarts, due dates ----------------------------------

NOW = datetime(2026, 6, 1, 12, 0)


def test_a_new_or_newer_submission_is_to_do_and_one_given_its_page_is_not():
    latest = {("ada", "a"): "ada+a+2", ("bob", "a"): "bob+a+1", ("cy", "a"): "cy+a+1"}
    released = {"ada/a": Released("ada+a+1", "full"), "bob/a": Released("bob+a+1", "full")}
    assert to_do(latest, released, {}, NOW) == [("ada", "a"), ("cy", "a")]


def test_early_pages_are_to_do_again_once_the_due_date_has_passed():
    latest = {("ada", "a"): "ada+a+1", ("bob", "a"): "bob+a+1", ("cy", "b"): "cy+b+1"}
    released = {"ada/a": Released("ada+a+1", "early"), "bob/a": Released("bob+a+1", "none"),
                "cy/b": Released("cy+b+1", "early"), "dan/a": Released("dan+a+1", FULL_EARLY)}
    latest[("dan", "a")] = "dan+a+1"  # a full page given early lacks the worked answers
    due = {"a": NOW, "b": None}
    assert to_do(latest, released, due, NOW - timedelta(seconds=1)) == []
    assert to_do(latest, released, due, NOW) == [("ada", "a"), ("bob", "a"), ("dan", "a")]
    full = {key: Released(given.submission, "full") for key, given in released.items()}
    assert to_do(latest, full, due, NOW) == []


@pytest.fixture
def course(tmp_path, monkeypatch) -> Course:
    """A course over ``tiny`` with its worked answers, not released (the end-to-end test
    releases it)."""
    monkeypatch.setenv("COURSE_EXCHANGE", str(tmp_path / "exchange"))
    monkeypatch.delenv("COURSE_EARLY_FEEDBACK", raising=False)
    (tmp_path / "grading").mkdir()
    shutil.copy(REPO / "grading" / "nbgrader_config.py", tmp_path / "grading")
    (tmp_path / "solutions" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(tiny_source(worked=True),
                   tmp_path / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    return Course(tmp_path / "grading")


def inbound(course: Course, name: str, complete: bool = True):
    """A submission folder as nbgrader's submit lays it out (the secret written last)."""
    folder = exchange.course_folder(course) / "inbound" / name
    folder.mkdir(parents=True)
    (folder / f"{ASSIGNMENT}.ipynb").write_text("{}")
    (folder / "timestamp.txt").write_text(name.split("+")[2])
    if complete:
        (folder / SECRET).write_text("5e" * 64)
    return folder


def test_the_latest_complete_submission_of_each_student_counts(course):
    inbound(course, f"ada+{ASSIGNMENT}+2026-06-01 10:00:00.000000 UTC+A1")
    inbound(course, f"ada+{ASSIGNMENT}+2026-06-01 11:00:00.000000 UTC+A2")
    inbound(course, f"ada+{ASSIGNMENT}+2026-06-01 12:00:00.000000 UTC+A3", complete=False)
    inbound(course, f"bob+{ASSIGNMENT}+2026-06-01 09:00:00.000000 UTC")
    inbound(course, "bob+unknown+2026-06-01 09:00:00.000000 UTC")
    assert latest_submissions(course) == {
        ("ada", ASSIGNMENT): f"ada+{ASSIGNMENT}+2026-06-01 11:00:00.000000 UTC+A2",
        ("bob", ASSIGNMENT): f"bob+{ASSIGNMENT}+2026-06-01 09:00:00.000000 UTC"}


class Noted(Service):
    """The service with a job that only notes its key, then waits for ``gate``."""

    def __init__(self, course):
        self.handled, self.gate = [], threading.Event()
        super().__init__(course, workers=2, limits=LIMITS)

    def handle(self, key):
        self.handled.append(key)
        self.gate.wait(10)


def test_polls_while_a_submission_is_graded_queue_it_once(course):
    inbound(course, f"ada+{ASSIGNMENT}+2026-06-01 10:00:00.000000 UTC")
    service = Noted(course)
    for _ in range(3):
        service.poll(NOW)
    service.gate.set()
    service.queue.close()
    assert service.handled == [("ada", ASSIGNMENT)]


def test_in_a_broken_environment_the_service_grades_nobody_and_says_why(course,
                                                                     monkeypatch, caplog):
    def broken(*args, **kwargs):
        raise selfcheck.BrokenEnvironment("the grading environment cannot import course_utils")

    monkeypatch.setattr(selfcheck, "verify", broken)
    monkeypatch.setattr(on_submit, "wait_for", lambda stop: None)  # as if the hub stopped it
    (exchange.course_folder(course) / "outbound" / ASSIGNMENT).mkdir(parents=True)
    inbound(course, f"ada+{ASSIGNMENT}+2026-06-01 10:00:00.000000 UTC")
    with caplog.at_level(logging.INFO, logger="grader.on_submit"):
        assert on_submit.main(["--course-root", str(course.root)]) == 1
    assert "grading on submission is off, nobody is graded: the grading environment cannot " \
           "import course_utils" in caplog.text
    assert not (course.root / "on_submit_state.json").exists() and course.students() == []


# --- what an early page shows --------------------------------------------------------------

def traceback(line: int) -> list[str]:
    """An error's traceback as IPython 9 writes it (colours and all) for a cell that
    raised at ``line`` of its own source, in a function it called."""
    return ["\x1b[31m" + "-" * 75 + "\x1b[39m",
            "\x1b[31mAssertionError\x1b[39m                            Traceback (most recent "
            "call last)",
            f"\x1b[36mCell\x1b[39m\x1b[36m \x1b[39m\x1b[32mIn[7]\x1b[39m\x1b[32m, line {line}"
            "\x1b[39m\n\x1b[32m----> \x1b[39m\x1b[32m1\x1b[39m check()\n",
            "\x1b[36mCell\x1b[39m\x1b[36m \x1b[39m\x1b[32mIn[3]\x1b[39m\x1b[32m, line 9"
            "\x1b[39m, in \x1b[36mcheck\x1b[39m\x1b[34m()\x1b[39m\n",
            "\x1b[31mAssertionError\x1b[39m: the message"]


def graded_test_cell(grade_id, source, error=None):
    metadata = {"nbgrader": {"grade": True, "solution": False, "grade_id": grade_id}}
    outputs = [] if error is None else [new_output("error", **error)]
    return new_code_cell(source, metadata=metadata, outputs=outputs)


def error(evalue, lines):
    return {"ename": "AssertionError", "evalue": evalue, "traceback": lines}


def test_a_cell_with_hidden_tests_shows_its_visible_part_only():
    """Lines 1-2 are the visible tests, the hidden ones from line 3 (the marker) on."""
    source = "check(1)\ncheck(2)\n### BEGIN HIDDEN TESTS\ncheck(3)\n### END HIDDEN TESTS"
    notebook = new_notebook(cells=[
        graded_test_cell("visible_fails", source, error("visible says why", traceback(2))),
        graded_test_cell("hidden_fails", source, error("the hidden test's secret", traceback(4))),
        graded_test_cell("passes", source),
        graded_test_cell("untold", source, error("failed, no traceback", ["HiddenFailure: ..."])),
        graded_test_cell("outside", source, {"ename": "OutsideCheck",  # the grader's verdict
                                             "evalue": "check 2 of 2 got a value that differs",
                                             "traceback": ["OutsideCheck: check 2 of 2 ..."]}),
        graded_test_cell("no_hidden", "check(1)", error("plain message", traceback(1))),
        graded_test_cell("no_hidden_passes", "check(1)"),
        new_markdown_cell("Because.", metadata={"nbgrader": {"grade": True, "solution": True,
                                                             "grade_id": "written"}}),
    ])
    scores = {"visible_fails": (0, 2, False), "hidden_fails": (0, 2, False),
              "passes": (2, 2, False), "untold": (0, 2, False), "outside": (0, 2, False),
              "no_hidden": (0, 1, False),
              "no_hidden_passes": (1, 1, False), "written": (0, 3, True)}
    shown = {cell.name: (cell.result, cell.shown_score, cell.message)
             for cell in cell_results(notebook, scores)}
    hidden_part = "visible tests passed; hidden tests after the due date"
    assert shown == {
        "visible_fails": ("visible tests failed", "0 / 2", "AssertionError: visible says why"),
        "hidden_fails": (hidden_part, "? / 2", ""),
        "passes": (hidden_part, "? / 2", ""),
        "untold": ("after the due date", "? / 2", ""),
        "outside": (hidden_part, "? / 2", ""),
        "no_hidden": ("failed", "0 / 1", "AssertionError: plain message"),
        "no_hidden_passes": ("passed", "1 / 1", ""),
        "written": ("graded by the course staff", "? / 3", ""),
    }
    page = early_page("tiny", "ada", NOW, NOW + timedelta(days=1),
                      cell_results(notebook, scores))
    text = text_of(page)
    assert "the hidden test's secret" not in page and "failed, no traceback" not in page
    assert "visible says why" in text and "plain message" in text
    assert "Early feedback on ada's submission of 2026-06-01 12:00:00 UTC" in text
    assert "after the due date, 2026-06-02 12:00 UTC" in text
    assert "check 2 of 2" not in text
    assert "Points so far: 1 of the 4 these results decide (15 in all)" in text


def text_of(page: str) -> str:
    """A page's text as a reader sees it, on one line."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def test_a_page_of_none_says_received_and_when_the_results_come():
    text = text_of(early_page("tiny", "ada", NOW, None, []))
    assert "it was received and graded" in text
    assert "after the due date (your instructor has not set one yet)" in text
    assert "Points so far" not in text


def test_messages_are_escaped_in_the_page():
    cells = cell_results(new_notebook(cells=[graded_test_cell("t", "check()", error(
        "<script>alert(1)</script>", traceback(1)))]), {"t": (0, 1, False)})
    assert "<script>" not in early_page("tiny", "ada", NOW, None, cells)


def test_the_full_page_says_it_is_the_full_feedback():
    page = with_banner("<html><head></head><body><p>nbgrader</p></body></html>",
                       full_page_banner(NOW))
    assert page.index("Full feedback") < page.index("nbgrader")
    with pytest.raises(ValueError, match="expected HTML with a <body>"):
        with_banner("no page", "x")


def test_the_instructor_chooses_the_early_feedback_per_course_and_assignment(course,
                                                                           monkeypatch):
    assert early_feedback_mode(course, ASSIGNMENT) == "visible"
    monkeypatch.setenv("COURSE_EARLY_FEEDBACK", "none")
    assert early_feedback_mode(Course(course.root), ASSIGNMENT) == "none"
    config = course.root / "nbgrader_config.py"
    config.write_text(config.read_text() + "\nc.GradeOnSubmit.early_feedback_by_assignment = "
                      f"{{{ASSIGNMENT!r}: 'all'}}\n")
    assert early_feedback_mode(Course(course.root), ASSIGNMENT) == "all"
    assert early_feedback_mode(Course(course.root), "other") == "none"
    monkeypatch.setenv("COURSE_EARLY_FEEDBACK", "hidden")
    with pytest.raises(ValueError, match="expected one of visible, all, none.*got 'hidden'"):
        early_feedback_mode(Course(course.root), "other")


# --- one submission of the tiny assignment, end to end -------------------------------------

# double passes its visible test and fails the hidden one; square fails its visible test.
ANSWERS = {"double": "def double(x):\n    return 2 * abs(x)",
           "square": "def square(x):\n    return x + x"}
HIDDEN_CODE = TESTS["test_double"].split("### BEGIN HIDDEN TESTS\n")[1].split("\n")[0]


def submit(course: Course, student: str, answers: dict[str, str]) -> str:
    """``student``'s notebook in the exchange as nbgrader's submit puts it; its secret."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    folder = inbound(course, f"{student}+{ASSIGNMENT}+{stamp}", complete=False)
    nbformat.write(answered(course, answers), folder / f"{ASSIGNMENT}.ipynb")
    secret = f"{student}-secret".ljust(128, "0")
    (folder / SECRET).write_text(secret)
    return secret


def released_page(course: Course, secret: str) -> str:
    """The page the student's Fetch Feedback finds: named as nbgrader's fetch looks for it."""
    name = notebook_hash(secret=secret, notebook_id=ASSIGNMENT)
    return (exchange.course_folder(course) / "feedback" / f"{name}.html").read_text()


def scores(course: Course) -> dict:
    """{(student, cell): score} of the gradebook."""
    with Gradebook(course.gradebook_url) as book:
        return {(submission.student.id, grade.name): grade.score
                for submission in book.find_assignment(ASSIGNMENT).submissions
                for notebook in submission.notebooks for grade in notebook.grades}


class StoppedBeforeRelease(Service):
    """A service stopped after grading, before it released the page."""

    def release(self, student, assignment, outcome):
        raise Later


@pytest.mark.notebook
def test_a_submission_is_graded_released_early_then_fully_as_autograde_would(course, sandbox,
                                                                           caplog, monkeypatch):
    (course.root.parent / "notebooks").mkdir()
    assert not nbgrader_steps.release(course)
    exchange.publish(course, [ASSIGNMENT], datetime.now(UTC).replace(tzinfo=None)
                     + timedelta(days=7))
    secret = submit(course, "ada", ANSWERS)
    stopped = StoppedBeforeRelease(course, workers=1, limits=LIMITS)
    stopped.poll()
    stopped.queue.close()
    assert load_released(course) == {} and state.load(course)["ada/tiny"].status == "graded"
    service = Service(course, workers=1, limits=LIMITS)  # the next start
    with caplog.at_level(logging.INFO, logger="grader.on_submit"):
        service.poll()
        service.queue.close()
    assert load_released(course)["ada/tiny"].page == "early"
    assert "graded ada/tiny" not in caplog.text  # graded once, before the stop
    early = text_of(released_page(course, secret))
    assert "Early feedback" in early
    assert "test_double visible tests passed; hidden tests after the due date ? / 2" in early
    assert "test_square visible tests failed 0 / 1 AssertionError: square(3) should be 9" in early
    assert "secret check" not in early and HIDDEN_CODE not in early
    assert not any(worked in early for worked in WORKED.values())
    monkeypatch.setenv("COURSE_EARLY_FEEDBACK", "all")  # the full page, before the due date
    everything = Service(Course(course.root), workers=1, limits=LIMITS)
    assert everything.release("ada", ASSIGNMENT, state.load(course)["ada/tiny"]) == FULL_EARLY
    everything.queue.close()
    before = released_page(course, secret)
    assert "Full feedback" in before and not any(worked in before for worked in WORKED.values())
    monkeypatch.delenv("COURSE_EARLY_FEEDBACK")

    recorded = scores(course)
    assert recorded[("ada", "test_double")] == 0 and recorded[("ada", "test_square")] == 0
    summary = autograde(course, [ASSIGNMENT], workers=1, limits=LIMITS, progress=False)
    assert summary.unchanged == ["ada/tiny"] and summary.graded == []
    outcomes = state.load(course)  # as a TA's run interrupted while grading it leaves it
    outcomes["ada/tiny"].status = state.Status.GRADING
    state.save(course, outcomes)
    summary = autograde(course, [ASSIGNMENT], workers=1, limits=LIMITS, progress=False)
    assert summary.graded == ["ada/tiny"] and scores(course) == recorded
    assert state.load(course)["ada/tiny"].status == "graded"

    with Gradebook(course.gradebook_url) as book:
        book.update_or_create_assignment(ASSIGNMENT, duedate=datetime(2026, 1, 1))
    service = Service(course, workers=1, limits=LIMITS)  # as after a restart
    service.poll()
    service.queue.close()
    assert load_released(course)["ada/tiny"].page == "full"
    full = released_page(course, secret)
    assert "Full feedback" in full and "secret check" in full  # the hidden test's message
    assert all(worked in full for worked in WORKED.values())  # after the due date



def test_a_test_cell_failed_where_its_last_own_frame_says():
    """A test cell runs its checks in ``def _():`` and calls ``_()`` on its last line: where
    it failed is the last frame of that cell, not the call, nor the answer's own cell."""
    error = {"traceback": ["\x1b[0;31m---\x1b[0m", "Cell In[12], line 9\n      8 ...",
                           "Cell In[12], line 3, in _()\n      3 checks...",
                           "Cell In[7], line 5, in scores(q, k)\n      5 return ...",
                           "AssertionError: scores(Q, K) ..."]}
    assert failed_at(error) == 3
    assert failed_at({"traceback": ["AssertionError: no cell"]}) is None

"""Grading on submission on the course server, end to end: JupyterHub with
``COURSE_GRADE_ON_SUBMIT=1`` runs the grading service (grader.on_submit); students submit
04 through the Assignment List and fetch their feedback, nobody runs a TA step.

The term: the instructor publishes 04, due in a week, and starts the hub. ann submits
answers right on the visible tests and wrong on hidden ones (the future filled with -10); ben
forgets the scale, which a visible test catches. Both fetch early feedback. ben submits
the right answers. The instructor moves the due date to now: the early pages become full
ones. ann submits again, late, and the hub is stopped at once and started again. At the
end, a TA's autograde finds nothing left to grade.
"""

import html
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import nbformat
import pytest
from nbgrader.utils import notebook_hash

from grader.course import SECRET, Course
from grader.intake import exchange
from grader.on_submit.service import load_released
from grader.scoring.autograde import Summary, autograde
from tests.conftest import REPO
from tests.grading_cases.alpha3_by_hand import WRONG
from tests.hub.hub_client import Hub, UserServer
from tests.hub.hub_server import running_hub
from tests.hub.test_course_server import ASSIGNMENT, answer, run_ta, start_servers
from tests.support.nbgrader_course import make_course, solution_cells

pytestmark = pytest.mark.notebook

RIGHT = solution_cells(ASSIGNMENT)
# the build exercise: ann fills the future with -10, which passes the visible checks and fails
# the hidden tests; ben forgets √d_k, which the visible checks name
EXERCISE = "causal_attention"
ANSWERS = {"ann": {**RIGHT, EXERCISE: WRONG["fills_the_future_with_minus_ten"][EXERCISE]},
           "ben": {**RIGHT, EXERCISE: WRONG["forgets_sqrt_dk"][EXERCISE]}}
SERVICE_READY_S = 300  # the instructor's solution is graded first (grader.scoring.selfcheck)
FEEDBACK_WITHIN_S = 120  # from a submission to its feedback: 14 s measured on 2 busy cores
POLL_S = 2


@dataclass
class Feedback:
    """A page a student fetched, and how long after submitting it came."""

    text: str
    seconds: float


@dataclass
class OnSubmitTerm:
    course: Course
    exchange: Path
    logs: list[Path]
    servers: dict[str, UserServer]
    early: dict[str, Feedback] = field(default_factory=dict)
    resubmitted: Feedback | None = None  # ben's second submission, before the due date
    full: dict[str, Feedback] = field(default_factory=dict)
    refused: dict[str, list[int]] = field(default_factory=dict)  # another's, with own token
    released_before_restart: bool = False
    after_restart: str = ""  # ann's late page, as the restarted service released it
    autograde: Summary | None = None


def wait_for_log(log: Path, text: str, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while text not in log.read_text(errors="replace"):
        assert time.monotonic() < deadline, f"no {text!r} in the hub's log:\n{log.read_text()}"
        time.sleep(1)


def latest_inbound(course: Course, student: str) -> Path:
    """``student``'s latest submission folder in the exchange."""
    folders = (exchange.course_folder(course) / "inbound").glob(f"{student}+{ASSIGNMENT}+*")
    return max(folders, key=lambda path: path.name.split("+")[2])


def submit(server: UserServer, course: Course, answers: dict[str, str]) -> tuple[str, float]:
    """Type ``answers`` and press Submit; (the submission's timestamp, when it was done)."""
    answer(server, answers)
    server.act("submit", course.directory.course_id, ASSIGNMENT)
    return latest_inbound(course, server.name).name.split("+")[2], time.monotonic()


def fetch_page(server: UserServer, course: Course, timestamp: str, kind: str,
               since: float) -> Feedback:
    """Press Fetch Feedback until the page of the submission of ``timestamp`` is of ``kind``
    ("Early feedback", "Full feedback"); that page's text."""
    path = f"{ASSIGNMENT}/feedback/{timestamp}/{ASSIGNMENT}.html"
    while time.monotonic() - since < FEEDBACK_WITHIN_S:
        # before anything is released, nbgrader answers "no feedback": not an error here
        server.ok("POST", "assignments/fetch_feedback", json={
            "course_id": course.directory.course_id, "assignment_id": ASSIGNMENT})
        folders = server.request("GET", f"api/contents/{ASSIGNMENT}/feedback")  # 404: none
        if folders.ok and timestamp in [item["name"] for item in folders.json()["content"]]:
            page = server.ok("GET", f"api/contents/{path}", params={"content": 1}).json()
            text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page["content"])).split())
            if kind in text:
                return Feedback(text, time.monotonic() - since)
        time.sleep(POLL_S)
    raise AssertionError(f"{server.name}: no {kind} page in {FEEDBACK_WITHIN_S} s")


def others_feedback(term: OnSubmitTerm, name: str) -> list[int]:
    """The answers when ``name`` asks another student's server, with ``name``'s token,
    to fetch feedback and to list the feedback folder."""
    answers = []
    for other in (o for o in term.servers if o != name):
        server = term.servers[name]
        answers.append(server.request("POST", "assignments/fetch_feedback", owner=other, json={
            "course_id": term.course.directory.course_id,
            "assignment_id": ASSIGNMENT}).status_code)
        answers.append(server.request("GET", f"api/contents/{ASSIGNMENT}/feedback",
                                      owner=other).status_code)
    return answers


def released_page(course: Course, submission: Path) -> Path:
    """Where nbgrader's Fetch Feedback looks for the page of ``submission``."""
    name = notebook_hash(secret=(submission / SECRET).read_text(),
                         notebook_id=ASSIGNMENT)
    return exchange.course_folder(course) / "feedback" / f"{name}.html"


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Iterator[OnSubmitTerm]:
    """The term of the module's docstring, played once."""
    base = tmp_path_factory.mktemp("grade-on-submit")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COURSE_EXCHANGE", str(base / "exchange"))
        patch.setenv("COURSE_GRADE_ON_SUBMIT", "1")
        patch.delenv("COURSE_EARLY_FEEDBACK", raising=False)
        course = make_course(base / "course", [ASSIGNMENT])
        week = (datetime.now(UTC) + timedelta(days=7)).isoformat()
        run_ta(course, "publish", "--duedate", week, ASSIGNMENT)
        logs = [base / "hub.log", base / "hub-restarted.log"]
        with running_hub(course.root, base / "exchange", base / "hub", logs[0]) as (url, token):
            term = OnSubmitTerm(course, base / "exchange", logs,
                                start_servers(Hub(url, token), list(ANSWERS)))
            for server in term.servers.values():
                server.act("fetch", course.directory.course_id, ASSIGNMENT)
            wait_for_log(logs[0], "grading on submission of", SERVICE_READY_S)
            sent = {name: submit(term.servers[name], course, ANSWERS[name]) for name in ANSWERS}
            for name, (timestamp, since) in sent.items():
                term.early[name] = fetch_page(term.servers[name], course, timestamp,
                                              "Early feedback", since)
            timestamp, since = submit(term.servers["ben"], course, RIGHT)
            term.resubmitted = fetch_page(term.servers["ben"], course, timestamp,
                                          "Early feedback", since)
            sent["ben"] = (timestamp, time.monotonic())

            run_ta(course, "publish", "--duedate", datetime.now(UTC).isoformat(), ASSIGNMENT)
            for name, (timestamp, _) in sent.items():
                term.full[name] = fetch_page(term.servers[name], course, timestamp,
                                             "Full feedback", time.monotonic())
            term.refused = {name: others_feedback(term, name) for name in ANSWERS}
            submit(term.servers["ann"], course, RIGHT)
            late = latest_inbound(course, "ann")
        term.released_before_restart = released_page(course, late).exists()
        with running_hub(course.root, base / "exchange", base / "hub", logs[1]):
            deadline = time.monotonic() + SERVICE_READY_S + FEEDBACK_WITHIN_S
            while not released_page(course, late).exists():
                assert time.monotonic() < deadline, logs[1].read_text()
                time.sleep(POLL_S)
            term.after_restart = released_page(course, late).read_text()
        term.autograde = autograde(course, [ASSIGNMENT], progress=False)
        yield term


def hidden_tests() -> tuple[list[str], list[str]]:
    """(the hidden tests' messages, their lines of code) from the instructor's source: the
    strings and lines of each test cell's hidden part that its visible part lacks."""
    source = nbformat.read(REPO / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    names, lines = [], []
    for cell in source.cells:
        if "### BEGIN HIDDEN TESTS" not in cell.source:
            continue
        visible, hidden = cell.source.split("### BEGIN HIDDEN TESTS")
        hidden = hidden.split("### END HIDDEN TESTS")[0]
        names += [s for s in re.findall(r'"([^"]{6,})"', hidden) if s not in visible]
        lines += [line.strip() for line in hidden.splitlines()
                  if len(line.strip()) > 12 and line.strip() not in visible]
    return names, lines


def test_each_student_fetches_early_feedback_within_the_bound(played):
    for name, page in played.early.items():
        assert page.seconds < FEEDBACK_WITHIN_S, (name, page.seconds)
        assert f"Early feedback on {name}'s submission" in page.text
    print({name: round(page.seconds) for name, page in played.early.items()})


def test_the_early_page_shows_visible_results_and_nothing_of_the_hidden_tests(played):
    ann, ben = played.early["ann"].text, played.early["ben"].text
    names, lines = hidden_tests()
    assert names and lines
    for text in (ann, ben, played.resubmitted.text):
        leaked = [s for s in names + lines if s in text]
        assert not leaked, leaked
        assert "BEGIN HIDDEN TESTS" not in text
        assert "after the due date" in text
    # ann's -10 passes the visible test of causal_attention; ben's missing scale fails it
    assert f"test_{EXERCISE} visible tests passed; hidden tests after the due date ? / 1" in ann
    assert re.search(rf"test_{EXERCISE} visible tests failed 0 / 1 TestFailed: .*{EXERCISE}"
                     r"\(X, W_Q, W_K, W_V\) is not right: you did not divide by √d_k", ben), ben


def test_after_the_due_date_the_full_page_replaces_the_early_one(played):
    ann, ben = played.full["ann"].text, played.full["ben"].text
    assert "Full feedback" in ann and "Early feedback" not in ann
    # the hidden tests' verdict, at last: the grader's comparison of their values
    assert "got a value that differs from the expected answer" in ann
    assert "Score:" in ben and "Full feedback" in ben


def test_a_second_submission_replaces_the_first(played):
    assert f"test_{EXERCISE} visible tests passed" in played.resubmitted.text
    rows = {row.student_id: row for row in grades_rows(played.course)}
    assert float(rows["ben"].score) == autograded_points()
    given = load_released(played.course)["ben/" + ASSIGNMENT]
    assert given.submission == latest_inbound(played.course, "ben").name


def test_a_restart_of_the_hub_loses_nothing_and_grades_nothing_twice(played):
    assert not played.released_before_restart  # the service was stopped before it was done
    assert "Full feedback" in played.after_restart
    graded = [line for log in played.logs for line in log.read_text().splitlines()
              if re.search(rf"graded ann/{ASSIGNMENT} in", line)]
    assert len(graded) == 2, graded  # her first submission and her late one, once each
    given = load_released(played.course)["ann/" + ASSIGNMENT]
    assert given.submission == latest_inbound(played.course, "ann").name


def test_a_tas_autograde_later_finds_everything_graded(played):
    assert played.autograde.graded == [] and played.autograde.not_graded == {}
    assert sorted(played.autograde.unchanged) == [f"{name}/{ASSIGNMENT}" for name in ANSWERS]


def test_a_students_feedback_is_never_visible_to_another(played):
    for name in played.servers:
        other = next(o for o in played.servers if o != name)
        pages = [played.early[name].text, played.full[name].text]
        assert all(f"{other}'s" not in page for page in pages)
        assert played.refused[name] and set(played.refused[name]) <= {302, 403}, played.refused
    # the full pages show each one's own answers: ann's -10, not ben's
    code = {name: page.text.replace(" ", "") for name, page in played.full.items()}
    assert "masked_fill(~keep,-10.0)" in code["ann"] and "-10.0)" not in code["ben"]


def grades_rows(course: Course) -> list[dict]:
    from grader.scoring import grades

    return grades.grade_rows(course)


def autograded_points() -> float:
    source = nbformat.read(REPO / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    return float(sum(cell.metadata.nbgrader["points"] for cell in source.cells
                     if cell.metadata.get("nbgrader", {}).get("grade")
                     and cell.metadata.nbgrader["grade_id"].startswith("test_")))

"""A term on the course server, end to end: JupyterHub (hub/jupyterhub_config.py) on a
throw-away course, an instructor and three students, everything through the hub's REST API
and each user's own server (nbgrader's Assignment List handlers, the contents API) with
each user's own token; the TA's steps through the TA command line (``make publish``,
``make collect``, ``make feedback``) and ``grader.scoring.autograde``.

The term: the instructor publishes 04 with a due date a week away; ada, bob and carol
fetch it; ada submits a blank copy, then the right answers; bob submits a typical mistake
(the scale hard-coded as 2); the instructor moves the due date to now; carol submits her
blank copy after it. The instructor collects, autogrades, writes feedback and grades; each
student fetches their feedback. The roster lists ada, bob and dan (who never submits),
not carol. ada's numbers worked by hand pass Validate in her server and fail in bob's.
"""

import glob
import html
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import nbformat
import pytest
import requests

from course_utils.by_hand import sentence_of
from grader.cells import is_test, marks
from grader.course import Course
from grader.scoring import grades
from grader.scoring.autograde import autograde
from tests.conftest import REPO
from tests.grading_cases.alpha3_by_hand import WRONG, by_hand_answers, written
from tests.hub.hub_client import Hub, UserServer
from tests.hub.hub_server import running_hub
from tests.support.nbgrader_course import make_course, solution_cells

pytestmark = pytest.mark.notebook

ASSIGNMENT = "04_alpha3_by_hand"
NOTEBOOK = f"{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
INSTRUCTOR = "instructor"
MISTAKE = "hard_codes_two"
ANSWERS = {
    "ada": solution_cells(ASSIGNMENT),
    "bob": {**solution_cells(ASSIGNMENT), **WRONG[MISTAKE]},
    "carol": {},
}
ROSTER = ["ada", "bob", "dan"]


def marker(name: str) -> str:
    """A string found in ``name``'s notebook only (its metadata), to catch a leak."""
    return f"work-of-{name}-7f3a9c"


@dataclass
class Term:
    url: str
    course: Course
    exchange: Path
    log: Path
    servers: dict[str, UserServer]
    course_id: str
    outputs: dict[str, str] = field(default_factory=dict)  # TA step: what it printed
    lists: dict[str, list[dict]] = field(default_factory=dict)  # student: after fetching


def run_ta(course: Course, *args: str) -> str:
    """``python -m grader ARGS`` as the Makefile runs it; its output (it must succeed)."""
    done = subprocess.run([sys.executable, "-m", "grader", "--course-root", str(course.root),
                           *args], capture_output=True, text=True)
    assert done.returncode == 0, f"grader {args}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def answer(server: UserServer, answers: dict[str, str]) -> None:
    """Type ``answers`` into the fetched notebook's answer cells and save it."""
    notebook = server.read_notebook(NOTEBOOK)
    for cell in notebook["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell["source"] = answers[grade_id]
    notebook["metadata"]["course_test"] = marker(server.name)
    server.save_notebook(NOTEBOOK, notebook)


def start_servers(hub: Hub, names: list[str]) -> dict[str, UserServer]:
    """Each user's server, ready, to be spoken to with a token of that user's own."""
    hub.add_users(names)
    for name in names:
        hub.start(name)
    for name in names:
        hub.wait_ready(name)
    return {name: hub.server(name) for name in names}


@pytest.fixture(scope="module")
def term(tmp_path_factory) -> Iterator[Term]:
    """The term of the module's docstring, played once; the hub runs until the tests end."""
    base = tmp_path_factory.mktemp("course-server")
    exchange = base / "exchange"  # not there yet: publishing creates it
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COURSE_EXCHANGE", str(exchange))
        course = make_course(base / "course", [ASSIGNMENT])
        (course.root / "roster.csv").write_text("student_id\n" + "\n".join(ROSTER) + "\n")
        log = base / "hub.log"
        with running_hub(course.root, exchange, base / "hub", log) as (url, token):
            servers = start_servers(Hub(url, token), [INSTRUCTOR, *ANSWERS])
            term = Term(url, course, exchange, log, servers, course.directory.course_id)
            week = (datetime.now(UTC) + timedelta(days=7)).isoformat()
            term.outputs["publish"] = run_ta(course, "publish", "--duedate", week, ASSIGNMENT)
            for name in ANSWERS:
                term.lists[name] = servers[name].act("fetch", term.course_id, ASSIGNMENT)
            servers["ada"].act("submit", term.course_id, ASSIGNMENT)  # blank, at first
            for name in ("ada", "bob"):
                answer(servers[name], ANSWERS[name])
                servers[name].act("submit", term.course_id, ASSIGNMENT)
            now = datetime.now(UTC).isoformat()
            term.outputs["move the due date"] = run_ta(course, "publish", "--duedate", now)
            time.sleep(2)
            answer(servers["carol"], ANSWERS["carol"])
            servers["carol"].act("submit", term.course_id, ASSIGNMENT)

            term.outputs["collect"] = run_ta(course, "collect")
            summary = autograde(course, [ASSIGNMENT], workers=2, progress=False)
            assert sorted(summary.graded) == [f"{s}/{ASSIGNMENT}" for s in sorted(ANSWERS)]
            term.outputs["feedback"] = run_ta(course, "feedback")
            term.outputs["grades"] = run_ta(course, "grades")
            for name in ANSWERS:
                servers[name].act("fetch_feedback", term.course_id, ASSIGNMENT)
            yield term


def source_points() -> dict[str, float]:
    """{graded cell: its points}, as the instructor's source notebook gives them: the test
    cells and the written answers."""
    source = nbformat.read(REPO / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    return {cell.metadata.nbgrader["grade_id"]: cell.metadata.nbgrader["points"]
            for cell in source.cells if cell.metadata.get("nbgrader", {}).get("grade")}


def grade_row(term: Term, student: str) -> dict:
    rows = [row for row in grades.grade_rows(term.course) if row.student_id == student]
    assert len(rows) == 1, rows
    return rows[0]


def inbound(term: Term) -> dict[str, list[str]]:
    """{student: the names of their submissions in the exchange}."""
    folder = term.exchange / term.course_id / "inbound"
    found = {}
    for path in sorted(folder.iterdir()):
        found.setdefault(path.name.split("+")[0], []).append(path.name)
    return found


def test_every_student_fetches_the_release_through_the_assignment_list(term):
    assert "published to" in term.outputs["publish"]
    for name, listed in term.lists.items():
        mine = [a for a in listed if a["assignment_id"] == ASSIGNMENT and a["status"] == "fetched"]
        assert len(mine) == 1, (name, listed)
        assert NOTEBOOK.split("/")[1] in term.servers[name].listing(ASSIGNMENT)


def test_every_score_is_what_the_answers_deserve(term):
    points = source_points()
    everything, lost = sum(points.values()), {f"test_{cell}" for cell in WRONG[MISTAKE]}
    autograded = sum(value for cell, value in points.items() if cell.startswith("test_"))
    expected = {"ada": autograded, "bob": autograded - sum(points[cell] for cell in lost),
                "carol": 0}
    for student, score in expected.items():
        row = grade_row(term, student)
        assert (float(row.score), float(row.max_score)) == (score, everything), row
    cells = {(row["student_id"], row["cell"]): row["score"]
             for row in grades.cell_rows(term.course)}
    for cell in (c for c in points if c.startswith("test_")):
        assert cells["ada", cell] == points[cell]
        assert cells["bob", cell] == (0 if cell in lost else points[cell]), cell
        assert cells["carol", cell] == 0
    assert grade_row(term, "ada").status == "needs manual grading"  # the written answer


def test_the_latest_of_two_submissions_counts_and_both_stay_in_the_exchange(term):
    submissions = inbound(term)
    assert {name: len(names) for name, names in submissions.items()} == {
        "ada": 2, "bob": 1, "carol": 1}
    latest = max(submissions["ada"], key=lambda name: name.split("+")[2])
    collected = term.course.folder("submitted", "ada", ASSIGNMENT) / "timestamp.txt"
    assert collected.read_text() == latest.split("+")[2]
    assert "ada: submitted 2 times" in term.outputs["collect"]


def test_a_submission_after_the_due_date_is_flagged_late(term):
    assert int(grade_row(term, "carol").seconds_late) >= 2
    assert grade_row(term, "ada").seconds_late == grade_row(term, "bob").seconds_late == 0
    assert re.search(r"carol: late by 0:\d\d:\d\d", term.outputs["collect"])
    assert "ada: late" not in term.outputs["collect"]
    assert grade_row(term, "carol").timestamp.endswith("Z")


def test_a_student_off_the_roster_is_reported_and_one_who_never_submitted_is_missing(term):
    assert "carol: not on the roster" in term.outputs["collect"]
    assert "not on the roster" in grade_row(term, "carol").reason
    assert "not on the roster" not in grade_row(term, "bob").reason
    assert grade_row(term, "dan").status == "missing"


def test_each_student_fetches_feedback_on_their_latest_submission(term):
    for name in ANSWERS:
        server = term.servers[name]
        folders = server.listing(f"{ASSIGNMENT}/feedback")
        assert len(folders) == 1, (name, folders)  # ada's first submission has none
        page = server.ok("GET", f"api/contents/{ASSIGNMENT}/feedback/{folders[0]}/"
                                f"{ASSIGNMENT}.html", params={"content": 1}).json()["content"]
        row = grade_row(term, name)
        text = html.unescape(re.sub(r"<[^>]+>", "", page))
        assert f"Score: {float(row.score)} / {float(row.max_score)}" in text, name
        assert "BEGIN HIDDEN TESTS" not in page
        submitted = (term.course.folder("submitted", name, ASSIGNMENT) / "timestamp.txt")
        assert folders[0] == submitted.read_text()


def traversals(term: Term, name: str) -> list[str]:
    """Paths to the other students' notebooks and the instructor's source and gradebook, as
    seen from ``name``'s home (the server's root), from the course's folder and from /."""
    homes = term.log.parent / "hub" / "homes"
    targets = [homes / other / NOTEBOOK for other in ANSWERS if other != name]
    targets += [term.course.source / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", REPO / "solutions",
                term.course.gradebook_path]
    bases = [homes / name, term.course.root.parent, Path("/")]
    return [os.path.relpath(target, base) for target in targets for base in bases]


def test_no_student_reaches_another_students_work_or_the_instructors_source(term):
    for name, server in term.servers.items():
        if name == INSTRUCTOR:
            continue
        others = [marker(other) for other in ANSWERS if other != name]
        answers = []
        for other in [INSTRUCTOR, *ANSWERS]:  # another's server, with this student's token
            if other != name:
                answered = server.request("GET", f"api/contents/{NOTEBOOK}", owner=other)
                assert answered.status_code in (302, 403), (name, other, answered.status_code)
                answers.append(answered)
        for path in traversals(term, name):
            quoted = path.replace(".", "%2E").replace("/", "%2F")
            for route in (f"api/contents/{quoted}", f"files/{quoted}"):
                answered = server.request("GET", route, params={"content": 1})
                assert answered.status_code in (403, 404), (name, path, answered.status_code)
                answers.append(answered)
        for answered in answers:
            leaked = [m for m in others if m in answered.text]
            assert not leaked, (name, answered.url, answered.status_code)
            assert "BEGIN HIDDEN TESTS" not in answered.text, (name, answered.url)
            assert "BEGIN SOLUTION" not in answered.text, (name, answered.url)
        mine = server.assignments(term.course_id)
        assert {s["student_id"] for a in mine for s in a.get("submissions", [])} <= {name}


# Run in a student's kernel: for each path, what opening it (a file), listing it (a folder)
# or globbing it (a pattern with *) gave: "read" and what was found, or the error's name.
PROBE = """
import glob, json, os
def probe(path):
    try:
        if "*" in path:
            return "read" if glob.glob(path) else "nothing"
        if os.path.isdir(path):
            return "read " + ",".join(sorted(os.listdir(path)))
        with open(path, "rb") as file:
            return "read " + file.read(200).decode(errors="replace")
    except OSError as error:
        return type(error).__name__
print(json.dumps({path: probe(path) for path in json.loads(%r)}))
"""


def others_files(term: Term, name: str) -> list[Path]:
    """What ``name``'s kernel must not read: the instructor's repository (a solution, the
    grading cases, the TAs' folder), the course's source and gradebook, the hub's data,
    another student's home, and the exchange's submissions and feedback (which nbgrader
    keeps for everyone in one folder each: listing them, or looking for another's, shows
    nothing)."""
    hub, course = term.log.parent / "hub", term.exchange / term.course_id
    other = next(other for other in ANSWERS if other != name)
    return [REPO / "solutions" / NOTEBOOK, REPO / "solutions",
            REPO / "tests" / "grading_cases" / "alpha3_by_hand.py", REPO / "grading",
            REPO / "grading" / "gradebook.db", term.course.source / NOTEBOOK,
            term.course.gradebook_path, term.course.root / "submitted",
            hub / "passwords.json", hub / "jupyterhub.sqlite", hub / "homes" / other,
            hub / "homes" / other / NOTEBOOK, course / "inbound", course / "feedback",
            course / "inbound" / f"{other}+*", course / "feedback" / "*.html"]


def test_a_students_kernel_reads_their_own_work_and_the_edition_and_nothing_else(term):
    """ada's kernel (her server's, in its sandbox) opens her notebook and imports
    course_utils, and finds none of what is not hers, though each of those exists: the
    homes' folder shows hers alone."""
    forbidden = others_files(term, "ada")
    assert all(glob.glob(str(path)) for path in forbidden if path.name != "gradebook.db")
    home = term.log.parent / "hub" / "homes" / "ada"
    allowed = [home / NOTEBOOK, REPO / "course_utils" / "__init__.py", REPO / "notebooks"]
    paths = [str(path) for path in [*forbidden, *allowed, home.parent]]
    found = json.loads(term.servers["ada"].run(PROBE % json.dumps(paths)))
    read = {path: found[str(path)][:60] for path in forbidden
            if found[str(path)].startswith("read")}
    assert not read, read
    assert all(found[str(path)].startswith("read") for path in allowed), found
    assert found[str(home.parent)] == "read ada"
    imported = term.servers["ada"].run("import course_utils; print(course_utils.__file__)")
    assert imported.strip() == str(REPO / "course_utils" / "__init__.py")


def test_formgrader_is_the_instructors_alone(term):
    listed = term.servers[INSTRUCTOR].ok("GET", "formgrader/api/assignments").json()
    assert [a["status"] for a in listed if a["name"] == ASSIGNMENT] == ["released"]
    for name in ANSWERS:
        server = term.servers[name]
        assert server.request("GET", "formgrader/api/assignments").status_code == 404
        page = server.ok("GET", "lab").text
        config = re.search(r'id="jupyter-config-data"[^>]*>(.*?)</script>', page, re.S)[1]
        assert "@jupyter/nbgrader:formgrader" in config and "disabledExtensions" in config


def validate(server: UserServer, answers: dict[str, str]) -> dict:
    """nbgrader's Validate (the toolbar's button) in ``server``, on a notebook of the fetched
    release's imports and by-hand exercises with ``answers`` typed in: what failed."""
    release = server.read_notebook(NOTEBOOK)
    order = [marks(cell).get("grade_id") for cell in release["cells"]]
    imports = next(c for c in release["cells"] if "from course_utils import checks" in
                   "".join(c["source"]))
    cells, tests = [imports], []
    for grade_id, source in answers.items():
        start = order.index(grade_id)
        cells.append({**release["cells"][start], "source": source})
        # the test cell after it (the warm-up's three answer cells share one)
        test = next(c for c in release["cells"][start:] if is_test(c))
        tests += [test] if test not in tests else []
    cells += tests
    server.save_notebook("by_hand.ipynb", {**release, "cells": cells})
    verdict = server.ok("POST", "assignments/validate", json={"path": "by_hand.ipynb"}).json()
    assert verdict["success"], verdict["value"]
    return verdict["value"]


def test_each_student_works_numbers_of_their_own_and_validate_never_says_whether_right(term):
    """Validate in a student's server checks the by-hand numbers with that student's own
    sentence (the id is the server's JUPYTERHUB_USER), and only whether they are
    well-formed and agree with each other: bob's right numbers pass in his server, and in
    ada's his scores and weights pass too (whether numbers are right is graded outside the
    kernel, grader.scoring.by_hand_answers), while his a₃, mixed from his values, lies
    outside what any weights give from hers."""
    ada, bob = (by_hand_answers(sentence_of(name)) for name in ("ada", "bob"))
    assert all(ada[grade_id] != bob[grade_id] for grade_id in ada)
    bobs = written(bob, *bob)
    assert validate(term.servers["bob"], bobs) == {}
    failed = validate(term.servers["ada"], bobs)["failed"]
    assert len(failed) == 1, failed
    assert "a_3_by_hand is not right: a weighted average lies between" in failed[0]["raw_error"]


def log_in(term: Term, name: str, password: str) -> int:
    """The status of the hub's login form for ``name``: 302 lets in, 403 does not."""
    with requests.Session() as browser:
        page = browser.get(f"{term.url}/hub/login", timeout=30).text
        xsrf = re.search(r'name="_xsrf" value="([^"]+)"', page)[1]
        return browser.post(f"{term.url}/hub/login", allow_redirects=False, timeout=30,
                            data={"username": name, "password": password,
                                  "_xsrf": xsrf}).status_code


def test_students_and_instructors_log_in_with_their_own_password(term):
    passwords = json.loads((term.log.parent / "hub" / "passwords.json").read_text())
    assert log_in(term, "ada", passwords["students"]) == 302
    assert log_in(term, "ada", passwords["students"] + "x") == 403
    assert log_in(term, "ada", passwords["instructors"]) == 403
    assert log_in(term, INSTRUCTOR, passwords["students"]) == 403
    assert log_in(term, INSTRUCTOR, passwords["instructors"]) == 302
    assert log_in(term, "mallory", passwords["students"]) == 403  # not on the roster


def test_the_hub_log_shows_every_server_and_no_error(term):
    log = term.log.read_text()
    for name in [INSTRUCTOR, *ANSWERS]:
        assert re.search(rf"User {name} took [\d.]+ seconds to start", log), name
    # JupyterHub's and the servers' error lines start "[E ", the proxy's say "error:"
    errors = [line for line in log.splitlines()
              if re.match(r"\[E ", line) or re.search(r"\[ConfigProxy\].*error", line)]
    assert not errors, "\n".join(errors)

"""JupyterHub for the course on one machine: ``make hub`` (README, "A course server").

Accounts:

* instructors (``COURSE_INSTRUCTORS``, default ``instructor``): JupyterLab on the
  repository with Formgrader on the course (grading/nbgrader_config.py), hub admins;
* everyone else is a student: JupyterLab on a home folder of their own, with nbgrader's
  Assignment List (fetch, submit, fetch feedback) and Validate, without Formgrader.

Each server runs this repository's environment (.venv), so its kernel is the workbook's.
Which of nbgrader's tools a user gets comes from the role folders the course's image uses
too (deploy/jupyter/student, deploy/jupyter/instructor: nbgrader's per-user settings of its
server and lab extensions), on the server's JUPYTER_CONFIG_PATH, above the environment's
settings and below the user's own ~/.jupyter. A student's nbgrader_config.py (the course,
the exchange) is written before each start to ``COURSE_HUB_DATA/config/<name>/``.

Log-in and spawning, for a demo and the tests: one password for the students and one for
the instructors (``SharedPasswordAuthenticator``), and every server in ``homes/<name>/``
(``SimpleLocalProcessSpawner``: no system accounts). An instructor's server runs as the
hub's user on the repository. A student's server, its kernels and terminals run in
bubblewrap (grader.running.student_server), which shows them the system and the workbook's
environment read-only, the student edition's folders of this repository (notebooks/,
course_utils/: tools.student_edition.COPIED) and their nbgrader settings read-only, their
own home and nbgrader's exchange; not solutions/, tests/, grading/ (gradebook, submitted/,
autograded/, feedback/), the hub's data or another home. Without bubblewrap, students'
servers are refused (the log says why at start); instructors' still start.

The exchange keeps everyone's submissions in one inbound/ and everyone's feedback pages in
one feedback/, under names nobody can guess, in folders others may enter but not list.
As root, the hub runs each student's server as a numeric user of its own (2000000000 + the
hub's number of the user), so those folders keep that meaning. What stays open:

* a hub run as an ordinary user runs every student as itself: a student owns the
  exchange's folders and can list, read and remove every submission and feedback page
  (the log warns at start);
* even as root, a submission or feedback page whose full name a student learns some other
  way is readable (nbgrader's own model), and the exchange's root is writable by everyone,
  so a student could make the course's folder before the instructor publishes (publishing
  then fails: "You don't own the directory");
* nbgrader is told who submits (``student_id`` in the student's settings, read-only in the
  sandbox), but a student's terminal can run ``nbgrader submit --student=<another>``: a
  submission in another's name, which collect would take as that student's latest;
* the servers share the machine's network (the hub and the proxy must reach them) and have
  no memory or CPU limit.

The README shows how a department swaps in its own login and one system user per student
with memory and CPU limits.

Settings (environment variables):

    COURSE_ROOT                      the course's grading/ folder (default: this repository's)
    COURSE_EXCHANGE                  nbgrader's exchange (grading/nbgrader_config.py says)
    COURSE_HUB_DATA                  the hub's database, secrets, homes (default: hub/data/)
    COURSE_HUB_URL                   where it listens (default: http://127.0.0.1:8000)
    COURSE_INSTRUCTORS               comma-separated user names (default: instructor)
    COURSE_HUB_PASSWORD              the students' password (8+ characters)
    COURSE_HUB_INSTRUCTOR_PASSWORD   the instructors' password (32+ characters)
    COURSE_HUB_ADMIN_TOKEN           if set, an API token of a "course-admin" service that
                                     may manage users, servers and tokens (the tests' way in)
    COURSE_GRADE_ON_SUBMIT           1: the "grade-on-submit" service grades each submission
                                     and releases its feedback (grader.on_submit)
    COURSE_EARLY_FEEDBACK            before the due date: visible (default), all or none
                                     (grading/nbgrader_config.py, GradeOnSubmit)

Passwords that are not set are made up once and kept in ``COURSE_HUB_DATA/passwords.json``.
"""

import json
import os
import secrets
import sys
from pathlib import Path

from jupyterhub.spawner import SimpleLocalProcessSpawner
from traitlets.log import get_logger

from grader.course import Course
from grader.intake import exchange
from grader.running import student_server
from grader.running.sandbox import PASSED_ON, problem

c = get_config()  # noqa: F821  (provided by JupyterHub when it loads this file)

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # tools/: what students receive
from tools.student_edition import COPIED  # noqa: E402

COURSE = Course(Path(os.environ.get("COURSE_ROOT", REPO / "grading")))
DATA = Path(os.environ.get("COURSE_HUB_DATA", REPO / "hub" / "data")).resolve()
INSTRUCTORS = {name.strip() for name in os.environ.get("COURSE_INSTRUCTORS", "instructor")
               .split(",") if name.strip()}
BIN = Path(sys.executable).parent  # this environment's: the hub's, the servers', the kernels'
SERVER = [str(BIN / "jupyterhub-singleuser")]

ROLES = REPO / "deploy" / "jupyter"  # nbgrader's tools of a student, of an instructor
# What a student's server sees of this repository: the edition's folders taken unchanged
# (the edition's README, Makefile and pyproject.toml are its own, not these).
RECEIVED = [REPO / name for name in COPIED]
SANDBOX_PROBLEM = problem()

DATA.mkdir(parents=True, exist_ok=True)
LOG = get_logger()
if SANDBOX_PROBLEM:
    LOG.warning("STUDENTS' SERVERS WILL NOT START: %s. Without bubblewrap a student's kernel "
                "would read solutions/, the gradebook and every student's work.",
                SANDBOX_PROBLEM)
elif student_server.exchange_is_shared():
    LOG.warning("The hub runs as %s, not root: every student's server runs as that user, "
                "in its sandbox, and can list and read every submission and feedback page in "
                "the exchange (README, 'A course server'). Run the hub as root to close it.",
                os.environ.get("USER", os.geteuid()))


def passwords() -> dict[str, str]:
    """{"students": ..., "instructors": ...}: from the environment, else made up once."""
    path = DATA / "passwords.json"
    kept = json.loads(path.read_text()) if path.exists() else {}
    chosen = {
        "students": os.environ.get("COURSE_HUB_PASSWORD") or kept.get("students")
        or secrets.token_urlsafe(9),
        "instructors": os.environ.get("COURSE_HUB_INSTRUCTOR_PASSWORD")
        or kept.get("instructors") or secrets.token_urlsafe(32),
    }
    if chosen != kept:
        path.touch(mode=0o600)
        path.write_text(json.dumps(chosen, indent=1))
    return chosen


def student_config(name: str, shared_system_user: bool) -> str:
    """A student's nbgrader_config.py: the course's name, its exchange and, when every
    server runs as one system user, who submits (else nbgrader takes the system user's)."""
    lines = ["c = get_config()  # noqa: F821",
             f"c.CourseDirectory.course_id = {COURSE.directory.course_id!r}",
             f"c.Exchange.root = {str(exchange.root(COURSE))!r}"]
    if shared_system_user:
        lines.append(f"c.CourseDirectory.student_id = {name!r}")
    return "\n".join(lines) + "\n"


def prepare_server(spawner) -> None:
    """Before a server starts: its role's nbgrader tools, and its nbgrader configuration.

    An instructor's server opens on the course's folder, where Formgrader finds the course
    (deploy/jupyter/instructor/nbgrader_config.py loads COURSE_DIR/grading's config)."""
    name = spawner.user.name
    if name in INSTRUCTORS:
        paths = [ROLES / "instructor", ROLES / "student"]
        spawner.environment = {**spawner.environment, "COURSE_DIR": str(COURSE.root.parent)}
        spawner.notebook_dir = str(COURSE.root.parent)
        spawner.default_url = "/formgrader"
    else:
        paths = [DATA / "config" / name, ROLES / "student"]
        paths[0].mkdir(parents=True, exist_ok=True)
        shared = isinstance(spawner, SimpleLocalProcessSpawner)
        (paths[0] / "nbgrader_config.py").write_text(student_config(name, shared))
        sandbox(spawner, [*RECEIVED, *paths])
    spawner.environment = {**spawner.environment,
                           "JUPYTER_CONFIG_PATH": os.pathsep.join(map(str, paths))}


def sandbox(spawner, received: list[Path]) -> None:
    """Start a student's server in bubblewrap (grader.running.student_server): it sees the system,
    ``received`` (read-only), its home and the exchange. Refused without bubblewrap."""
    if SANDBOX_PROBLEM:
        raise RuntimeError(f"{spawner.user.name}'s server is not started: {SANDBOX_PROBLEM}")
    home = Path(spawner.home_dir)
    home.mkdir(parents=True, exist_ok=True)
    uid = None if student_server.exchange_is_shared() else student_server.student_uid(
        spawner.user.id)
    if uid is not None:
        student_server.hand_over(home, uid)
    spawner.cmd = student_server.command(
        SERVER, home, received, exchange.ready_to_publish(COURSE), uid)


c.JupyterHub.bind_url = os.environ.get("COURSE_HUB_URL", "http://127.0.0.1:8000")
c.JupyterHub.db_url = f"sqlite:///{DATA / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(DATA / "jupyterhub_cookie_secret")
c.ConfigurableHTTPProxy.pid_file = str(DATA / "proxy.pid")
PROXY = Path(sys.prefix) / "node" / "node_modules" / ".bin" / "configurable-http-proxy"
if PROXY.exists():  # the setup's (make hub); else the one on PATH
    c.ConfigurableHTTPProxy.command = [str(PROXY)]

PASSWORDS = passwords()
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = PASSWORDS["students"]
c.SharedPasswordAuthenticator.admin_password = PASSWORDS["instructors"]
c.Authenticator.admin_users = INSTRUCTORS
roster = COURSE.roster()
if roster is None:
    c.Authenticator.allow_all = True  # anyone with the students' password
else:
    c.Authenticator.allowed_users = set(roster)

c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = str(DATA / "homes" / "{username}")
c.Spawner.pre_spawn_hook = prepare_server
c.Spawner.cmd = SERVER
c.Spawner.args = ["--allow-root"] if os.geteuid() == 0 else []
c.Spawner.default_url = "/lab"
c.Spawner.environment = {
    "PATH": os.pathsep.join([str(BIN), os.environ.get("PATH", os.defpath)]),
    "COURSE_EXCHANGE": str(exchange.root(COURSE)),  # the TA's commands in a terminal too
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
}
# A cold JupyterLab on a busy two-core machine takes a while.
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180

if os.environ.get("COURSE_HUB_ADMIN_TOKEN"):
    c.JupyterHub.services = [{"name": "course-admin",
                              "api_token": os.environ["COURSE_HUB_ADMIN_TOKEN"]}]
    c.JupyterHub.load_roles = [{
        "name": "course-admin",
        "scopes": ["admin:users", "admin:servers", "tokens", "list:users"],
        "services": ["course-admin"],
    }]

# Grading on submission: a service the hub starts and stops with itself (its log lines say
# "grade-on-submit"), which grades each submission as `make autograde` does and releases its
# feedback to the student's Fetch Feedback (grader.on_submit).
if os.environ.get("COURSE_GRADE_ON_SUBMIT") == "1":
    kept = ("HOME", "TMPDIR", "COURSE_EARLY_FEEDBACK", *PASSED_ON)
    c.JupyterHub.services.append({
        "name": "grade-on-submit",
        "command": [str(BIN / "python"), "-m", "grader.on_submit", "--course-root",
                    str(COURSE.root)],
        "environment": {name: os.environ[name] for name in kept if name in os.environ} | {
            "PATH": os.pathsep.join([str(BIN), os.environ.get("PATH", os.defpath)]),
            "COURSE_EXCHANGE": str(exchange.root(COURSE)),
        },
    })

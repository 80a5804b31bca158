"""Who the student is, and numbers of their own drawn from it.

Exercises whose answer is a number worked out by hand give each student inputs of their
own, so that two students' right answers differ and a copied number scores 0.

* :func:`student_id` is the student whose work the kernel runs, the first of:
  ``COURSE_STUDENT`` in the environment the kernel started with (the grader sets it to the
  submission's student; ``COURSE_STUDENT=<id> make lab`` on a student's machine);
  ``JUPYTERHUB_USER`` there (the course server's login), unless a hub made the name up for
  the session (Binder: ``BINDER_*`` variables, or the Docker stacks' ``jovyan``); the id the
  notebook set with :func:`use_id` (Colab, Binder, any machine). ``None`` when there is
  none: the notebook then works with demonstration numbers, which count for no one.
  An id from the kernel's environment wins over the notebook's, so a submission is graded
  for its submitter whatever its cell says; :func:`use_id` says so when the two differ,
  and the grader flags a notebook that sets another id than its submitter's
  (``grader.integrity.own_numbers``, which reads the call's id from the notebook).
* :class:`OwnNumbers` draws small integers from a student's id: SHAKE-256 of the id and of
  what the numbers are for, read a byte at a time, so every machine and every Python
  version draws the same (Python's ``hash()`` and ``random`` promise neither).
* :func:`own_seed` seeds a generator of random inputs from the student's id (hidden tests
  of function exercises: an output leaked from one student's grading fits no one else's);
  :func:`seed_of` is the same seed for a given id (the grader works out the answers to
  such inputs for each student in its own process).
"""

import hashlib
import os
from collections.abc import Mapping

__all__ = ["HOW_TO_SET_THE_ID", "PLACEHOLDER", "STUDENT_VARIABLES", "OwnNumbers", "id_note",
           "own_seed", "seed_of", "show_id", "student_id", "use_id"]

# Where the id comes from in the kernel's environment, the first set one wins.
STUDENT_VARIABLES = ("COURSE_STUDENT", "JUPYTERHUB_USER")
HUB_USER = "JUPYTERHUB_USER"
# A hub's name made up for the session, not a student's: Binder sets BINDER_* variables
# (BINDER_LAUNCH_HOST, BINDER_REPO_URL, ...); the Docker stacks' user is jovyan.
GENERATED_NAMES = ("jovyan",)
GENERATED_PREFIX = "BINDER_"
# The id cell's text before the student edits it (notebook 04).
PLACEHOLDER = "<your id>"
# What a student without an id reads (the sentence of notebook 04, its checks).
HOW_TO_SET_THE_ID = f"""\
On the course server your id is set for you. Anywhere else (your own machine, Colab,
Binder), set it in the notebook: in the cell under "Your student id", write
    student.use_id("{PLACEHOLDER}")
with the id your course grades you under in place of {PLACEHOLDER}, and run the notebook
again from the top."""

_recorded: str | None = None  # the id the notebook set (use_id)


def starting_environment() -> Mapping[str, str]:
    """The environment this process was started with: ``/proc/self/environ`` where the
    system has it (a cell that sets ``os.environ["COURSE_STUDENT"]`` does not change it),
    else ``os.environ``. Read with the builtin ``open``, which the checks' guards watch."""
    try:
        with open("/proc/self/environ", "rb") as environ:
            raw = environ.read()
    except OSError:
        return os.environ
    entries = (entry.split(b"=", 1) for entry in raw.split(b"\0") if b"=" in entry)
    return {name.decode(errors="replace"): value.decode(errors="replace")
            for name, value in entries}


def _from_environment(environment: Mapping[str, str]) -> tuple[str | None, str]:
    """(the id the environment gives, or None; where it comes from, or why a hub's name
    was passed over: "" when there is nothing to say)."""
    value = environment.get("COURSE_STUDENT", "").strip()
    if value:
        return value, "COURSE_STUDENT"
    hub_user = environment.get(HUB_USER, "").strip()
    if not hub_user:
        return None, ""
    if hub_user in GENERATED_NAMES or any(name.startswith(GENERATED_PREFIX)
                                          for name in environment):
        return None, (f"{HUB_USER} is {hub_user!r}, a name the hub made up for this session "
                      "(Binder), not your student id: it is not used")
    return hub_user, f"{HUB_USER}, the course server's login"


def student_id(environment: Mapping[str, str] | None = None) -> str | None:
    """The id of the student whose work this is (see the module's docstring), or None.

    ``environment`` defaults to the one the process was started with."""
    if environment is None:
        environment = starting_environment()
    return _from_environment(environment)[0] or _recorded


def use_id(student: str) -> None:
    """Set the id of the student whose work this notebook is, where none came with the
    kernel (Colab, Binder, a machine started without ``COURSE_STUDENT``): the numbers of
    the cells after it follow it. An id in the kernel's environment wins; then this says
    so, and which id the numbers follow."""
    global _recorded
    if not isinstance(student, str):
        raise TypeError(f"use_id takes your student id as a string, in quotes: "
                        f'student.use_id("s1234567"); got {type(student).__name__}')
    chosen = student.strip()
    if not chosen or chosen == PLACEHOLDER:
        raise ValueError(f"use_id got {student!r}: write your student id between the quotes, "
                         f"in place of {PLACEHOLDER}")
    if not chosen.isprintable():
        raise ValueError(f"use_id got {student!r}: a student id is one line of printable "
                         "characters")
    _recorded = chosen
    show_id()


def id_note(environment: Mapping[str, str] | None = None) -> str:
    """Where the id of :func:`student_id` comes from, in a line or two ("" for none)."""
    if environment is None:
        environment = starting_environment()
    from_environment, where = _from_environment(environment)
    if from_environment is None:
        if _recorded is not None:
            return "(set in this notebook, with student.use_id)"
        return where
    note = f"(from {where}, set when this kernel started)"
    if _recorded is not None and _recorded != from_environment:
        note += (f"\nThe id set in this notebook, {_recorded!r}, is NOT used: the kernel's "
                 "wins. Your work is graded\nunder the id you submit as; if that is not "
                 f"{from_environment!r}, ask your TA.")
    return note


def show_id() -> None:
    """Print the id the numbers follow and where it comes from, or how to set one."""
    student = student_id()
    if student is None:
        print("No student id is set: the numbers below are DEMONSTRATION numbers, which "
              "count for no one.")
        if id_note():
            print(id_note())
        print(HOW_TO_SET_THE_ID)
    else:
        print(f"Student id: {student}\n{id_note()}")


class OwnNumbers:
    """Small integers that depend only on ``purpose`` and ``student`` (None: the
    demonstration numbers): the same sequence on every machine and Python version."""

    BLOCK = 64  # bytes of the SHAKE-256 stream read at a time

    def __init__(self, purpose: str, student: str | None):
        if not purpose:
            raise ValueError("OwnNumbers needs a purpose (the exercise the numbers are for)")
        who = "\0demonstration" if student is None else student
        self._shake = hashlib.shake_256(f"{purpose}\n{who}".encode())
        self._stream = b""
        self._position = 0

    def _byte(self) -> int:
        if self._position == len(self._stream):  # a longer digest starts with the shorter one
            self._stream = self._shake.digest(len(self._stream) + self.BLOCK)
        self._position += 1
        return self._stream[self._position - 1]

    def integer(self, low: int, high: int) -> int:
        """A whole number from ``low`` to ``high`` (both included), each equally likely."""
        span = high - low + 1
        if not 1 <= span <= 256:
            raise ValueError(f"OwnNumbers.integer draws from 1 to 256 numbers; got {low}..{high}")
        accepted = 256 - 256 % span  # bytes past it would favour the low numbers
        while (byte := self._byte()) >= accepted:
            pass
        return low + byte % span

    def integers(self, count: int, low: int, high: int) -> list[int]:
        """``count`` whole numbers from ``low`` to ``high``."""
        return [self.integer(low, high) for _ in range(count)]


def own_seed(purpose: str) -> int:
    """A seed (0 to 2**63 - 1) for ``torch.Generator().manual_seed``, drawn from the id of
    the student whose work this kernel runs (:func:`student_id`) and ``purpose``."""
    return seed_of(purpose, student_id())


def seed_of(purpose: str, student: str | None) -> int:
    """The seed :func:`own_seed` draws for ``purpose`` in a kernel of ``student``."""
    draw = OwnNumbers(purpose, student)
    return int.from_bytes(bytes(draw.integers(8, 0, 255)), "big") >> 1

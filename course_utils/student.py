"""Who the student is, and numbers of their own drawn from it.

Exercises whose answer is a number worked out by hand give each student inputs of their
own, so that two students' right answers differ and a copied number scores 0.

* :func:`student_id` is the student whose work the kernel runs: ``COURSE_STUDENT`` (the
  grader sets it to the submission's student; ``COURSE_STUDENT=<id> make lab`` for a
  student working on their own machine), else ``JUPYTERHUB_USER`` (set on the course
  server). ``None`` when neither is set: the notebook then works with demonstration
  numbers, which count for no one.
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

__all__ = ["HOW_TO_SET_THE_ID", "STUDENT_VARIABLES", "OwnNumbers", "own_seed", "seed_of",
           "student_id"]

# Where the id comes from, the first set one wins.
STUDENT_VARIABLES = ("COURSE_STUDENT", "JUPYTERHUB_USER")
# What a student without an id reads (the sentence of notebook 04, its checks).
HOW_TO_SET_THE_ID = """\
On the course server your id is set for you. On your own machine, quit JupyterLab and
start it again with your id:
    COURSE_STUDENT=<your id> make lab                                (Linux, macOS, WSL)
    $env:COURSE_STUDENT = "<your id>"; jupyter lab notebooks         (Windows PowerShell)
    set COURSE_STUDENT=<your id>   and then   jupyter lab notebooks  (Windows Command Prompt)"""



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


def student_id(environment: Mapping[str, str] | None = None) -> str | None:
    """The id of the student whose work this is (see the module's docstring), or None.

    ``environment`` defaults to the one the process was started with."""
    if environment is None:
        environment = starting_environment()
    for variable in STUDENT_VARIABLES:
        value = environment.get(variable, "").strip()
        if value:
            return value
    return None


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

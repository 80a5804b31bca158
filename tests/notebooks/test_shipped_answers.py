"""Nothing students receive answers an exercise: every function and method of the student
edition's ``course_utils``, pasted into each code exercise's answer cell it fits, fails
that exercise's real test cell (visible and hidden tests) with the guards off.

The student edition is built as ``make student-edition`` builds it, and its
``course_utils`` must be this checkout's, file for file (its functions are then imported
from here: ``tests.support.shipped_functions`` lists them, and what it skips and why).
Each solution notebook runs once, and after each code exercise's test cell every fitting
candidate runs that cell's source in the same kernel; the grader's comparison outside the
kernel decides, on the stored answers (``tests.support.pasted`` says how, and which
controls prove that it sees a leak).

Today some still do: :data:`KNOWN` lists them, one line each; :data:`LIBRARY` lists the
library's own ops that course_utils passes through, which answer as the library does. A pair found that is not
there fails the test, naming the function and the exercise; a line of it that no longer
answers fails too, until it is deleted. One notebook: ``-k 03_bpe``. `make test-notebooks`
runs it (5 min 36 s on 2 busy cores at its first commit); `make test` leaves it out
(pyproject.toml).
"""

import subprocess
import sys

import pytest

from course_utils.exercises import EXERCISES
from tests.conftest import REPO
from tests.support.pasted import leaks_in
from tests.support.shipped_functions import same_tree, shipped_candidates

pytestmark = pytest.mark.notebook

# The leaks of today, (exercise, the shipped function that answers it), by notebook. This
# table must shrink to empty: removing a leak from course_utils means deleting its line
# here (the test fails until it is deleted); a new leak is never added to it.
KNOWN = frozenset({
    # 03_bpe
    ("count_pairs", "course_utils.tokens.bpe.count_pairs"),
    ("encode", "course_utils.checks.bpe._model_encode"),
    ("merge_chunk", "course_utils.tokens.byte_merges._byte_pair_merge"),
    ("merge_chunk", "course_utils.tokens.byte_merges._byte_pair_merge_fast"),
    ("merge_pair", "course_utils.tokens.bpe.merge_pair"),
})

# Shipped functions that pass an exercise's tests because they are the library's own op,
# passed through (design: where a later cell needs what an exercise builds, course_utils
# builds it from the library's op, whose source teaches nothing the exercise asks): the
# library is the students' already, and the twin table refuses it while an answer runs.
LIBRARY = frozenset({
    # Hugging Face DistilBERT's create_sinusoidal_embeddings
    ("positional_encoding", "course_utils.checks.transformer_blocks._sinusoids"),
    ("positional_encoding", "course_utils.models.transformer.sinusoidal_positions"),
    # Hugging Face GPT-J's apply_rotary_pos_emb
    ("rope", "course_utils.models.transformer.rotary_embedding"),
})

NOTEBOOKS = sorted(path.name for path in (REPO / "solutions").iterdir() if path.is_dir())


@pytest.fixture(scope="module")
def candidates(tmp_path_factory):
    """The functions of the student edition's course_utils (see the module's docstring)."""
    edition = tmp_path_factory.mktemp("edition") / "students"
    subprocess.run([sys.executable, "-m", "tools.student_edition", str(edition)], cwd=REPO,
                   check=True, capture_output=True)
    differ = same_tree(edition / "course_utils", REPO / "course_utils")
    assert not differ, (
        "the student edition's course_utils is not this checkout's: these files differ or "
        f"are in one of them only (git add or remove them): {differ}")
    found, _ = shipped_candidates()
    return found


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_no_shipped_function_answers_an_exercise(notebook, candidates, capsys):
    findings = leaks_in(REPO / "solutions" / notebook / f"{notebook}.ipynb", candidates)
    found = {(exercise, name) for exercise, names in findings.answers.items() for name in names}
    with capsys.disabled():  # the table of leaks, whatever pytest captures
        print(table(notebook, findings, found))

    assert not findings.solution_failed, (
        "the test cannot see a leak here: the solution's own function, run as the "
        f"candidates are, fails its exercise: {findings.solution_failed}")
    assert not findings.stuck_passed, (
        "the test cannot tell a wrong answer here: the solution stuck on its first answer "
        f"passed {findings.stuck_passed} (are the stored answers compared?)")
    new = sorted(found - KNOWN - LIBRARY)
    assert not new, "a function students receive answers an exercise: " + "; ".join(
        f"{name} answers {exercise}" for exercise, name in new)
    known_here = {(exercise, name) for exercise, name in KNOWN | LIBRARY
                  if EXERCISES[exercise].notebook == notebook}
    gone = sorted(known_here - found)
    assert not gone, "no longer a leak, delete its line from KNOWN or LIBRARY: " + "; ".join(
        f"({exercise!r}, {name!r})" for exercise, name in gone)


def table(notebook: str, findings, found: set) -> str:
    """The leaks found in ``notebook``, one line each, under a line that counts them."""
    lines = [f"\n{notebook}: {len(found)} leak(s), {findings.probes} runs of a test cell "
             f"in {findings.seconds:.0f} s"]
    return "\n".join(lines + [f"    {name} answers {exercise}"
                              for exercise, name in sorted(found)])

"""Similar answers at class scale: 300 students × 8 notebooks compared (``make similarity``).

The class is generated without kernels. Of each code cell, one student in five hands in one
of its honest answers of tests/grading_cases (the solution, CORRECT and WRONG cases, drawn
at random: several of them are one text edited, so these students match each other as
students writing a cell's natural answer would); the others a function of random
statements of their own; one in ten of all copies another student's answer, under a
comment of its own. Written answers are random words, copied by the same students.
"""

import random
import tempfile
import time
from pathlib import Path

import nbformat

from grader.integrity.similarity.matches import THRESHOLD, answer_cells, similar_answers
from tests.benchmarks.timing import Row
from tests.grader.integrity.test_similarity import honest_students, make_class
from tests.grading_cases import all_cases

STUDENTS = 300
WORDS = ("softmax attention query key value mask token embedding vector row column score "
         "weight scale sum layer norm head position gradient loss window merge pair").split()


CALLS = ("torch.softmax", "torch.exp", "np.sqrt", "len", "sum", "torch.tril", "max", "abs")
NAMES = ("x", "y", "scores", "weights", "mask", "total", "row", "out", "q", "k", "v", "n")


def written(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 60))) + "."


def own_code(rng: random.Random, cell: str) -> str:
    """A function of 3 to 8 random statements: one student's own answer."""
    lines = [f"def {cell}(*args):"]
    for _ in range(rng.randint(3, 8)):
        a, b, c = rng.sample(NAMES, 3)
        call, op = rng.choice(CALLS), rng.choice("+-*/@")
        lines.append(f"    {a} = {call}({b} {op} {c}, {rng.randint(-3, 9)})")
    return "\n".join([*lines, f"    return {rng.choice(NAMES)}"])


def answers_of(rng: random.Random, kinds: dict[str, str], pool: dict[str, list[str]]) -> dict:
    """One student's own answers of the cells ``kinds`` ({grade id: code or markdown})."""
    answers = {}
    for cell, kind in kinds.items():
        if kind == "markdown":
            answers[cell] = written(rng)
        elif cell in pool and rng.random() < 0.2:
            answers[cell] = rng.choice(pool[cell])
        else:
            answers[cell] = own_code(rng, cell)
    return answers


def generated_class(root: Path, students: int = STUDENTS, seed: int = 0):
    """A course in ``root`` with ``students`` submissions of every notebook."""
    rng = random.Random(seed)
    assignments = sorted(all_cases())
    course = make_class(root, assignments)
    for assignment in assignments:
        release = nbformat.read(course.notebook("release", ".", assignment), as_version=4)
        pool = {}
        for answers in honest_students(assignment).values():
            for cell, code in answers.items():
                pool.setdefault(cell, []).append(code)
        kinds = {cell: kind for cell, (kind, _) in answer_cells(release).items()}
        typed = [answers_of(rng, kinds, pool) for _ in range(students)]
        for n in range(students):
            student = f"student{n:03d}"
            if rng.random() < 0.1:  # a copy, under a comment of its own
                copied = rng.choice(typed)
                typed[n] = {cell: f"# {student}\n{text}" if kinds[cell] == "code" else text
                            for cell, text in copied.items()}
            notebook = nbformat.from_dict(release)
            for cell in notebook.cells:
                grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
                if grade_id in typed[n]:
                    cell.source = typed[n][grade_id]
            folder = course.folder("submitted", student, assignment)
            folder.mkdir(parents=True)
            nbformat.write(notebook, folder / f"{assignment}.ipynb")
    return course, len(assignments)


def run():
    with tempfile.TemporaryDirectory() as root:
        course, notebooks = generated_class(Path(root))
        start = time.perf_counter()
        matches = similar_answers(course, threshold=THRESHOLD)
        seconds = time.perf_counter() - start
    yield Row(f"compare {STUDENTS} students x {notebooks} notebooks",
              "grader.integrity.similarity.matches (copydetect)", seconds, "s",
              f"{len(matches)} pairs >= {THRESHOLD}; budget: 60 s on 2 cores")

"""The TA workflow around nbgrader: release, autograde, feedback, grades.

Run from the repository root (the Makefile does)::

    python -m course_utils.grading release      # solutions/ -> notebooks/
    python -m course_utils.grading autograde    # grading/submitted/ -> gradebook
    python -m course_utils.grading feedback     # HTML in grading/feedback/
    python -m course_utils.grading grades       # grading/grades.csv

A grading run never loses a submission: nbgrader grades what it can, and every
submission it could not grade (a notebook that is not valid JSON, a kernel that
died) is reported by name and kept in grades.csv with the status ``not graded``.
Answer cells that import an exercise's library twin (``checks.TWINS``) are flagged,
on the console and in grades.csv's ``flags`` column, for a TA to look at.
"""

import argparse
import csv
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

DEFAULT_ROOT = Path("grading")


@dataclass
class Course:
    """An nbgrader course whose root holds nbgrader_config.py (source and release beside it)."""

    root: Path

    @property
    def source(self) -> Path:
        return (self.root / ".." / "solutions").resolve()

    @property
    def release(self) -> Path:
        return (self.root / ".." / "notebooks").resolve()

    @property
    def gradebook_url(self) -> str:
        return f"sqlite:///{(self.root / 'gradebook.db').resolve()}"

    def assignments(self) -> list[str]:
        """Assignment ids: the folders of the source, in order."""
        return sorted(p.name for p in self.source.iterdir() if (p / f"{p.name}.ipynb").exists())

    def submissions(self, assignment: str) -> list[str]:
        """Students who submitted ``assignment``, in order."""
        submitted = self.root / "submitted"
        if not submitted.exists():
            return []
        return sorted(p.name for p in submitted.iterdir() if (p / assignment).is_dir())

    def nbgrader(self, *args: str) -> subprocess.CompletedProcess:
        """Run ``nbgrader ARGS`` in the course root with this Python's environment."""
        env = dict(os.environ)
        # Kernels are found on PATH: make sure it is this environment's python.
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        return subprocess.run(
            [sys.executable, "-m", "nbgrader", *args],
            cwd=self.root,
            env=env,
            capture_output=True,
            text=True,
        )


def _run_or_fail(course: Course, *args: str) -> None:
    done = course.nbgrader(*args)
    if done.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed:\n{done.stdout}{done.stderr}")


def release(course: Course, assignments=None, release_dir: Path | None = None) -> None:
    """Generate the student release of each assignment (also records it in the gradebook)."""
    extra = [f"--CourseDirectory.release_directory={release_dir}"] if release_dir else []
    for assignment in assignments or course.assignments():
        _run_or_fail(course, "generate_assignment", assignment, "--force", *extra)


def autograde(course: Course, assignments=None) -> list[str]:
    """Autograde every submission; return the submissions that could not be graded."""
    failed = []
    for assignment in assignments or course.assignments():
        students = course.submissions(assignment)
        if not students:
            continue
        with tempfile.TemporaryDirectory() as scratch:
            # The gradebook must know the assignment's test cells (hidden ones too).
            release(course, [assignment], release_dir=Path(scratch))
        done = course.nbgrader("autograde", assignment, "--force")
        log = done.stdout + done.stderr
        for student in students:
            if not (course.root / "autograded" / student / assignment).is_dir():
                failed.append(f"{student}/{assignment}")
                print(f"NOT GRADED: {student}/{assignment}", file=sys.stderr)
            for flag in twin_flags(course, assignment, student):
                print(f"FLAGGED: {student}/{assignment}: {flag}", file=sys.stderr)
        if done.returncode != 0:
            print(f"nbgrader autograde {assignment} reported errors:\n{log}", file=sys.stderr)
    return failed


def twin_flags(course: Course, assignment: str, student: str) -> list[str]:
    """'cell <grade id> imports <twin>' for each library twin an answer cell brings in."""
    import nbformat  # imported here, like the gradebook: only graders need it

    from course_utils.checks import imported_twins

    path = course.root / "submitted" / student / assignment / f"{assignment}.ipynb"
    try:
        notebook = nbformat.read(path, as_version=4)
    except Exception:  # noqa: BLE001 - an unreadable notebook is reported as not graded
        return []
    flags = []
    for cell in notebook.cells:
        grade = cell.get("metadata", {}).get("nbgrader", {})
        if grade.get("solution") and cell.cell_type == "code":
            flags += [
                f"cell {grade['grade_id']} imports {twin}"
                for twin in imported_twins(cell.source, grade.get("grade_id", ""))
            ]
    return flags


def feedback(course: Course, assignments=None) -> None:
    """Write HTML feedback for every graded submission to grading/feedback/."""
    for assignment in assignments or course.assignments():
        if (course.root / "autograded").exists() and any(
            (p / assignment).is_dir() for p in (course.root / "autograded").iterdir()
        ):
            _run_or_fail(course, "generate_feedback", assignment, "--force")


def cell_scores(course: Course, assignment: str, student: str) -> dict[str, tuple[float, float]]:
    """{grade cell id: (score, max score)} of one graded submission."""
    from nbgrader.api import Gradebook  # imported here: slow, and only graders need it

    with Gradebook(course.gradebook_url) as gradebook:
        notebook = gradebook.find_submission_notebook(assignment, assignment, student)
        return {grade.name: (grade.score, grade.max_score) for grade in notebook.grades}


def grade_rows(course: Course) -> list[dict]:
    """One row per submission: its score, or the status ``not graded``."""
    rows = []
    for assignment in course.assignments():
        for student in course.submissions(assignment):
            graded = (course.root / "autograded" / student / assignment).is_dir()
            row = {"student_id": student, "assignment": assignment, "score": "", "max_score": ""}
            if graded:
                scores = cell_scores(course, assignment, student).values()
                row["score"] = sum(score for score, _ in scores)
                row["max_score"] = sum(maximum for _, maximum in scores)
            row["status"] = "graded" if graded else "not graded"
            row["flags"] = "; ".join(twin_flags(course, assignment, student))
            rows.append(row)
    return rows


def write_grades(course: Course, path: Path | None = None) -> Path:
    """Write grades.csv (student_id, assignment, score, max_score, status, flags)."""
    path = path or course.root / "grades.csv"
    rows = grade_rows(course)
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(
            handle, fieldnames=["student_id", "assignment", "score", "max_score", "status", "flags"]
        )
        writer.writeheader()
        writer.writerows(rows)
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["release", "autograde", "feedback", "grades"])
    parser.add_argument("assignments", nargs="*", help="assignment ids (default: all)")
    parser.add_argument("--course-root", type=Path, default=DEFAULT_ROOT)
    args = parser.parse_args(argv)
    course = Course(args.course_root.resolve())
    if args.step == "release":
        release(course, args.assignments)
    elif args.step == "autograde":
        failed = autograde(course, args.assignments)
        if failed:
            print(f"{len(failed)} submission(s) could not be graded: {', '.join(failed)}")
            return 1
    elif args.step == "feedback":
        feedback(course, args.assignments)
    else:
        print(f"wrote {write_grades(course)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

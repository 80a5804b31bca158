"""The TA's command line (the Makefile's publish, collect, release, autograde, feedback,
grades, similarity, report and student-ids targets call it):
``python -m grader STEP [assignments] [options]``.

:data:`STEPS` is the whole command: each step and the one function that runs it. A step
returns the exit status: 0, 1 when an assignment failed, 2 when the exchange, the roster
or lms.toml must be fixed first, 3 when the self-check stopped the grading.
"""

import argparse
import os
import sys
from pathlib import Path

from grader.course import COURSE_ROOT, Course
from grader.intake import exchange
from grader.running import nbgrader_steps
from grader.running.sandbox import GIB, Limits
from grader.scoring import grades, selfcheck
from grader.scoring.autograde import autograde


def duedate(text: str):
    """``--duedate``'s value: argparse shows this message rather than "invalid value"."""
    try:
        return exchange.parse_duedate(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def report_failures(step: str, failed: dict[str, str]) -> int:
    for name, message in failed.items():
        print(f"{step} FAILED for {name}:\n{message}\n", file=sys.stderr)
    return 1 if failed else 0


def publish(args, course: Course) -> int:
    """notebooks/ -> nbgrader's exchange, with the due date in the gradebook."""
    failed = exchange.publish(course, args.assignments, args.duedate)
    published = [a for a in args.assignments or course.assignments() if a not in failed]
    print(f"published to {exchange.course_folder(course)}: {', '.join(published)}")
    return report_failures("publish", failed)


def collect(args, course: Course) -> int:
    """The exchange, or an LMS's zip (``--zip``) -> submitted/<student>/<assignment>/."""
    if args.zip is not None:
        from grader.intake.lms_zip import collect_zip

        print(collect_zip(course, args.zip, args.assignments or None))
        return 0
    lines, failed = exchange.collect(course, args.assignments)
    print("\n".join(lines))
    return report_failures("collect", failed)


def release(args, course: Course) -> int:
    """solutions/ -> notebooks/, the tests in the gradebook."""
    return report_failures("release", nbgrader_steps.release(course, args.assignments))


def answers(args, course: Course) -> int:
    """The values each solution's test cells check, stored in answers/ for the grader."""
    from grader.scoring.answers import store

    limits = Limits(memory_bytes=int(args.memory_gb * GIB), notebook_timeout=args.notebook_timeout)
    failed = store(course, args.assignments, limits, args.workers or None)
    stored = [a for a in args.assignments or course.assignments() if a not in failed]
    print(f"stored the answers of {', '.join(stored) or 'nothing'} in {course.root / 'answers'}")
    return report_failures("answers", failed)


def grade(args, course: Course) -> int:
    """Every new or changed submission, in parallel, sandboxed."""
    limits = Limits(memory_bytes=int(args.memory_gb * GIB), notebook_timeout=args.notebook_timeout)
    summary = autograde(course, args.assignments, args.workers, args.scheduler, args.regrade,
                        limits)
    print(f"graded {len(summary.graded)}, unchanged {len(summary.unchanged)}, "
          f"not graded {len(summary.not_graded)}")
    for name, reason in summary.not_graded.items():
        print(f"NOT GRADED {name}: {reason}")
    return 0


def feedback(args, course: Course) -> int:
    """An HTML page per graded submission, put in the exchange for who submitted there."""
    failed = nbgrader_steps.feedback(course, args.assignments, args.student)
    written = [a for a in args.assignments or course.assignments() if a not in failed]
    failed |= exchange.release_feedback(course, written, args.student)
    return report_failures("feedback", failed)


def grades_file(args, course: Course) -> int:
    """grades.csv, or with ``--format canvas|moodle`` the LMS's import file."""
    if args.format == "csv":
        print(f"wrote {grades.write_grades(course)}")
        return 0
    from grader.outputs import lms_grades

    try:
        settings = lms_grades.load_settings(course, args.format, args.late_penalty,
                                            args.missing_as_zero)
        path, notes = lms_grades.write_lms_grades(course, settings)
    except lms_grades.LmsError as error:
        print(error, file=sys.stderr)
        return 2
    for note in notes:
        print(note)
    print(f"wrote {path}")
    return 0


def similarity(args, course: Course) -> int:
    """similarity.csv: pairs of alike answers (grader.integrity.similarity)."""
    similar_answers(args, course)
    return 0


def report(args, course: Course) -> int:
    """report.html, with grades.csv and similarity.csv beside it."""
    from grader.outputs.report import write_report

    rows = grades.grade_rows(course)
    print(f"wrote {grades.write_grades(course, rows=rows)}")
    path = write_report(rows, grades.cell_rows(course), course.root / "report.html",
                        similar_answers(args, course))
    print(f"wrote {path}")
    return 0


def student_ids(args, course: Course) -> int:
    """The id each roster student sets (grader.outputs.student_ids), printed and written to
    student_ids.csv."""
    from grader.outputs.lms_grades import LmsError
    from grader.outputs.student_ids import write_student_ids

    try:
        path, rows = write_student_ids(course)
    except LmsError as error:
        print(error, file=sys.stderr)
        return 2
    for row in rows:
        print(f"{row['name'] or row['student_id']}: COURSE_STUDENT={row['course_student']}"
              + (f"   ({row['note']})" if row["note"] else ""))
    print(f"wrote {path}")
    return 0


def similar_answers(args, course: Course) -> list:
    """The matches of grader.integrity.similarity, written to similarity.csv."""
    from grader.integrity.similarity import matches

    try:
        threshold = matches.check_threshold(args.similarity or matches.THRESHOLD)
    except ValueError as error:
        raise SystemExit(f"python -m grader {args.step}: {error}") from None
    found = matches.similar_answers(course, args.assignments, threshold)
    path = matches.write_csv(found, course.root / "similarity.csv")
    print(f"wrote {path}: {len(found)} pairs of answers with similarity >= {threshold}")
    return found


STEPS = {
    "publish": publish,
    "collect": collect,
    "release": release,
    "answers": answers,
    "autograde": grade,
    "feedback": feedback,
    "grades": grades_file,
    "report": report,
    "similarity": similarity,
    "student-ids": student_ids,
}


def parse(argv):
    parser = argparse.ArgumentParser(prog="python -m grader", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=list(STEPS))
    parser.add_argument("assignments", nargs="*", help="assignment ids (default: all)")
    parser.add_argument("--course-root", type=Path, help="the course's grading/ folder "
                        "(default: the one beside the installed grader)")
    parser.add_argument("--zip", type=Path, help="collect: the LMS's zip of submissions "
                        "(without it: the exchange)")
    parser.add_argument("--duedate", type=duedate,
                        help="publish: ISO 8601, '2026-06-01 17:00' (this machine's time) or "
                        "'2026-06-01T17:00+02:00'")
    parser.add_argument("--workers", type=int, default=0, help="default: one per core")
    parser.add_argument("--scheduler", help="a Dask scheduler address, tcp://host:8786")
    parser.add_argument("--regrade", action="store_true", help="regrade unchanged submissions")
    parser.add_argument("--memory-gb", type=float, default=4.0, help="per kernel (default 4)")
    parser.add_argument("--notebook-timeout", type=int, default=1800, help="seconds")
    parser.add_argument("--student", action="append", help="feedback: only these students")
    parser.add_argument("--similarity", default=os.environ.get("SIMILARITY", ""),
                        help="similarity, report: the threshold of a match, in (0, 1] "
                        "(default: $SIMILARITY, else 0.8)")
    parser.add_argument("--format", choices=["csv", "canvas", "moodle"], default="csv",
                        help="grades: grades.csv (default), or the import file of Canvas "
                        "or Moodle (grader.outputs.lms_grades)")
    parser.add_argument("--missing-as-zero", action="store_true", default=None,
                        help="grades for an LMS: 0 for nothing submitted (default: blank)")
    parser.add_argument("--late-penalty", help="grades for an LMS: '10%%/day, max 50%%'")
    return parser.parse_intermixed_args(argv)  # options may come between the ids


def other_checkout(here: Path) -> str | None:
    """Why the grader may not act from ``here``: a checkout of the course whose grading/
    folder is not the installed grader's (its steps would write into the other checkout)."""
    grading = here / "grading"
    if (grading / "nbgrader_config.py").is_file() and grading.resolve() != COURSE_ROOT:
        return (f"this grader is installed from {COURSE_ROOT.parent}, not from {here}: its "
                f"steps would act on that checkout. Run `make setup` here (a .venv of this "
                f"checkout's own), or pass --course-root {grading}")
    return None


def main(argv=None) -> int:
    args = parse(argv)
    if args.course_root is None and (problem := other_checkout(Path.cwd())):
        print(problem, file=sys.stderr)
        return 2
    course = Course(args.course_root or COURSE_ROOT)
    try:
        return STEPS[args.step](args, course)
    except exchange.ExchangeUnavailable as error:
        print(error, file=sys.stderr)
        return 2
    except selfcheck.BrokenEnvironment as error:  # before anyone was graded
        print(f"autograde STOPPED: {error}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())

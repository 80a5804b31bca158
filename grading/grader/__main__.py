"""The TA's command line (the Makefile's publish, collect, release, autograde, feedback,
grades, similarity, report targets call it): ``python -m grader STEP [assignments] [options]``."""

import argparse
import os
import sys
from pathlib import Path

from grader import exchange, grades, selfcheck, steps
from grader.autograde import autograde
from grader.course import Course
from grader.sandbox import GIB, Limits

COURSE_ROOT = Path(__file__).resolve().parents[1]  # grading/, beside nbgrader_config.py


def duedate(text: str):
    """``--duedate``'s value: argparse shows this message rather than "invalid value"."""
    try:
        return exchange.parse_duedate(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def parse(argv):
    parser = argparse.ArgumentParser(prog="python -m grader", description=__doc__)
    parser.add_argument("step", choices=["publish", "collect", "release", "autograde",
                                         "feedback", "grades", "report", "similarity",
                                         "student-ids"])
    parser.add_argument("assignments", nargs="*", help="assignment ids (default: all)")
    parser.add_argument("--course-root", type=Path, default=COURSE_ROOT)
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
                        "or Moodle (grader.lms)")
    parser.add_argument("--missing-as-zero", action="store_true", default=None,
                        help="grades for an LMS: 0 for nothing submitted (default: blank)")
    parser.add_argument("--late-penalty", help="grades for an LMS: '10%%/day, max 50%%'")
    return parser.parse_intermixed_args(argv)  # options may come between the ids


def report_failures(step: str, failed: dict[str, str]) -> int:
    for name, message in failed.items():
        print(f"{step} FAILED for {name}:\n{message}\n", file=sys.stderr)
    return 1 if failed else 0


def main(argv=None) -> int:
    args = parse(argv)
    course = Course(args.course_root)
    try:
        return run(args, course)
    except exchange.ExchangeUnavailable as error:
        print(error, file=sys.stderr)
        return 2
    except selfcheck.BrokenEnvironment as error:  # before anyone was graded
        print(f"autograde STOPPED: {error}", file=sys.stderr)
        return 3


def run(args, course: Course) -> int:
    """Run ``args.step``; 1 when an assignment failed, else 0."""
    if args.step == "publish":
        failed = exchange.publish(course, args.assignments, args.duedate)
        published = [a for a in args.assignments or course.assignments() if a not in failed]
        print(f"published to {exchange.course_folder(course)}: {', '.join(published)}")
        return report_failures("publish", failed)
    elif args.step == "collect" and args.zip is None:
        lines, failed = exchange.collect(course, args.assignments)
        print("\n".join(lines))
        return report_failures("collect", failed)
    elif args.step == "collect":
        from grader.collect import collect_zip

        print(collect_zip(course, args.zip, args.assignments or None))
    elif args.step == "release":
        return report_failures("release", steps.release(course, args.assignments))
    elif args.step == "autograde":
        limits = Limits(memory_bytes=int(args.memory_gb * GIB),
                        notebook_timeout=args.notebook_timeout)
        summary = autograde(course, args.assignments, args.workers, args.scheduler,
                            args.regrade, limits)
        print(f"graded {len(summary.graded)}, unchanged {len(summary.unchanged)}, "
              f"not graded {len(summary.not_graded)}")
        for name, reason in summary.not_graded.items():
            print(f"NOT GRADED {name}: {reason}")
    elif args.step == "feedback":
        failed = steps.feedback(course, args.assignments, args.student)
        written = [a for a in args.assignments or course.assignments() if a not in failed]
        failed |= exchange.release_feedback(course, written, args.student)
        return report_failures("feedback", failed)
    elif args.step == "grades" and args.format == "csv":
        print(f"wrote {grades.write_grades(course)}")
    elif args.step == "grades":
        return lms_grades(args, course)
    elif args.step == "similarity":
        similar_answers(args, course)
    elif args.step == "student-ids":
        return student_ids(course)
    else:  # the report, and grades.csv and similarity.csv beside it
        from grader.report import write_report

        print(f"wrote {grades.write_grades(course)}")
        path = write_report(grades.grade_rows(course), grades.cell_rows(course),
                            course.root / "report.html", similar_answers(args, course))
        print(f"wrote {path}")
    return 0


def similar_answers(args, course: Course) -> list:
    """The matches of grader.similarity, written to similarity.csv."""
    from grader import similarity

    try:
        threshold = similarity.check_threshold(args.similarity or similarity.THRESHOLD)
    except ValueError as error:
        raise SystemExit(f"python -m grader {args.step}: {error}") from None
    matches = similarity.similar_answers(course, args.assignments, threshold)
    path = similarity.write_csv(matches, course.root / "similarity.csv")
    print(f"wrote {path}: {len(matches)} pairs of answers with similarity >= {threshold}")
    return matches


def student_ids(course: Course) -> int:
    """``student-ids``: the id each roster student sets (grader.student_ids), printed and
    written to student_ids.csv."""
    from grader import lms
    from grader.student_ids import write_student_ids

    try:
        path, rows = write_student_ids(course)
    except lms.LmsError as error:
        print(error, file=sys.stderr)
        return 2
    for row in rows:
        print(f"{row['name'] or row['student_id']}: COURSE_STUDENT={row['course_student']}"
              + (f"   ({row['note']})" if row["note"] else ""))
    print(f"wrote {path}")
    return 0


def lms_grades(args, course: Course) -> int:
    """``grades --format canvas|moodle``: the file, and what was penalised or left blank."""
    from grader import lms

    try:
        settings = lms.load_settings(course, args.format, args.late_penalty,
                                     args.missing_as_zero)
        path, notes = lms.write_lms_grades(course, settings)
    except lms.LmsError as error:
        print(error, file=sys.stderr)
        return 2
    for note in notes:
        print(note)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

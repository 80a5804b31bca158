"""Grade each submission as it arrives and give the student its feedback, without a TA.

    python -m grader.on_submit [--course-root grading/] [--workers N]

The course server starts it as a JupyterHub service when ``COURSE_GRADE_ON_SUBMIT=1``
(hub/jupyterhub_config.py) and stops it with the hub: this is the process's life (its
lock, its signals, the self-check before the first poll); :mod:`grader.on_submit.service`
is the work.
"""

import argparse
import logging
import os
import signal
import sys
import threading
from pathlib import Path

from filelock import FileLock, Timeout

from grader.course import COURSE_ROOT, Course
from grader.intake import exchange
from grader.on_submit.service import POLL_S, Service, log
from grader.scoring import selfcheck

LOCK_WAIT_S = 60  # for the service of an earlier hub to stop


def published(course: Course) -> list[str]:
    """The assignments released to the exchange, which students can submit."""
    outbound = exchange.course_folder(course) / "outbound"
    return [a for a in course.assignments() if (outbound / a).is_dir()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.on_submit", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--course-root", type=Path,
                        default=os.environ.get("COURSE_ROOT", COURSE_ROOT))
    parser.add_argument("--workers", type=int, default=0, help="default: one per core")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="[%(levelname).1s %(asctime)s grade-on-submit] %(message)s")
    course = Course(args.course_root)
    service = Service(course, args.workers or None)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    try:
        with FileLock(course.root / ".on_submit.lock", timeout=LOCK_WAIT_S):
            assignments = published(course)
            try:
                service.verify(assignments)
            except selfcheck.BrokenEnvironment as error:
                log.error("grading on submission is off, nobody is graded: %s\nFix the "
                          "grading environment, then restart the hub.", error)
                wait_for(stop)
                return 1
            log.info("grading on submission of %s in %s, %d at a time, polling every %g s",
                     ", ".join(assignments) or "(nothing published yet)", course.root,
                     service.workers, POLL_S)
            threading.Thread(target=service.run, daemon=True).start()
            wait_for(stop)
            service.stop()
    except Timeout:
        log.error("another grading service holds %s: this one grades nothing",
                  course.root / ".on_submit.lock")
        wait_for(stop)
        return 1
    return 0


def wait_for(stop: threading.Event) -> None:
    """Wait until ``stop`` is set (by a signal: the main thread must wake to run it)."""
    while not stop.wait(1):
        pass


if __name__ == "__main__":
    sys.exit(main())

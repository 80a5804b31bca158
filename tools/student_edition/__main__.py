"""`python -m tools.student_edition DEST`: write the student edition to DEST (see the
package's docstring; the Makefile's `student-edition` target runs it)."""

import argparse
from pathlib import Path

from tools.student_edition import build

parser = argparse.ArgumentParser(
    prog="python -m tools.student_edition",
    description="Write what students receive (the release, course_utils, the environment, "
    "their README and Makefile) to DEST, a new git repository with one commit.")
parser.add_argument("dest", type=Path, help="a new or empty folder")
arguments = parser.parse_args()
try:
    print(f"The student edition is in {build(arguments.dest)}")
except ValueError as error:
    parser.error(str(error))

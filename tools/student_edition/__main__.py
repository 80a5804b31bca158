"""`python -m tools.student_edition DEST [--repo OWNER/NAME] [--branch main]`: write the
student edition to DEST (see the package's docstring; the Makefile's `student-edition` target
runs it)."""

import argparse
from pathlib import Path

from tools.student_edition import build

parser = argparse.ArgumentParser(
    prog="python -m tools.student_edition",
    description="Write what students receive (the release, course_utils, the environment, "
    "their README and Makefile, Binder's and the dev container's set-up) to DEST: a new git "
    "repository, or the next release committed on top of the last in DEST's repository.")
parser.add_argument("dest", type=Path,
                    help="a new or empty folder, or a git repository of an earlier edition")
parser.add_argument("--repo", metavar="OWNER/NAME",
                    help="the edition's GitHub repository, for the Colab, Binder and "
                    "Codespaces links (default: DEST's origin remote, if on GitHub)")
parser.add_argument("--branch", default="main", help="the edition's branch (default: main)")
arguments = parser.parse_args()
if arguments.repo and arguments.repo.count("/") != 1:
    parser.error(f"--repo: expected OWNER/NAME, got {arguments.repo!r}")
try:
    dest = build(arguments.dest, github=arguments.repo, branch=arguments.branch)
except ValueError as error:
    parser.error(str(error))
print(f"The student edition is in {dest}: push it (git -C {dest} push) for students to pull")

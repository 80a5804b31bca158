"""The student edition: the part of this repository that students receive.

This repository is the instructors' (solutions, hidden tests, grading cases, the TAs'
tools); students get a separate git repository built from it by
`make student-edition DEST=<folder>` (`python -m tools.student_edition DEST`).
`EDITION` names what it holds, relative to the repository's root; the course server
reads the same list to decide what a student's server may see.
"""

# What students receive, relative to the repository's root. The students' own README.md
# and Makefile (this folder's copies) replace the instructors'.
EDITION = (
    "notebooks",
    "course_utils",
    "pyproject.toml",
    "environment.yml",
    "README.md",
    "Makefile",
)

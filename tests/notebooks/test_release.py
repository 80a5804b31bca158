"""The student release is current and gives nothing away."""

import json
import re

import nbformat
import pytest

from tests.conftest import ASSIGNMENTS, REPO

pytestmark = pytest.mark.notebook



def release_files(root, assignments):
    return sorted(
        str(p.relative_to(root))
        for assignment in assignments
        for p in (root / assignment).rglob("*")
        if p.is_file()
    )


def test_every_assignment_is_released():
    assert ASSIGNMENTS
    for assignment in ASSIGNMENTS:
        assert (REPO / "notebooks" / assignment / f"{assignment}.ipynb").exists(), assignment


def test_committed_release_equals_a_fresh_generation(course, assignments):
    committed_files = release_files(REPO / "notebooks", assignments)
    assert release_files(course.release, assignments) == committed_files
    for path in committed_files:
        fresh = json.loads((course.release / path).read_text())
        committed = json.loads((REPO / "notebooks" / path).read_text())
        assert fresh == committed, f"notebooks/{path} is stale: run `make release`"


SECRET = re.compile(
    r"### BEGIN (SOLUTION|HIDDEN TESTS)\n(.*?)### END (SOLUTION|HIDDEN TESTS)", flags=re.S
)


def stripped_lines(text):
    return {line.strip() for line in text.splitlines() if len(line.strip()) > 12}


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_release_holds_no_solutions_and_no_hidden_tests(assignment):
    path = f"{assignment}/{assignment}.ipynb"
    text = (REPO / "notebooks" / path).read_text()
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
        assert marker not in text
    source = nbformat.read(REPO / "solutions" / path, as_version=4)
    secret_lines, open_lines = set(), set()
    for cell in source.cells:
        for match in SECRET.finditer(cell.source):
            secret_lines |= stripped_lines(match.group(2))
        open_lines |= stripped_lines(SECRET.sub("", cell.source))
    release = nbformat.read(REPO / "notebooks" / path, as_version=4)
    release_lines = set().union(*(stripped_lines(cell.source) for cell in release.cells))
    leaks = (secret_lines - open_lines) & release_lines
    assert not leaks, f"{assignment}: the release shows solution or hidden-test lines {leaks}"

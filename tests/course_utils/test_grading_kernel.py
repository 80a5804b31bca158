"""The grading kernel's extension (course_utils.grading_kernel), in a shell of its own: it seals
the guards' baseline before any cell runs, and test cells leave no code in linecache.

Each test runs IPython in a fresh interpreter, as a grading kernel starts: sealing is for
the life of the process, so it must not happen in pytest's.
"""

import subprocess
import sys
import textwrap

STARTED = """
import linecache
from IPython.core.interactiveshell import InteractiveShell

shell = InteractiveShell.instance()
shell.extension_manager.load_extension("course_utils.grading_kernel")


def run(code):
    result = shell.run_cell(code, store_history=True)
    if result.error_in_exec is not None:
        print(type(result.error_in_exec).__name__, result.error_in_exec)
"""


def in_a_grading_shell(cells: str) -> str:
    """What ``cells`` (calls of ``run(code)``) print, run after the extension is loaded."""
    program = STARTED + textwrap.dedent(cells)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_patch_before_the_checks_are_imported_is_found_and_a_new_baseline_changes_nothing():
    said = in_a_grading_shell("""
        run("import torch\\ntorch.allclose = lambda *args, **kwargs: True")
        run("from course_utils.checks import guards\\nguards.record_baseline()")
        run("guards.check_nothing_left_behind()")
    """)
    assert "LeftBehind" in said and "allclose" in said, said


def test_an_honest_notebook_leaves_nothing_behind():
    said = in_a_grading_shell("""
        run("import matplotlib\\nmatplotlib.use('agg')\\nimport matplotlib.pyplot as plt")
        run("from course_utils import checks\\nplt.plot([1, 2]);")
        run("checks.guards.check_nothing_left_behind()\\nprint('clean')")
    """)
    assert said.strip() == "clean", said


def test_a_cell_that_grades_leaves_no_code_in_linecache():
    said = in_a_grading_shell("""
        run("class checks:\\n    grade = print\\nx_test = 41  # a hidden input\\n"
            "checks.grade('f', x_test)")
        run("visible = 1")
        print(sum("x_test = 41" in "".join(entry[2]) for entry in linecache.cache.values()),
              sum("visible = 1" in "".join(entry[2]) for entry in linecache.cache.values()))
    """)
    assert said.splitlines() == ["f 41", "0 1"], said

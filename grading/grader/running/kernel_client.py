"""The kernel client the grading runs nbgrader with, from course_utils.jupyter.kernel_client
(it ships with the student edition too, so that a student's own nbconvert and Validate get
it); ``grading/nbgrader_config.py`` and ``grading/jupyter_nbconvert_config.py`` name it here."""

from course_utils.jupyter.kernel_client import SLICE, KernelClient, ShellChannel

__all__ = ["SLICE", "KernelClient", "ShellChannel"]

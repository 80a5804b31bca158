"""nbgrader configuration of the workbook.

The course root is this folder (grading/). The instructor source lives in
../solutions and the student release in ../notebooks, so the layout is

    solutions/<assignment>/<assignment>.ipynb    source, with solutions and hidden tests
    notebooks/<assignment>/<assignment>.ipynb    student release (generated, committed)
    grading/submitted/<student>/<assignment>/    students' work       (git-ignored)
    grading/autograded/, grading/feedback/, grading/gradebook.db     (git-ignored)
"""

import os

import nbgrader

import grader

c = get_config()  # noqa: F821  (provided by nbgrader when it loads this file)

c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.source_directory = "../solutions"
c.CourseDirectory.release_directory = "../notebooks"

# The course's name on nbgrader's exchange, the folder through which students fetch a
# release and submit their work (`make publish`, `make collect`, the Assignment List of
# JupyterLab). By default it is grading/exchange/ (git-ignored), which needs no root. On a
# machine where each student is a system user, every one of them must be able to write it:
#     sudo mkdir -p /srv/nbgrader/exchange && sudo chmod ugo+rwx /srv/nbgrader/exchange
#     export COURSE_EXCHANGE=/srv/nbgrader/exchange   (for the TA and the hub alike)
c.CourseDirectory.course_id = "embeddings-attention-transformers"
c.Exchange.root = os.environ.get(
    "COURSE_EXCHANGE", os.path.join(c.CourseDirectory.root, "exchange")
)

# Per-cell time limit while autograding. nbgrader's default of 30 s is too short for a
# cold kernel importing torch on a busy 2-core machine; 120 s still stops a student's
# endless loop, and the notebooks' own cells stay under 10 s in their quick sizes.
c.Execute.timeout = 120

# A client that sees a cell's reply even when nbclient's own widget messages hide it from
# the poll (grader.running.kernel_client: without it, a cell after an `interact` could wait 120 s).
c.AsyncKernelManager.client_class = "grader.running.kernel_client.KernelClient"

# A cell whose reply says it failed or was aborted fails, even when the answer hid its
# traceback so that the cell shows no error (grader.running.execute: nbgrader reads only the
# outputs). nbgrader's own list, with the course's Execute in place of nbgrader's;
# tests/grader/running/test_hidden_failures.py checks that the rest is nbgrader's default.
c.Autograde.autograde_preprocessors = [
    "grader.running.execute.Execute",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "grader.scoring.outside.CompareOutside",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]

# The grade is decided outside the student's kernel: each value a test cell checks leaves
# the kernel as data, and CompareOutside (grader.scoring.outside) fails the cell unless every
# value is the answer stored from the instructor's solution (`make answers`, in answers/ here;
# a grading job carries that folder to the grader's process, never into the kernel).
c.CompareOutside.answers_directory = os.path.join(c.CourseDirectory.root, "answers")

# When the last cell has replied there is nothing left to wait for: end the kernel at once
# rather than ask it to shut down and wait (0.1 s instead of 0.7 s per submission).
c.Execute.shutdown_kernel = "immediate"

# The release leaves out the source's worked answers (cells tagged "worked-answer",
# grader.outputs.worked_answers) and rubrics (tagged "rubric", grader.outputs.rubrics) before
# any of nbgrader's steps sees them; the rest is nbgrader's own list
# (tests/grader/outputs/test_worked_answers.py checks that it is nbgrader's default).
c.GenerateAssignment.preprocessors = [
    "grader.outputs.worked_answers.RemoveWorkedAnswers",
    "grader.outputs.rubrics.RemoveRubrics",
    "nbgrader.preprocessors.IncludeHeaderFooter",
    "nbgrader.preprocessors.InstantiateTests",
    "nbgrader.preprocessors.LockCells",
    "nbgrader.preprocessors.ClearSolutions",
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.CheckCellMetadata",
    "nbgrader.preprocessors.ComputeChecksums",
    "nbgrader.preprocessors.SaveCells",
    "nbgrader.preprocessors.ClearHiddenTests",
    "nbgrader.preprocessors.ClearMarkScheme",
    "nbgrader.preprocessors.ComputeChecksums",
    "nbgrader.preprocessors.CheckCellMetadata",
]

# Feedback shows each test's result and message, never the hidden tests' code, and after
# the due date (the gradebook's, `make publish DUEDATE=...`) the worked answers under their
# exercises (grader.outputs.feedback; the TA tools are installed with `pip install -e grading`).
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "grader.outputs.feedback.HideTestCode",
    "grader.outputs.feedback.ShowWorkedAnswers",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]

# Feedback pages readable by everyone (WCAG 2.1 AA; figures keep their cells' "alt" text):
# the course's page, grader/templates/feedback/course_feedback.html.j2, extends nbgrader's
# template "feedback" (which Formgrader's "Generate Feedback" button asks for by name). Set on
# the feedback's own exporter: Formgrader's grading page is an HTMLExporter with the template
# "formgrade", where this page does not exist.
c.GenerateFeedback.exporter_class = "grader.outputs.feedback.FeedbackExporter"
c.FeedbackExporter.template_file = "course_feedback.html.j2"
c.HTMLExporter.extra_template_basedirs = [
    os.path.join(os.path.dirname(grader.__file__), "templates"),
    os.path.join(os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader",
                 "templates"),
]

# Formgrader's grading page shows each written answer's rubric under it (cells tagged
# "rubric" in the source; grader.outputs.rubrics). Feedback pages never do.
c.HTMLExporter.preprocessors = ["grader.outputs.rubrics.ShowRubrics"]

# Grading on submission (the course server with COURSE_GRADE_ON_SUBMIT=1, grader.on_submit):
# what a student's feedback shows before the due date. "visible": each test cell's visible
# tests, their result and message, and the points they decide; the hidden tests' results
# after the due date. "all": the full feedback at once. "none": only that the submission was
# received and graded. After the due date every page is the full one.
c.GradeOnSubmit.early_feedback = os.environ.get("COURSE_EARLY_FEEDBACK", "visible")
c.GradeOnSubmit.early_feedback_by_assignment = {}  # e.g. {"08_random_fourier_features": "none"}

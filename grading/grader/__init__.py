"""The TA's side of the workbook: grade a whole class around nbgrader.

    python -m grader publish            notebooks/ -> nbgrader's exchange (--duedate)
    python -m grader collect            the exchange -> grading/submitted/<student>/<assignment>/
    python -m grader collect --zip ZIP  an LMS zip -> grading/submitted/<student>/<assignment>/
    python -m grader release            solutions/ -> notebooks/ (and the gradebook)
    python -m grader autograde          every new or changed submission, in parallel, sandboxed
    python -m grader feedback           HTML per submission (hidden tests' results, not code),
                                        put in the exchange for students who submitted there
    python -m grader grades             grading/grades.csv (score, status, reason, flags)
    python -m grader report             grading/report.html: the class at a glance

nbgrader stays the grading engine (gradebook, checksums, locked cells, Formgrader); this
package runs it one submission at a time in parallel, keeps student code in a sandbox and
tells the TA what nbgrader does not: what could not be graded and why, what looks like
tampering, and which mistakes the class made most.
"""

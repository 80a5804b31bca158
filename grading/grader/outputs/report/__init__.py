"""The class report: one self-contained HTML page that tells a TA how the class did.

    write_report(rows, cells, path, similar)   the page (page.py)
    diagnosis(message)                         a failing test's message -> its mistake

    page.py        the HTML: summary, scores, exercises, mistakes, similar answers
    numbers.py     counts, fractions, pass rates, frequent mistakes (rows checked on the way in)
    diagnosis.py   a message reduced to the mistake course_utils.checks named
    figures.py     the plots, as PNG data: URIs
"""

from grader.outputs.report.diagnosis import diagnosis
from grader.outputs.report.page import render_report, write_report

__all__ = ["diagnosis", "render_report", "write_report"]

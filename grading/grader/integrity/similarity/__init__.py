"""Similar answers: every pair of submissions per answer cell, and every answer against the
course's own code.

    matches      the class compared: similarity.csv's rows
    fingerprint  an answer's fingerprint (copydetect's winnowing) and how two compare
    reference    the course's functions and the instructor's answers as references
    baseline     how alike independent right answers are (baseline.json)
"""

"""Similar answers: every pair of submissions per answer cell, and every answer against the
course's own code.

    matches      the class compared: similarity.csv's rows
    student_code the code a student wrote: answer cells, cells added or edited
    fingerprint  an answer's fingerprint (copydetect's winnowing) and how two compare
    normalise    code as fingerprinted: its syntax tree, no-ops out, names numbered
    reference    the course's functions and the instructor's answers as references
    baseline     how alike independent right answers are (baseline.json)
"""

"""Scoring: the class graded, the grading environment checked first, and the grades read back.

    autograde   every new or changed submission planned (PLAN) and graded
    selfcheck   the instructor's solution graded first: a broken environment grades nobody
    grades      grades.csv: one row per student and assignment, and one per test cell
"""

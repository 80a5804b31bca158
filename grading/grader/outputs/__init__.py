"""What the grading gives back: feedback pages, the LMS's gradebook files with a late
penalty, and the class report.

    feedback        nbgrader's feedback pages: hidden tests' code out, worked answers in
    worked_answers  cells tagged worked-answer: out of the release, into the full feedback
    rubrics         cells tagged rubric: out of the release, onto Formgrader's grading page
    lms_grades      the gradebook import files of Canvas and Moodle
    late_penalty    "10%/day, max 50%"
    student_ids     the id each roster student sets, told in advance (lms_zip's own rule)
    report/         report.html, the class at a glance
"""

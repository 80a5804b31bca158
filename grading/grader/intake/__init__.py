"""Taking submissions in: nbgrader's exchange (publish, collect, feedback back to students),
an LMS's zip, and what a submission folder holds and when it came.

    exchange      the exchange's folders checked, publish and collect through nbgrader
    lms_zip       a Canvas or Moodle "download all submissions" zip -> submitted/
    submissions   a folder read and checked; its time (timestamp.txt), its lateness
"""

"""Grading on submission: a course server's service that grades each submission as it arrives
and releases its page (``python -m grader.on_submit``).

    __main__   the process: its lock, its signals, the self-check before the first poll
    service    the polling loop and the job: collect, grade, write, release
    queue      one job per student's assignment at a time, a pool of workers
    pages      the early feedback page: what a student may see before the due date
"""

"""Running student code: nbgrader's own steps, and each submission graded in a sandboxed
kernel, side by side on this machine or a Dask cluster.

    nbgrader_steps   nbgrader's commands (release, publish, collect, feedback), per assignment
    worker           one submission graded in a scratch course: a Job in, a Result out
    pool             jobs run side by side: a thread pool, or a Dask cluster
    sandbox          the kernel's bubblewrap command and limits
    execute          nbgrader's Execute that fails a cell whose reply failed
    kernel_client    the kernel client that sees every reply (after an interact widget too)
    machine          nbgrader run by this Python, and this machine's cores
    student_server   a course server's student JupyterLab in the sandbox
"""

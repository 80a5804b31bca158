"""The course's configuration of `jupyter nbconvert`.

Every run of the environment's nbconvert reads it: the TAs' set-up (the Makefile) links it
into .venv/etc/jupyter/, where Jupyter looks for an environment's configuration; nbconvert
reads none from the current folder.
"""

c = get_config()  # noqa: F821  (provided by traitlets when it loads this file)

# A client that sees a cell's reply even when nbclient's own widget messages hide it from
# the poll (grader.running.kernel_client: without it, the cell after an `interact` could wait
# out the whole cell timeout). nbgrader gets the same from nbgrader_config.py.
c.AsyncKernelManager.client_class = "grader.running.kernel_client.KernelClient"

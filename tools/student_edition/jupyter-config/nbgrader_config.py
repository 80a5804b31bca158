# The workbook's configuration of nbgrader's Validate (`make setup` copies this folder into
# the environment's etc/jupyter): the same kernel client as nbconvert's, so that no cell
# waits out its timeout after a slider, and the grading's time limit for one cell.
c = get_config()  # noqa: F821  (provided by traitlets when it loads this file)
c.AsyncKernelManager.client_class = "course_utils.jupyter.kernel_client.KernelClient"
c.Execute.timeout = 120

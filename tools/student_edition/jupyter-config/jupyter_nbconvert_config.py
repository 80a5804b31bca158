# The workbook's configuration of `jupyter nbconvert` (`make setup` copies this folder into
# the environment's etc/jupyter). A kernel client that sees a cell's reply even when the
# widget messages of an `interact` hide it from the poll: without it, the cell after a
# slider can wait out the whole cell timeout (course_utils.jupyter.kernel_client says why).
c = get_config()  # noqa: F821  (provided by traitlets when it loads this file)
c.AsyncKernelManager.client_class = "course_utils.jupyter.kernel_client.KernelClient"

"""A kernel client for nbclient (nbconvert --execute, nbgrader) that does not sleep through
a cell's reply.

nbclient (which nbgrader's ``Execute`` runs on) waits for a cell's ``execute_reply`` with
one ``poll(timeout)`` of the shell socket, ``timeout`` being the cell's limit (120 s in
this course's grading). While it waits, nbclient may itself send on that socket: it keeps the
``Output`` widget of ``ipywidgets.interact`` in sync with a ``comm_msg``. A send runs
libzmq's pending commands, which can swallow the socket's edge-triggered "readable"
signal; if the reply came in just then, pyzmq's asyncio poll is never woken and returns
only when the timeout ends. The cell's reply then waits up to 120 s, and the next cell
starts that much later (seen in ~1 submission in 10 of notebooks with an ``interact``;
``tests/grader/running/test_kernel_client.py`` replays it).

:class:`ShellChannel` polls in slices of at most :data:`SLICE` seconds, and a fresh poll
sees a message that is already waiting. Timeouts mean what they meant.
It lives in ``course_utils`` so that it ships with the student edition: there the
edition's Jupyter configuration (``tools/student_edition/jupyter/``, copied into the
environment's ``etc/jupyter`` by ``make setup``) makes a student's ``jupyter nbconvert
--execute`` and nbgrader's Validate use it. For the TAs, ``grading/nbgrader_config.py``
makes nbgrader use it (``grader.running.kernel_client`` names it there), so Formgrader's
autograde button gets it too, and ``grading/jupyter_nbconvert_config.py`` does the same for
``jupyter nbconvert --execute``. nbval
needs none: its blocking client polls a plain socket, which cannot lose the signal, and
sends nothing while it waits. papermill, not installed here, reads no Jupyter
configuration: it would take a kernel manager whose ``client_class`` is this one.
"""

from queue import Empty
from time import monotonic

from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from traitlets import Type

# The longest a reply that has arrived can wait unseen (seconds).
SLICE = 1.0


class ShellChannel(AsyncZMQSocketChannel):
    """The shell channel, polled in slices of :data:`SLICE` seconds."""

    async def get_msg(self, timeout: float | None = None) -> dict:
        """The next message; ``Empty`` when none came within ``timeout`` s (None: wait)."""
        deadline = None if timeout is None else monotonic() + timeout
        while True:
            left = SLICE if deadline is None else max(0.0, deadline - monotonic())
            try:
                return await super().get_msg(timeout=min(SLICE, left))
            except Empty:
                if deadline is not None and monotonic() >= deadline:
                    raise


class KernelClient(AsyncKernelClient):
    """nbclient's kernel client with :class:`ShellChannel` as its shell channel."""

    shell_channel_class = Type(ShellChannel)

"""nbgrader's kernel client sees a cell's reply that the client's own send hid from the poll.

The scene, as nbclient plays it after an ``interact`` cell: it waits for the reply on the
shell socket; the reply comes in; before the event loop wakes, nbclient sends a
``comm_msg`` on the same socket (the ``Output`` widget's sync). The send swallows the
socket's readable signal, so the stock channel sleeps until its timeout ends.
"""

import asyncio
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import nbformat
import pytest
import zmq
import zmq.asyncio
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.session import Session
from nbformat.v4 import new_code_cell, new_notebook
from nbgrader.preprocessors import Execute
from traitlets.config.loader import PyFileConfigLoader

from grader.running.kernel_client import SLICE, KernelClient, ShellChannel
from tests.conftest import REPO

TIMEOUT = 4.0
JUPYTER = Path(sys.executable).with_name("jupyter")  # the environment's, as the README runs it


async def seconds_to_see_a_hidden_reply(channel_class) -> float:
    """Seconds ``channel_class.get_msg(TIMEOUT)`` takes to return a reply that arrived
    while the client sent on the same socket."""
    session = Session(key=b"test")
    context, kernel_context = zmq.asyncio.Context(), zmq.Context()
    kernel = kernel_context.socket(zmq.ROUTER)
    port = kernel.bind_to_random_port("tcp://127.0.0.1")
    socket = context.socket(zmq.DEALER)
    socket.connect(f"tcp://127.0.0.1:{port}")
    try:
        channel = channel_class(socket, session)
        channel.send(session.msg("execute_request", {"code": "interact(...)"}))
        identity, *_ = kernel.recv_multipart()
        waiting = asyncio.ensure_future(channel.get_msg(timeout=TIMEOUT))
        await asyncio.sleep(0.2)  # the client is polling
        start = time.perf_counter()
        session.send(kernel, session.msg("execute_reply", {"status": "ok"}), ident=identity)
        time.sleep(0.2)  # the reply is in; the event loop has not run yet
        channel.send(session.msg("comm_msg", {"data": {"method": "update"}}))
        reply = await waiting
        assert reply["msg_type"] == "execute_reply"
        return time.perf_counter() - start
    finally:
        socket.close(linger=0)
        kernel.close(linger=0)
        context.term()
        kernel_context.term()


def test_the_stock_channel_sleeps_through_the_reply_until_its_timeout():
    """The bug this client is for. When this fails, pyzmq sees the reply by itself and
    grader.running.kernel_client can go."""
    assert asyncio.run(seconds_to_see_a_hidden_reply(AsyncZMQSocketChannel)) > TIMEOUT - 1


def test_the_course_channel_sees_it_at_its_next_slice():
    assert asyncio.run(seconds_to_see_a_hidden_reply(ShellChannel)) < 1.5


def test_a_timeout_still_raises_empty_after_the_whole_timeout():
    async def wait_for_nothing():
        context = zmq.asyncio.Context()
        socket = context.socket(zmq.DEALER)
        try:
            start = time.perf_counter()
            with pytest.raises(Exception) as raised:
                await ShellChannel(socket, Session()).get_msg(timeout=2.5)
            return raised.type.__name__, time.perf_counter() - start
        finally:
            socket.close(linger=0)
            context.term()

    name, seconds = asyncio.run(wait_for_nothing())
    assert name == "Empty" and 2.5 <= seconds < 3.5


def test_the_course_config_gives_nbgrader_this_client():
    """As nbgrader's autograde (and Formgrader's button) load grading/nbgrader_config.py."""
    config = PyFileConfigLoader("nbgrader_config.py", path=str(REPO / "grading")).load_config()
    execute = Execute(config=config)
    client = execute.kernel_manager_class(config=execute.config).client()
    assert isinstance(client, KernelClient)
    assert client.shell_channel_class is ShellChannel


def waits_between_cells(notebook: nbformat.NotebookNode) -> list[float]:
    """Seconds from each cell's reply to the start of the next, by the kernel's clock (the
    times nbclient records in each cell's metadata)."""
    def at(cell, event):
        return datetime.fromisoformat(cell.metadata.execution[event].replace("Z", "+00:00"))

    cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    return [(at(later, "iopub.execute_input") - at(cell, "shell.execute_reply")).total_seconds()
            for cell, later in zip(cells, cells[1:], strict=False)]


@pytest.mark.notebook
def test_stock_nbconvert_takes_the_course_client_from_the_environments_configuration(tmp_path):
    """`jupyter nbconvert --execute` with nothing on its command line, as an instructor runs
    it, from a folder with no configuration: no cell after an `interact` waits out the cell
    timeout. With the stock client 2 `interact`s in 36 did (measured), so 60 of them catch
    it in most runs."""
    cells = [new_code_cell("from ipywidgets import interact")]
    for i in range(60):
        cells += [new_code_cell(f"interact(lambda x: print(x * {i}), x=(0, 10));"),
                  new_code_cell(f"y = {i}")]
    notebook = tmp_path / "interact.ipynb"
    nbformat.write(new_notebook(cells=cells), notebook)
    subprocess.run([JUPYTER, "nbconvert", "--to", "notebook", "--execute", "--inplace",
                    f"--ExecutePreprocessor.timeout={TIMEOUT:.0f}", notebook.name],
                   cwd=tmp_path, check=True, capture_output=True)
    assert max(waits_between_cells(nbformat.read(notebook, as_version=4))) < SLICE + 1

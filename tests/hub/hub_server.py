"""A throw-away JupyterHub of hub/jupyterhub_config.py, on free ports of this machine.

``running_hub`` starts it on a given course, exchange and data folder with an admin API
token of its own, waits until its API answers, and stops it afterwards (JupyterHub stops
the users' servers and its proxy as it exits). Everything the hub, its proxy and the
users' servers print goes to one log file.
"""

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import requests

from tests.conftest import REPO

CONFIG = REPO / "hub" / "jupyterhub_config.py"
STARTUP_TIMEOUT_S = 120
STOP_TIMEOUT_S = 60


def free_port() -> int:
    """A TCP port on the loopback interface that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def log_tail(log: Path, characters: int = 4000) -> str:
    return log.read_text(errors="replace")[-characters:] if log.exists() else "(no log)"


def wait_until_up(url: str, process: subprocess.Popen, log: Path) -> None:
    """Wait until the hub says it runs (asking the proxy earlier is an error in its log)
    and its API answers; fail with the log if it died."""
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"JupyterHub exited with {process.returncode}:\n{log_tail(log)}")
        if "JupyterHub is now running" in log.read_text(errors="replace"):
            requests.get(f"{url}/hub/api/", timeout=5).raise_for_status()
            return
        time.sleep(0.5)
    raise RuntimeError(f"JupyterHub did not answer in {STARTUP_TIMEOUT_S} s:\n{log_tail(log)}")


def stop(process: subprocess.Popen) -> None:
    """SIGTERM, as Ctrl-C would: the hub stops the servers and the proxy, then exits."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@contextmanager
def running_hub(course_root: Path, exchange: Path, data: Path, log: Path):
    """Yield (the hub's URL, an admin API token) of a hub serving ``course_root``."""
    url, token = f"http://127.0.0.1:{free_port()}", secrets.token_hex(32)
    environment = dict(os.environ, COURSE_ROOT=str(course_root), COURSE_EXCHANGE=str(exchange),
                       COURSE_HUB_DATA=str(data), COURSE_HUB_URL=url,
                       COURSE_HUB_ADMIN_TOKEN=token)
    command = [str(Path(sys.executable).with_name("jupyterhub")), "-f", str(CONFIG),
               f"--JupyterHub.hub_bind_url=http://127.0.0.1:{free_port()}",
               f"--ConfigurableHTTPProxy.api_url=http://127.0.0.1:{free_port()}"]
    data.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as output:
        process = subprocess.Popen(command, cwd=data, env=environment, stdout=output,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_until_up(url, process, log)
        yield url, token
    finally:
        stop(process)

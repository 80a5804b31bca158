"""A throw-away Jupyter server for the browser tests.

``running_server`` starts ``jupyter lab`` from this environment on a free port with a
random token, in a working directory of the caller's choosing (nbgrader reads
``nbgrader_config.py`` from there), waits until it answers, and stops it afterwards.
Its settings, workspaces and runtime files live in a temporary folder, so neither the
repository nor the user's own Jupyter setup is read or written; the settings turn off
the announcements that would pop up over the page and render every cell of a notebook
(no windowing), so that each cell can be found on the page.
"""

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

STARTUP_TIMEOUT_S = 120

# The user settings of the JupyterLab (and Notebook 7) front end, per plugin.
SETTINGS = {
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification": {
        "checkForUpdates": False,
        "fetchNews": "false",
    },
}


@dataclass(frozen=True)
class Server:
    """A running server: where it listens, its token and its folders."""

    url: str
    token: str
    root: Path
    log: Path

    def page_url(self, path: str) -> str:
        """The address of ``path`` (such as ``lab/tree/x.ipynb``) with the login token."""
        return f"{self.url}/{path.lstrip('/')}?token={self.token}"

    def api(self, method: str, path: str):
        """Call the REST API; returns the decoded JSON answer (None when empty)."""
        request = urllib.request.Request(
            f"{self.url}/api/{path}", method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            body = answer.read()
        return json.loads(body) if body else None

    def shut_down_kernels(self) -> None:
        """Stop every kernel, so that the next test starts from a quiet machine."""
        for kernel in self.api("GET", "kernels"):
            self.api("DELETE", f"kernels/{kernel['id']}")


def free_port() -> int:
    """A TCP port on the loopback interface that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def write_settings(settings_dir: Path) -> None:
    """Write ``SETTINGS`` as JupyterLab user settings under ``settings_dir``."""
    for plugin, values in SETTINGS.items():
        path = settings_dir / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


def server_environment(state: Path, extra: dict[str, str]) -> dict[str, str]:
    """This process's environment with Jupyter's own folders moved under ``state``."""
    folders = {
        "JUPYTER_CONFIG_DIR": state / "config",
        "JUPYTER_RUNTIME_DIR": state / "runtime",
        "JUPYTERLAB_SETTINGS_DIR": state / "settings",
        "JUPYTERLAB_WORKSPACES_DIR": state / "workspaces",
        "IPYTHONDIR": state / "ipython",
    }
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    write_settings(folders["JUPYTERLAB_SETTINGS_DIR"])
    bin_dir = str(Path(sys.executable).parent)
    return {
        **os.environ,
        **{name: str(folder) for name, folder in folders.items()},
        "PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", "")]),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        **extra,
    }


def wait_until_up(url: str, token: str, process: subprocess.Popen, log: Path) -> None:
    """Poll ``/api/status`` until the server answers; fail early if it exits."""
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    request = urllib.request.Request(f"{url}/api/status",
                                     headers={"Authorization": f"token {token}"})
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with {process.returncode}:\n"
                               f"{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(request, timeout=5):
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.5)
    raise RuntimeError(f"jupyter lab did not answer within {STARTUP_TIMEOUT_S} s:\n"
                       f"{log.read_text()[-3000:]}")


@contextmanager
def running_server(root: Path, cwd: Path, state: Path, env: dict[str, str] | None = None):
    """Run ``jupyter lab`` serving ``root`` from ``cwd``; yields a :class:`Server`.

    ``state`` receives Jupyter's settings and runtime folders and the server's log.
    ``env`` adds variables to the server's (and so its kernels') environment.
    """
    port, token = free_port(), secrets.token_hex(16)
    state.mkdir(parents=True, exist_ok=True)
    log = state / "jupyter.log"
    command = [
        str(Path(sys.executable).parent / "jupyter"), "lab", "--no-browser",
        "--ip=127.0.0.1", f"--port={port}", f"--ServerApp.token={token}",
        f"--ServerApp.root_dir={root}",
    ]
    if os.geteuid() == 0:
        command.append("--allow-root")
    with log.open("w") as log_file:
        process = subprocess.Popen(command, cwd=cwd, stdout=log_file, stderr=subprocess.STDOUT,
                                   env=server_environment(state, env or {}))
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_up(url, token, process, log)
        yield Server(url=url, token=token, root=root, log=log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

"""The grading kernel in a sandbox: student code sees only its own scratch folder.

nbgrader runs outside the sandbox (it needs the gradebook); the kernel that runs the
student's code is started inside bubblewrap (``bwrap``, Linux user namespaces) with

- the system, Python and the workbook's packages mounted **read-only**, and nothing
  else of the machine: no ``solutions/``, no gradebook, no other submission, no home;
- writable: the submission's own scratch copy (its working directory), a scratch home,
  and a private ``/tmp`` that vanishes with the kernel;
- **no network**: a network namespace of its own, with only its own loopback; the kernel
  talks to nbgrader over Unix sockets (``KernelManager.transport = "ipc"``) in a folder
  shared with it;
- its own process namespace (it cannot signal the other kernels) and a cleared
  environment (no TA's tokens);
- a cap on its address space (``prlimit --as``): an allocation past it is a
  ``MemoryError`` in that cell, not a machine out of memory.

Where bubblewrap is missing or cannot create namespaces, grading still runs, with the
memory cap only, and :func:`unavailable` says plainly what is not protected.
"""

import functools
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

GIB = 1024**3
KERNEL_NAME = "course-sandbox"
# Variables the kernel keeps from the grader's environment (everything else is cleared).
PASSED_ON = (
    "LANG", "LC_ALL", "COURSE_QUICK", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE",
    "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "COURSE_ALLOWLIST",
)
SYSTEM_FOLDERS = ("/usr", "/etc", "/bin", "/lib", "/lib64", "/sbin")


@dataclass(frozen=True)
class Limits:
    """What one submission may use: memory per kernel, and time per cell and per notebook."""

    memory_bytes: int = 4 * GIB
    cell_timeout: int | None = None  # None: the course's Execute.timeout
    notebook_timeout: int = 1800
    sandbox: bool = True  # False: run without bubblewrap even where it works

    def __post_init__(self):
        from course_utils.validation import integer

        for name in ("memory_bytes", "notebook_timeout"):
            integer(f"Limits.{name}", getattr(self, name), minimum=1)
        if self.cell_timeout is not None:
            integer("Limits.cell_timeout", self.cell_timeout, minimum=1)


def problem() -> str | None:
    """None when bubblewrap can make a sandbox here, else why not and how to fix it."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed (Debian: apt-get install bubblewrap)"
    probe = subprocess.run(
        [bwrap, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"],
        capture_output=True, text=True,
    )
    if probe.returncode == 0:
        return None
    return f"bwrap cannot create namespaces here: {probe.stderr.strip()}"


@functools.cache
def unavailable() -> str | None:
    """None when bubblewrap can sandbox a kernel here, else what is not protected and why."""
    reason = problem()
    if reason is None:
        return None
    return (
        f"NOT SANDBOXED: {reason}. Student code runs as the grader's user: it can read "
        "solutions/, the gradebook and other submissions, write anywhere the grader can, and "
        "use the network, and a process it starts can outlive grading. Only the memory and "
        "time limits apply."
    )


def read_only_folders() -> list[Path]:
    """What a kernel must read: the system, Python, the virtual environment, the workbook."""

    import course_utils  # the package the notebooks import, wherever it is installed

    folders = [Path(sys.base_prefix), Path(sys.prefix), Path(course_utils.__file__).parent]
    return [folder.resolve() for folder in folders if folder.exists()]


def make_home(home: Path) -> Path:
    """A scratch home for one kernel, with matplotlib's font list (no rebuild per kernel)."""
    import matplotlib

    cache = home / ".cache" / "matplotlib"
    cache.mkdir(parents=True, exist_ok=True)
    for fonts in Path(matplotlib.get_cachedir()).glob("fontlist*.json"):
        shutil.copy(fonts, cache)
    return home


def bind(folder: Path, writable: bool = False) -> list[str]:
    """bubblewrap's options that show ``folder`` at its own path (read-only unless
    ``writable``), the folders above it made for the sandbox and open to anyone (bubblewrap
    makes them 0700, which a sandbox that drops to another user cannot enter)."""
    arguments = []
    for parent in reversed(folder.parents[:-1]):
        arguments += ["--perms", "0755", "--dir", str(parent)]
    return arguments + ["--bind" if writable else "--ro-bind", str(folder), str(folder)]


def system_arguments() -> list[str]:
    """bubblewrap's options every sandbox of the course starts with: the system, Python and
    the workbook's packages read-only, a private /tmp, /dev and /proc, and no capabilities,
    even when started as root (bubblewrap keeps them for root otherwise)."""
    arguments = ["--perms", "1777", "--tmpfs", "/tmp"]  # first: binds may lie under /tmp
    for folder in SYSTEM_FOLDERS:
        path = Path(folder)
        if path.is_symlink():
            arguments += ["--symlink", os.readlink(path), folder]
        elif path.exists():
            arguments += ["--ro-bind", folder, folder]
    for folder in read_only_folders():
        arguments += bind(folder)
    return arguments + ["--dev", "/dev", "--perms", "1777", "--tmpfs", "/dev/shm",
                        "--proc", "/proc", "--cap-drop", "ALL"]


def bwrap_arguments(workdir: Path, home: Path, sockets: Path) -> list[str]:
    """bubblewrap's options of a grading kernel: a read-only system, writable ``workdir``,
    ``home`` and ``sockets`` (the kernel's Unix sockets), and no network."""
    arguments = system_arguments()
    for folder in (workdir, home, sockets):
        arguments += bind(folder, writable=True)
    return arguments + [
        "--chdir", str(workdir),
        "--unshare-all", "--die-with-parent", "--new-session", "--as-pid-1", "--clearenv",
    ]


def kernel_argv(workdir: Path, home: Path, sockets: Path, limits: Limits,
                threads: int = 1, student: str | None = None) -> list[str]:
    """The command that starts one grading kernel (a kernelspec's ``argv``) in ``workdir``,
    with ``threads`` threads for PyTorch and NumPy (cores / workers), and ``student``'s id
    as ``COURSE_STUDENT`` (:func:`course_utils.student.student_id`)."""
    kernel = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    capped = ["prlimit", f"--as={limits.memory_bytes}", "--", *kernel]
    if not limits.sandbox or unavailable():
        return capped
    environment = {name: os.environ[name] for name in PASSED_ON if name in os.environ}
    environment |= {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(home),
        "OMP_NUM_THREADS": str(threads),
        "MKL_NUM_THREADS": str(threads),
        "NBGRADER_EXECUTION": "autograde",
    }
    if student is not None:
        environment["COURSE_STUDENT"] = student
    settings = [part for name, value in environment.items() for part in ("--setenv", name, value)]
    return ["bwrap", *bwrap_arguments(workdir, home, sockets), *settings, *capped]


def write_kernelspec(jupyter_path: Path, argv: list[str]) -> str:
    """Install the kernelspec ``argv`` under ``jupyter_path/kernels``; return its name."""
    folder = jupyter_path / "kernels" / KERNEL_NAME
    folder.mkdir(parents=True, exist_ok=True)
    # A timed-out cell is interrupted by a message: a signal would stop bubblewrap, not the cell.
    spec = {"argv": argv, "display_name": "Python 3 (grading sandbox)", "language": "python",
            "interrupt_mode": "message"}
    (folder / "kernel.json").write_text(json.dumps(spec, indent=1))
    return KERNEL_NAME

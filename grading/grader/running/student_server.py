"""A student's server on the course server (hub/jupyterhub_config.py) in bubblewrap: the
server, its kernels and its terminals see only

- the system, Python and the workbook's environment, read-only (:mod:`grader.running.sandbox`'s
  :func:`~grader.running.sandbox.system_arguments`, as a grading kernel sees them);
- ``received``, read-only: what students receive (the student edition's folders of this
  repository), the student's nbgrader settings and the students' role folder;
- the student's own home, and nbgrader's exchange, writable;

nothing else of the machine: no ``solutions/``, ``tests/``, ``grading/`` (the gradebook,
submitted/, autograded/, feedback/), no other home, no hub database. The server keeps the
machine's network (the hub and the proxy must reach it), and has its own process
namespace (no other process, no other ``/proc/<pid>/root``) and no capabilities.

Who it runs as decides what the exchange shows. nbgrader keeps every student's submissions
in one ``inbound/`` folder and every feedback page in one ``feedback/`` folder, under names
nobody can guess (a random string, a hash of a secret), in folders that others may enter
and write but not list (inbound 2733, feedback 711). That protects students from each
other only when they are *others* to the exchange's owner:

- a hub run as root starts each student's server as a numeric user of its own,
  :func:`student_uid` (no account needed; the home is handed over to it): the exchange's
  folders, made by the TA's root commands, keep their meaning;
- a hub run as an ordinary user can only start them as itself, in a user namespace: the
  student then owns the exchange's folders and can list, read and remove every submission
  and feedback page there (:func:`exchange_is_shared` says so, and the hub warns).
"""

import os
from pathlib import Path

from grader.running.sandbox import bind, system_arguments

# Students' servers run as FIRST_UID + the hub's number of the user: far above the system's
# and the usual ranges of people's and containers' user ids.
FIRST_UID = 2_000_000_000


def student_uid(user_number: int) -> int:
    """The numeric user a student's server runs as, from the hub's number of the student."""
    if not isinstance(user_number, int) or user_number < 0:
        raise ValueError(f"user number: expected an integer >= 0, got {user_number!r}")
    return FIRST_UID + user_number


def exchange_is_shared() -> bool:
    """True when every student's server runs as the hub's own user (the hub is not root),
    so that each student owns the exchange's folders."""
    return os.geteuid() != 0


def hand_over(home: Path, uid: int) -> None:
    """Make ``home`` and everything in it belong to ``uid`` (user and group)."""
    for folder, _, files in os.walk(home):
        for path in [folder, *(os.path.join(folder, name) for name in files)]:
            os.chown(path, uid, uid, follow_symlinks=False)


def command(server: list[str], home: Path, received: list[Path], exchange: Path,
            uid: int | None) -> list[str]:
    """The command that starts ``server`` (jupyterhub-singleuser and its arguments) in the
    sandbox: ``home`` its working folder, ``received`` read-only, ``exchange`` writable; as
    ``uid`` (the hub runs as root) or, when None, as the hub's own user."""
    view = system_arguments()
    for path in received:
        view += bind(path)
    for path in (home, exchange):
        view += bind(path, writable=True)
    view += ["--chdir", str(home), "--unshare-pid", "--unshare-ipc", "--unshare-uts",
             "--unshare-cgroup-try", "--die-with-parent", "--new-session"]
    if uid is None:
        return ["bwrap", *view, "--unshare-user", "--disable-userns", "--", *server]
    # bubblewrap (root) builds the view; setpriv then leaves root for good, keeping nothing.
    return ["bwrap", *view, "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--",
            "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
            "--inh-caps=-all", "--", *server]

"""The student edition: the part of this repository that students receive.

This repository is the instructors' (solutions, hidden tests, grading cases, the TAs'
tools) and stays private. Students get a repository of their own, built from it by
`make student-edition DEST=<folder>` (`python -m tools.student_edition DEST`): the release
(`notebooks/`), the package `course_utils`, the environment files, the licences (`LICENSE`
for the code, `LICENSE-CC-BY-SA-4.0` for the notebooks' text: docs/licences.md), and their
own README and Makefile (this folder's `README.md` and `Makefile`), in one commit.

`EDITION` names the edition's top-level entries. Of them, `COPIED` come unchanged from this
repository, and are what the course server shows a student's server of it (the
files git tracks, as they are in the working tree: never a scratch file git does not know
of), `pyproject.toml` is this repository's with only the tables
that install `course_utils` (`PYPROJECT_TABLES`: no developers' extras, no pytest or ruff
settings naming folders students do not have), and `STUDENTS_OWN` are this folder's files.
"""

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

LICENCES = ("LICENSE", "LICENSE-CC-BY-SA-4.0")
COPIED = ("notebooks", "course_utils", "environment.yml", *LICENCES)
STUDENTS_OWN = ("README.md", "Makefile", ".gitignore")
EDITION = (*COPIED, "pyproject.toml", *STUDENTS_OWN)

# The tables of pyproject.toml that `pip install -e .` of course_utils needs.
PYPROJECT_TABLES = ("build-system", "project", "tool.setuptools.packages.find")

# Who commits the edition when git knows no one (a fresh machine or container).
FALLBACK_IDENTITY = {f"GIT_{role}_{part}": value for role in ("AUTHOR", "COMMITTER")
                     for part, value in (("NAME", "Course staff"), ("EMAIL", "course@localhost"))}


def repository_files(repo: Path, paths: tuple[str, ...]) -> list[str]:
    """The files under ``paths`` that git tracks, relative to ``repo`` (no caches, no
    checkpoints, no untracked drafts)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--", *paths], cwd=repo, check=True,
                            capture_output=True, text=True).stdout
    return sorted({name for name in listed.split("\0") if name and (repo / name).is_file()})


def students_pyproject(text: str) -> str:
    """``text`` (a pyproject.toml) with only the tables of ``PYPROJECT_TABLES``, each with
    the comment lines right above its header."""
    chunks = re.split(r"\n\n(?=(?:#[^\n]*\n)*\[)", text.strip())
    kept = [chunk for chunk in chunks
            if re.search(r"^\[([^\]]+)\]", chunk, flags=re.M).group(1) in PYPROJECT_TABLES]
    edition = "\n\n".join(kept) + "\n"
    found = tomllib.loads(edition)
    missing = [table for table in PYPROJECT_TABLES if not has_table(found, table)]
    if missing:
        raise ValueError(f"pyproject.toml: expected the tables {list(PYPROJECT_TABLES)}, "
                         f"did not find {missing}")
    return edition


def has_table(document: dict, dotted: str) -> bool:
    """Whether the parsed TOML ``document`` has the table ``dotted`` ("a.b.c")."""
    for key in dotted.split("."):
        if not isinstance(document, dict) or key not in document:
            return False
        document = document[key]
    return True


def build(dest: Path, repo: Path = REPO) -> Path:
    """Write the student edition of ``repo`` to ``dest`` (new, or an empty folder) as a
    git repository with one commit; returns ``dest``."""
    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ValueError(f"the student edition needs a new or empty folder, got {dest}")
    for name in repository_files(repo, COPIED):
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / name, target)
    pyproject = students_pyproject((repo / "pyproject.toml").read_text())
    (dest / "pyproject.toml").write_text(pyproject)
    for name in STUDENTS_OWN:
        shutil.copy2(HERE / name, dest / name)
    commit(dest)
    return dest


def commit(folder: Path) -> None:
    """Make ``folder`` a git repository holding its files in one commit."""
    def git(*args, **kwargs):
        return subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True,
                              text=True, **kwargs)

    git("init", "--quiet", "--initial-branch=main")
    git("add", "--all")
    known = subprocess.run(["git", "var", "GIT_COMMITTER_IDENT"], cwd=folder,
                           capture_output=True).returncode == 0
    environment = os.environ if known else {**os.environ, **FALLBACK_IDENTITY}
    git("commit", "--quiet", "--message", "The workbook for students", env=environment)

"""The student edition: the part of this repository that students receive.

This repository is the instructors' (solutions, hidden tests, grading cases, the TAs'
tools) and stays private. Students get a repository of their own, built from it by
`make student-edition DEST=<folder> REPO=<owner/name>` (`python -m tools.student_edition
DEST --repo OWNER/NAME`): the release (`notebooks/`), the package `course_utils`, the
environment files (`pyproject.toml`'s ranges, `requirements-lock.txt`'s pins,
`environment.yml`), the licences (`LICENSE` for the code, `LICENSE-CC-BY-SA-4.0` for the
notebooks' text: docs/licences.md), and their own files from this folder: README,
Makefile, `.gitignore`, the Jupyter configuration `make setup` installs (`jupyter-config/`),
Binder's set-up (`binder/`) and the dev container's (`.devcontainer/`, Codespaces).

A release students pull: the first build makes DEST a git repository with one commit; a
build into that repository again (or into a clone of it) commits the new release on top of
the last, so that a student's `git pull`, `make update` (nbgitpuller's `gitpuller`) or a
course server's nbgitpuller link brings the new notebooks and fixes, and keeps their edits.

The hosted route: with the edition's GitHub repository known (``repo``, or DEST's `origin`
remote), every notebook opens with a badge that opens it in Colab from that repository, and
one set-up cell that, on Colab only, installs the workbook from the same repository within
the ranges of `pyproject.toml` (nothing Colab already holds in range is replaced: its
torch, NumPy, IPython and ipywidgets stay). The README's links table is written from it too.

`EDITION` names the edition's top-level entries. Of them, `COPIED` come unchanged from this
repository, and are what the course server shows a student's server of it (the
files git tracks, as they are in the working tree: never a scratch file git does not know
of), `pyproject.toml` is this repository's with only the tables
that install `course_utils` (`PYPROJECT_TABLES`, and of its extras only `lab`: no
developers' extras, no pytest or ruff settings naming folders students do not have),
`environment.yml` is this repository's with a students' header, and `STUDENTS_OWN` are this
folder's files.
"""

import json
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

LICENCES = ("LICENSE", "LICENSE-CC-BY-SA-4.0")
COPIED = ("notebooks", "course_utils", "requirements-lock.txt", *LICENCES)
STUDENTS_OWN = ("README.md", "Makefile", ".gitignore", "jupyter-config", "binder",
                ".devcontainer")
EDITION = (*COPIED, "pyproject.toml", "environment.yml", *STUDENTS_OWN)

# The tables of pyproject.toml that `pip install -e ".[lab]"` of course_utils needs.
PYPROJECT_TABLES = ("build-system", "project", "tool.setuptools.packages.find")
STUDENTS_EXTRAS = ("lab",)

# The edition's pyproject.toml opens with this, instead of the instructors' comments.
PYPROJECT_HEADER = """\
# The workbook's package, course_utils. Its dependencies are what the notebooks import, as
# ranges: a hosted runtime such as Colab keeps its own torch, NumPy, IPython and ipywidgets.
# The `lab` extra adds JupyterLab, nbgrader's Validate and nbgitpuller (`make update`).
# The exact versions the workbook is tested with are requirements-lock.txt's: `make setup`
# installs within them.

"""

# What an edition's repository may hold besides the edition, and keeps from one release to
# the next (GitHub's own files).
KEPT_IN_EDITION = (".github", ".gitattributes")

# Who commits the edition when git knows no one (a fresh machine or container).
FALLBACK_IDENTITY = {f"GIT_{role}_{part}": value for role in ("AUTHOR", "COMMITTER")
                     for part, value in (("NAME", "Course staff"), ("EMAIL", "course@localhost"))}

COLAB = "https://colab.research.google.com"
BADGE = f"{COLAB}/assets/colab-badge.svg"
# The README's place for the links (tools/student_edition/README.md).
LINKS_MARK = "<!-- links: written by make student-edition -->"
# The set-up cell's first line: how the builder finds a cell it wrote in an earlier release.
SETUP_FIRST_LINE = "# Set-up on Google Colab; anywhere else this cell does nothing."
# The ids of the badge's cell and the set-up cell; the grading never runs a cell with the
# set-up's id (grader.cells.HOSTED_SETUP_ID, which a test keeps equal).
BADGE_ID, SETUP_ID = "open-in-colab", "colab-set-up"


def repository_files(repo: Path, paths: tuple[str, ...]) -> list[str]:
    """The files under ``paths`` that git tracks, relative to ``repo`` (no caches, no
    checkpoints, no untracked drafts)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--", *paths], cwd=repo, check=True,
                            capture_output=True, text=True).stdout
    return sorted({name for name in listed.split("\0") if name and (repo / name).is_file()})


def students_pyproject(text: str) -> str:
    """``text`` (a pyproject.toml) with only the tables of ``PYPROJECT_TABLES``, each with
    the comment lines right above its header, and of its extras only ``STUDENTS_EXTRAS``."""
    chunks = re.split(r"\n\n(?=(?:#[^\n]*\n)*\[)", text.strip())
    kept = []
    for chunk in chunks:
        table = re.search(r"^\[([^\]]+)\]", chunk, flags=re.M).group(1)
        if table in PYPROJECT_TABLES:
            kept.append(chunk)
        elif table == "project.optional-dependencies":
            kept.append(students_extras(chunk))
    edition = PYPROJECT_HEADER + "\n\n".join(without_comments(chunk) for chunk in kept) + "\n"
    found = tomllib.loads(edition)
    missing = [table for table in PYPROJECT_TABLES if not has_table(found, table)]
    if missing:
        raise ValueError(f"pyproject.toml: expected the tables {list(PYPROJECT_TABLES)}, "
                         f"did not find {missing}")
    extras = found["project"].get("optional-dependencies", {})
    if sorted(extras) != sorted(STUDENTS_EXTRAS):
        raise ValueError(f"pyproject.toml: expected the extras {list(STUDENTS_EXTRAS)} for "
                         f"students, found {sorted(extras)}")
    return edition


def without_comments(chunk: str) -> str:
    """``chunk`` without its comment lines (the instructors' notes name their own files)."""
    return "\n".join(line for line in chunk.splitlines() if not line.lstrip().startswith("#"))


def students_extras(chunk: str) -> str:
    """The ``[project.optional-dependencies]`` chunk with only the ``STUDENTS_EXTRAS`` (each
    with the comment lines right above it)."""
    header, _, body = chunk.partition("[project.optional-dependencies]\n")
    entries = re.split(r"(?<=\])\n(?=(?:#[^\n]*\n)*[A-Za-z0-9_-]+ = \[)", body)
    kept = [entry for entry in entries
            if re.search(r"^([A-Za-z0-9_-]+) = \[", entry, flags=re.M).group(1) in STUDENTS_EXTRAS]
    return header + "[project.optional-dependencies]\n" + "\n".join(kept)


def has_table(document: dict, dotted: str) -> bool:
    """Whether the parsed TOML ``document`` has the table ``dotted`` ("a.b.c")."""
    for key in dotted.split("."):
        if not isinstance(document, dict) or key not in document:
            return False
        document = document[key]
    return True


def students_environment(text: str) -> str:
    """environment.yml with the students' header instead of the instructors' comments."""
    body = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    return ("# conda users (Windows without WSL, for instance), in this folder:\n"
            "#   conda env create -f environment.yml\n"
            "#   conda activate embeddings-workbook\n"
            "#   pip install -e . --no-deps\n"
            "#   cp -R jupyter-config/. \"$CONDA_PREFIX/etc/jupyter/\"   (Windows: README)\n"
            "#   jupyter lab notebooks\n"
            "# The versions are requirements-lock.txt's, the ones `make setup` installs.\n"
            + body.strip() + "\n")


def github_repository(folder: Path) -> str | None:
    """``owner/name`` of the GitHub repository that ``folder``'s ``origin`` remote names,
    if it is a git repository with one."""
    if not (folder / ".git").exists():
        return None
    url = subprocess.run(["git", "remote", "get-url", "origin"], cwd=folder,
                         capture_output=True, text=True).stdout.strip()
    found = re.fullmatch(r"(?:https://github\.com/|git@github\.com:|ssh://git@github\.com/)"
                         r"([\w.-]+/[\w.-]+?)(?:\.git)?/?", url)
    return found.group(1) if found else None


def colab_url(repo: str, branch: str, notebook: str) -> str:
    """Where Colab opens ``notebook`` (a path in the edition) from GitHub."""
    return f"{COLAB}/github/{repo}/blob/{branch}/{notebook}"


def setup_cell_source(repo: str, branch: str) -> str:
    """The one set-up cell of every notebook: on Colab, the workbook from the edition's
    repository within its ranges, so that Colab keeps its own torch, NumPy, IPython and
    ipywidgets (pip leaves what is installed in range), and Colab's widget manager."""
    archive = f"https://github.com/{repo}/archive/refs/heads/{branch}.zip"
    return f"""{SETUP_FIRST_LINE}
# It installs the workbook's package and its data (about 110 MB, a minute), keeping Colab's
# own PyTorch, NumPy, IPython and ipywidgets, and turns on Colab's widgets.
import os
import sys

if "google.colab" in sys.modules:
    import subprocess

    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",
                    "course_utils @ {archive}"], check=True)
    os.environ["HF_HUB_OFFLINE"] = os.environ["TRANSFORMERS_OFFLINE"] = "1"
    from google.colab import output

    output.enable_custom_widget_manager()"""


def hosted_notebook(path: Path, name: str, repo: str, branch: str) -> None:
    """Open the notebook at ``path`` (``name`` in the edition) with a badge that opens it in
    Colab, and the set-up cell."""
    notebook = json.loads(path.read_text())
    badge = f"[![Open in Colab]({BADGE})]({colab_url(repo, branch, name)})"
    cells = [
        {"cell_type": "markdown", "id": BADGE_ID, "metadata": {},
         "source": _lines(f"{badge} No installation: opens this notebook in Google Colab; "
                          "run the set-up cell below first.")},
        {"cell_type": "code", "id": SETUP_ID, "metadata": {}, "execution_count": None,
         "outputs": [], "source": _lines(setup_cell_source(repo, branch))},
    ]
    if (notebook["nbformat"], notebook["nbformat_minor"]) < (4, 5):
        for cell in cells:
            del cell["id"]  # cell ids came with nbformat 4.5
    notebook["cells"] = cells + notebook["cells"]
    path.write_text(json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


def _lines(text: str) -> list[str]:
    """A notebook cell's source as nbformat writes it: lines that keep their newlines."""
    return text.splitlines(keepends=True)


def links_table(notebooks: list[str], repo: str | None, branch: str) -> str:
    """The README's links: each notebook in Colab, and the whole edition on Binder and in
    Codespaces."""
    if repo is None:
        return ("Your course gives the links to open these notebooks in Colab, Binder or "
                "Codespaces.")
    rows = [f"| {Path(name).stem} | [![Open in Colab]({BADGE})]({colab_url(repo, branch, name)}) |"
            for name in notebooks]
    binder = f"https://mybinder.org/v2/gh/{repo}/{branch}?urlpath=lab/tree/notebooks"
    codespaces = f"https://codespaces.new/{repo}?quickstart=1"
    return "\n".join([
        "| notebook | open it in Colab |", "|---|---|", *rows, "",
        f"All of them at once: [Binder]({binder}) (JupyterLab with Validate, in about a minute "
        f"once built; nothing is kept after you close it: download your notebooks) or "
        f"[Codespaces]({codespaces}) (a GitHub account; your own copy, kept).",
    ])


def build(dest: Path, repo: Path = REPO, github: str | None = None,
          branch: str = "main") -> Path:
    """Write the student edition of ``repo`` to ``dest``: a new git repository (``dest`` new
    or empty), or a new commit on top of the last release (``dest`` a git repository of an
    earlier release, with nothing uncommitted). ``github`` (``owner/name``, else read from
    ``dest``'s ``origin``) and ``branch`` make the Colab, Binder and Codespaces links.
    Returns ``dest``."""
    dest = Path(dest)
    earlier = (dest / ".git").exists()
    if earlier:
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=dest, check=True,
                               capture_output=True, text=True).stdout
        tracked = subprocess.run(["git", "ls-files", "-z"], cwd=dest, check=True,
                                 capture_output=True, text=True).stdout.split("\0")
        foreign = sorted({name.split("/")[0] for name in tracked if name}
                         - {*EDITION, *KEPT_IN_EDITION})
        if foreign:
            raise ValueError(f"{dest} is not a student edition (it tracks {foreign[:5]}): "
                             "write the edition into a new folder or a clone of its own "
                             "repository")
        if dirty:
            raise ValueError(f"{dest} has uncommitted changes: commit or discard them first")
        for name in EDITION:
            target = dest / name
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif target.exists() or target.is_symlink():
                target.unlink()
    elif dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ValueError(f"the student edition needs a new or empty folder, or a git "
                         f"repository of an earlier edition; got {dest}")
    github = github or github_repository(dest)
    for name in repository_files(repo, COPIED):
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / name, target)
    pyproject = students_pyproject((repo / "pyproject.toml").read_text())
    (dest / "pyproject.toml").write_text(pyproject)
    environment = students_environment((repo / "environment.yml").read_text())
    (dest / "environment.yml").write_text(environment)
    for name in STUDENTS_OWN:
        if (HERE / name).is_dir():
            shutil.copytree(HERE / name, dest / name,
                            ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
        else:
            shutil.copy2(HERE / name, dest / name)
    notebooks = sorted(str(path.relative_to(dest))
                       for path in (dest / "notebooks").glob("*/*.ipynb"))
    if github:
        for name in notebooks:
            hosted_notebook(dest / name, name, github, branch)
    readme = (dest / "README.md").read_text()
    (dest / "README.md").write_text(readme.replace(LINKS_MARK,
                                                   links_table(notebooks, github, branch)))
    commit(dest, first=not earlier, branch=branch)
    return dest


def commit(folder: Path, first: bool = True, branch: str = "main") -> None:
    """Commit ``folder``'s files: a new repository's one commit (``first``), or the next
    release on top of the last (nothing when nothing changed)."""
    def git(*args, **kwargs):
        return subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True,
                              text=True, **kwargs)

    if first:
        git("init", "--quiet", f"--initial-branch={branch}")
    git("add", "--all")
    if not first and not git("status", "--porcelain").stdout.strip():
        return
    known = subprocess.run(["git", "var", "GIT_COMMITTER_IDENT"], cwd=folder,
                           capture_output=True).returncode == 0
    environment = os.environ if known else {**os.environ, **FALLBACK_IDENTITY}
    message = "The workbook for students" if first else "The workbook for students: a new release"
    git("commit", "--quiet", "--message", message, env=environment)

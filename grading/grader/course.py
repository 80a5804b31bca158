"""The course as nbgrader's configuration describes it: folders, gradebook and roster."""

import csv
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.coursedir import CourseDirectory
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

CONFIG_FILE = "nbgrader_config.py"
# What nbgrader's submit writes beside a submitted notebook: its time (read by nbgrader's
# autograde and feedback too), and last the secret that names its feedback page in the exchange.
TIMESTAMP = "timestamp.txt"
SECRET = "submission_secret.txt"
# The folder, beside nbgrader_config.py, of the answers stored from the instructor's solution
# (make answers; grader.scoring.outside compares with them): <assignment>/<notebook>.json.
ANSWERS = "answers"
# grading/: the folder of nbgrader_config.py, the course root every command defaults to.
COURSE_ROOT = Path(__file__).resolve().parents[1]


def load_config(root: Path) -> Config:
    """The configuration of ``root/nbgrader_config.py``, as nbgrader itself reads it."""
    return PyFileConfigLoader(CONFIG_FILE, path=str(root)).load_config()


@dataclass
class Course:
    """An nbgrader course rooted at ``root`` (the folder of its ``nbgrader_config.py``)."""

    root: Path
    config: Config = field(init=False, repr=False)
    directory: CourseDirectory = field(init=False, repr=False)

    def __post_init__(self):
        self.root = Path(self.root).resolve()
        self.config = load_config(self.root)
        self.config.CourseDirectory.root = str(self.root)
        self.directory = CourseDirectory(config=self.config)

    def folder(self, kind: str, student: str = ".", assignment: str = ".") -> Path:
        """``kind`` is source, release, submitted, autograded or feedback."""
        step = getattr(self.directory, f"{kind}_directory")
        return Path(self.directory.format_path(step, student, assignment)).resolve()

    @property
    def source(self) -> Path:
        return self.folder("source")

    @property
    def release(self) -> Path:
        return self.folder("release")

    @property
    def gradebook_url(self) -> str:
        return self.directory.db_url

    @property
    def gradebook_path(self) -> Path:
        return Path(self.gradebook_url.removeprefix("sqlite:///"))

    def answers(self, assignment: str) -> dict[str, bytes]:
        """The stored answers of ``assignment``, {path under answers/: content}: what a
        grading job carries to the grader's comparison (none before ``make answers``)."""
        folder = self.root / ANSWERS
        return {str(path.relative_to(folder)): path.read_bytes()
                for path in sorted((folder / assignment).glob("*.json"))}

    def notebook(self, kind: str, student: str, assignment: str) -> Path:
        """The path of ``assignment``'s notebook in ``kind``'s folder of ``student``."""
        return self.folder(kind, student, assignment) / f"{assignment}.ipynb"

    def assignments(self) -> list[str]:
        """Assignment ids: the folders of the source holding a notebook of their name."""
        return sorted(p.name for p in self.source.iterdir() if (p / f"{p.name}.ipynb").exists())

    def students(self) -> list[str]:
        """Everyone who submitted something, in order."""
        submitted = self.folder("submitted")
        if not submitted.exists():
            return []
        return sorted(p.name for p in submitted.iterdir() if p.is_dir())

    def submissions(self, assignment: str) -> list[str]:
        """Students who submitted ``assignment``, in order."""
        return [s for s in self.students() if self.folder("submitted", s, assignment).is_dir()]

    @property
    def roster_path(self) -> Path:
        return self.root / "roster.csv"

    def roster(self) -> list[str] | None:
        """Student ids of ``roster.csv`` (a column ``student_id``, or the first), or None."""
        if not self.roster_path.exists():
            return None
        with open(self.roster_path, newline="") as handle:
            rows = list(csv.reader(handle))
        if not rows:
            return []
        column = rows[0].index("student_id") if "student_id" in rows[0] else 0
        ids = (row[column].strip() for row in rows[1:] if len(row) > column)
        return [student for student in ids if student]

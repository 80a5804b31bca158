"""Collect: file the notebooks of an LMS's "Download all submissions" zip for grading.

    collect_zip(course, zip_path) -> CollectReport    every notebook -> submitted/<student>/<a>/

Two exports are understood, by the names their LMS gives the files in the zip:

    Canvas  doejane_12345_67890_04_alpha3_by_hand.ipynb
            <sortable name>[_LATE]_<user id>_<file id>_<name the file was uploaded under>
            Canvas lowercases the name and drops its punctuation; anonymous grading writes
            anon_<id> in place of name and user id; a file uploaded twice under one name
            comes back as 04_alpha3_by_hand-1.ipynb, then -2, ...
    Moodle  Jane Doe_4242_assignsubmission_file_/04_alpha3_by_hand.ipynb
            <full name>_<participant id>_assignsubmission_<plugin>_/<file>, or the same
            prefix and the file name in one name when "Download submissions in folders" is
            off; blind marking writes "Participant" in place of the name.

Student id: the name as Canvas writes it (``doejane``); Moodle's full name the same way
(``Jane Doe`` -> ``janedoe``): the same folder in every zip of the course. Moodle's
participant id is not used alone because Moodle numbers the participants of each
assignment anew. When ``roster.csv`` exists, the first of ``<lms id>``, ``<name>_<lms id>``
and ``<name>`` it lists is the id (so a course may key its roster by Canvas user id); two
students of one name in one zip are both filed as ``<name>_<lms id>`` and reported.

Assignment: the assignment id the file's name holds (ignoring case), so
``Copy of 04_alpha3_by_hand (1).ipynb`` is assignment 04_alpha3_by_hand. It is filed as
``04_alpha3_by_hand.ipynb`` and reported by the name it came under.

What is filed, and what is only reported (every line of ``CollectReport.problems`` names the
file of the zip; nothing is left out silently):

* the newest notebook of each student and assignment, as the zip holds it byte for byte,
  with the time the zip gives it, which is also written to ``timestamp.txt`` beside it (as
  nbgrader's own collectors do), so that lateness and a late penalty apply; one that is not
  a notebook (not UTF-8, not JSON) is filed all the same, so that grading reports it as not
  graded, and is reported now.
  Newest: the highest Canvas file id (Canvas numbers uploads in order, so ``-2`` comes
  after ``-1``), else the latest time the zip records (Moodle's), then the highest copy
  number added to the name (``-N``, `` (N)``, ``-CopyN``). The versions not filed are named.
* a file of another kind named for an assignment (``04_alpha3_by_hand.pdf``) when the
  student sent no notebook for it: filed under its own name, so that grading says what
  came in place of the notebook.
* not filed: other files (data, ``.py``, Moodle's online text). The notebooks read no file
  of the student's, and a file beside the notebook lands in the kernel's working folder,
  where a ``numpy.py`` or ``course_utils.py`` would shadow what the tests import. Also not
  filed: files whose student or assignment the name does not tell, and assignments not
  asked for.
* reported as well: Canvas's LATE marker, students not on the roster.

A submission already in ``submitted/`` is left alone when it is the same, or newer than the
zip's copy (a TA's fix, or a later download); ``replace=True`` takes the zip's copy anyway.
An older one is replaced, and that is reported.

Why not nbgrader's ``zip_collect`` (ZipCollectApp with a FileNameCollectorPlugin): it
collects one assignment per run from ``downloaded/<assignment>/archive/``; what it skips
(other extensions, names its regexp does not match, older duplicates) it only writes to its
log, so no report can be returned; it files a notebook under the student's own file name,
where autograde does not find it; two versions of a notebook without a timestamp in their
names, as Canvas's always are, stop the whole run; and a student folder that already holds
files stops the run too, or with ``--force`` is emptied. Reading the zip with ``zipfile``
takes less code than working around all five.
"""

import os
import re
import zipfile
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath

from grader.course import Course
from grader.intake.submissions import read_notebook, write_timestamp

CANVAS_NAME = re.compile(
    r"(?:(?P<name>\w+?)_)??(?:(?P<late>LATE)_)?(?P<lms_id>anon_[A-Za-z0-9]+|\d+)"
    r"_(?P<file_id>\d+)_(?P<filename>.+)"
)
MOODLE_FOLDER = re.compile(r"(?P<name>.+?)_(?P<lms_id>\d+)_assignsubmission_[a-z]+_(?P<rest>.*)")
MOODLE_ANONYMOUS = "Participant"
COPY_NUMBER = re.compile(r"(?:-Copy|-| ?\()(?P<number>\d+)\)?$")


@dataclass(frozen=True)
class Entry:
    """One file of the zip, as its LMS named it."""

    member: str  # its path in the zip: how the report names it
    name: str | None  # the student's name as the LMS writes it; None when anonymous
    lms_id: str
    filename: str  # the name the student uploaded it under
    late: bool
    file_id: int  # Canvas's number of the upload; 0 for Moodle
    time: datetime  # as the zip records it: no time zone, so this machine's


@dataclass
class CollectReport:
    """What ``collect_zip`` filed, and one line per problem, each naming its file."""

    filed: list[tuple[str, str, Path]] = field(default_factory=list)  # (student, a, path)
    problems: list[str] = field(default_factory=list)
    unchanged: list[tuple[str, str, Path]] = field(default_factory=list)  # already there

    def __str__(self) -> str:
        students = len({student for student, _, _ in self.filed})
        summary = f"Filed {len(self.filed)} files of {students} students"
        if self.unchanged:
            summary += f"; {len(self.unchanged)} were already there, unchanged"
        if not self.problems:
            return summary + ". No problems."
        lines = [f"{summary}. {len(self.problems)} problems:"]
        return "\n".join(lines + [f"  {problem}" for problem in self.problems])


def parse_entry(info: zipfile.ZipInfo) -> Entry | None:
    """The LMS's fields of a Moodle or Canvas name, or None when it is neither."""
    parts = PurePosixPath(info.filename).parts
    time = datetime(*info.date_time)
    for depth, part in enumerate(parts):
        moodle = MOODLE_FOLDER.fullmatch(part)
        if moodle and (moodle["rest"] == "") != (depth == len(parts) - 1):
            name, lms_id = moodle["name"], moodle["lms_id"]
            if name == MOODLE_ANONYMOUS:
                name, lms_id = None, f"participant_{lms_id}"
            filename = moodle["rest"] or parts[-1]
            return Entry(info.filename, name, lms_id, filename, False, 0, time)
    canvas = CANVAS_NAME.fullmatch(parts[-1])
    if canvas is None:
        return None
    return Entry(
        info.filename,
        canvas["name"],
        canvas["lms_id"],
        canvas["filename"],
        bool(canvas["late"]),
        int(canvas["file_id"]),
        time,
    )


def name_slug(name: str | None) -> str:
    """The name as Canvas writes it: lowercase, word characters only ("Doe, Jane" -> doejane)."""
    return re.sub(r"\W", "", name or "").lower()


def student_ids(entries: list[Entry], roster: list[str] | None) -> tuple[dict, list[str]]:
    """({(name, lms id): student id}, problems): see the module's docstring for the rule."""
    lms_ids_of_slug = defaultdict(set)
    for entry in entries:
        lms_ids_of_slug[name_slug(entry.name)].add(entry.lms_id)
    ids, problems = {}, []
    for name, lms_id in sorted({(entry.name, entry.lms_id) for entry in entries}, key=str):
        slug = name_slug(name)
        shared = len(lms_ids_of_slug[slug]) > 1
        candidates = [lms_id, f"{slug}_{lms_id}"] + ([slug] if slug and not shared else [])
        listed = [candidate for candidate in candidates if candidate in (roster or [])]
        if listed:
            ids[name, lms_id] = listed[0]
        elif not slug:
            ids[name, lms_id] = lms_id
        elif shared:
            ids[name, lms_id] = f"{slug}_{lms_id}"
            problems.append(
                f"same name: {name!r} (LMS id {lms_id}) shares the id {slug!r} with another "
                f"student: filed as {ids[name, lms_id]} (list it in roster.csv to keep it)"
            )
        else:
            ids[name, lms_id] = slug
        if roster is not None and not listed:
            problems.append(f"not on the roster: {ids[name, lms_id]} ({name or 'anonymous'})")
    return ids, problems


def assignments_named(filename: str, assignments: list[str]) -> list[str]:
    """The assignment ids ``filename`` holds, ignoring case; an id inside another is dropped."""
    found = [a for a in assignments if a.lower() in filename.lower()]
    return [a for a in found if not any(a != b and a.lower() in b.lower() for b in found)]


def version(entry: Entry, assignment: str) -> tuple[int, datetime, int]:
    """Sort key of one student's versions of a notebook: the newest is the largest."""
    stem = PurePosixPath(entry.filename).stem
    after_id = stem[stem.lower().index(assignment.lower()) + len(assignment) :]
    copy = COPY_NUMBER.search(after_id)
    return (entry.file_id, entry.time, int(copy["number"]) if copy else 0)


def write(content: bytes, path: Path, time: datetime, replace: bool) -> str:
    """Write ``content`` to ``path`` dated ``time``, unless what is there is the same or newer.

    Returns "written", "replaced", "unchanged" or "kept" (a newer, different file is there).
    """
    outcome = "written"
    if path.exists():
        if path.read_bytes() == content:
            return "unchanged"
        if not replace and path.stat().st_mtime > time.timestamp():
            return "kept"
        outcome = "replaced"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    os.utime(path, (time.timestamp(), time.timestamp()))
    return outcome


def wanted_assignments(known: list[str], assignments: list[str] | None) -> list[str]:
    """``assignments`` (default: all ``known``, the course's), checked against ``known``."""
    if assignments is None:
        return known
    if isinstance(assignments, str) or not all(isinstance(a, str) for a in assignments):
        raise TypeError(f"assignments: expected a list of assignment ids, got {assignments!r}")
    unknown = sorted(set(assignments) - set(known))
    if unknown:
        raise ValueError(f"assignments: {unknown} are not assignments of the course {known}")
    return list(assignments)


def open_zip(zip_path: Path) -> zipfile.ZipFile:
    """The zip at ``zip_path``; ValueError naming it when there is no zip there."""
    if not zip_path.is_file():
        raise ValueError(f"expected the LMS's zip of submissions, but {zip_path} is no file")
    try:
        return zipfile.ZipFile(zip_path)
    except zipfile.BadZipFile as error:
        raise ValueError(f"expected the LMS's zip of submissions, {zip_path}: {error}") from None


class Collector:
    """One run of ``collect_zip``: sorts the zip's entries, then files them."""

    def __init__(
        self, course: Course, archive: zipfile.ZipFile, assignments: list[str] | None, replace: bool
    ):
        self.course, self.archive, self.replace = course, archive, replace
        self.known = course.assignments()
        self.wanted = wanted_assignments(self.known, assignments)
        self.report = CollectReport()

    def problem(self, line: str) -> None:
        self.report.problems.append(line)

    def run(self) -> CollectReport:
        """Read every entry's name, then file what can be filed; report the rest."""
        entries = []
        for info in self.archive.infolist():
            if info.is_dir():
                continue
            entry = parse_entry(info)
            if entry is None:
                self.problem(f"unknown student: {info.filename}: not named as Canvas or Moodle do")
            else:
                entries.append(entry)
        students, problems = student_ids(entries, self.course.roster())
        self.report.problems += problems
        notebooks, others = defaultdict(list), defaultdict(list)
        for entry in entries:
            assignment = self.assignment_of(entry)
            if assignment is not None:
                is_notebook = PurePosixPath(entry.filename).suffix.lower() == ".ipynb"
                found = notebooks if is_notebook else others
                found[students[entry.name, entry.lms_id], assignment].append(entry)
        for (student, assignment), versions in notebooks.items():
            self.file_notebook(student, assignment, versions)
        for (student, assignment), files in others.items():
            instead = (student, assignment) not in notebooks
            self.file_others(student, assignment, files, instead)
        return self.report

    def assignment_of(self, entry: Entry) -> str | None:
        """The one assignment ``entry``'s name holds and was asked for; else reported, None."""
        named = assignments_named(entry.filename, self.known)
        if len(named) == 1 and named[0] in self.wanted:
            return named[0]
        if len(named) > 1:
            self.problem(f"unknown assignment: {entry.member}: names several {named}; not filed")
        elif named:
            self.problem(f"not asked for: {entry.member}: assignment {named[0]}; not filed")
        elif PurePosixPath(entry.filename).suffix.lower() == ".ipynb":
            self.problem(f"unknown assignment: {entry.member}: no assignment id in its name")
        else:
            self.problem(f"extra file: {entry.member}: not filed (only notebooks are graded)")
        return None

    def file_notebook(self, student: str, assignment: str, versions: list[Entry]) -> None:
        """File the newest of ``versions`` as ``<assignment>.ipynb``; report the rest."""
        versions = sorted(versions, key=lambda entry: version(entry, assignment))
        newest = versions[-1]
        if len(versions) > 1:
            older = ", ".join(repr(entry.member) for entry in versions[:-1])
            self.problem(
                f"several versions: {student}/{assignment}: filed the newest "
                f"{newest.member!r}; not filed: {older}"
            )
        if newest.filename != f"{assignment}.ipynb":
            self.problem(f"misnamed: {newest.member}: filed as {assignment}.ipynb")
        content = self.archive.read(newest.member)
        _, reason = read_notebook(content)
        if reason:
            self.problem(f"not a notebook: {newest.member}: {reason}; filed, not gradable")
        path = self.file(student, assignment, newest, f"{assignment}.ipynb", content)
        if path is not None:
            write_timestamp(path.parent, newest.time)

    def file_others(self, student: str, assignment: str, files: list[Entry], instead: bool):
        """File non-notebooks named for ``assignment`` when they came ``instead`` of it."""
        for entry in files:
            if not instead:
                self.problem(f"extra file: {entry.member}: not filed (only notebooks are graded)")
                continue
            self.problem(
                f"not a notebook: {entry.member}: came instead of {assignment}.ipynb; "
                "filed under its own name, not gradable"
            )
            name = PurePosixPath(entry.filename).name
            self.file(student, assignment, entry, name, self.archive.read(entry.member))

    def file(
        self, student: str, assignment: str, entry: Entry, name: str, content: bytes
    ) -> Path | None:
        """Write one file into ``student``'s folder of ``assignment`` and record what came of
        it; its path when the zip's copy was written there (new or replacing), else None."""
        path = self.course.folder("submitted", student, assignment) / name
        outcome = write(content, path, entry.time, self.replace)
        if entry.late:
            self.problem(f"late: {entry.member}: Canvas marked {student}/{assignment} LATE")
        if outcome == "unchanged":
            self.report.unchanged.append((student, assignment, path))
        elif outcome == "kept":
            self.problem(
                f"kept the newer copy: {entry.member}: {path} differs and is newer than the "
                "zip's; not replaced (replace=True takes the zip's)"
            )
        else:
            self.report.filed.append((student, assignment, path))
        if outcome == "replaced":
            self.problem(f"replaced: {entry.member}: an older, different {path} was there")
        return path if outcome in ("written", "replaced") else None


def collect_zip(
    course: Course, zip_path: Path, assignments: list[str] | None = None, replace: bool = False
) -> CollectReport:
    """File each notebook of an LMS zip under ``submitted/<student>/<assignment>/``.

    ``course``: where to file; ``zip_path``: Canvas's or Moodle's "Download all
    submissions" zip; ``assignments``: the assignment ids to collect (default: all of the
    course's); ``replace``: take the zip's copy even where ``submitted/`` holds a newer one.
    Returns what was filed and one line per problem. Raises ValueError when ``zip_path`` is
    not a zip or ``assignments`` are not the course's.
    """
    if not isinstance(course, Course):
        raise TypeError(f"course: expected a grader.course.Course, got {type(course).__name__}")
    with open_zip(Path(zip_path)) as archive:
        return Collector(course, archive, assignments, replace).run()

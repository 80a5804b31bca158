"""make student-ids: the id each roster student sets is the folder collect files them under."""

from grader.__main__ import main
from grader.intake.lms_zip import collect_zip, name_slug
from grader.outputs.student_ids import ids_to_set
from tests.grader.intake.test_lms_zip import ALPHA, filed_files, make_zip, notebook, tmp_course  # noqa: F401

# student_id, the name as Canvas writes it (its sortable name), Canvas's user id
ROSTER = [
    ("doejane", "Doe, Jane", "101"),  # keyed by the name, as Canvas writes it in its zip
    ("102", "Smith, Bob", "102"),  # keyed by the Canvas user id
    ("jlee7", "Lee, Ann", "103"),  # keyed by something Canvas never writes: not found
    ("smithjohn_201", "Smith, John", "201"),  # two of one name, keyed by name and id
    ("smithjohn_202", "Smith, John", "202"),
]


def write_roster(course, rows) -> None:
    lines = ["student_id,name,canvas_id"] + [f'{s},"{n}",{i}' for s, n, i in rows]
    (course.root / "roster.csv").write_text("\n".join(lines) + "\n")


def canvas_zip(path, rows):
    """Canvas's "download all submissions" zip of every student's notebook, named as Canvas
    names them: <name, lowercased, punctuation dropped>_<user id>_<file id>_<file name>."""
    files = {f"{name_slug(name)}_{canvas_id}_{9000 + n}_{ALPHA}.ipynb": notebook(name)
             for n, (_, name, canvas_id) in enumerate(rows)}
    return make_zip(path, files)


def test_each_student_sets_the_id_collect_files_them_under(tmp_course, tmp_path):  # noqa: F811
    write_roster(tmp_course, ROSTER)
    rows = ids_to_set(tmp_course)
    assert [row["student_id"] for row in rows] == [student for student, _, _ in ROSTER]
    collect_zip(tmp_course, canvas_zip(tmp_path / "canvas.zip", ROSTER))
    filed = {path.split("/")[0] for path in filed_files(tmp_course)}
    assert {row["course_student"] for row in rows} == filed
    told = {row["student_id"]: row for row in rows}
    assert told["jlee7"]["course_student"] == "leeann" and "leeann" in told["jlee7"]["note"]
    assert told["102"]["course_student"] == "102" and not told["102"]["note"]


def test_the_command_prints_and_writes_them(tmp_course, capsys):  # noqa: F811
    write_roster(tmp_course, ROSTER[:2])
    assert main(["student-ids", "--course-root", str(tmp_course.root)]) == 0
    printed = capsys.readouterr().out
    assert "Doe, Jane: COURSE_STUDENT=doejane\nSmith, Bob: COURSE_STUDENT=102\n" in printed
    written = (tmp_course.root / "student_ids.csv").read_text().splitlines()
    assert written == ["student_id,name,course_student,note", "doejane,\"Doe, Jane\",doejane,",
                       "102,\"Smith, Bob\",102,"]


def test_without_a_roster_it_says_what_is_missing(tmp_course, capsys):  # noqa: F811
    assert main(["student-ids", "--course-root", str(tmp_course.root)]) == 2
    assert "roster.csv is missing" in capsys.readouterr().err

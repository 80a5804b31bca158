"""Numbers worked by hand (notebook 04): whose they are, and how they were reached.

Each student works the numbers of a sentence drawn from their own id
(``course_utils.by_hand``), and the grading compares them with the submitter's own, worked
out in the grader's process (``grader.scoring.by_hand_answers``): numbers right for another
id score 0, as wrong arithmetic does. Two flags tell the TA
what the score alone cannot, among the flags of :func:`grader.scoring.autograde.flags`:

``cell alpha_3_by_hand: numbers worked for id X, submitted as Y``
    The numbers are proved right for X's sentence and wrong for Y's: a student who worked
    under the wrong id (a typo, their login instead of the LMS's id) or the demonstration's
    numbers ("no id"). The candidates for X are the ids the notebook set (``use_id``) or
    printed with its sentence ("Student id: X", the record of whose numbers they are), so
    a record alone proves nothing: the numbers must fit.
``the notebook sets id X (student.use_id), submitted as Y``
    The id cell of the notebook (``course_utils.student.use_id("X")``, read from its
    source: the call's id written as a string) names another id than the submitter's. The
    graded kernel's numbers follow the submitter's id (the grader starts it with
    ``COURSE_STUDENT``, which wins over the notebook's), so numbers worked for X score 0
    and X is among the candidates of the flag above.
``cell alpha_3_by_hand line 2: reaches the course's code that computes its numbers: ...``
    A by-hand answer is numbers, or arithmetic on the printed sentence; a line that imports
    from ``course_utils`` or the grader, uses the notebook's ``checks`` or calls
    ``getattr`` with a name made at run time reaches for the course's code (no code a
    kernel can reach computes the numbers, and the grader is not there to import;
    importlib, ``__import__``, ``sys.modules``, frames and the like are the tamper scan's
    flags, grader.integrity.tamper).
"""

import ast
import re

from nbformat import NotebookNode

from grader.cells import is_answer, marks
from grader.intake.submissions import Submission
from grader.scoring.by_hand_answers import ANSWER_CELLS, right_for

PRINTED_ID = re.compile(r"^Student id: (?P<id>.+?)\s*$", re.M)
DEMONSTRATION = None  # the id of the numbers drawn when none is set
REACHES = "reaches the course's code that computes its numbers"
COURSE_PACKAGES = ("course_utils", "grader")
CHECKS_NAME = "checks"  # the notebook's `from course_utils import checks`
SETS_THE_ID = "use_id"  # course_utils.student.use_id("X"), the notebook's id cell


def flags(submission: Submission) -> list[str]:
    """The flags of ``submission``'s by-hand answer cells (see the module's docstring)."""
    found = []
    answers = by_hand_answers(submission.notebook)
    recorded = recorded_ids(submission.notebook)
    if answers:
        found += [f"the notebook sets id {student} (student.use_id), submitted as "
                  f"{submission.student}" for student in recorded
                  if student != submission.student]
    candidates = recorded + [student for student in printed_ids(submission.notebook)
                             if student not in recorded]
    for grade_id, source in answers.items():
        found += [f"cell {grade_id} line {line}: {REACHES}: {code}"
                  for line, code in reaching_lines(source)]
        worked_for = whose_numbers(grade_id, source, submission.student, candidates)
        if worked_for is not None:
            found.append(f"cell {grade_id}: numbers worked for {worked_for}, submitted as "
                         f"{submission.student}")
    return found


def by_hand_answers(notebook: NotebookNode) -> dict[str, str]:
    """{grade id: source} of the notebook's answer cells to by-hand exercises."""
    return {marks(cell)["grade_id"]: cell.source for cell in notebook.cells
            if cell.cell_type == "code" and is_answer(cell)
            and marks(cell).get("grade_id") in ANSWER_CELLS}


def printed_ids(notebook: NotebookNode) -> list[str]:
    """The student ids the notebook's outputs name ("Student id: X"), in order, once each."""
    ids = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            text = output.get("text") or output.get("data", {}).get("text/plain", "")
            text = "".join(text) if isinstance(text, list) else text
            ids += [match["id"] for match in PRINTED_ID.finditer(text)
                    if match["id"] not in ids]
    return ids


def recorded_ids(notebook: NotebookNode) -> list[str]:
    """The ids the notebook's code sets with ``use_id("X")`` (``student.use_id`` or a bare
    ``use_id``, its id a string), in order, once each: the record of whose work it is."""
    ids = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)):
                continue
            name = getattr(node.func, "attr", getattr(node.func, "id", None))
            student = node.args[0].value.strip()
            if name == SETS_THE_ID and student and student not in ids:
                ids.append(student)
    return ids


def reaching_lines(source: str) -> list[tuple[int, str]]:
    """(line, code) of each line of a by-hand answer that reaches the course's code."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []  # the kernel refuses it before running any of it
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            reaches = any(alias.name.split(".")[0] in COURSE_PACKAGES for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            reaches = (node.module or "").split(".")[0] in COURSE_PACKAGES
        elif isinstance(node, ast.Name):
            reaches = node.id == CHECKS_NAME
        elif isinstance(node, ast.Call):
            reaches = (isinstance(node.func, ast.Name) and node.func.id == "getattr"
                       and len(node.args) > 1 and not isinstance(node.args[1], ast.Constant))
        else:
            reaches = False
        if reaches:
            lines.add(node.lineno)
    code = source.splitlines()
    return [(line, code[line - 1].strip()) for line in sorted(lines)]


def assigned_numbers(grade_id: str, source: str) -> list | None:
    """The numbers the cell's last top-level ``grade_id = ...`` assigns, when they are
    written out (a list or tuple, or one inside ``np.array(...)``, ``torch.tensor(...)``);
    else None."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    values = [node.value for node in tree.body if isinstance(node, ast.Assign)
              and any(isinstance(t, ast.Name) and t.id == grade_id for t in node.targets)]
    if not values:
        return None
    value = values[-1]
    if isinstance(value, ast.Call) and value.args:
        value = value.args[0]
    try:
        numbers = ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return list(numbers) if isinstance(numbers, (list, tuple)) else None


def whose_numbers(grade_id: str, source: str, submitter: str,
                  candidates: list[str]) -> str | None:
    """"id X" (or "no id (the demonstration's)") when the numbers of the answer are right
    for X's sentence, X one of the ``candidates`` (the ids the notebook set or printed),
    and not for ``submitter``'s; else None."""
    numbers = assigned_numbers(grade_id, source)
    if numbers is None or right_for(grade_id, numbers, submitter):
        return None
    for candidate in [*candidates, DEMONSTRATION]:
        if candidate != submitter and right_for(grade_id, numbers, candidate):
            return "no id (the demonstration's)" if candidate is None else f"id {candidate}"
    return None

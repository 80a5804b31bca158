"""A failing test cell's message reduced to the mistake it names, so that messages that
differ only in the values they quote are counted together in the class report.

    diagnosis("AssertionError: ...")   the text of a ``course_utils.checks`` mistake it holds,
                                       else its first line without the answer's name
"""

import builtins
import re
from functools import lru_cache

from grader.cells import STDERR

SHORT_TEXT = 160
ERROR_LINE = re.compile(r"(?P<name>[A-Za-z_]\w*)(?::\s?(?P<text>.*))?", re.DOTALL)
NOT_RIGHT = " is not right: "
LEADING_NAME = re.compile(r"^[^\s:]+: ")
WARNING = re.compile(r"\b\w+Warning: .*")


@lru_cache(maxsize=1)
def known_mistakes() -> tuple[str, ...]:
    """The texts of every mistakes table of ``course_utils.checks.MISTAKES_BY_TOPIC``,
    longest first (so that a text containing another one is found first)."""
    from course_utils.checks import MISTAKES_BY_TOPIC

    texts = {text for table in MISTAKES_BY_TOPIC.values() for text in table.values()}
    return tuple(sorted(texts, key=lambda text: (-len(text), text)))


def diagnosis(message: str) -> str:
    """The mistake a failing test cell's ``message`` names, for counting alike failures.

    ``message`` is what :func:`test_cell_results` gives (an ``evalue`` alone is read as an
    assertion's). An assertion yields the text of the ``course_utils.checks`` MISTAKES it
    contains; else its first line without the leading ``"<name> is not right: "`` or
    ``"<name>: "``. Another exception yields ``"<ExceptionName>: <short text>"``
    (``"NotImplementedError: answer left blank"`` for nbgrader's placeholder), and output
    on stderr the warning it shows (``"UserWarning: <text>"``).
    """
    if not isinstance(message, str):
        raise TypeError(f"message must be a str, got {type(message).__name__}")
    if not message.strip():
        raise ValueError("diagnosis needs the message of a failing test cell, got an empty one")
    error = ERROR_LINE.fullmatch(message.strip())
    if error and error["name"] == STDERR:
        warning = WARNING.search(error["text"] or "")
        return _short(warning[0] if warning else message)
    if error and _is_exception(error["name"]):
        text = (error["text"] or "").strip()
        if error["name"] != "AssertionError" or not text:
            return _exception_diagnosis(error["name"], text)
        message = text
    for mistake in known_mistakes():
        if mistake in message:
            return mistake
    first_line = message.strip().splitlines()[0].rstrip(".")
    if NOT_RIGHT in first_line:
        return _short(first_line.split(NOT_RIGHT, 1)[1])
    return _short(LEADING_NAME.sub("", first_line, count=1))


def _is_exception(name: str) -> bool:
    builtin = getattr(builtins, name, None)
    if isinstance(builtin, type) and issubclass(builtin, BaseException):
        return True
    return name.endswith(("Error", "Exception"))


def _exception_diagnosis(name: str, text: str) -> str:
    if not text:
        return f"{name}: answer left blank" if name == "NotImplementedError" else name
    return _short(f"{name}: {text.splitlines()[0]}")


def _short(text: str) -> str:
    text = text.strip()
    return text if len(text) <= SHORT_TEXT else text[: SHORT_TEXT - 1].rstrip() + "…"

"""An answer cell run under its exercise's allowlist: the ``%%answer_cell`` magic.

While nbgrader grades, ``grader.running.execute.Execute`` sends each answer cell to the kernel as

    %%answer_cell <its exercise>
    <the student's cell>

(the magic is the kernel's extension ``course_utils.grading_kernel``), and it runs the cell
in the allowlist's region (``allowlist.cell_region``), without displaying its last value
(the display machinery is IPython's, not the answer's). The functions the cell defines
(decorated ones too) stay under the allowlist wherever they are called later (a plain cell
that plots the answer, a test): each is replaced by ``guarded(function)``. A cell that
caught a refusal and went on is remembered: every later call of an answer by a test fails
(``refused_cell``), since what ran after the refusal ran unchecked.
"""

import functools
from collections.abc import Callable

from .allowlist import NotAllowed, answer_region, cell_region, is_own

__all__ = ["answer_cell", "guarded", "refused_cell"]


def _refusals():
    """``remember`` and ``first`` of the refusals answer cells caught, kept in their closure
    (no module attribute a cell could clear)."""
    refused: list[str] = []

    def remember(refusal: str) -> None:
        refused.append(refusal)

    def first() -> str | None:
        """The first refusal an answer cell caught and went on after, or None."""
        return refused[0] if refused else None

    return remember, first


_remember_refusal, refused_cell = _refusals()


def answer_cell(line: str, cell: str) -> None:
    """Run ``cell`` (an answer cell's code) as the answer to the exercise ``line`` names."""
    from IPython import get_ipython

    exercise = line.strip() or None
    namespace = get_ipython().user_ns
    before = dict(namespace)
    with cell_region(exercise) as region:
        result = get_ipython().run_cell(cell, silent=True)
    if region.refused and not isinstance(result.error_in_exec, NotAllowed):
        _remember_refusal(region.refused)
    for name, value in list(namespace.items()):
        if before.get(name) is not value and _defines(value):
            namespace[name] = guarded(value, exercise)


def _defines(value) -> bool:
    """Whether ``value`` is a function of the notebook's own code, or one that wraps such a
    function (``@torch.no_grad()``, ``@functools.cache``)."""
    for _ in range(8):
        if is_own(value):
            return True
        value = getattr(value, "__wrapped__", None) if callable(value) else None
        if value is None:
            return False
    return False


def guarded(function: Callable, exercise: str | None) -> Callable:
    """``function`` (an answer cell's), run under the allowlist of ``exercise`` at every call."""

    @functools.wraps(function)
    def run(*args, **kwargs):
        with answer_region(exercise, [*args, *kwargs.values()]) as region:
            result = function(*args, **kwargs)
        if region.refused:  # a refusal it caught and went on after
            raise NotAllowed(region.refused)
        return result

    return run

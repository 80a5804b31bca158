"""Answer cells that import or name a library twin of their exercise, for a TA to look at.

The twins are each exercise's record's ``twins`` (``course_utils.exercises``), which the
guards refuse while a test cell runs; this static scan reads the answer cell's code with
``ast`` and never runs it, so it lives with the grader's other scans and not in the
students' package.
"""

import ast
import fnmatch

from course_utils.exercises import EXERCISES

__all__ = ["imported_twins"]


def imported_twins(source: str, exercise: str) -> list[str]:
    """The twins of ``exercise`` that the answer cell ``source`` imports or names.

    Catches ``from course_utils.models.attention import masked_softmax`` and dotted uses such as
    ``attention.masked_softmax``; the grading lists them beside the score.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    used, imports_library = set(), False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            used |= {f"{node.module}.{alias.name}" for alias in node.names}
            imports_library |= node.module.startswith("course_utils")
        elif isinstance(node, ast.Import):
            imports_library |= any(a.name.startswith("course_utils") for a in node.names)
        elif isinstance(node, ast.Attribute):
            used.add(ast.unparse(node))

    def named(path: str) -> bool:
        if path.startswith("notebook."):  # the notebook's own function: nothing to import
            return False
        if "*" in path:
            return any(fnmatch.fnmatchcase(name, path) for name in used)
        module, _, function = path.rpartition(".")
        if module.rpartition(".")[2][:1].isupper():  # a method: only Class.method is sure
            return any(name.endswith(path.rpartition(".")[0].rpartition(".")[2] + "." + function)
                       for name in used)
        return any(
            name == path
            or (name.endswith("." + function) and (module.endswith(name.rpartition(".")[0])
                                                    or imports_library))
            for name in used
        )

    twins = EXERCISES[exercise].twins if exercise in EXERCISES else ()
    return [path for path in twins if named(path)]

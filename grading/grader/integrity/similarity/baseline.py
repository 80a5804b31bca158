"""How alike independently written right answers are, cell by cell: the measure the class's
matches are held against (:mod:`grader.integrity.similarity.matches`).

``baseline.json`` beside this file holds, per assignment and answer cell, the highest
similarity of two independent right answers (the solution and the ``CORRECT`` cases of
tests/grading_cases). A cell that reaches ``matches.NATURAL`` has one natural answer, and
its matches are marked and ranked lower. The developer's ``python -m tools.similarity_baseline``
measures it again after editing a notebook's answers or the cases.
"""

import json
from functools import lru_cache
from pathlib import Path

PATH = Path(__file__).with_name("baseline.json")


@lru_cache(maxsize=1)
def load() -> dict[str, dict[str, float]]:
    """{assignment: {answer cell: the highest similarity of independent right answers}}."""
    if not PATH.exists():
        return {}
    return json.loads(PATH.read_text(encoding="utf-8"))

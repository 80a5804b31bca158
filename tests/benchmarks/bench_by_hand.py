"""Notebook 04's numbers worked by hand: how often two students' right answers agree by chance.

Each student works the scores, α₃ and a₃ of a sentence drawn from their id
(``course_utils.by_hand``), rounded as the exercises ask (scores to 2 decimals, α₃ to 3
from them, a₃ to 2 from those: ``by_hand_answers``). The similarity step compares such
short value answers exactly, numbers by value (grader.integrity.similarity.fingerprint's own
tokens), so two right answers match when their rounded numbers are the same. Over ``IDS`` ids, the
chance ``p`` that two given students share an exercise's answer is the share of pairs that
do; a class of ``CLASS`` then has about C(CLASS, 2) × p innocent matching pairs.
"""

import math
from collections import Counter

from course_utils.by_hand import sentence_of
from tests.benchmarks.timing import Row
from tests.grading_cases.alpha3_by_hand import BY_HAND, by_hand_answers

IDS = 20_000
CLASS = 300


def chance_matches(ids: int = IDS, size: int = CLASS) -> dict[str, tuple[float, float, int]]:
    """{exercise: (p, expected innocent pairs in a class of ``size``, distinct answers)},
    measured over the ids student0 ... student<ids - 1>."""
    answers = {grade_id: Counter() for grade_id in BY_HAND}
    for number in range(ids):
        for grade_id, numbers in by_hand_answers(sentence_of(f"student{number}")).items():
            answers[grade_id][tuple(numbers)] += 1
    found = {}
    for grade_id, counts in answers.items():
        p = sum(math.comb(count, 2) for count in counts.values()) / math.comb(ids, 2)
        found[grade_id] = (p, math.comb(size, 2) * p, len(counts))
    return found


def run() -> list[Row]:
    return [Row(f"04 by hand: pairs of {CLASS} sharing an answer", grade_id, pairs, "pairs",
                f"p = {p:.2g} per pair, {distinct} distinct answers of {IDS} ids")
            for grade_id, (p, pairs, distinct) in chance_matches().items()]

"""A late penalty, as an instructor writes it: ``"10%/day, max 50%"``.

Each day (or hour) begun after the due date takes ``percent`` of the points the submission
earned, up to ``max_percent`` in all: with "10%/day, max 50%", 8 points submitted 1 second
late become 7.2, 26 hours late 6.4, and 10 days late 4. Lateness is grades.csv's
``seconds_late`` (the submission's time stamp against the due date of ``make publish``).
"""

import math
import re
from dataclasses import dataclass

UNITS = {"day": 86400, "hour": 3600}
SYNTAX = re.compile(r"(?P<percent>\d+(?:\.\d+)?)\s*%\s*/\s*(?P<unit>day|hour)"
                    r"(?:\s*,\s*max\s+(?P<max>\d+(?:\.\d+)?)\s*%)?", flags=re.IGNORECASE)


@dataclass(frozen=True)
class LatePenalty:
    percent: float  # of the earned points, per unit begun
    unit: str  # "day" or "hour"
    max_percent: float = 100.0

    @classmethod
    def parse(cls, text: str) -> "LatePenalty":
        """``"10%/day"``, ``"10%/day, max 50%"``, ``"2%/hour, max 30%"``."""
        match = SYNTAX.fullmatch(text.strip())
        if match is None:
            raise ValueError(f"late penalty: expected '<percent>%/day' or '<percent>%/hour', "
                             f"optionally ', max <percent>%' (e.g. '10%/day, max 50%'), "
                             f"got {text!r}")
        penalty = cls(float(match["percent"]), match["unit"].lower(),
                      float(match["max"]) if match["max"] else 100.0)
        if penalty.percent > 100 or penalty.max_percent > 100:
            raise ValueError(f"late penalty: percentages are at most 100%, got {text!r}")
        return penalty

    def percent_for(self, seconds_late: int) -> float:
        """The percentage of the points taken from a submission ``seconds_late``."""
        units_begun = math.ceil(seconds_late / UNITS[self.unit])
        return min(self.percent * units_begun, self.max_percent)

    def __str__(self) -> str:
        return f"{self.percent:g}%/{self.unit}, max {self.max_percent:g}%"

"""Diagnostic assertions for the notebooks' test cells, one module per topic.

Test cells write ``from course_utils import checks``, call the student's function as
``checks.own_work(f)(...)`` and check the result with ``checks.check_...``; every check
raises ``AssertionError`` with a message that names the likely mistake. The checks (and
``as_tensor``) exported here take the answer as their first argument and look at it only
once ``guards`` has made it plain and found nothing left behind (see ``guards``). Plain
cells that compare a student's function with the library's use ``checks.comparing``.
A test cell's code runs inside a function ``_`` that the cell calls and deletes (``def _():
...``, ``_()``, ``del _``), so that none of its inputs or expected values is a global an answer
could read, and no name outside the cell decides whether its checks run.
"""

from . import guards as _guards
from .attention import *  # noqa: F403
from .bpe import *  # noqa: F403
from .by_hand import *  # noqa: F403
from .compare import *  # noqa: F403
from .core import *  # noqa: F403
from .embeddings import *  # noqa: F403
from .guards import *  # noqa: F403
from .linear_attention import *  # noqa: F403
from .masked_attention import *  # noqa: F403
from .pretraining import *  # noqa: F403
from .random_features import *  # noqa: F403
from .skipgram import *  # noqa: F403
from .transformer_blocks import *  # noqa: F403
from .twins import *  # noqa: F403

for _name in [name for name in dir() if name.startswith("check_") or name == "as_tensor"]:
    if _name != "check_nothing_left_behind":
        globals()[_name] = _guards.checked_plainly(globals()[_name])
_guards.record_baseline()

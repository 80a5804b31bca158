"""Diagnostic assertions for the notebooks' test cells, one module per topic.

Test cells write ``from course_utils import checks``, call the student's function as
``checks.own_work(f)(...)`` and check the result with ``checks.check_...``; every check
raises ``AssertionError`` with a message that names the likely mistake. Each check (and
``as_tensor``) takes the answer as its first argument and is decorated at its definition
with ``@checked_plainly``: it looks at the answer only once ``guards`` has made it plain and
found nothing left behind (see ``guards``). The messages that name a known mistake live in
one table per topic, all listed in :data:`MISTAKES_BY_TOPIC`, from which the class report
names the mistake of each failing test. Plain
cells that compare a student's function with the library's use ``checks.comparing``.
A test cell's code runs inside a function ``_`` that the cell calls and deletes (``def _():
...``, ``_()``, ``del _``), so that none of its inputs or expected values is a global an answer
could read, and no name outside the cell decides whether its checks run.
"""

# the test cells' own (course_utils.exercises.checking): checks.check, checks.grade
from course_utils.exercises.checking import check as check  # noqa: E402, I001
from course_utils.exercises.checking import grade as grade  # noqa: E402, I001

from . import (
    attention,
    embeddings,
    linear_attention,
    masked_attention,
    pretraining,
    random_features,
    transformer_blocks,
)
from course_utils.exercises import EXERCISES as _EXERCISES
from course_utils.exercises.record import Oracle as _Oracle

from . import guards as _guards
from .attention import *  # noqa: F403
from .bpe import *  # noqa: F403
from .by_hand import *  # noqa: F403
from .core import *  # noqa: F403
from .embeddings import *  # noqa: F403
from .feature_statistics import *  # noqa: F403
from .guards import *  # noqa: F403
from .guards.records import TORCH_TWINS, TWINS  # noqa: F401
from .linear_attention import *  # noqa: F403
from .masked_attention import *  # noqa: F403
from .pretraining import *  # noqa: F403
from .random_features import *  # noqa: F403
from .skipgram import *  # noqa: F403
from .transformer_blocks import *  # noqa: F403

# Every table of mistake messages, by topic (a test fails when a module's table is not here).
MISTAKES_BY_TOPIC: dict[str, dict[str, str]] = {
    "attention": attention.MISTAKES,
    "embeddings": embeddings.EMBEDDING_MISTAKES,
    "linear_attention": linear_attention.LINEAR_MISTAKES,
    "masked_attention": masked_attention.MASK_MISTAKES,
    "pretraining": pretraining.PRETRAINING_MISTAKES,
    "random_features": random_features.RF_MISTAKES,
    "transformer_blocks": transformer_blocks.BLOCK_MISTAKES,
    # the mistakes the records' oracles name (course_utils.exercises.record.Oracle)
    "records": {text: text for record in _EXERCISES.values() if isinstance(record.check, _Oracle)
                for text in record.check.mistakes},
}

_guards.record_baseline()

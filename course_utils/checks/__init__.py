"""Diagnostic assertions for the notebooks' test cells, one module per topic.

Test cells write ``from course_utils import checks`` and call ``checks.check_...``;
every check raises ``AssertionError`` with a message that names the likely mistake.
Plain cells that compare a student's function with the library's use ``checks.comparing``.
"""

from .attention import *  # noqa: F403
from .bpe import *  # noqa: F403
from .compare import *  # noqa: F403
from .core import *  # noqa: F403
from .embeddings import *  # noqa: F403
from .linear_attention import *  # noqa: F403
from .masked_attention import *  # noqa: F403
from .random_features import *  # noqa: F403
from .skipgram import *  # noqa: F403
from .transformer_blocks import *  # noqa: F403
from .twins import *  # noqa: F403

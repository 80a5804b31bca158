r"""GPT-4's pre-tokenizer: the regex of cl100k_base, and a faster way to run it on English.

The pattern cuts text into chunks (a word with its leading space, a run of up to three
digits, a run of punctuation, whitespace); byte-level BPE then merges inside each chunk.
Its classes are Unicode ones (``\p{L}`` a letter of any script, ``\p{N}`` a number), which
Python's own ``re`` does not have, so the pattern runs on the ``regex`` package.

On ASCII those classes are small sets: ``\p{L}`` is ``[A-Za-z]``, ``\p{N}`` is ``[0-9]``
and ``\s`` is ``[\t\n\x0b\x0c\r ]`` (checked against ``regex`` in
tests/course_utils/tokens/test_pre_tokenizer.py).
Written with them, the same pattern runs on ``re`` about twice as fast (``make bench``).
:func:`pre_tokenize_cl100k` gives exactly ``regex.findall(CL100K_PATTERN, text)``: the
ASCII stretches of the text go through ``re``, and each stretch around a character above
127 through ``regex``.

**Where the text may be cut** between the two: before a space that follows an ASCII letter.

* A chunk ends there in the whole text: no chunk holds a letter and the space after it (a
  letter run stops at the space, a contraction such as ``'s`` ends with its letter, and
  whitespace and punctuation runs hold no letter).
* The chunks after it are those of the text after it: the pattern looks only forward.
* The chunks before it are those of the text before it: that text ends with a letter, which
  the pattern's look-aheads (``$`` and ``(?!\S)``, both after whitespace) never reach.
"""

import re

import regex

from course_utils import validation

# GPT-4's pre-tokenizer: contractions, a letter run with one optional leading non-letter,
# 1-3 digits, punctuation runs with a leading space, newlines, other whitespace.
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
# The same pattern for text without a character above 127 (``\S`` is ``[^\t\n\x0b\x0c\r ]``).
CL100K_ASCII_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\nA-Za-z0-9]?+[A-Za-z]++|[0-9]{1,3}+"""
    r"""| ?[^\t\n\x0b\x0c\r A-Za-z0-9]++[\r\n]*+|[\t\n\x0b\x0c\r ]++$"""
    r"""|[\t\n\x0b\x0c\r ]*[\r\n]|[\t\n\x0b\x0c\r ]+(?![^\t\n\x0b\x0c\r ])|[\t\n\x0b\x0c\r ]"""
)

_UNICODE = regex.compile(CL100K_PATTERN)
_ASCII = re.compile(CL100K_ASCII_PATTERN)
_NON_ASCII = regex.compile(r"[^\x00-\x7f]+")
_LETTER_SPACE = re.compile(r"[A-Za-z] ")  # the text may be cut before the space
_ASCII_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def _last_cut(text: str, lo: int, hi: int) -> int:
    """The last place in ``text[lo:hi]`` where the text may be cut; ``lo`` if there is none."""
    at = hi
    while (at := text.rfind(" ", lo + 1, at)) > lo:
        if text[at - 1] in _ASCII_LETTERS:
            return at
    return lo


def pre_tokenize_cl100k(text: str) -> list[str]:
    """``regex.findall(CL100K_PATTERN, text)``, with the ASCII stretches run on ``re``."""
    chunks: list[str] = []
    done = 0  # text[:done] is cut into chunks
    while non_ascii := _NON_ASCII.search(text, done):
        start = _last_cut(text, done, non_ascii.start())
        after = _LETTER_SPACE.search(text, non_ascii.end())
        end = after.end() - 1 if after else len(text)
        chunks += _ASCII.findall(text[done:start])
        chunks += _UNICODE.findall(text[start:end])
        done = end
    chunks += _ASCII.findall(text[done:])
    return chunks


def pre_tokenize(text: str, pattern: str = CL100K_PATTERN) -> list[str]:
    """The chunks of ``text`` cut by the pre-tokenizer's regex (GPT-4's by default)."""
    return _pre_tokenizer(pattern)(validation.text("text", text))


def _pre_tokenizer(pattern: str):
    """``findall`` of ``pattern``: for GPT-4's, the faster :func:`pre_tokenize_cl100k`."""
    return pre_tokenize_cl100k if pattern == CL100K_PATTERN else regex.compile(pattern).findall

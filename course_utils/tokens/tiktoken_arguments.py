"""How the byte-level tokenizer reads its arguments, as ``tiktoken.Encoding`` does or clearer.

Code written for tiktoken runs unchanged on :class:`course_utils.tokens.byte_bpe.BytePairTokenizer`;
where tiktoken accepts what is most likely a slip, the course raises a clear error instead:
an id that is a ``bool`` (``decode([True])``, which tiktoken reads as id 1) raises
``TypeError``; a single string where a collection of special tokens is expected
(``allowed_special="<|endoftext|>"``; tiktoken raises an unclear ``TypeError`` or reads the
string as its characters) raises ``TypeError``; one text given to a ``_batch`` method raises
``TypeError``. In the other direction the course is lenient: ``allowed_special`` may be any
collection of strings (a list, a tuple), where tiktoken requires a ``set`` or ``frozenset``.
Unknown ids raise ``UnknownTokenError`` where tiktoken raises ``OverflowError`` for a negative
one. The ``num_threads`` of the ``_batch`` methods is accepted and unused: pure Python gains
nothing from threads.
"""

import functools
from collections.abc import Collection, Iterable

import regex


def without_surrogates(text: str) -> str:
    """``text`` as tiktoken reads text that holds surrogates (U+D800..U+DFFF).

    UTF-8 has no bytes for a surrogate: it is half of a UTF-16 pair, which JSON escapes
    (``"\\ud83d\\udc4d"``) and some Windows APIs leave in a Python string. Written out as
    UTF-16 and read back, a high surrogate followed by a low one becomes the character the
    pair stands for (👍) and a surrogate on its own becomes U+FFFD, the replacement character.
    """
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


@functools.lru_cache(maxsize=64)
def special_token_pattern(specials: frozenset[str]):
    """One regex that matches any of ``specials`` (longest first where one is a prefix)."""
    return regex.compile("|".join(map(regex.escape, sorted(specials, key=lambda s: (-len(s), s)))))


def special_token_names(name: str, value) -> frozenset[str] | None:
    """``value`` of ``allowed_special``/``disallowed_special`` as a set of strings (``None``
    for ``"all"``); ``TypeError`` for a single string or anything but strings."""
    if isinstance(value, str) and value == "all":
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, Collection):
        raise TypeError(
            f'{name} must be "all" or a collection of special tokens such as '
            f'{{"<|endoftext|>"}}; got {type(value).__name__} {value!r}'
        )
    names = frozenset(value)
    wrong = [s for s in names if not isinstance(s, str)]
    if wrong:
        raise TypeError(f"{name} must hold strings (special tokens); got {wrong[0]!r}")
    return names


def texts_of_batch(name: str, value) -> list:
    """``value`` as a list, for the ``_batch`` methods: one text (a str) is refused."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(
            f"{name} must be a list of texts; got {type(value).__name__} (the methods "
            "without _batch take one)"
        )
    return list(value)

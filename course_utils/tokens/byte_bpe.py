"""The byte-level BPE tokenizer: ``encode`` text to ids and ``decode`` them back, as ``tiktoken``.

Byte-level BPE runs the token learner of :mod:`course_utils.tokens.bpe` on bytes instead of
characters: the initial vocabulary is the 256 possible bytes, so any text (any script,
emoji, typos) can be encoded and nothing is ever unknown. Two refinements from GPT-2 on:

* a **regex pre-tokenizer** first cuts the text into chunks (a word with its leading space,
  a run of up to three digits, a run of punctuation, whitespace); merges never cross a chunk
  boundary, as the character-level learner's merges never cross a word boundary (GPT-4's
  regex runs through :mod:`course_utils.tokens.pre_tokenizer`, which runs English text faster);
* **special tokens** such as ``<|endoftext|>`` are cut out before that and get their own ids,
  but only where the caller allows them: as in ``tiktoken``, ``encode`` raises ``ValueError``
  on text that contains a special token unless ``allowed_special`` lets it through (or
  ``disallowed_special=()`` reads it as ordinary text), so that text from a user cannot
  smuggle in a control token.

A tokenizer is its ``ranks``: {token bytes: id}, the 256 single bytes first and then each
merged token in the order it was learned; a chunk is encoded by the merge loop of
:mod:`course_utils.tokens.byte_merges`, and the encoding of each distinct chunk is cached.
:func:`course_utils.tokens.bpe.train_byte_bpe` learns one; :func:`course_utils.tokens.cl100k.cl100k`
is GPT-4's. A tokenizer hands out its ranks and special tokens as read-only views
(``types.MappingProxyType``): the cached ``cl100k()`` is shared by every cell of a kernel,
and one ``ranks.pop(...)`` must not break it.

**tiktoken's API.** :class:`BytePairTokenizer` has the methods and attributes of
``tiktoken.Encoding`` (``encode``, ``encode_ordinary``, the ``_batch`` forms, ``decode``
with ``errors=``, ``decode_bytes``, ``decode_with_offsets``, ``encode_single_token``,
``decode_single_token_bytes``, ``decode_tokens_bytes``, ``name``, ``n_vocab``,
``max_token_value``, ``eot_token``, ``special_tokens_set``, ``is_special_token``; it can be
pickled) and gives the same results, tested against ``tiktoken``
(tests/course_utils/tokens/test_byte_bpe.py):

* text with surrogates (``"\\ud83d\\udc4d"``, as JSON escapes produce, or a lone ``"\\ud83d"``),
  which UTF-8 cannot encode, is read as tiktoken reads it: a pair becomes the character it
  stands for and a lone surrogate becomes U+FFFD;
* ``n_vocab`` is the highest id + 1 (100 277 for cl100k_base, whose ids 100 261..100 275 are
  unused): the rows an ``nn.Embedding`` needs. The number of ids in use is
  ``len(ranks) + len(special_tokens)``;
* an unknown id or token raises :class:`UnknownTokenError`, both a ``KeyError`` (tiktoken's
  contract) and a ``ValueError`` (the course's);
* ``allowed_special`` naming a string that is not a special token ignores it, and
  ``disallowed_special`` may name any string the text must not contain, as in tiktoken.

Where tiktoken accepts what is most likely a slip, the course raises a clear error instead
(:mod:`course_utils.tokens.tiktoken_arguments`).
"""

from collections import Counter
from collections.abc import Collection, Mapping
from types import MappingProxyType

from course_utils import validation

from .bpe import learn_bpe
from .byte_merges import SINGLE_BYTES, _byte_pair_merge_fast
from .pre_tokenizer import CL100K_PATTERN, _pre_tokenizer, pre_tokenize
from .tiktoken_arguments import (
    special_token_names,
    special_token_pattern,
    texts_of_batch,
    without_surrogates,
)

END_OF_TEXT = "<|endoftext|>"


class UnknownTokenError(KeyError, ValueError):
    """An id or a token that is not in the vocabulary.

    A ``KeyError``, as ``tiktoken`` raises for an unknown id or token, and a ``ValueError``,
    as the rest of the course raises for a value out of range: ``except KeyError`` and
    ``except ValueError`` both catch it. Its message is shown as written (a plain
    ``KeyError`` shows it in quotes).
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class BytePairTokenizer:
    """A byte-level BPE tokenizer: ``encode(text)`` gives ids, ``decode(ids)`` gives text back.

    ``ranks`` maps each token (bytes) to its id and must contain all 256 single bytes;
    ``pattern`` is the pre-tokenizer's regex; ``special_tokens`` maps strings such as
    ``"<|endoftext|>"`` to ids outside ``ranks``; ``name`` names it, as tiktoken's encodings
    are named. The ranks and special tokens are copied, and handed out as read-only views.
    The methods are ``tiktoken.Encoding``'s, with the same results (see the module's
    docstring for the few, deliberate, differences).
    """

    def __init__(
        self,
        ranks: Mapping[bytes, int],
        pattern: str,
        special_tokens: Mapping[str, int] | None = None,
        *,
        name: str = "byte_bpe",
    ):
        missing = [b for b in SINGLE_BYTES if b not in ranks]
        if missing:
            raise ValueError(f"ranks must contain all 256 single bytes; {len(missing)} missing")
        self.name = validation.text("name", name)
        self._ranks = dict(ranks)
        self._special_tokens = dict(special_tokens or {})
        self.pattern = pattern
        self._pre_tokenize = _pre_tokenizer(pattern)
        self._bytes_of = {i: token for token, i in self._ranks.items()}
        self._bytes_of.update({i: s.encode() for s, i in self._special_tokens.items()})
        self._special_of_bytes = {s.encode(): i for s, i in self._special_tokens.items()}
        self._special_ids = frozenset(self._special_tokens.values())
        self._max_token_value = max(max(self._ranks.values()), max(self._special_ids, default=0))
        self._cache: dict[str, list[int]] = {}

    def __repr__(self) -> str:
        return (
            f"<BytePairTokenizer {self.name!r}: {len(self._ranks):,} ranks, "
            f"{len(self._special_tokens)} special tokens>"
        )

    def __getstate__(self) -> dict:
        """What a pickle keeps: the ranks, pattern, special tokens and name (not the cache)."""
        return {
            "ranks": self._ranks,
            "pattern": self.pattern,
            "special_tokens": self._special_tokens,
            "name": self.name,
        }

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state)

    # -- the vocabulary ---------------------------------------------------------------------

    @property
    def ranks(self) -> Mapping[bytes, int]:
        """{token bytes: rank}, read-only (``dict(tokenizer.ranks)`` for a copy to change)."""
        return MappingProxyType(self._ranks)

    @property
    def special_tokens(self) -> Mapping[str, int]:
        """{special token: id}, read-only."""
        return MappingProxyType(self._special_tokens)

    @property
    def special_tokens_set(self) -> set[str]:
        """The special tokens' strings (a new set at each call: changing it changes nothing)."""
        return set(self._special_tokens)

    @property
    def max_token_value(self) -> int:
        """The highest id, of a rank or a special token."""
        return self._max_token_value

    @property
    def n_vocab(self) -> int:
        """The highest id + 1, as in tiktoken: the rows an embedding table needs.

        For cl100k_base 100 277, although only 100 261 ids are in use (ids 100 261..100 275
        are not); the ids in use are ``len(ranks) + len(special_tokens)``.
        """
        return self._max_token_value + 1

    @property
    def eot_token(self) -> int:
        """The id of ``<|endoftext|>`` (``UnknownTokenError`` if it is not a special token)."""
        if END_OF_TEXT not in self._special_tokens:
            raise UnknownTokenError(f"{self.name} has no {END_OF_TEXT} special token")
        return self._special_tokens[END_OF_TEXT]

    def is_special_token(self, token: int) -> bool:
        """Whether the id ``token`` is a special token's."""
        return validation.integer("token", token) in self._special_ids

    # -- encoding ---------------------------------------------------------------------------

    def pre_tokenize(self, text: str) -> list[str]:
        """The chunks of ``text`` cut by the pre-tokenizer's regex (no special tokens)."""
        return self._pre_tokenize(validation.text("text", text))

    def _encode_chunk(self, chunk: str) -> list[int]:
        """The ids of one chunk, computed once and then cached. A chunk that is one token
        (most are: `` the``, ``,``) needs no merging."""
        piece = chunk.encode("utf-8")
        ranks = self._ranks
        single = ranks.get(piece)
        if single is not None:
            ids = [single]
        else:
            ids = [ranks[part] for part in _byte_pair_merge_fast(piece, ranks)]
        self._cache[chunk] = ids
        return ids

    def encode_ordinary(self, text: str) -> list[int]:
        """The ids of ``text``, reading special tokens as ordinary text."""
        text = validation.text("text", text)
        ids: list[int] = []
        cached, encode_chunk = self._cache.get, self._encode_chunk
        try:
            for chunk in self._pre_tokenize(text):
                ids += cached(chunk) or encode_chunk(chunk)
        except UnicodeEncodeError:  # a surrogate, which UTF-8 cannot encode
            return self.encode_ordinary(without_surrogates(text))
        return ids

    def encode(
        self,
        text: str,
        *,
        allowed_special: Collection[str] | str = (),
        disallowed_special: Collection[str] | str = "all",
    ) -> list[int]:
        """The ids of ``text``, with tiktoken's safe default for special tokens.

        A special token in ``allowed_special`` (``"all"``: every one) gets its own id; text
        that contains one of ``disallowed_special`` (by default every special token not
        allowed) raises ``ValueError``; a special token in neither is read as ordinary text
        (``disallowed_special=()`` reads them all that way). As in tiktoken, a string in
        ``allowed_special`` that is not a special token is ignored, and ``disallowed_special``
        may name any string that the text must not contain.
        """
        text = validation.text("text", text)
        allowed = special_token_names("allowed_special", allowed_special)
        specials = frozenset(self._special_tokens)
        allowed = specials if allowed is None else allowed & specials
        disallowed = special_token_names("disallowed_special", disallowed_special)
        if disallowed is None:
            disallowed = specials - allowed
        if disallowed and (match := special_token_pattern(disallowed).search(text)):
            found = match.group()
            what = "the special token" if found in specials else "the string"
            raise ValueError(
                f"the text contains {what} {found!r}, which is not allowed: pass "
                f'allowed_special={{{found!r}}} (or "all") to encode it as the special token, '
                "or disallowed_special=() to encode it as ordinary text"
            )
        if not allowed:
            return self.encode_ordinary(text)
        ids: list[int] = []
        start = 0
        for match in special_token_pattern(allowed).finditer(text):
            ids += self.encode_ordinary(text[start : match.start()])
            ids.append(self._special_tokens[match.group()])
            start = match.end()
        ids += self.encode_ordinary(text[start:])
        return ids

    def encode_batch(
        self,
        texts: list[str],
        *,
        num_threads: int = 8,
        allowed_special: Collection[str] | str = (),
        disallowed_special: Collection[str] | str = "all",
    ) -> list[list[int]]:
        """:meth:`encode` of each text (``num_threads`` is tiktoken's, and unused)."""
        validation.positive_int("num_threads", num_threads)
        return [
            self.encode(
                text, allowed_special=allowed_special, disallowed_special=disallowed_special
            )
            for text in texts_of_batch("texts", texts)
        ]

    def encode_ordinary_batch(self, texts: list[str], *, num_threads: int = 8) -> list[list[int]]:
        """:meth:`encode_ordinary` of each text (``num_threads`` is tiktoken's, and unused)."""
        validation.positive_int("num_threads", num_threads)
        return [self.encode_ordinary(text) for text in texts_of_batch("texts", texts)]

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of a text (or bytes) that is one token, special tokens included;
        ``UnknownTokenError`` if it is not one token."""
        if isinstance(text_or_bytes, str):
            token = text_or_bytes.encode("utf-8")
        elif isinstance(text_or_bytes, (bytes, bytearray)):
            token = bytes(text_or_bytes)
        else:
            raise TypeError(f"the token must be a str or bytes; got {type(text_or_bytes).__name__}")
        found = self._ranks.get(token, self._special_of_bytes.get(token))
        if found is None:
            raise UnknownTokenError(
                f"{text_or_bytes!r} is not a single token of {self.name}: encode() cuts it "
                "into tokens"
            )
        return found

    # -- decoding ---------------------------------------------------------------------------

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one id; ``UnknownTokenError`` if it is not in the vocabulary."""
        piece = self._bytes_of.get(validation.integer("each id", token))
        if piece is None:
            raise UnknownTokenError(
                f"id {token} is not in the vocabulary (ids are 0..{self._max_token_value}, "
                f"{len(self._bytes_of)} of them in use)"
            )
        return piece

    def token_bytes(self, ids) -> list[bytes]:
        """The bytes of each id; ``UnknownTokenError`` for an id not in the vocabulary."""
        if isinstance(ids, (str, bytes)) or not hasattr(ids, "__iter__"):
            raise TypeError(f"ids must be a sequence of ints; got {type(ids).__name__}")
        return list(map(self.decode_single_token_bytes, ids))

    decode_tokens_bytes = token_bytes  # tiktoken's name

    def decode_bytes(self, ids) -> bytes:
        """The bytes of ``ids``, joined."""
        return b"".join(self.token_bytes(ids))

    def decode(self, ids, errors: str = "replace") -> str:
        """The text of ``ids``. Bytes that are not valid UTF-8 (a token that cuts a
        character) become U+FFFD, as in tiktoken; ``errors="strict"`` raises instead."""
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    def decode_with_offsets(self, ids) -> tuple[str, list[int]]:
        """The text of ``ids`` and the offset in it of each token, as in tiktoken.

        An offset counts characters. In UTF-8 every character begins with a byte that is not
        a continuation byte (0x80..0xBF), so the characters before a token are the bytes
        before it that are not continuation bytes. A token that begins with a continuation
        byte begins inside a character: its offset is that character's. Bytes that are not
        valid UTF-8 raise ``UnicodeDecodeError``.
        """
        pieces = self.token_bytes(ids)
        offsets, characters = [], 0
        for piece in pieces:
            inside = bool(piece) and 0x80 <= piece[0] < 0xC0
            offsets.append(max(0, characters - inside))
            characters += sum(1 for byte in piece if not 0x80 <= byte < 0xC0)
        return b"".join(pieces).decode("utf-8"), offsets

    def decode_batch(self, batch, *, errors: str = "replace", num_threads: int = 8) -> list[str]:
        """:meth:`decode` of each list of ids (``num_threads`` is tiktoken's, and unused)."""
        validation.positive_int("num_threads", num_threads)
        return [self.decode(ids, errors=errors) for ids in texts_of_batch("batch", batch)]

    def decode_bytes_batch(self, batch, *, num_threads: int = 8) -> list[bytes]:
        """:meth:`decode_bytes` of each list of ids (``num_threads`` is unused)."""
        validation.positive_int("num_threads", num_threads)
        return [self.decode_bytes(ids) for ids in texts_of_batch("batch", batch)]

    def tokens(self, text: str, **special) -> list[str]:
        """How ``text`` is split: each token's text (a token that cuts a character shows U+FFFD).

        ``special`` (``allowed_special``, ``disallowed_special``) is passed on to :meth:`encode`.
        """
        ids = self.encode(text, **special)
        return [piece.decode("utf-8", errors="replace") for piece in self.token_bytes(ids)]


def byte_corpus(text: str, pattern: str = CL100K_PATTERN) -> dict[tuple[bytes, ...], int]:
    """The corpus C for byte-level BPE: {chunk as a tuple of single bytes: count}."""
    chunks = Counter(pre_tokenize(text, pattern))
    if not chunks:
        raise ValueError("the text is empty: BPE needs a non-empty corpus")
    return {
        tuple(map(SINGLE_BYTES.__getitem__, chunk.encode("utf-8"))): count
        for chunk, count in chunks.items()
    }


def train_byte_bpe(text: str, k: int, pattern: str = CL100K_PATTERN) -> BytePairTokenizer:
    """Learn k merges on the bytes of ``text`` (cut into chunks by ``pattern``).

    The learner is :func:`course_utils.tokens.bpe.learn_bpe` (tie-break: the pair that occurs
    first). Ids 0-255 are the bytes, 256 + i the token of merge i + 1. A merge that makes a
    token already in V (the same bytes by another pair) adds no new id.
    """
    bpe = learn_bpe(byte_corpus(text, pattern), k)
    ranks = {token: i for i, token in enumerate(SINGLE_BYTES)}
    for t_left, t_right in bpe.merges:
        ranks.setdefault(t_left + t_right, len(ranks))
    return BytePairTokenizer(ranks, pattern)

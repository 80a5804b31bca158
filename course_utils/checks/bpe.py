"""Diagnostic checks for the BPE notebook's test cells.

Each check computes the expected answer with the reference in :mod:`course_utils.tokens.bpe` (or
takes tiktoken's, for GPT-4's tokenizer) and, when the student's answer differs, recomputes
the answers of the usual mistakes (pairs counted across word boundaries, only the first
occurrence merged, ties broken another way, greedy longest match instead of the merges in
order, the leftmost mergeable pair instead of the lowest rank, special tokens not cut out,
no pre-tokenizer, ids from another table) to name the one that was made.
"""

from collections import Counter

import regex

from course_utils.tokens import bpe, byte_merges, cl100k, pre_tokenizer

from .guards import checked_plainly

__all__ = [
    "check_pair_counts",
    "check_merged_corpus",
    "check_bpe_vocabulary",
    "check_segmentation",
    "check_chunk_tokens",
    "check_encoding",
    "check_merge_chunk",
    "check_encode",
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


@checked_plainly
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


@checked_plainly
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


def _vocabulary_with_ties(corpus: dict, k: int, pick) -> list:
    """V when ``pick`` chooses among the equally frequent pairs (listed by first occurrence)."""
    vocabulary = sorted({token for word in corpus for token in word})
    for _ in range(k):
        pairs = bpe.count_pairs(corpus)
        if not pairs:
            break
        best = max(pairs.values())
        t_left, t_right = pick([p for p, c in pairs.items() if c == best])
        vocabulary.append(t_left + t_right)
        corpus = bpe.merge_pair(corpus, (t_left, t_right))
    return vocabulary


@checked_plainly
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
    if actual == _vocabulary_with_ties(corpus, k, min):
        _fail(
            name,
            "among equally frequent pairs take the one that occurs FIRST in C, not the "
            "alphabetically smallest: look at how your code chooses among tied pairs, and "
            "at the order in which your pair counts list them (section 2's tie-break rule)",
        )
    if actual == _vocabulary_with_ties(corpus, k, lambda tied: tied[-1]):
        _fail(
            name,
            "among equally frequent pairs you took the LAST one (a `>=` in the comparison?); "
            "the rule is the pair that occurs first in C",
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


@checked_plainly
def check_segmentation(actual, word: str, merges: list, name: str = "segment_word") -> None:
    """Fail unless ``actual`` is ``word`` + ``_`` segmented by the merges in the order learned."""
    _require(actual, (list, tuple), name, "a list of tokens")
    actual = list(actual)
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


@checked_plainly
def check_chunk_tokens(actual, piece: bytes, ranks: dict, expected, name="merge_chunk") -> None:
    """Fail unless ``actual`` (a list of bytes) equals ``expected``, the tokens of ``piece``."""
    _require(actual, (list, tuple), name, "a list of tokens (bytes)")
    actual = list(actual)
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


@checked_plainly
def check_merge_chunk(actual, piece: bytes, ranks, name="merge_chunk") -> None:
    """Fail unless ``actual`` is the list of tokens (bytes) of ``piece``: the pair of lowest
    rank merged first, the leftmost of equal ones (exercise 5's ``merge_chunk(piece, ranks)``)."""
    check_chunk_tokens(actual, piece, ranks, byte_merges._byte_pair_merge(piece, ranks), name)


def _model_encode(text: str, ranks, special_tokens, *, merge=None, chunks=None, specials="all"):
    """The ids of ``text`` the way a student might compute them.

    ``merge(piece, ranks)``: the tokens of one chunk (lowest rank first by default);
    ``chunks(part)``: the pre-tokenizer (GPT-4's regex by default); ``specials``: ``"all"``
    cuts every special token out, ``"endoftext"`` only ``<|endoftext|>``, ``"ordinary"``
    reads them as text, ``"drop"`` cuts them out without an id.
    """
    merge = merge or byte_merges._byte_pair_merge
    chunks = chunks or (lambda part: regex.findall(pre_tokenizer.CL100K_PATTERN, part))
    cut = {"ordinary": [], "endoftext": ["<|endoftext|>"]}.get(specials, list(special_tokens))
    cut = [s for s in cut if s in special_tokens]
    parts = regex.split("(" + "|".join(map(regex.escape, cut)) + ")", text) if cut else [text]
    ids = []
    for n, part in enumerate(parts):
        if n % 2:
            ids += [] if specials == "drop" else [special_tokens[part]]
        else:
            for chunk in chunks(part):
                ids += [ranks[token] for token in merge(chunk.encode("utf-8"), ranks)]
    return ids


@checked_plainly
def check_encoding(actual, text: str, ranks, special_tokens, expected, name="encode") -> None:
    """Fail unless ``actual`` equals ``expected``, tiktoken's ids of ``text`` with every
    special token allowed (``encode(text, allowed_special="all")``)."""
    _require(actual, (list, tuple), name, "a list of ids (ints)")
    actual, expected = list(actual), list(expected)
    if actual == expected:
        return
    if actual and all(isinstance(i, (bytes, str)) for i in actual):
        _fail(name, "return the ids (ints, ranks[token]), not the tokens themselves")
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in actual):
        _fail(name, f"every id must be an int; got {[type(i).__name__ for i in actual][:4]}")
    has_special = any(s in text for s in special_tokens)
    if has_special and actual == _model_encode(text, ranks, special_tokens, specials="ordinary"):
        _fail(
            name,
            "the special tokens were read as ordinary text: cut every key of special_tokens "
            "(such as '<|endoftext|>') out of the text FIRST and give it its own id",
        )
    if has_special and actual == _model_encode(text, ranks, special_tokens, specials="drop"):
        _fail(name, "the special tokens are missing: each one gets its id, special_tokens[s]")
    if has_special and actual == _model_encode(text, ranks, special_tokens, specials="endoftext"):
        _fail(name, "cut out EVERY special token of special_tokens, not only '<|endoftext|>'")
    whole = _model_encode(text, ranks, special_tokens, chunks=lambda part: [part] if part else [])
    if actual == whole:
        _fail(
            name,
            "merges must stay inside the chunks of the pre-tokenizer: cut each stretch of "
            "text into chunks with GPT-4's pattern (stage 2) and merge every chunk on its own",
        )
    if actual == _model_encode(text, ranks, special_tokens, merge=_leftmost_first):
        _fail(
            name,
            "you merged the leftmost pair that is in the ranks; merge the pair with the LOWEST "
            "rank first (the rank is the order in which the merges were learned)",
        )
    gpt4 = cl100k.cl100k()
    if len(ranks) != len(gpt4.ranks) and actual == _model_encode(
        text, gpt4.ranks, gpt4.special_tokens
    ):
        _fail(
            name,
            "these are GPT-4's ids, but this call passed other ranks: merge with and look up "
            "ids in the ranks and special_tokens given as arguments, not a global table",
        )
    by_id = {i: token for token, i in ranks.items()} | {
        i: s.encode() for s, i in special_tokens.items()
    }
    pieces = [by_id.get(i) for i in actual]
    if None in pieces:
        wrong = actual[pieces.index(None)]
        _fail(name, f"id {wrong} is not in ranks or special_tokens: ids are ranks[token]")
    if b"".join(pieces) != text.encode("utf-8"):
        _fail(
            name,
            "the tokens of your ids do not join back to the text: text went missing or was "
            "added (str.split() drops the spaces; the regex chunks keep every character)",
        )
    # The same bytes cut another way: the first id that differs lies inside both lists.
    at = next(i for i, (a, e) in enumerate(zip(actual, expected, strict=False)) if a != e)
    got, want = f"{actual[at]} ({by_id[actual[at]]!r})", f"{expected[at]} ({by_id[expected[at]]!r})"
    _fail(
        name,
        f"{len(actual)} ids where tiktoken gives {len(expected)}; the first difference is at "
        f"position {at}: expected {want}, got {got}",
    )


def _tiktoken(ranks, special_tokens):
    """tiktoken's encoder of these ranks and special tokens (GPT-4's own, built once)."""
    import tiktoken

    gpt4 = cl100k.cl100k()
    if ranks is gpt4.ranks and dict(special_tokens) == dict(gpt4.special_tokens):
        return cl100k.tiktoken_cl100k()
    return tiktoken.Encoding("checked", pat_str=pre_tokenizer.CL100K_PATTERN,
                             mergeable_ranks=dict(ranks), special_tokens=dict(special_tokens))


@checked_plainly
def check_encode(actual, text: str, ranks, special_tokens, name="encode") -> None:
    """Fail unless ``actual`` is tiktoken's ``encode(text, allowed_special="all")`` with these
    ranks and special tokens (exercise 6's ``encode(text, ranks, special_tokens)``)."""
    expected = _tiktoken(ranks, special_tokens).encode(text, allowed_special="all")
    check_encoding(actual, text, ranks, special_tokens, expected, name)

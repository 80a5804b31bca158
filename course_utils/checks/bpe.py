"""Diagnostic checks for the BPE notebook's test cells.

The expected values come from libraries, from the values a visible test states, or from
properties, never from the exercises' algorithms written again:

* pair counts: the stated counts, and what the counts must add up to, token by token
  (``collections.Counter`` of the tokens that stand before, and after, another token);
* a merge: Hugging Face ``tokenizers``' BPE model given the merge; a counterexample to
  exercise 2's classmate is a (corpus, pair) on which its merge differs from that model
  (``by_text_fails_on``: the verdict the test reports, the same for all);
* the answers worked by hand (exercises 3 and 5a): their form only, the stored answer when
  graded;
* the byte-level learner: ``tiktoken``'s educational learner (``bpe_train``), with the
  same pre-tokenizer and the same tie-break;
* one chunk and the whole encoder: ``tiktoken``'s encoder of the ranks given.

A mistake is named by the same library on other inputs (tiktoken told to read special
tokens as text or with no pre-tokenizer, GPT-4's own ranks) or by a property of the answer.
"""

from collections import Counter

from tokenizers import models

from course_utils.tokens import bpe, cl100k, pre_tokenizer

from .core import counterexample_parts
from .guards import checked_plainly

__all__ = ["by_text_fails_on", "check_abc_by_hand", "check_by_text_fails", "check_encode",
           "check_merge_chunk", "check_merged_corpus", "check_owner_by_hand", "check_pair_counts",
           "check_train_bytes"]

WHOLE = r"[\s\S]+"  # a pre-tokenizer that keeps each stretch of text whole: none at all


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


# -- count_pairs: what the counts add up to -------------------------------------------------


def _sides(words) -> tuple[Counter, Counter]:
    """How often each token stands before another token, and after one, in ``words``
    ((word, count) pairs)."""
    before, after = Counter(), Counter()
    for word, count in words:
        for token in word[:-1]:
            before[token] += count
        for token in word[1:]:
            after[token] += count
    return before, after


def _sides_of_counts(pairs: dict) -> tuple[Counter, Counter]:
    before, after = Counter(), Counter()
    for (t_left, t_right), count in pairs.items():
        before[t_left] += count
        after[t_right] += count
    return before, after


@checked_plainly
def check_pair_counts(actual, corpus: dict, expected=None, name: str = "count_pairs(C)") -> None:
    """Fail unless ``actual`` counts the pairs inside the words of C: the counts the test
    states (``expected``, some pairs), and for each token as many pairs starting (ending)
    with it as it stands before (after) another token inside a word, counted with the word."""
    _require(actual, dict, name, "a dict {(t_L, t_R): count}")
    actual = dict(actual)
    if not all(isinstance(pair, tuple) and len(pair) == 2 for pair in actual):
        _fail(name, "every key must be a pair (t_L, t_R), a tuple of two tokens")
    sides = _sides_of_counts(actual)
    if sides != _sides(corpus.items()):
        stream = [token for word, count in corpus.items() for _ in range(count) for token in word]
        if sides == _sides([(stream, 1)]):
            _fail(name, "you counted pairs across word boundaries")
        if sides == _sides((word, 1) for word in corpus):
            _fail(name, "each word's pairs were counted once, not as often as the word occurs")
        for truth, yours, where, place in zip(_sides(corpus.items()), sides, ("before", "after"),
                                              ("first", "second"), strict=True):
            token = next((t for t in truth | yours if truth[t] != yours[t]), None)
            if token is not None:
                _fail(name, f"{token!r} stands {where} another token {truth[token]} times inside "
                            "the words of C (each word counted as often as it occurs), but your "
                            f"pairs with it {place} add up to {yours[token]}")
    for pair, count in (expected or {}).items():
        if actual.get(pair) != count:
            _fail(name, f"{pair!r} occurs {count} times; got {actual.get(pair)}")


# -- merge_pair: Hugging Face's BPE model ---------------------------------------------------


def _segmented_by_library(word: str, merges: list) -> list:
    """The tokens of ``word`` under Hugging Face's BPE model of ``merges`` (strings)."""
    vocabulary = {symbol: i for i, symbol in enumerate(dict.fromkeys(word))}
    for t_left, t_right in merges:
        for token in (t_left, t_right, t_left + t_right):
            vocabulary.setdefault(token, len(vocabulary))
    model = models.BPE(vocab=vocabulary, merges=[tuple(pair) for pair in merges])
    return [piece.value for piece in model.tokenize(word)]


def _merged_by_library(corpus: dict, pair: tuple) -> dict:
    """C after the merge of ``pair``, each word's tokens merged by Hugging Face's BPE model.

    The model reads a word as characters: each distinct token stands in as a character of
    Unicode's private use area, and the merged ones are read back as t_L + t_R."""
    stand_in = {}
    for token in (*pair, *(token for word in corpus for token in word)):
        stand_in.setdefault(token, chr(0xE000 + len(stand_in)))
    back = {character: token for token, character in stand_in.items()}
    t_left, t_right = pair
    back[stand_in[t_left] + stand_in[t_right]] = t_left + t_right
    merge = [(stand_in[t_left], stand_in[t_right])]
    merged: dict = {}
    for word, count in corpus.items():
        pieces = _segmented_by_library("".join(stand_in[token] for token in word), merge)
        new_word = tuple(back[piece] for piece in pieces)
        merged[new_word] = merged.get(new_word, 0) + count
    return merged


def _merged_by_text(corpus: dict, pair: tuple) -> dict:
    """What exercise 2's classmate returns: each word's tokens joined with spaces, the
    pair's text replaced, split again."""
    merged: dict = {}
    for word, count in corpus.items():
        new_word = tuple(" ".join(word).replace(" ".join(pair), "".join(pair)).split(" "))
        merged[new_word] = merged.get(new_word, 0) + count
    return merged


def by_text_fails_on(counterexample) -> bool:
    """Whether exercise 2's ``merge_pair_by_text`` differs from Hugging Face's BPE model on
    ``counterexample`` = (corpus, pair), a dict {word (tuple of str tokens): count} and two
    tokens, none with a space; fails, naming the problem, on anything else."""
    name = "counterexample"
    corpus, pair = counterexample_parts(counterexample, "write ({word: 1}, (t_L, t_R)) above "
                                        "exercise 2b", "(corpus, pair)")
    well_formed = (isinstance(corpus, dict) and corpus and isinstance(pair, list | tuple)
                   and len(pair) == 2 and all(isinstance(word, tuple) and word for word in corpus))
    tokens = [token for word in corpus for token in word] + list(pair) if well_formed else []
    if not well_formed or not all(isinstance(token, str) and token and " " not in token
                                  for token in tokens):
        raise AssertionError(f"{name}: a dict {{word: count}} and a pair, each word a tuple of "
                             "tokens, every token a str without spaces, e.g. "
                             "({('n', 'e', 'w'): 1}, ('n', 'e'))")
    if not all(isinstance(count, int) and count > 0 for count in corpus.values()):
        raise AssertionError(f"{name}: each word's count is a positive int")
    return _merged_by_text(corpus, tuple(pair)) != _merged_by_library(corpus, tuple(pair))


@checked_plainly
def check_by_text_fails(fails, name: str = "counterexample") -> None:
    """Fail unless ``fails``, ``by_text_fails_on(counterexample)``, is True."""
    if fails is not True:
        raise AssertionError(
            f"{name}: on it merge_pair_by_text returns what a right merge returns; find a word "
            "and a pair where the two differ (the cell after exercise 2b prints both merges)")


@checked_plainly
def check_merged_corpus(actual, corpus: dict, pair: tuple, name: str = "merge_pair") -> None:
    """Fail unless ``actual`` is C with every occurrence of ``pair`` replaced by t_L + t_R, as
    Hugging Face's BPE model merges it."""
    _require(actual, dict, name, "a dict {word (tuple of tokens): count}")
    expected = _merged_by_library(corpus, pair)
    if dict(actual) == expected:
        return
    t_left, t_right = pair
    if any(token == pair or isinstance(token, tuple) for word in actual for token in word):
        _fail(name, f"a token of yours is a tuple; t_NEW is the string {t_left + t_right!r}")
    if any(pair in tuple(zip(word, word[1:], strict=False)) for word in actual):
        _fail(name, f"({t_left!r}, {t_right!r}) still stands side by side in {_show(actual, 2)}")
    known = {t_left + t_right, *(token for word in corpus for token in word)}
    stray = next((token for word in actual for token in word if token not in known), None)
    if stray is not None:
        _fail(name, f"{stray!r} is neither a token of C nor t_L + t_R: tokens other than the "
                    "pair were joined")
    if sum(actual.values()) != sum(corpus.values()):
        _fail(name, f"C holds {sum(corpus.values())} words, counted with their counts; yours "
                    f"{sum(actual.values())}")
    wrong = next((word for word in expected if actual.get(word) != expected[word]), None)
    if wrong is not None:
        _fail(name, f"{wrong!r} should occur {expected[wrong]} times; got {actual.get(wrong)}")
    extra = {word: count for word, count in actual.items() if word not in expected}
    _fail(name, f"should not be there: {_show(extra, 3)}")


# -- exercises 3 and 5a, by hand: their form only -------------------------------------------

_TEXTBOOK_TOKENS = frozenset({"er", "er_", "ne", "new", "lo", "low", "newer_", "low_"})
_TINY_TOKENS = frozenset({bytes([b]) for b in range(256)} | {b"bc", b"ab", b"aa"})  # exercise 5a


def _cut_by_hand(tokens, word, known, kind: type, example: str, name: str) -> None:
    """Fail unless ``tokens`` is a list of ``kind`` that join back to ``word``, each one of
    ``known``: a cut of the word, right or not."""
    if tokens is Ellipsis:
        raise AssertionError(f"{name} is still `...`: write your answer in its cell")
    if not isinstance(tokens, list | tuple) or not all(isinstance(t, kind) for t in tokens):
        raise AssertionError(f"{name}: the tokens are a list of {kind.__name__}, such as "
                             f"{example}")
    if kind().join(tokens) != word:
        raise AssertionError(f"{name}: the tokens must join back to {word!r}; yours give "
                             f"{kind().join(tokens)!r}")
    unknown = [token for token in tokens if token not in known]
    if unknown:
        raise AssertionError(f"{name}: {unknown[0]!r} is no token of the tokenizer you cut with")


@checked_plainly
def check_owner_by_hand(actual, name: str = "owner_by_hand") -> None:
    """Fail unless ``actual`` has the form of exercise 3's answer, (tokens, merge): a cut of
    owner + "_" into tokens of the textbook's merges, and a merge's place in their list, 1 to
    8. Never whether it is right: a check that said so would be an oracle a loop over the few
    possible answers could query; the grader compares the value it reports with the stored
    answer (``grader.scoring.outside``)."""
    if not isinstance(actual, list | tuple) or len(actual) != 2:
        got = "it is still `...`" if actual is Ellipsis else f"got {type(actual).__name__}"
        raise AssertionError(f"{name} must be a pair (tokens, merge): {got}")
    tokens, merge = actual
    word = "owner" + bpe.END_OF_WORD
    _cut_by_hand(tokens, word, _TEXTBOOK_TOKENS | set(word), str, "['x', 'yz_']", name)
    if isinstance(merge, bool) or not isinstance(merge, int) or not 1 <= merge <= 8:
        raise AssertionError(f"{name}: the merge is its place in the list of eight, an int "
                             f"from 1 to 8; got {merge!r}")
    print(f"✓ {name}: a cut of owner and a merge from 1 to 8; whether they are right is "
          "checked when your work is graded")


@checked_plainly
def check_abc_by_hand(actual, name: str = "abc_by_hand") -> None:
    """Fail unless ``actual`` is a cut of b"abc" into tokens of exercise 5's tiny tokenizer
    (a list of bytes). Never whether it is right (as ``check_owner_by_hand``)."""
    _cut_by_hand(actual, b"abc", _TINY_TOKENS, bytes, "[b'x', b'yz']", name)
    print(f"✓ {name}: a cut of b'abc' into tokens of the tiny tokenizer; whether it is right "
          "is checked when your work is graded")


# -- train_bytes: tiktoken's educational learner ------------------------------------------


def _learned_by_library(text: str, k: int, pattern: str) -> dict:
    """tiktoken's educational byte-level learner: the ranks of k merges of ``text``, the
    chunks cut by ``pattern``, ties to the pair counted first."""
    from tiktoken._educational import bpe_train

    return bpe_train(text, 256 + k, pattern, visualise=None)


@checked_plainly
def check_train_bytes(actual, text: str, k: int, name: str = "train_bytes") -> None:
    """Fail unless ``actual`` is the ranks {token bytes: rank} that tiktoken's educational
    learner (``tiktoken._educational.bpe_train``) learns from ``text`` in k merges, with
    GPT-4's pre-tokenizer."""
    _require(actual, dict, name, "a dict {token bytes: rank}")
    actual = dict(actual)
    expected = _learned_by_library(text, k, pre_tokenizer.CL100K_PATTERN)
    if actual == expected:
        return
    if not all(isinstance(token, bytes) for token in actual):
        _fail(name, "every key is a token as bytes (b'er'), not text or a tuple of bytes")
    if any(actual.get(bytes([b])) != b for b in range(256)):
        _fail(name, "the ranks start with the 256 single bytes: bytes([b]) has rank b")
    if len(actual) != 256 + k:
        _fail(name, f"256 single bytes + {k} new tokens = {256 + k} ranks; got {len(actual)}")
    if sorted(actual.values()) != list(range(256 + k)):
        _fail(name, f"the new tokens get the ranks 256 to {255 + k}, one each, in the order "
                    "learned")
    if actual == _learned_by_library(text, k, WHOLE):
        _fail(name, "a merge crossed a chunk boundary of GPT-4's pattern")
    yours = {rank: token for token, rank in actual.items()}
    learned = {rank: token for token, rank in expected.items()}
    rank = next(r for r in range(256, 256 + k) if yours[r] != learned.get(r))
    _fail(name, f"rank {rank} should be {learned.get(rank)!r}; got {yours[rank]!r}: is each "
                "merge the most frequent pair inside the chunks (a chunk counted as often as "
                "it occurs), and among equally frequent pairs the one that occurs FIRST in the "
                "text?")


# -- merge_chunk and encode: tiktoken's encoder ----------------------------------------------


def _encoder(ranks, special_tokens=None, pattern=pre_tokenizer.CL100K_PATTERN):
    """tiktoken's encoder of these ranks (GPT-4's own, built once, where they are its)."""
    import tiktoken

    specials = dict(special_tokens or {})
    if (ranks is cl100k.cl100k_ranks() and pattern == pre_tokenizer.CL100K_PATTERN
            and specials == dict(cl100k.CL100K_SPECIAL_TOKENS)):
        return cl100k.cl100k()
    return tiktoken.Encoding("checked", pat_str=pattern, mergeable_ranks=dict(ranks),
                             special_tokens=specials)


@checked_plainly
def check_merge_chunk(actual, piece: bytes, ranks, name="merge_chunk") -> None:
    """Fail unless ``actual`` is the list of tokens (bytes) of ``piece``, as tiktoken cuts it
    with these ranks."""
    _require(actual, (list, tuple), name, "a list of tokens (bytes)")
    actual = list(actual)
    encoder = _encoder(ranks, pattern=WHOLE)
    expected = encoder.decode_tokens_bytes(encoder.encode_ordinary(piece.decode("utf-8")))
    if actual == expected:
        return
    if actual and all(isinstance(token, int) for token in actual):
        _fail(name, "return the tokens as bytes (e.g. b' ant'), not their ids")
    if not all(isinstance(token, bytes) for token in actual):
        _fail(name, f"every token must be bytes; got {[type(t).__name__ for t in actual][:4]}")
    if b"".join(actual) != piece:
        _fail(name, f"the tokens must join back to the chunk {piece!r}; they give "
                    f"{b''.join(actual)!r}")
    unknown = [token for token in actual if token not in ranks]
    if unknown:
        _fail(name, f"{unknown[0]!r} is not in the ranks: every token is one of them")
    pairs = zip(actual, actual[1:], strict=False)
    if any(t_left + t_right in ranks for t_left, t_right in pairs):
        _fail(name, "two of your neighbouring tokens still make a token of the ranks: your "
                    "loop stopped too early")
    _fail(name, "your pairs were merged in another order than the segmenter of section 5 "
                "would merge them: try your rule by hand on exercise 5's tiny tokenizer and "
                "b'abc'")


@checked_plainly
def check_encode(actual, text: str, ranks, special_tokens, name="encode") -> None:
    """Fail unless ``actual`` is tiktoken's ``encode(text, allowed_special="all")`` with these
    ranks and special tokens (exercise 6's ``encode(text, ranks, special_tokens)``)."""
    _require(actual, (list, tuple), name, "a list of ids (ints)")
    encoder = _encoder(ranks, special_tokens)
    actual, expected = list(actual), encoder.encode(text, allowed_special="all")
    if actual == expected:
        return
    if actual and all(isinstance(i, (bytes, str)) for i in actual):
        _fail(name, "your list holds tokens, not their ids (ints)")
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in actual):
        _fail(name, f"every id must be an int; got {[type(i).__name__ for i in actual][:4]}")
    _name_a_mistake(actual, text, encoder, ranks, special_tokens, name)
    by_id = {i: token for token, i in ranks.items()} | {
        i: s.encode() for s, i in special_tokens.items()
    }
    pieces = [by_id.get(i) for i in actual]
    if None in pieces:
        wrong = actual[pieces.index(None)]
        _fail(name, f"id {wrong} is not in ranks or special_tokens")
    if b"".join(pieces) != text.encode("utf-8"):
        _fail(name, "the tokens of your ids do not join back to the text: text went missing or was "
                    "added")
    # The same bytes cut another way: the first id that differs lies inside both lists.
    at = next(i for i, (a, e) in enumerate(zip(actual, expected, strict=False)) if a != e)
    got, want = f"{actual[at]} ({by_id[actual[at]]!r})", f"{expected[at]} ({by_id[expected[at]]!r})"
    _fail(name, f"{len(actual)} ids where tiktoken gives {len(expected)}; the first difference "
                f"is at position {at}: expected {want}, got {got}")


def _name_a_mistake(actual, text, encoder, ranks, special_tokens, name) -> None:
    """Fail with the mistake's message where tiktoken, asked another way, gives ``actual``."""
    specials = set(special_tokens)
    if any(s in text for s in specials):
        if actual == encoder.encode(text, disallowed_special=()):
            _fail(name, "the special tokens were read as ordinary text")
        ids = set(special_tokens.values())
        if actual == [i for i in encoder.encode(text, allowed_special="all") if i not in ids]:
            _fail(name, "the special tokens are missing from your ids")
        if actual == encoder.encode(text, allowed_special={"<|endoftext|>"} & specials,
                                    disallowed_special=()):
            _fail(name, "'<|endoftext|>' was read as a special token, the others of "
                        "special_tokens as ordinary text")
    whole = _encoder(ranks, special_tokens, pattern=WHOLE)
    if actual == whole.encode(text, allowed_special="all"):
        _fail(name, "a merge crossed a chunk boundary of GPT-4's pattern")
    gpt4_ranks = cl100k.cl100k_ranks()
    if len(ranks) != len(gpt4_ranks) and actual == cl100k.cl100k().encode(
        text, allowed_special="all"
    ):
        _fail(name, "these are GPT-4's ids, but this call passed other ranks")

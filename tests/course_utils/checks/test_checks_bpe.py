"""Every diagnostic of course_utils.checks.bpe: the modelled mistake triggers its message,
a right answer (in any form the exercises allow) triggers none."""

from collections import Counter

import pytest
import regex

from course_utils import checks
from course_utils.tokens import bpe, cl100k, pre_tokenizer
from tests.course_utils.checks import cell

C = bpe.corpus_from_text("low " * 5 + "lowest " * 2 + "newer " * 6 + "wider " * 3 + "new " * 2)
BANANA = {("b", "a", "n", "a", "n", "a", "_"): 2, ("a", "a", "a", "a", "a", "_"): 1,
          ("c", "a", "n", "_"): 3, ("a", "n", "a", "_"): 1}  # fmt: skip
MERGES = bpe.learn_bpe_naive(C, 8).merges
TINY = {bytes([b]): b for b in range(256)} | {b"bc": 256, b"ab": 257, b"aa": 258, b" a": 259}
TINY_SPECIALS = {"<|end|>": 300, "<|sep|>": 301}


def fails(match: str):
    return pytest.raises(AssertionError, match=match)


@pytest.fixture(scope="module")
def gpt4():
    return cl100k.cl100k()


@pytest.fixture(scope="module")
def reference():
    return cl100k.tiktoken_cl100k()


# -- count_pairs ----------------------------------------------------------------------------


def test_right_pair_counts_pass_in_any_order_and_as_a_counter():
    right = bpe.count_pairs(C)
    checks.check_pair_counts(right, C)
    checks.check_pair_counts(dict(sorted(right.items(), key=lambda kv: -kv[1])), C)
    counter = Counter()
    for word, count in C.items():
        counter.update({pair: count for pair in zip(word, word[1:], strict=False)})
    checks.check_pair_counts(counter, C)


def test_pair_count_mistakes_are_named():
    with fails("is None: did you forget to return it"):
        checks.check_pair_counts(None, C)
    with fails(r"must be a dict \{\(t_L, t_R\): count\}; got list"):
        checks.check_pair_counts(list(bpe.count_pairs(C).items()), C)
    stream = [token for word, count in C.items() for _ in range(count) for token in word]
    with fails("across word boundaries"):
        checks.check_pair_counts(dict(Counter(zip(stream, stream[1:], strict=False))), C)
    once = Counter(pair for word in C for pair in zip(word, word[1:], strict=False))
    with fails("occurs n times contributes each of its pairs n times"):
        checks.check_pair_counts(dict(once), C)
    off = bpe.count_pairs(C) | {("e", "r"): 8}
    with fails(r"wrong or missing: \('e', 'r'\): 8 \(expected 9\)"):
        checks.check_pair_counts(off, C)
    with fails(r"should not be there: \{\('r', 'x'\): 1\}"):
        checks.check_pair_counts(bpe.count_pairs(C) | {("r", "x"): 1}, C)


# -- merge_pair -----------------------------------------------------------------------------


def test_right_merge_passes_in_any_word_order():
    right = bpe.merge_pair(BANANA, ("a", "n"))
    checks.check_merged_corpus(right, BANANA, ("a", "n"))
    checks.check_merged_corpus(dict(reversed(right.items())), BANANA, ("a", "n"))


def test_merge_mistakes_are_named():
    with fails("is None"):
        checks.check_merged_corpus(None, BANANA, ("a", "n"))
    with fails("must be a dict"):
        checks.check_merged_corpus([], BANANA, ("a", "n"))
    first_only = {("b", "an", "a", "n", "a", "_"): 2, ("a", "a", "a", "a", "a", "_"): 1,
                  ("c", "an", "_"): 3, ("an", "a", "_"): 1}  # fmt: skip
    with fails(r"\('a', 'n'\) still occurs .* replace EVERY occurrence"):
        checks.check_merged_corpus(first_only, BANANA, ("a", "n"))
    as_tuples = {
        tuple(("a", "n") if t == "an" else t for t in word): n
        for word, n in bpe.merge_pair(BANANA, ("a", "n")).items()
    }
    with fails("the new token is the string t_L \\+ t_R = 'an', not a tuple"):
        checks.check_merged_corpus(as_tuples, BANANA, ("a", "n"))
    lost_count = bpe.merge_pair(BANANA, ("a", "n")) | {("c", "an", "_"): 1}
    with fails(r"wrong or missing: \('c', 'an', '_'\): 1 \(expected 3\)"):
        checks.check_merged_corpus(lost_count, BANANA, ("a", "n"))


# -- learn_vocabulary -----------------------------------------------------------------------


def vocabulary(corpus, k, pick):
    """V with a given rule among the equally frequent pairs (pairs by first occurrence)."""
    v = sorted({token for word in corpus for token in word})
    for _ in range(k):
        pairs = bpe.count_pairs(corpus)
        best = max(pairs.values())
        pair = pick([p for p, c in pairs.items() if c == best])
        v.append(pair[0] + pair[1])
        corpus = bpe.merge_pair(corpus, pair)
    return v


def test_right_vocabulary_passes():
    checks.check_bpe_vocabulary(bpe.learn_bpe(BANANA, 6).vocabulary, BANANA, 6)
    checks.check_bpe_vocabulary(vocabulary(C, 8, lambda tied: tied[0]), C, 8)


def test_vocabulary_mistakes_are_named():
    learned = bpe.learn_bpe_naive(BANANA, 6)
    with fails("is None"):
        checks.check_bpe_vocabulary(None, BANANA, 6)
    with fails("must be a list"):
        checks.check_bpe_vocabulary(tuple(learned.vocabulary), BANANA, 6)
    with fails(r"return V \(the tokens t_NEW\), not the merged pairs"):
        checks.check_bpe_vocabulary(learned.merges, BANANA, 6)
    with fails("V starts with all unique characters of C"):
        checks.check_bpe_vocabulary(learned.vocabulary[5:], BANANA, 6)
    with fails("V should have 11 tokens; got 10"):
        checks.check_bpe_vocabulary(learned.vocabulary[:-1], BANANA, 6)
    unsorted = ["n", "a", "b", "c", "_"] + learned.vocabulary[5:]
    with fails("unique characters in sorted order"):
        checks.check_bpe_vocabulary(unsorted, BANANA, 6)
    alphabetical = vocabulary(BANANA, 6, min)
    assert alphabetical != learned.vocabulary
    with fails("occurs FIRST in C, not the alphabetically smallest"):
        checks.check_bpe_vocabulary(alphabetical, BANANA, 6)
    last = vocabulary(BANANA, 6, lambda tied: tied[-1])
    assert last not in (alphabetical, learned.vocabulary)
    with fails("you took the LAST one"):
        checks.check_bpe_vocabulary(last, BANANA, 6)
    other = learned.vocabulary[:-1] + ["zz"]
    with fails(r"V\[10\] should be 'can_'; got 'zz'"):
        checks.check_bpe_vocabulary(other, BANANA, 6)


# -- segment_word ---------------------------------------------------------------------------


def test_right_segmentation_passes_as_list_or_tuple():
    checks.check_segmentation(["o", "w", "n", "er_"], "owner", MERGES)
    checks.check_segmentation(("o", "w", "n", "er_"), "owner", MERGES)


def test_segmentation_mistakes_are_named():
    with fails("is None"):
        checks.check_segmentation(None, "owner", MERGES)
    with fails("must be a list of tokens"):
        checks.check_segmentation("o w n er_", "owner", MERGES)
    with fails("add the end-of-word token '_' before merging"):
        checks.check_segmentation(["low", "er"], "lower", MERGES)
    with fails("longest known token from the left"):
        checks.check_segmentation(["o", "w", "ne", "r", "_"], "owner", MERGES)
    with fails("must join back to 'owner_'"):
        checks.check_segmentation(["o", "w", "er_"], "owner", MERGES)
    with fails(r"expected \['o', 'w', 'n', 'er_'\]; got \['ow', 'n', 'er_'\]"):
        checks.check_segmentation(["ow", "n", "er_"], "owner", MERGES)


# -- merge_chunk ----------------------------------------------------------------------------


def test_right_chunk_tokens_pass_as_list_or_tuple():
    checks.check_chunk_tokens([b"a", b"bc"], b"abc", TINY, [b"a", b"bc"])
    checks.check_chunk_tokens((b"aa", b"a"), b"aaa", TINY, [b"aa", b"a"])


def test_chunk_mistakes_are_named():
    with fails("is None"):
        checks.check_chunk_tokens(None, b"abc", TINY, [b"a", b"bc"])
    with fails("must be a list of tokens"):
        checks.check_chunk_tokens(b"abc", b"abc", TINY, [b"a", b"bc"])
    with fails("return the tokens as bytes .* not their ids"):
        checks.check_chunk_tokens([97, 256], b"abc", TINY, [b"a", b"bc"])
    with fails("every token must be bytes; got \\['str', 'str'\\]"):
        checks.check_chunk_tokens(["a", "bc"], b"abc", TINY, [b"a", b"bc"])
    with fails("must join back to the chunk b'abc'"):
        checks.check_chunk_tokens([b"a", b"b"], b"abc", TINY, [b"a", b"bc"])
    with fails("leftmost pair that is in the ranks; merge the pair with the LOWEST rank"):
        checks.check_chunk_tokens([b"ab", b"c"], b"abc", TINY, [b"a", b"bc"])
    with fails(r"expected \[b'a', b'bc'\]; got \[b'a', b'b', b'c'\]"):
        checks.check_chunk_tokens([b"a", b"b", b"c"], b"abc", TINY, [b"a", b"bc"])


def test_merge_chunk_is_checked_on_its_own_inputs(gpt4, reference):
    word = " antidisestablishmentarianism"
    right = reference.decode_tokens_bytes(reference.encode_ordinary(word))  # tiktoken's
    checks.check_merge_chunk(right, word.encode(), gpt4.ranks)
    checks.check_merge_chunk([b"aa", b"aa", b"a"], b"aaaaa", TINY)
    with fails("leftmost pair that is in the ranks; merge the pair with the LOWEST rank"):
        checks.check_merge_chunk([b"ab", b"c"], b"abc", TINY)
    with fails(r"expected \[b'aa', b'a'\]; got \[b'a', b'aa'\]"):
        checks.check_merge_chunk([b"a", b"aa"], b"aaa", TINY)


# -- encode (the build exercise) ------------------------------------------------------------

TEXT = "The cat's 12345 naïve ideas 🤖<|endoftext|>def f(x):\n    return x<|fim_prefix|>\n"


def student_encode(text, ranks, special_tokens, merge=None, chunks=None, specials="all"):
    """A student's encode with one choice changed (the default is right)."""
    return checks.bpe._model_encode(
        text, ranks, special_tokens, merge=merge, chunks=chunks, specials=specials
    )


def test_right_encoding_passes(gpt4, reference):
    for text in (TEXT, "", "plain", "<|endoftext|>"):
        expected = reference.encode(text, allowed_special="all")
        ids = student_encode(text, gpt4.ranks, gpt4.special_tokens)
        checks.check_encoding(ids, text, gpt4.ranks, gpt4.special_tokens, expected)
        checks.check_encoding(tuple(ids), text, gpt4.ranks, gpt4.special_tokens, expected)


def test_encoding_mistakes_are_named(gpt4, reference):
    ranks, specials = gpt4.ranks, gpt4.special_tokens
    expected = reference.encode(TEXT, allowed_special="all")

    def check(ids, text=TEXT, want=expected):
        checks.check_encoding(ids, text, ranks, specials, want, "encode(text)")

    with fails("encode\\(text\\) is None"):
        check(None)
    with fails("must be a list of ids"):
        check({1: 2})
    with fails(r"return the ids \(ints, ranks\[token\]\), not the tokens"):
        check(reference.decode_tokens_bytes(expected))
    with fails("every id must be an int; got \\['int', 'float'"):
        check([1, 2.0])
    with fails("special tokens were read as ordinary text: cut every key"):
        check(student_encode(TEXT, ranks, specials, specials="ordinary"))
    with fails("the special tokens are missing: each one gets its id"):
        check(student_encode(TEXT, ranks, specials, specials="drop"))
    with fails("EVERY special token of special_tokens, not only '<\\|endoftext\\|>'"):
        check(student_encode(TEXT, ranks, specials, specials="endoftext"))
    with fails("merges must stay inside the chunks of the pre-tokenizer"):
        check(student_encode(TEXT, ranks, specials, chunks=lambda part: [part] if part else []))
    word = " antidisestablishmentarianism"
    leftmost = student_encode(word, ranks, specials, merge=checks.bpe._leftmost_first)
    with fails("merged the leftmost pair that is in the ranks"):
        check(leftmost, word, reference.encode(word))
    with fails("id 100261 is not in ranks or special_tokens"):
        check(expected[:-1] + [100261])
    by_words = [i for w in TEXT.split() for i in student_encode(w, ranks, {}, specials="ordinary")]
    with fails("do not join back to the text.*str.split\\(\\) drops the spaces"):
        check(by_words)
    cut_cat = [expected[0], *reference.encode(" c"), *reference.encode("at"), *expected[2:]]
    with fails(r"position 1: expected 8415 \(b' cat'\), got 272 \(b' c'\)"):
        check(cut_cat)


def test_ids_from_gpt4_table_for_other_ranks_are_named(gpt4):
    text = "abc aa<|end|>"
    expected = student_encode(text, TINY, TINY_SPECIALS)
    checks.check_encoding(expected, text, TINY, TINY_SPECIALS, expected)
    global_table = [i for chunk in regex.findall(pre_tokenizer.CL100K_PATTERN, text)
                    for i in gpt4.encode(chunk, disallowed_special=())]  # fmt: skip
    assert global_table != expected
    with fails("these are GPT-4's ids, but this call passed other ranks"):
        checks.check_encoding(global_table, text, TINY, TINY_SPECIALS, expected)


def test_encode_is_checked_against_tiktoken_on_its_own_inputs(gpt4, reference):
    checks.check_encode(reference.encode(TEXT, allowed_special="all"), TEXT, gpt4.ranks,
                        gpt4.special_tokens)
    text = "abc aa<|end|> ab<|sep|>"
    checks.check_encode([97, 256, 32, 258, 300, 32, 257, 301], text, TINY, TINY_SPECIALS)  # by hand
    ordinary = student_encode(text, TINY, TINY_SPECIALS, specials="ordinary")
    with fails("special tokens were read as ordinary text"):
        checks.check_encode(ordinary, text, TINY, TINY_SPECIALS, name="encode(text)")


# -- the tokenizer's other doors are refused during exercises 5 and 6 -----------------------


def test_every_encoding_method_of_the_tokenizer_is_refused_in_merge_chunk_and_encode(gpt4):
    """tiktoken's names (encode_batch, encode_ordinary_batch, encode_single_token) and the
    fast merge answer the exercises as well as encode does: all are refused, then back."""
    from course_utils.tokens.byte_merges import _byte_pair_merge_fast

    @cell
    def merge_chunk(piece, ranks):
        return gpt4.decode_tokens_bytes(gpt4.encode_ordinary_batch([piece.decode()])[0])

    @cell
    def fast_merge_chunk(piece, ranks):
        return _byte_pair_merge_fast(piece, ranks)

    @cell
    def single_merge_chunk(piece, ranks):
        return [bytes([gpt4.encode_single_token(piece)])]

    for answer in (merge_chunk, fast_merge_chunk, single_merge_chunk):
        with pytest.raises(checks.LibraryTwinError, match="merge_chunk called .*byte_(bpe|merges)"):
            checks.own_work(answer, "merge_chunk")(b" hello", gpt4.ranks)

    @cell
    def encode(text, ranks, special_tokens):
        return gpt4.encode_batch([text], allowed_special="all")[0]

    @cell
    def fast_encode(text, ranks, special_tokens):
        return [ranks[t] for t in _byte_pair_merge_fast(text.encode(), ranks)]

    for answer in (encode, fast_encode):
        with pytest.raises(checks.LibraryTwinError,
                           match="encode called course_utils.tokens.byte_(bpe|merges)"):
            checks.own_work(answer, "encode")("hello", gpt4.ranks, gpt4.special_tokens)
    assert gpt4.encode_batch(["hello world"]) == [[15339, 1917]]  # back afterwards
    assert gpt4.encode_single_token(" hello") == 24748
    assert _byte_pair_merge_fast(b" hello", gpt4.ranks) == [b" hello"]


def test_the_tokenizer_s_reading_methods_stay_open_during_the_exercises(gpt4):
    """Reading the vocabulary answers nothing: ranks, special tokens, decoding stay open."""

    @cell
    def encode(text, ranks, special_tokens):
        assert gpt4.decode([15339]) == "hello" and gpt4.n_vocab == 100_277
        return [gpt4.ranks[b"hello"]] if text == "hello" else []

    assert checks.own_work(encode, "encode")("hello", gpt4.ranks, gpt4.special_tokens) == [15339]

"""Every diagnostic of course_utils.checks.bpe: the modelled mistake triggers its message,
a right answer (in any form the exercises allow) triggers none. The right answers and the
mistakes are written here, independently of the checks' oracles (Hugging Face's BPE model,
tiktoken, stated values, properties)."""

import re
from collections import Counter

import pytest
import regex
import tiktoken

from course_utils import checks
from course_utils.tokens import bpe, cl100k, pre_tokenizer
from tests.course_utils.checks import cell

C = bpe.corpus_from_text("low " * 5 + "lowest " * 2 + "newer " * 6 + "wider " * 3 + "new " * 2)
BANANA = {("b", "a", "n", "a", "n", "a", "_"): 2, ("a", "a", "a", "a", "a", "_"): 1,
          ("c", "a", "n", "_"): 3, ("a", "n", "a", "_"): 1}  # fmt: skip
TINY = {bytes([b]): b for b in range(256)} | {b"bc": 256, b"ab": 257, b"aa": 258, b" a": 259}
TINY_SPECIALS = {"<|end|>": 300, "<|sep|>": 301}


def fails(match: str):
    return pytest.raises(AssertionError, match=match)


def pairs_of(corpus):
    counts = Counter()
    for word, count in corpus.items():
        counts.update({pair: 0 for pair in zip(word, word[1:], strict=False)})
        for pair in zip(word, word[1:], strict=False):
            counts[pair] += count
    return dict(counts)


def merged(corpus, pair):
    """The corpus merged on ``pair``, word by word, through a string with the tokens apart."""
    out = {}
    for word, count in corpus.items():
        tokens, i = [], 0
        while i < len(word):
            if tuple(word[i : i + 2]) == tuple(pair):
                tokens.append(pair[0] + pair[1])
                i += 2
            else:
                tokens.append(word[i])
                i += 1
        out[tuple(tokens)] = out.get(tuple(tokens), 0) + count
    return out


@pytest.fixture(scope="module")
def gpt4():
    return cl100k.cl100k()


# -- count_pairs ----------------------------------------------------------------------------


def test_right_pair_counts_pass_in_any_order_and_as_a_counter():
    right = pairs_of(C)
    assert right[("e", "r")] == 9 and right[("w", "_")] == 7  # by hand
    checks.check_pair_counts(right, C, {("e", "r"): 9, ("w", "_"): 7})
    checks.check_pair_counts(dict(sorted(right.items(), key=lambda kv: -kv[1])), C)
    checks.check_pair_counts(Counter(right), C)
    for corpus in (BANANA, {(b"a", b"b", b"a", b"b"): 2, (b"ab", b"c"): 1},
                   {("_",): 5, ("a", "_"): 1}):
        checks.check_pair_counts(pairs_of(corpus), corpus)


def test_pair_count_mistakes_are_named():
    with fails("is None: did you forget to return it"):
        checks.check_pair_counts(None, C)
    with fails(r"must be a dict \{\(t_L, t_R\): count\}; got list"):
        checks.check_pair_counts(list(pairs_of(C).items()), C)
    with fails("every key must be a pair"):
        checks.check_pair_counts({("e", "r", "_"): 9}, C)
    stream = [token for word, count in C.items() for _ in range(count) for token in word]
    with fails("across word boundaries"):
        checks.check_pair_counts(dict(Counter(zip(stream, stream[1:], strict=False))), C)
    once = Counter(pair for word in C for pair in zip(word, word[1:], strict=False))
    with fails("each word's pairs were counted once, not as often as the word occurs"):
        checks.check_pair_counts(dict(once), C)
    with fails(r"'e' stands before another token 19 times .* add up to 18"):
        checks.check_pair_counts(pairs_of(C) | {("e", "r"): 8}, C)
    with fails(r"'r' stands before another token 9 times .* add up to 10"):
        checks.check_pair_counts(pairs_of(C) | {("r", "x"): 1}, C)
    swapped = pairs_of(C) | {("e", "r"): 8, ("e", "w"): 9, ("o", "w"): 6, ("o", "r"): 1}
    with fails(r"\('e', 'r'\) occurs 9 times; got 8"):  # every side right, a stated count not
        checks.check_pair_counts(swapped, C, {("e", "r"): 9})
    with fails(r"'r' stands after another token 9 times .* with it second add up to 8"):
        checks.check_pair_counts(pairs_of(C) | {("e", "r"): 8, ("e", "x"): 1}, C)


# -- merge_pair -----------------------------------------------------------------------------


def test_right_merge_passes_in_any_word_order():
    for corpus, pair in [(BANANA, ("a", "n")), (BANANA, ("a", "a")), (C, ("e", "r")),
                         ({("n", "e", "w", "er_"): 6, ("l", "o", "w", "er_"): 1}, ("w", "er_")),
                         ({(b"a", b"b", b"a", b"b"): 2}, (b"a", b"b"))]:
        right = merged(corpus, pair)
        checks.check_merged_corpus(right, corpus, pair)
        checks.check_merged_corpus(dict(reversed(right.items())), corpus, pair)
    assert merged(BANANA, ("a", "a"))[("aa", "aa", "a", "_")] == 1  # by hand: the left one wins


def test_merge_mistakes_are_named():
    with fails("is None"):
        checks.check_merged_corpus(None, BANANA, ("a", "n"))
    with fails("must be a dict"):
        checks.check_merged_corpus([], BANANA, ("a", "n"))
    first_only = {("b", "an", "a", "n", "a", "_"): 2, ("a", "a", "a", "a", "a", "_"): 1,
                  ("c", "an", "_"): 3, ("an", "a", "_"): 1}  # fmt: skip
    with fails(r"\('a', 'n'\) still stands side by side in"):
        checks.check_merged_corpus(first_only, BANANA, ("a", "n"))
    as_tuples = {tuple(("a", "n") if t == "an" else t for t in word): n
                 for word, n in merged(BANANA, ("a", "n")).items()}
    with fails("a token of yours is a tuple; t_NEW is the string 'an'"):
        checks.check_merged_corpus(as_tuples, BANANA, ("a", "n"))
    by_text = {("lower_",): 1}  # exercise 2's classmate: the text "w er_" inside "low er_"
    with fails("'lower_' is neither a token of C nor t_L \\+ t_R: tokens other than the pair"):
        checks.check_merged_corpus(by_text, {("low", "er_"): 1}, ("w", "er_"))
    lost_count = merged(BANANA, ("a", "n")) | {("c", "an", "_"): 1}
    with fails("C holds 7 words, counted with their counts; yours 5"):
        checks.check_merged_corpus(lost_count, BANANA, ("a", "n"))
    right_to_left = merged(BANANA, ("a", "a")) | {("aa", "aa", "a", "_"): 0}
    right_to_left = {w: n for w, n in right_to_left.items() if n} | {("a", "aa", "aa", "_"): 1}
    with fails(r"\('aa', 'aa', 'a', '_'\) should occur 1 times; got None"):
        checks.check_merged_corpus(right_to_left, BANANA, ("a", "a"))


# -- train_bytes ----------------------------------------------------------------------------

TEXTBOOK_TEXT = "low " * 5 + "lowest " * 2 + "newer " * 6 + "wider " * 3 + "new " * 2
# The eight byte-level merges of the textbook's words, worked by hand: GPT-4's pattern keeps
# the space with the word, so after "er" (9: newer 6, wider 3) comes " n" (8: newer 6, new 2).
TEXTBOOK_BYTE_MERGES = [b"er", b" n", b" ne", b" new", b"lo", b"low", b" low", b" newer"]


def byte_ranks(merges):
    return {bytes([b]): b for b in range(256)} | {t: 256 + i for i, t in enumerate(merges)}


@pytest.mark.parametrize("counterexample", [
    ({("low", "er_"): 1}, ("w", "er_")),                     # the pair's text inside "low er_"
    ({("n", "e", "w"): 2, ("ab", "c", "_"): 1}, ["b", "c"]),  # one word of two, a list for the pair
])
def test_a_counterexample_to_the_merge_by_text_passes(counterexample):
    assert checks.by_text_fails_on(counterexample) is True
    checks.check_by_text_fails(checks.by_text_fails_on(counterexample))


@pytest.mark.parametrize("counterexample, words", [
    (({("b", "a", "n", "a", "n", "a", "_"): 1}, ("a", "n")), "what a right merge returns"),
    (({("a", "a", "a"): 1}, ("a", "a")), "what a right merge returns"),
    (..., "still `...`"),
    ([1, 2, 3], "a pair (corpus, pair)"),
    (({"new": 1}, ("n", "e")), "each word a tuple of tokens"),
    (({("a", "b c"): 1}, ("a", "b")), "without spaces"),
    (({("a", "b"): 0}, ("a", "b")), "positive int"),
])
def test_no_counterexample_or_a_malformed_one_is_named(counterexample, words):
    with pytest.raises(AssertionError, match=re.escape(words)):
        checks.check_by_text_fails(checks.by_text_fails_on(counterexample))


def test_right_byte_ranks_pass():
    checks.check_train_bytes(byte_ranks(TEXTBOOK_BYTE_MERGES), TEXTBOOK_TEXT, 8)
    checks.check_train_bytes(byte_ranks([]), "abc", 0)


def test_byte_ranks_mistakes_are_named():
    right = byte_ranks(TEXTBOOK_BYTE_MERGES)
    with fails("is None"):
        checks.check_train_bytes(None, TEXTBOOK_TEXT, 8)
    with fails("must be a dict"):
        checks.check_train_bytes(list(right), TEXTBOOK_TEXT, 8)
    with fails("every key is a token as bytes"):
        checks.check_train_bytes({t.decode("latin-1"): r for t, r in right.items()},
                                 TEXTBOOK_TEXT, 8)
    with fails(r"bytes\(\[b\]\) has rank b"):
        checks.check_train_bytes({t: r for t, r in right.items() if r != 7}, TEXTBOOK_TEXT, 8)
    with fails(r"256 single bytes \+ 8 new tokens = 264 ranks; got 263"):
        checks.check_train_bytes(byte_ranks(TEXTBOOK_BYTE_MERGES[:-1]), TEXTBOOK_TEXT, 8)
    with fails("the ranks 256 to 263, one each"):
        checks.check_train_bytes(right | {b" newer": 300}, TEXTBOOK_TEXT, 8)
    # the text as one chunk: the space ends a word ("er ") where GPT-4's pattern starts one
    across = byte_ranks([b"er", b"er ", b"ne", b"new", b"lo", b"low", b" low", b"newer "])
    with fails("crossed a chunk boundary"):
        checks.check_train_bytes(across, TEXTBOOK_TEXT, 8)
    swapped = byte_ranks([b" n", b"er", *TEXTBOOK_BYTE_MERGES[2:]])
    with fails(r"rank 256 should be b'er'; got b' n'.*occurs FIRST in the text"):
        checks.check_train_bytes(swapped, TEXTBOOK_TEXT, 8)


# -- exercises 3 and 5a, by hand: their form only -----------------------------------------


@pytest.mark.parametrize("answer", [
    (["o", "w", "n", "er_"], 1),  # the merges in order, worked by hand
    [("o", "w", "ne", "r", "_"), 3],  # a wrong answer of the right form passes too
    (list("owner_"), 8),
])
def test_any_cut_of_owner_and_a_merge_pass_never_saying_whether_right(answer, capsys):
    checks.check_owner_by_hand(answer, name="owner_by_hand")
    assert "checked when your work is graded" in capsys.readouterr().out


@pytest.mark.parametrize("answer, words", [
    (..., "still `...`"),
    (["o", "w", "n", "er_"], "a pair (tokens, merge): got list"),
    ("o w n er_", "a pair (tokens, merge): got str"),
    (("o w n er_", 1), "a list of str"),
    ((["o", "w", "er_"], 1), "join back to 'owner_'; yours give 'ower_'"),
    ((["o", "w", "n", "er", "_"], 1.5), "an int from 1 to 8; got 1.5"),
    ((["o", "w", "n", "er_"], 0), "an int from 1 to 8; got 0"),
    ((["o", "w", "n", "er_"], True), "an int from 1 to 8; got True"),
    ((["ow", "n", "er_"], 1), "'ow' is no token"),
])
def test_a_malformed_owner_answer_is_named(answer, words):
    with pytest.raises(AssertionError, match=re.escape(words)):
        checks.check_owner_by_hand(answer, name="owner_by_hand")


@pytest.mark.parametrize("answer", [[b"a", b"bc"], (b"ab", b"c"), [b"a", b"b", b"c"]])
def test_any_cut_of_abc_passes_never_saying_whether_right(answer, capsys):
    checks.check_abc_by_hand(answer, name="abc_by_hand")
    assert "checked when your work is graded" in capsys.readouterr().out


@pytest.mark.parametrize("answer, words", [
    (..., "still `...`"),
    (["a", "bc"], "a list of bytes"),
    (b"abc", "a list of bytes"),
    ([b"a", b"b"], "join back to b'abc'"),
    ([b"abc"], "b'abc' is no token"),
])
def test_a_malformed_abc_answer_is_named(answer, words):
    with pytest.raises(AssertionError, match=re.escape(words)):
        checks.check_abc_by_hand(answer, name="abc_by_hand")


# -- merge_chunk ----------------------------------------------------------------------------


def test_right_chunk_tokens_pass_as_list_or_tuple(gpt4):
    checks.check_merge_chunk([b"a", b"bc"], b"abc", TINY)  # by hand: bc (256) before ab (257)
    checks.check_merge_chunk((b"aa", b"a"), b"aaa", TINY)
    checks.check_merge_chunk([b"aa", b"aa", b"a"], b"aaaaa", TINY)
    word = " antidisestablishmentarianism"
    checks.check_merge_chunk(gpt4.decode_tokens_bytes(gpt4.encode_ordinary(word)), word.encode(),
                             cl100k.cl100k_ranks())


def test_chunk_mistakes_are_named():
    with fails("is None"):
        checks.check_merge_chunk(None, b"abc", TINY)
    with fails("must be a list of tokens"):
        checks.check_merge_chunk(b"abc", b"abc", TINY)
    with fails("return the tokens as bytes .* not their ids"):
        checks.check_merge_chunk([97, 256], b"abc", TINY)
    with fails("every token must be bytes; got \\['str', 'str'\\]"):
        checks.check_merge_chunk(["a", "bc"], b"abc", TINY)
    with fails("must join back to the chunk b'abc'"):
        checks.check_merge_chunk([b"a", b"b"], b"abc", TINY)
    with fails("b'abc' is not in the ranks"):
        checks.check_merge_chunk([b"abc"], b"abc", TINY)
    with fails("still make a token of the ranks: your loop stopped too early"):
        checks.check_merge_chunk([b"a", b"b", b"c"], b"abc", TINY)
    with fails("another order than the segmenter of section 5 .* by hand on exercise 5's tiny"):
        checks.check_merge_chunk([b"ab", b"c"], b"abc", TINY)  # the leftmost pair first


# -- encode (the build exercise) ------------------------------------------------------------

TEXT = "The cat's 12345 naïve ideas 🤖<|endoftext|>def f(x):\n    return x<|fim_prefix|>\n"


def test_right_encoding_passes(gpt4):
    ranks, specials = cl100k.cl100k_ranks(), cl100k.CL100K_SPECIAL_TOKENS
    for text in (TEXT, "", "plain", "<|endoftext|>"):
        ids = gpt4.encode(text, allowed_special="all")
        checks.check_encode(ids, text, ranks, specials)
        checks.check_encode(tuple(ids), text, ranks, specials)
    text = "abc aa<|end|> ab<|sep|>"
    checks.check_encode([97, 256, 32, 258, 300, 32, 257, 301], text, TINY, TINY_SPECIALS)  # by hand


def test_encoding_mistakes_are_named(gpt4):
    ranks, specials = cl100k.cl100k_ranks(), cl100k.CL100K_SPECIAL_TOKENS
    expected = gpt4.encode(TEXT, allowed_special="all")

    def check(ids, text=TEXT):
        checks.check_encode(ids, text, ranks, specials, "encode(text)")

    whole = tiktoken.Encoding("whole", pat_str=r"[\s\S]+", mergeable_ranks=dict(ranks),
                              special_tokens={})  # merges each chunk it is given whole

    def by_parts(text, chunks):
        """Each stretch between special tokens cut by ``chunks``, each chunk encoded alone."""
        parts = regex.split("(" + "|".join(map(regex.escape, specials)) + ")", text)
        ids = []
        for n, part in enumerate(parts):
            ids += [specials[part]] if n % 2 else [
                i for chunk in chunks(part) for i in whole.encode_ordinary(chunk)]
        return ids

    with fails("encode\\(text\\) is None"):
        check(None)
    with fails("must be a list of ids"):
        check({1: 2})
    with fails(r"your list holds tokens, not their ids \(ints\)"):
        check(gpt4.decode_tokens_bytes(expected))
    with fails("every id must be an int; got \\['int', 'float'"):
        check([1, 2.0])
    ordinary = [i for c in regex.findall(pre_tokenizer.CL100K_PATTERN, TEXT)
                for i in gpt4.encode_ordinary(c)]
    with fails(r"the special tokens were read as ordinary text\.$"):
        check(ordinary)
    with fails(r"the special tokens are missing from your ids\.$"):
        check([i for i in by_parts(TEXT, lambda p: regex.findall(pre_tokenizer.CL100K_PATTERN, p))
               if i not in specials.values()])
    only_end = [i for n, part in enumerate(TEXT.split("<|endoftext|>"))
                for i in ([100257] if n else []) + gpt4.encode_ordinary(part)]
    with fails("'<\\|endoftext\\|>' was read as a special token, the others of special_tokens as"):
        check(only_end)
    with fails(r"a merge crossed a chunk boundary of GPT-4's pattern\.$"):
        check(by_parts(TEXT, lambda part: [part] if part else []))
    with fails("id 100261 is not in ranks or special_tokens"):
        check(expected[:-1] + [100261])
    by_words = [i for w in TEXT.split() for i in gpt4.encode(w, disallowed_special=())]
    with fails(r"do not join back to the text: text went missing or was added\.$"):
        check(by_words)
    cut_cat = [expected[0], *gpt4.encode(" c"), *gpt4.encode("at"), *expected[2:]]
    with fails(r"position 1: expected 8415 \(b' cat'\), got 272 \(b' c'\)"):
        check(cut_cat)


def test_ids_from_gpt4_table_for_other_ranks_are_named(gpt4):
    text = "abc aa<|end|>"
    global_table = gpt4.encode("abc aa") + [300]
    assert global_table != [97, 256, 32, 258, 300]
    with fails("these are GPT-4's ids, but this call passed other ranks"):
        checks.check_encode(gpt4.encode("abc aa<|end|>", disallowed_special=()), text, TINY,
                            TINY_SPECIALS)


# -- tiktoken is refused during exercises 5 and 6, reading the ranks is not -----------------


def test_every_encoding_method_of_tiktoken_is_refused_in_merge_chunk_and_encode(gpt4):
    @cell
    def merge_chunk(piece, ranks):
        return gpt4.decode_tokens_bytes(gpt4.encode_ordinary_batch([piece.decode()])[0])

    @cell
    def single_merge_chunk(piece, ranks):
        return [bytes([gpt4.encode_single_token(piece)])]

    for answer in (merge_chunk, single_merge_chunk):
        with pytest.raises(checks.LibraryTwinError, match="merge_chunk called .*tiktoken"):
            checks.own_work(answer, "merge_chunk")(b" hello", cl100k.cl100k_ranks())

    @cell
    def encode(text, ranks, special_tokens):
        return gpt4.encode_batch([text], allowed_special="all")[0]

    with pytest.raises(checks.LibraryTwinError, match="encode called .*tiktoken"):
        checks.own_work(encode, "encode")("hello", cl100k.cl100k_ranks(),
                                          cl100k.CL100K_SPECIAL_TOKENS)
    assert gpt4.encode_batch(["hello world"]) == [[15339, 1917]]  # back afterwards
    assert gpt4.encode_single_token(" hello") == 24748


def test_reading_the_ranks_stays_open_during_the_exercises():
    @cell
    def encode(text, ranks, special_tokens):
        return [ranks[b"hello"]] if text == "hello" else [special_tokens["<|endoftext|>"]]

    ranks, specials = cl100k.cl100k_ranks(), cl100k.CL100K_SPECIAL_TOKENS
    assert checks.own_work(encode, "encode")("hello", ranks, specials) == [15339]

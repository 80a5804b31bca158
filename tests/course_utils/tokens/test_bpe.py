"""BPE against independent oracles: the textbook's worked example done by hand, the figure
line by line (naive learner) for the incremental one, Hugging Face ``tokenizers``, and
``tiktoken`` token for token for GPT-4's cl100k_base."""

import hashlib
import json
import random

import pytest
import tiktoken

from course_utils.data import wikipedia_text
from course_utils.tokens import bpe, byte_bpe, cl100k
from tests.support.peers import train_hugging_face_bpe

TEXTBOOK = "low " * 5 + "lowest " * 2 + "newer " * 6 + "wider " * 3 + "new " * 2
# Worked by hand from the figure: (e, r) and (r, _) tie at 9 and (e, r) occurs first;
# (n, e) and (e, w) tie at 8 after that, (n, e) first; (l, o) and (o, w) tie at 7.
TEXTBOOK_MERGES = [
    ("e", "r"),
    ("er", "_"),
    ("n", "e"),
    ("ne", "w"),
    ("l", "o"),
    ("lo", "w"),
    ("new", "er_"),
    ("low", "_"),
]
TEXTBOOK_COUNTS = [9, 9, 8, 8, 7, 7, 6, 5]

VARIED_TEXTS = [
    "hello world",
    "",
    " ",
    "   leading spaces, trailing spaces   ",
    "tabs\tand\nnewlines\r\n\r\n\n  mixed \n\t ",
    "numbers 1 12 123 1234 12345678901 3.14159 1,000,000 0x1F",
    "I'm sure they'RE here, we'LL see; you've DONE it, he'd've",
    "naïve café Zürich Ελληνικά русский 日本語 中文 한국어 العربية",
    "emoji 🤖👩‍💻🇨🇭 and symbols ∑∫√ ©®™ — “quotes” …",
    "code: def f(x):\n    return x**2  # square\n",
    "<|endoftext|>",
    "before<|endoftext|>after<|fim_prefix|>a<|fim_middle|>b<|fim_suffix|>c<|endofprompt|>",
    "<|endoftext|><|endoftext|> spaced <|endoftext|>  \n",
    "almost special <|endoftext| and <|unknown|>",
    "!!!???...,,,;;; ((brackets)) [x] {y}",
    "a" * 300 + " " + "ab" * 200,
]


@pytest.fixture(scope="module")
def textbook_corpus():
    return bpe.corpus_from_text(TEXTBOOK)


@pytest.fixture(scope="module")
def gpt4():
    return cl100k.cl100k()


@pytest.fixture(scope="module")
def reference(gpt4):
    """tiktoken's own encoder from the same ranks file, built offline."""
    return tiktoken.Encoding(
        "cl100k_base_test",
        pat_str=gpt4.pattern,
        mergeable_ranks=dict(gpt4.ranks),
        special_tokens=dict(gpt4.special_tokens),
    )


# -- the token learner ----------------------------------------------------------------------


def test_corpus_is_words_with_end_of_word_in_first_appearance_order(textbook_corpus):
    assert list(textbook_corpus.items()) == [
        (("l", "o", "w", "_"), 5),
        (("l", "o", "w", "e", "s", "t", "_"), 2),
        (("n", "e", "w", "e", "r", "_"), 6),
        (("w", "i", "d", "e", "r", "_"), 3),
        (("n", "e", "w", "_"), 2),
    ]


def test_count_pairs_by_hand(textbook_corpus):
    pairs = bpe.count_pairs(textbook_corpus)
    assert pairs == {
        ("l", "o"): 7, ("o", "w"): 7, ("w", "_"): 7, ("w", "e"): 8, ("e", "s"): 2,
        ("s", "t"): 2, ("t", "_"): 2, ("n", "e"): 8, ("e", "w"): 8, ("e", "r"): 9,
        ("r", "_"): 9, ("w", "i"): 3, ("i", "d"): 3, ("d", "e"): 3,
    }  # fmt: skip
    assert list(pairs)[:4] == [("l", "o"), ("o", "w"), ("w", "_"), ("w", "e")]


def test_merge_replaces_every_occurrence_left_to_right():
    corpus = {("b", "a", "n", "a", "n", "a", "_"): 2, ("a", "a", "a", "_"): 1}
    assert bpe.merge_pair(corpus, ("a", "n")) == {
        ("b", "an", "an", "a", "_"): 2,
        ("a", "a", "a", "_"): 1,
    }
    assert bpe.merge_pair(corpus, ("a", "a"))[("aa", "a", "_")] == 1
    assert bpe.merge_word(("a",) * 5, ("a", "a")) == ("aa", "aa", "a")


@pytest.mark.parametrize("learner", [bpe.learn_bpe_naive, bpe.learn_bpe])
def test_learners_reproduce_the_textbook_example(learner, textbook_corpus):
    learned = learner(textbook_corpus, 8)
    assert learned.merges == TEXTBOOK_MERGES
    assert learned.counts == TEXTBOOK_COUNTS
    assert learned.vocabulary == ["_", "d", "e", "i", "l", "n", "o", "r", "s", "t", "w"] + [
        "er", "er_", "ne", "new", "lo", "low", "newer_", "low_",
    ]  # fmt: skip


def test_learners_return_only_characters_for_zero_merges(textbook_corpus):
    assert bpe.learn_bpe(textbook_corpus, 0).vocabulary == sorted("_deilnorstw")


def _random_corpus(rng: random.Random) -> dict:
    words = [
        "".join(rng.choice("abcab ") for _ in range(rng.randint(1, 12)))
        for _ in range(rng.randint(1, 25))
    ]
    return bpe.corpus_from_text(" ".join(words) or "a")


def test_incremental_learner_gives_the_naive_merges_on_random_corpora():
    rng = random.Random(0)
    for _ in range(300):
        corpus = _random_corpus(rng)
        possible = sum((len(word) - 1) for word in corpus)  # an upper bound on merges
        k = rng.randint(0, possible)
        try:
            naive = bpe.learn_bpe_naive(corpus, k)
        except ValueError:
            with pytest.raises(ValueError, match="merges requested"):
                bpe.learn_bpe(corpus, k)
            continue
        assert bpe.learn_bpe(corpus, k) == naive


def test_incremental_learner_gives_the_naive_merges_on_wikipedia():
    corpus = bpe.corpus_from_text(wikipedia_text()[:60_000])
    assert bpe.learn_bpe(corpus, 60) == bpe.learn_bpe_naive(corpus, 60)
    chunks = byte_bpe.byte_corpus(wikipedia_text()[:30_000])
    assert bpe.learn_bpe(chunks, 40) == bpe.learn_bpe_naive(chunks, 40)


# -- the segmenter --------------------------------------------------------------------------


def test_segmenter_applies_merges_in_order(textbook_corpus):
    learned = bpe.learn_bpe(textbook_corpus, 8)
    assert bpe.segment_word("lower", learned) == ["low", "er_"]
    assert bpe.segment_word("newer", learned) == ["newer_"]
    # Greedy longest match would give o w ne r _: "er" was merged before "ne".
    assert bpe.segment_word("owner", learned) == ["o", "w", "n", "er_"]
    assert bpe.segment("low lowest", learned) == ["low_", "low", "e", "s", "t", "_"]


def test_segmenter_rejects_unknown_characters(textbook_corpus):
    learned = bpe.learn_bpe(textbook_corpus, 8)
    with pytest.raises(ValueError, match=r"\['x'\].*not in the vocabulary"):
        bpe.segment_word("lox", learned)


# -- bad input ------------------------------------------------------------------------------


def test_empty_corpus_is_rejected():
    with pytest.raises(ValueError, match="no words"):
        bpe.corpus_from_text("  \n ")
    for learner in (bpe.learn_bpe, bpe.learn_bpe_naive):
        with pytest.raises(ValueError, match="empty"):
            learner({}, 3)
    with pytest.raises(ValueError, match="empty"):
        byte_bpe.byte_corpus("")


@pytest.mark.parametrize("learner", [bpe.learn_bpe_naive, bpe.learn_bpe])
def test_more_merges_than_pairs_is_rejected(learner):
    corpus = bpe.corpus_from_text("ab ab a")  # a b _ (2), a _ (1): at most 3 merges
    assert len(learner(corpus, 3).merges) == 3
    with pytest.raises(ValueError, match="k = 4 merges requested, but only 3 are possible"):
        learner(corpus, 4)


@pytest.mark.parametrize("bad_k, error", [(-1, ValueError), (2.0, TypeError), (True, TypeError)])
def test_bad_number_of_merges_is_rejected(textbook_corpus, bad_k, error):
    with pytest.raises(error, match="k"):
        bpe.learn_bpe(textbook_corpus, bad_k)


def test_non_str_text_and_bad_corpora_are_rejected(gpt4):
    with pytest.raises(TypeError, match="text must be a str; got bytes"):
        bpe.corpus_from_text(b"low low")
    with pytest.raises(TypeError, match="str"):
        gpt4.encode(["hello"])
    with pytest.raises(TypeError, match="str"):
        byte_bpe.train_byte_bpe(None, 3)
    with pytest.raises(TypeError, match="dict"):
        bpe.learn_bpe([("l", "o")], 1)
    with pytest.raises(ValueError, match="count"):
        bpe.learn_bpe({("l", "o"): 0}, 1)


def test_decode_rejects_out_of_range_and_non_int_ids(gpt4):
    for bad in (-1, 100256, 100261, 100277, 10**9):
        with pytest.raises(ValueError, match=f"id {bad} is not in the vocabulary"):
            gpt4.decode([1, bad])
    with pytest.raises(TypeError, match="each id must be an int; got 2.0 \\(float\\)"):
        gpt4.decode([1, 2.0])
    with pytest.raises(TypeError, match="sequence of ints"):
        gpt4.decode("hello")


# -- byte-level BPE -------------------------------------------------------------------------


def _hugging_face_merges(text: str, k: int) -> list[tuple[bytes, bytes]]:
    tokenizer = train_hugging_face_bpe(text, k)
    # ByteLevel shows each byte as a printable character (GPT-2's table): invert it.
    printable = [*range(33, 127), *range(161, 173), *range(174, 256)]
    others = [b for b in range(256) if b not in printable]
    shown = {chr(b): b for b in printable} | {chr(256 + i): b for i, b in enumerate(others)}
    merges = json.loads(tokenizer.to_str())["model"]["merges"]
    return [
        tuple(
            bytes(shown[c] for c in side) for side in (m if isinstance(m, list) else m.split(" "))
        )
        for m in merges
    ]


def test_byte_level_learner_finds_the_merges_of_hugging_face_tokenizers():
    text = wikipedia_text()[:300_000]
    ours = bpe.learn_bpe(byte_bpe.byte_corpus(text), 100).merges
    theirs = _hugging_face_merges(text, 100)
    # Same pairs; tokenizers breaks ties between equally frequent pairs in another order.
    assert set(ours) == set(theirs)
    assert ours[:20] == theirs[:20]


def test_byte_level_tokenizer_round_trips_any_text():
    tokenizer = byte_bpe.train_byte_bpe(wikipedia_text()[:100_000], 200)
    assert tokenizer.n_vocab == 256 + 200
    for text in VARIED_TEXTS:
        ids = tokenizer.encode(text)
        assert tokenizer.decode(ids) == text
        assert all(0 <= i < tokenizer.n_vocab for i in ids)
    assert len(tokenizer.encode(" the")) == 1  # a frequent word is one token


def test_byte_level_encoding_applies_the_learned_merges_in_order():
    text = wikipedia_text()[:50_000]
    corpus = byte_bpe.byte_corpus(text)
    learned = bpe.learn_bpe(corpus, 150)
    tokenizer = byte_bpe.train_byte_bpe(text, 150)
    for chunk in byte_bpe.pre_tokenize(wikipedia_text()[50_000:60_000]):
        pieces = bpe.apply_merges(tuple(bytes([b]) for b in chunk.encode()), learned.merges)
        assert tokenizer.token_bytes(tokenizer.encode_ordinary(chunk)) == list(pieces)


# -- GPT-4's cl100k_base against tiktoken ---------------------------------------------------


def test_ranks_file_is_the_known_one():
    data = cl100k.cl100k_path().read_bytes()
    assert hashlib.sha256(data).hexdigest() == cl100k.CL100K_SHA256
    assert cl100k.CL100K_SHA256 == (
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
    )


def test_pattern_and_special_tokens_match_the_installed_tiktoken(monkeypatch, gpt4):
    """tiktoken's own cl100k_base definition, with its download replaced by our file."""
    from tiktoken_ext import openai_public

    def offline(path, expected_hash=None):
        assert expected_hash == cl100k.CL100K_SHA256
        return gpt4.ranks

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", offline)
    definition = openai_public.cl100k_base()
    assert definition["pat_str"] == byte_bpe.CL100K_PATTERN
    assert definition["special_tokens"] == cl100k.CL100K_SPECIAL_TOKENS
    assert len(gpt4.ranks) == 256 + 100_000  # the bytes, then one token per merge
    assert sorted(gpt4.ranks.values()) == list(range(100_256))
    assert len(gpt4.ranks) + len(gpt4.special_tokens) == 256 + 100_000 + 5  # ids in use
    assert gpt4.n_vocab == gpt4.max_token_value + 1 == 100_277  # tiktoken's: highest id + 1


@pytest.mark.parametrize("text", VARIED_TEXTS)
def test_cl100k_agrees_with_tiktoken_token_for_token(gpt4, reference, text):
    ids = gpt4.encode(text, allowed_special="all")
    assert ids == reference.encode(text, allowed_special="all")
    assert gpt4.encode_ordinary(text) == reference.encode_ordinary(text)
    assert gpt4.decode(ids) == reference.decode(ids) == text


def test_cl100k_agrees_with_tiktoken_on_wikipedia(gpt4, reference):
    text = wikipedia_text()[:300_000]
    ids = gpt4.encode(text, allowed_special="all")
    assert ids == reference.encode(text, allowed_special="all")
    assert gpt4.decode(ids) == text


def test_cl100k_special_tokens_and_known_ids(gpt4):
    assert gpt4.encode("<|endoftext|>", allowed_special="all") == [100257]
    assert gpt4.encode("<|endofprompt|>", allowed_special={"<|endofprompt|>"}) == [100276]
    assert gpt4.encode("hello world") == [15339, 1917]
    assert gpt4.decode([100258, 100259, 100260]) == "<|fim_prefix|><|fim_middle|><|fim_suffix|>"
    assert gpt4.tokens(" unbelievable") == [" unbelievable"]


def test_decode_of_a_cut_character_shows_the_replacement_character(gpt4, reference):
    ids = gpt4.encode("🤖")
    assert len(ids) > 1
    assert gpt4.decode(ids[:1]) == reference.decode(ids[:1]) == "\ufffd"


def test_the_learner_does_not_import_the_byte_level_module():
    """bpe is the character-level learner; byte_bpe builds on it, never the other way."""
    import subprocess
    import sys

    code = ("import sys, course_utils.tokens.bpe; "
            "print('course_utils.tokens.byte_bpe' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert not hasattr(bpe, "cl100k")


# -- special tokens: tiktoken's safe default ------------------------------------------------

SPECIAL_CASES = [
    ("plain text", {}),
    ("a <|endoftext|> b", {}),
    ("a <|endoftext|> b", {"allowed_special": "all"}),
    ("a <|endoftext|> b", {"allowed_special": {"<|endoftext|>"}}),
    ("a <|endoftext|> b", {"disallowed_special": ()}),
    ("a <|endoftext|> b <|fim_prefix|>", {"allowed_special": {"<|endoftext|>"}}),
    ("a <|endoftext|> b <|fim_prefix|>",
     {"allowed_special": {"<|endoftext|>"}, "disallowed_special": ()}),
    ("a <|endoftext|> b <|fim_prefix|>", {"disallowed_special": {"<|fim_prefix|>"}}),
    ("<|fim_prefix|>x<|fim_suffix|>", {"allowed_special": "all", "disallowed_special": ()}),
    ("<|endoftext|", {}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "options"), SPECIAL_CASES)
def test_special_tokens_are_handled_as_tiktoken_handles_them(gpt4, reference, text, options):
    try:
        expected = reference.encode(text, **options)
    except ValueError:
        with pytest.raises(ValueError, match="special token .* not allowed"):
            gpt4.encode(text, **options)
    else:
        assert gpt4.encode(text, **options) == expected


def test_a_special_token_in_ordinary_text_raises_by_default(gpt4):
    with pytest.raises(ValueError, match=r"'<\|endoftext\|>'.*allowed_special"):
        gpt4.encode("user text with <|endoftext|> inside")
    with pytest.raises(ValueError, match="not allowed"):
        gpt4.tokens("<|endofprompt|>")
    assert gpt4.tokens("<|endoftext|>", allowed_special="all") == ["<|endoftext|>"]
    with pytest.raises(TypeError, match='"all" or a collection'):
        gpt4.encode("x", allowed_special="<|endoftext|>")
    # as in tiktoken, a string in allowed_special that is not a special token is ignored
    assert gpt4.encode("x <|unknown|>", allowed_special={"<|unknown|>"}) == gpt4.encode_ordinary(
        "x <|unknown|>"
    )


# -- shared cached objects cannot be changed -----------------------------------------------


def test_the_cached_tokenizer_hands_out_read_only_ranks(gpt4):
    ranks, special = gpt4.ranks, gpt4.special_tokens
    with pytest.raises(AttributeError):
        ranks.pop(b" the")
    with pytest.raises(TypeError):
        ranks[b" the"] = 0
    with pytest.raises(TypeError):
        del special["<|endoftext|>"]
    assert cl100k.cl100k().ranks[b" the"] == 279
    assert cl100k.cl100k().encode(" the") == [279]


def test_a_copy_of_the_ranks_can_change_without_touching_the_tokenizer(gpt4):
    mine = dict(gpt4.ranks)
    mine.pop(b" the")
    tokenizer = byte_bpe.BytePairTokenizer(mine, gpt4.pattern)
    mine.clear()  # the tokenizer copied what it was given
    assert b" the" not in tokenizer.ranks and len(tokenizer.ranks) == 100_255
    assert gpt4.encode(" the") == [279] and len(gpt4.ranks) == 100_256


def test_tiktoken_reference_is_built_offline_from_the_same_file(gpt4):
    reference = cl100k.tiktoken_cl100k()
    assert reference is cl100k.tiktoken_cl100k()
    assert reference.encode("hello world <|endoftext|>", allowed_special="all") == gpt4.encode(
        "hello world <|endoftext|>", allowed_special="all"
    )

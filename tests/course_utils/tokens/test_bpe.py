"""Text into tokens: the corpus C by hand, Hugging Face's learner through the course's
wrappers against the textbook's worked example and Hugging Face's own encodings, the
byte-level tokenizer against Hugging Face's, and GPT-4's cl100k_base against tiktoken's own
definition of it."""

import hashlib

import pytest
import regex
from transformers.convert_slow_tokenizer import bytes_to_unicode

from course_utils.data import wikipedia_text
from course_utils.tokens import bpe, byte_bpe, cl100k
from tests.support.peers import train_hugging_face_bpe

# Hugging Face's byte-level tokens write each byte as GPT-2's printable character.
BYTE_OF = {character: byte for byte, character in bytes_to_unicode().items()}

TEXTBOOK = "low " * 5 + "lowest " * 2 + "newer " * 6 + "wider " * 3 + "new " * 2
# The textbook's merges worked by hand; Hugging Face breaks the tie of (n, e) and (e, w) at 8
# by the smaller pair of ids (e before n), where the notebook takes the first in C.
HUGGING_FACE_MERGES = [("e", "r"), ("er", "_"), ("e", "w"), ("n", "ew"), ("l", "o"), ("lo", "w"),
                       ("new", "er_"), ("low", "_")]  # fmt: skip
TEXTBOOK_COUNTS = [9, 9, 8, 8, 7, 7, 6, 5]
VARIED_TEXTS = [
    "hello world",
    "   leading spaces, trailing spaces   ",
    "tabs\tand\nnewlines\r\n\r\n\n  mixed \n\t ",
    "numbers 1 12 123 1234 12345678901 3.14159 1,000,000 0x1F",
    "I'm sure they'RE here, we'LL see; you've DONE it, he'd've",
    "naïve café Zürich Ελληνικά русский 日本語 中文 한국어 العربية",
    "emoji 🤖👩‍💻🇨🇭 and symbols ∑∫√ ©®™ — “quotes” …",
]


@pytest.fixture(scope="module")
def textbook():
    return bpe.train_bpe(TEXTBOOK, 8)


def test_corpus_is_words_with_end_of_word_in_first_appearance_order():
    corpus = bpe.corpus_from_text("low lower low")
    assert corpus == {("l", "o", "w", "_"): 2, ("l", "o", "w", "e", "r", "_"): 1}
    assert list(corpus) == [("l", "o", "w", "_"), ("l", "o", "w", "e", "r", "_")]
    with pytest.raises(ValueError, match="no words"):
        bpe.corpus_from_text("  \n ")
    with pytest.raises(TypeError):
        bpe.corpus_from_text(b"low")


def test_the_learner_learns_the_textbook_merges_with_hugging_face_s_tie_break(textbook):
    assert bpe.merges_of(textbook) == HUGGING_FACE_MERGES
    assert textbook.encode("lower_").tokens == ["low", "er_"]
    assert textbook.encode("newer_").tokens == ["newer_"]


def test_each_merge_shortens_c_by_its_count(textbook):
    corpus = bpe.corpus_from_text(TEXTBOOK)
    lengths = [bpe.corpus_length(bpe.first_merges(textbook, i), corpus) for i in range(9)]
    assert lengths[0] == sum(len(word) * count for word, count in corpus.items()) == 96
    assert [a - b for a, b in zip(lengths, lengths[1:], strict=False)] == TEXTBOOK_COUNTS


def test_first_merges_keep_only_the_first_k(textbook):
    assert bpe.first_merges(textbook, 0).encode("newer_").tokens == list("newer_")
    assert bpe.first_merges(textbook, 2).encode("newer_").tokens == ["n", "e", "w", "er_"]


def test_an_unseen_character_is_unknown(textbook):
    assert textbook.encode("lowz_").tokens == ["low", "[UNK]", "_"]


def test_bad_inputs_are_rejected():
    with pytest.raises(ValueError, match="no words"):
        bpe.train_bpe(" ", 3)
    for bad_k, error in [(-1, ValueError), (2.0, TypeError), (True, TypeError)]:
        with pytest.raises(error):
            bpe.train_bpe(TEXTBOOK, bad_k)
    with pytest.raises(ValueError, match="empty"):
        byte_bpe.train_byte_bpe("", 3)


# -- byte-level BPE --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def wiki_text():
    return wikipedia_text()[:60_000]


def test_byte_level_merges_are_hugging_face_s_and_encode_as_it_does(wiki_text):
    ours = byte_bpe.train_byte_bpe(wiki_text, 200)
    theirs = train_hugging_face_bpe(wiki_text, 200)
    assert ours.n_vocab == 256 + 200
    sample = wikipedia_text()[200_000:203_000]
    ids = ours.encode_ordinary(sample)
    assert [ours.decode_single_token_bytes(i) for i in ids] == [
        bytes(BYTE_OF[c] for c in token) for token in theirs.encode(sample).tokens]


def test_byte_level_tokenizer_round_trips_any_text(wiki_text):
    tokenizer = byte_bpe.train_byte_bpe(wiki_text, 50)
    for text in VARIED_TEXTS:
        ids = tokenizer.encode(text)
        assert tokenizer.decode(ids) == text
        assert len(byte_bpe.tokens(tokenizer, text)) == len(ids)


def test_tokens_show_each_token_s_text_and_take_the_special_token_settings():
    gpt4 = cl100k.cl100k()
    assert byte_bpe.tokens(gpt4, "hello world") == ["hello", " world"]
    assert byte_bpe.tokens(gpt4, "a<|endoftext|>", allowed_special="all") == ["a", "<|endoftext|>"]
    assert byte_bpe.tokens(gpt4, "東京") == ["\ufffd", "\ufffd", "京"]


# -- GPT-4's cl100k_base ---------------------------------------------------------------------


def test_ranks_file_is_the_known_one():
    data = cl100k.cl100k_path().read_bytes()
    assert hashlib.sha256(data).hexdigest() == cl100k.CL100K_SHA256
    assert cl100k.CL100K_SHA256 == (
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
    )


def test_pattern_and_special_tokens_are_tiktoken_s_own_definition(monkeypatch):
    """tiktoken's own cl100k_base definition, with its download replaced by our file."""
    from tiktoken_ext import openai_public

    def offline(path, expected_hash=None):
        assert expected_hash == cl100k.CL100K_SHA256
        return dict(cl100k.cl100k_ranks())

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", offline)
    definition = openai_public.cl100k_base()
    assert definition["pat_str"] == byte_bpe.CL100K_PATTERN
    assert definition["special_tokens"] == dict(cl100k.CL100K_SPECIAL_TOKENS)
    ranks = cl100k.cl100k_ranks()
    assert len(ranks) == 256 + 100_000 and sorted(ranks.values()) == list(range(100_256))
    assert cl100k.cl100k().n_vocab == 100_277


@pytest.mark.parametrize("text", VARIED_TEXTS)
def test_the_pattern_cuts_what_tiktoken_encodes_chunk_by_chunk(text):
    gpt4 = cl100k.cl100k()
    chunks = regex.findall(byte_bpe.CL100K_PATTERN, text)
    assert "".join(chunks) == text
    by_chunk = [i for chunk in chunks for i in gpt4.encode_ordinary(chunk)]
    assert by_chunk == gpt4.encode_ordinary(text)


def test_the_shared_ranks_and_special_tokens_are_read_only():
    ranks, special = cl100k.cl100k_ranks(), cl100k.CL100K_SPECIAL_TOKENS
    with pytest.raises(AttributeError):
        ranks.pop(b" the")
    with pytest.raises(TypeError):
        ranks[b" the"] = 0
    with pytest.raises(TypeError):
        del special["<|endoftext|>"]
    assert cl100k.cl100k_ranks()[b" the"] == 279 and cl100k.cl100k().encode(" the") == [279]
    assert cl100k.cl100k() is cl100k.cl100k()

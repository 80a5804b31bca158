"""GPT-4's pre-tokenizer run two ways: ``pre_tokenize_cl100k`` (ASCII stretches on Python's
``re``) against ``regex.findall`` of the Unicode pattern as the oracle, and its chunks
encoded against tiktoken."""

import re

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from course_utils.data import wikipedia_text
from course_utils.tokens.cl100k import cl100k, tiktoken_cl100k
from course_utils.tokens.pre_tokenizer import (
    CL100K_ASCII_PATTERN,
    CL100K_PATTERN,
    pre_tokenize_cl100k,
)

EXAMPLES = settings(max_examples=300, deadline=None, derandomize=True, database=None)
ASCII = "".join(map(chr, range(128)))

# What lies around a place where the text may be cut (a space after an ASCII letter), and
# characters above 127 that are letters, numbers, spaces and neither in the Unicode classes.
PIECES = ["a", "Z", " ", "  ", "s", "'s", "'LL", "'ve", "'", "\n", "\r\n", "\t", "\x0b", "\x1c",
          "09", "1234", ".", "!!", " the", "é", "ſ", "東京", "½", "٣", "\u00a0", "\u2003",
          "\u0085", "🤖", "\u0301", "Ⅻ"]  # fmt: skip
ASCII_PIECES = [piece for piece in PIECES if piece.isascii()]
texts = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=4)), max_size=30).map("".join)
ascii_texts = st.lists(
    st.one_of(st.sampled_from(ASCII_PIECES), st.text(st.characters(max_codepoint=127), max_size=4)),
    max_size=30,
).map("".join)


def unicode_chunks(text: str) -> list[str]:
    return regex.findall(CL100K_PATTERN, text)


def test_on_ascii_the_classes_are_the_small_sets():
    for unicode_class, ascii_class in [(r"\p{L}", "[A-Za-z]"), (r"\p{N}", "[0-9]"),
                                       (r"\s", r"[\t\n\x0b\x0c\r ]")]:  # fmt: skip
        assert regex.findall(unicode_class, ASCII) == re.findall(ascii_class, ASCII)


@EXAMPLES
@given(ascii_texts)
def test_on_ascii_text_the_ascii_pattern_cuts_the_same_chunks(text):
    assert re.findall(CL100K_ASCII_PATTERN, text) == unicode_chunks(text)


@EXAMPLES
@given(texts)
def test_mixed_text_is_cut_into_the_same_chunks(text):
    assert pre_tokenize_cl100k(text) == unicode_chunks(text)


def test_wikipedia_is_cut_into_the_same_chunks_and_encoded_as_tiktoken_encodes_it():
    text = wikipedia_text(300_000)
    assert not text.isascii()  # both paths are taken
    assert pre_tokenize_cl100k(text) == unicode_chunks(text)
    assert cl100k().encode_ordinary(text) == tiktoken_cl100k().encode_ordinary(text)

"""The course's GPT-4 tokenizer against tiktoken as the oracle, method by method.

Property-based tests (Hypothesis, a fixed number of examples drawn the same way at every
run) try random text with the characters that trip tokenizers up: other scripts, emoji,
digits, whitespace runs, contractions, special tokens and surrogates, both paired (as JSON
escapes leave them) and alone. The fast merge is checked against the naive one that notebook
03 teaches, on random ranks and on long runs of one character. Timing is the benchmark's
job (tests/benchmarks/bench_bpe.py), never a test's.
"""

import copy
import itertools
import pickle

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from course_utils.tokens import byte_bpe, byte_merges, cl100k, tiktoken_arguments
from course_utils.tokens.byte_bpe import UnknownTokenError

SPECIALS = sorted(cl100k.CL100K_SPECIAL_TOKENS)
# Examples drawn the same way at every run, none remembered between runs (no .hypothesis/).
EXAMPLES = settings(max_examples=150, deadline=None, derandomize=True, database=None)
FEW = settings(max_examples=40, deadline=None, derandomize=True, database=None)

# Pieces of text a tokenizer must get right, beside random characters.
SNIPPETS = [" ", "  ", "\n", "\r\n", "\t", " the", "'s", "'LL", "123", "4567", "!!", "...",
            "🤖", "👍", "naïve", "東京", "Ελληνικά", "=" * 40, " " * 30, "<|", "|>", "<|end",
            "\ud83d\udc4d", "\ud83d", "\udc00", "\udbff\udfff"] + SPECIALS  # fmt: skip
characters = st.one_of(
    st.characters(),  # any code point but surrogates
    st.characters(categories=["Cs"]),  # surrogates, which UTF-8 cannot encode
    st.characters(max_codepoint=127),
)
texts = st.lists(
    st.one_of(st.text(characters, max_size=12), st.sampled_from(SNIPPETS)), max_size=12
).map("".join)
ALLOWED = ["all", set(), {"<|endoftext|>"}, {"<|fim_prefix|>", "<|endofprompt|>"},
           {"<|unknown|>"}, {"<|endoftext|>", "<|unknown|>"}, set(SPECIALS)]  # fmt: skip
DISALLOWED = ["all", (), {"<|endoftext|>"}, {"<|fim_suffix|>", "<|endofprompt|>"},
              {"<|unknown|>"}, set(SPECIALS)]  # fmt: skip


# The course's tokenizer and tiktoken's, both cached: built once for every test.
gpt4 = pytest.fixture(scope="module", name="gpt4")(lambda: cl100k.cl100k())
reference = pytest.fixture(scope="module", name="reference")(lambda: cl100k.tiktoken_cl100k())


def outcome(function, *args, **kwargs):
    """What a call gives: ("value", result) or ("raises", the kind of exception)."""
    try:
        return "value", function(*args, **kwargs)
    except (KeyError, ValueError, TypeError, OverflowError) as error:
        for kind in (UnicodeDecodeError, KeyError, ValueError, TypeError):
            if isinstance(error, kind):
                return "raises", kind.__name__
        return "raises", type(error).__name__


# -- the fast merge is the naive merge ------------------------------------------------------


@st.composite
def ranks_and_piece(draw):
    """Made-up ranks over a 3-letter alphabet (ranks may repeat) and a piece of it."""
    alphabet = b"abc"
    tokens = draw(st.lists(st.binary(min_size=2, max_size=5).map(
        lambda b: bytes(alphabet[x % 3] for x in b)), max_size=12))  # fmt: skip
    ranks = {bytes([b]): b for b in range(256)}
    for token in tokens:
        ranks[token] = draw(st.integers(256, 270))
    piece = bytes(alphabet[x % 3] for x in draw(st.binary(max_size=40)))
    return ranks, piece


@EXAMPLES
@given(ranks_and_piece())
def test_the_fast_merge_gives_the_naive_merges_on_random_ranks(case):
    ranks, piece = case
    fast, naive = byte_merges._byte_pair_merge_fast, byte_merges._byte_pair_merge
    assert fast(piece, ranks) == naive(piece, ranks)


@EXAMPLES
@given(st.text(characters, max_size=30).map(
    lambda s: tiktoken_arguments.without_surrogates(s).encode()))
def test_the_fast_merge_gives_the_naive_merges_with_gpt4s_ranks(gpt4, piece):
    ranks = gpt4.ranks
    fast, naive = byte_merges._byte_pair_merge_fast, byte_merges._byte_pair_merge
    assert fast(piece, ranks) == naive(piece, ranks)


@pytest.mark.parametrize("run", ["^" * 1500, " " * 1500, "\n" * 1500, "a" * 1500, "ab" * 700,
                                 "=-" * 300 + "=" * 900, "🤖" * 300])  # fmt: skip
def test_the_fast_merge_gives_the_naive_merges_on_long_runs(gpt4, run):
    piece = run.encode()
    fast = byte_merges._byte_pair_merge_fast(piece, gpt4.ranks)
    assert fast == byte_merges._byte_pair_merge(piece, gpt4.ranks)
    assert b"".join(fast) == piece


def test_the_fast_merge_on_tiny_cases():
    tiny = {bytes([b]): b for b in range(256)} | {b"bc": 256, b"ab": 257, b"aa": 258}
    merge = byte_merges._byte_pair_merge_fast
    assert merge(b"", tiny) == [] and merge(b"a", tiny) == [b"a"]
    assert merge(b"abc", tiny) == [b"a", b"bc"]  # the lowest rank, not the leftmost pair
    assert merge(b"aaaaa", tiny) == [b"aa", b"aa", b"a"]  # equal ranks: the leftmost first
    assert merge(b"xyz", tiny) == [b"x", b"y", b"z"]



@EXAMPLES
@given(ranks_and_piece())
def test_merge_steps_replay_the_fast_merge_one_lowest_rank_pair_at_a_time(case):
    ranks, piece = case
    steps = byte_merges.merge_steps(piece, ranks)
    assert steps[0] == ([bytes([b]) for b in piece], None, None)
    assert steps[-1][0] == byte_merges._byte_pair_merge_fast(piece, ranks)
    for (before, _, _), (after, at, rank) in zip(steps, steps[1:], strict=False):
        assert after == before[:at] + [before[at] + before[at + 1]] + before[at + 2 :]
        pair_ranks = [ranks.get(a + b) for a, b in zip(before, before[1:], strict=False)]
        assert rank == ranks[after[at]] == min(r for r in pair_ranks if r is not None)
        assert pair_ranks.index(rank) == at  # the leftmost of equal ranks


def test_merge_steps_of_a_word_with_gpt4s_ranks_end_in_tiktokens_tokens(gpt4, reference):
    steps = byte_merges.merge_steps(b" tokenization", gpt4.ranks)
    assert steps[-1][0] == reference.decode_tokens_bytes(reference.encode_ordinary(" tokenization"))
    assert [rank for _, _, rank in steps[1:]] == sorted(rank for _, _, rank in steps[1:])
    with pytest.raises(TypeError, match="expected bytes"):
        byte_merges.merge_steps(" tokenization", gpt4.ranks)

# -- every method against tiktoken on random text -------------------------------------------


@EXAMPLES
@given(texts)
def test_encode_ordinary_and_encode_agree_with_tiktoken(gpt4, reference, text):
    assert gpt4.encode_ordinary(text) == reference.encode_ordinary(text)
    assert outcome(gpt4.encode, text) == outcome(reference.encode, text)
    assert gpt4.encode(text, allowed_special="all") == reference.encode(text, allowed_special="all")
    assert gpt4.encode(text, disallowed_special=()) == reference.encode(text, disallowed_special=())


@FEW
@given(texts, st.sampled_from(ALLOWED), st.sampled_from(DISALLOWED))
def test_random_special_token_settings_agree_with_tiktoken(gpt4, reference, text, allowed, banned):
    ours = outcome(gpt4.encode, text, allowed_special=allowed, disallowed_special=banned)
    assert ours == outcome(
        reference.encode, text, allowed_special=allowed, disallowed_special=banned
    )


@FEW
@given(st.lists(texts, max_size=4))
def test_the_batch_methods_agree_with_tiktoken(gpt4, reference, batch):
    assert gpt4.encode_ordinary_batch(batch) == reference.encode_ordinary_batch(batch)
    assert outcome(gpt4.encode_batch, batch) == outcome(reference.encode_batch, batch)
    assert gpt4.encode_batch(batch, allowed_special="all", num_threads=2) == reference.encode_batch(
        batch, allowed_special="all", num_threads=2
    )
    ids = [gpt4.encode_ordinary(text) for text in batch]
    assert gpt4.decode_batch(ids) == reference.decode_batch(ids)
    assert gpt4.decode_bytes_batch(ids) == reference.decode_bytes_batch(ids)
    cut = [i[: len(i) // 2] for i in ids]  # may end inside a character
    assert outcome(gpt4.decode_batch, cut, errors="strict") == outcome(
        reference.decode_batch, cut, errors="strict"
    )


ids_in_range = st.lists(st.integers(0, 100_276), max_size=20)
ids_anywhere = st.lists(
    st.one_of(st.integers(0, 100_400), st.sampled_from([100_256, 100_261, 100_275])), max_size=8
)


@EXAMPLES
@given(st.one_of(ids_in_range, ids_anywhere, texts.map(lambda t: cl100k.cl100k().encode(
    t, allowed_special="all"))))  # fmt: skip
def test_the_decoding_methods_agree_with_tiktoken(gpt4, reference, ids):
    for method in ("decode", "decode_bytes", "decode_tokens_bytes", "decode_with_offsets"):
        assert outcome(getattr(gpt4, method), ids) == outcome(getattr(reference, method), ids), (
            method
        )
    for errors in ("strict", "ignore", "replace", "backslashreplace"):
        assert outcome(gpt4.decode, ids, errors=errors) == outcome(
            reference.decode, ids, errors=errors
        )
    for i in ids:
        assert outcome(gpt4.decode_single_token_bytes, i) == outcome(
            reference.decode_single_token_bytes, i
        )
        assert gpt4.is_special_token(i) == reference.is_special_token(i)


@EXAMPLES
@given(
    st.one_of(
        texts, st.integers(0, 100_276).map(lambda i: cl100k.cl100k()._bytes_of.get(i, b"?"))
    )
)
def test_encode_single_token_agrees_with_tiktoken(gpt4, reference, token):
    assert outcome(gpt4.encode_single_token, token) == outcome(reference.encode_single_token, token)


@pytest.fixture(scope="module")
def pickled(gpt4):
    return pickle.loads(pickle.dumps(gpt4))


@FEW
@given(texts)
def test_a_pickled_tokenizer_encodes_the_same(gpt4, pickled, text):
    assert pickled.encode(text, allowed_special="all") == gpt4.encode(text, allowed_special="all")
    assert pickled.name == gpt4.name == "cl100k_base" and pickled is not gpt4


# -- chosen cases --------------------------------------------------------------------------


SURROGATES = ["\ud83d\udc4d", "\ud83d", "a\udc00b", "\udc00\ud800", "x\ud83d",
              "\ud83d\udc4d<|endoftext|>\ud83d", "naïve \ud835\udc00 done"]  # fmt: skip


@pytest.mark.parametrize("text", SURROGATES)
def test_surrogates_are_read_as_tiktoken_reads_them(gpt4, reference, text):
    assert gpt4.encode_ordinary(text) == reference.encode_ordinary(text)
    assert gpt4.encode(text, allowed_special="all") == reference.encode(text, allowed_special="all")
    assert gpt4.tokens(text, disallowed_special=()) == [
        reference.decode([i]) for i in reference.encode(text, disallowed_special=())
    ]


def test_a_surrogate_pair_is_its_character_and_a_lone_one_the_replacement_character(gpt4):
    assert gpt4.encode("\ud83d\udc4d") == gpt4.encode("👍") == [9468, 239, 235]
    assert gpt4.encode("\ud83d") == gpt4.encode("\ufffd") == [5809]
    assert gpt4.encode_ordinary("a\udc00b") == [64, 5809, 65]
    assert gpt4.decode(gpt4.encode("\ud83d\udc4d")) == "👍"


@pytest.mark.parametrize("character", ["^", " ", "\n", "a", "=", "1", "🤖"])
def test_long_runs_of_one_character_agree_with_tiktoken(gpt4, reference, character):
    text = character * 10_000
    assert gpt4.encode(text) == reference.encode(text)


def test_long_runs_between_ordinary_text_agree_with_tiktoken(gpt4, reference):
    text = "Title\n" + "=" * 5000 + "\n\n" + " " * 3000 + "text" + "\t" * 2000 + "end" + "-" * 4000
    assert gpt4.encode(text) == reference.encode(text)


@pytest.mark.parametrize(("allowed", "banned"), list(itertools.product(ALLOWED, DISALLOWED)))
def test_every_combination_of_special_token_settings_agrees_with_tiktoken(
    gpt4, reference, allowed, banned
):
    for text in ["plain", "a <|endoftext|> b", "<|fim_prefix|>x<|fim_suffix|>y<|endofprompt|>",
                 "<|unknown|> and <|endoftext|>", "<|endoftext|<|endoftext|>|>"]:  # fmt: skip
        ours = outcome(gpt4.encode, text, allowed_special=allowed, disallowed_special=banned)
        theirs = outcome(reference.encode, text, allowed_special=allowed, disallowed_special=banned)
        assert ours == theirs, (text, allowed, banned)


def test_offsets_agree_with_tiktoken(gpt4, reference):
    for text in ["hello world", "hello 👍 world", "我非常渴望与人工智能一起工作", "naïve\n\ncafé",
                 "<|endoftext|> after"]:  # fmt: skip
        ids = gpt4.encode(text, allowed_special="all")
        assert gpt4.decode_with_offsets(ids) == reference.decode_with_offsets(ids)
    assert gpt4.decode_with_offsets(gpt4.encode("hello world")) == ("hello world", [0, 5])
    ids = gpt4.encode("我非常渴望")  # tokens that cut characters start inside one
    text, offsets = gpt4.decode_with_offsets(ids)
    assert text == "我非常渴望" and offsets == reference.decode_with_offsets(ids)[1]
    with pytest.raises(UnicodeDecodeError):
        gpt4.decode_with_offsets(gpt4.encode("👍")[:1])


def test_the_vocabulary_attributes_are_tiktokens(gpt4, reference):
    assert gpt4.n_vocab == reference.n_vocab == 100_277
    assert gpt4.max_token_value == reference.max_token_value == 100_276
    assert gpt4.eot_token == reference.eot_token == 100_257
    assert gpt4.special_tokens_set == reference.special_tokens_set == set(SPECIALS)
    gpt4.special_tokens_set.add("<|mine|>")  # a new set at each call: nothing changes
    assert "<|mine|>" not in gpt4.special_tokens_set and "<|mine|>" not in gpt4.special_tokens
    assert gpt4.name == "cl100k_base" and "cl100k_base" in repr(gpt4)
    assert gpt4.decode_tokens_bytes([15339, 1917]) == [b"hello", b" world"]
    assert gpt4.decode_bytes([15339, 1917]) == b"hello world"
    assert gpt4.encode_single_token("hello") == 15339
    assert gpt4.encode_single_token("<|endofprompt|>") == 100_276
    assert gpt4.decode_single_token_bytes(100_276) == b"<|endofprompt|>"


def test_n_vocab_is_the_rows_an_embedding_needs(gpt4):
    """tiktoken's n_vocab: the highest id + 1, so every id is a row, <|endofprompt|> too."""
    embedding = torch.nn.Embedding(gpt4.n_vocab, 4)
    ids = torch.tensor(gpt4.encode("<|endoftext|> hi <|endofprompt|>", allowed_special="all"))
    assert embedding(ids).shape == (4, 4)
    assert len(gpt4.ranks) + len(gpt4.special_tokens) == 100_261  # the ids in use
    trained = byte_bpe.train_byte_bpe("low lower lowest newer wider " * 20, 10)
    assert trained.n_vocab == len(trained.ranks) == 266 and trained.max_token_value == 265


def test_unknown_ids_and_tokens_raise_a_key_error_that_is_a_value_error(gpt4):
    for bad in (-1, 100_256, 100_261, 100_277, 10**12):
        for call, ids in ((gpt4.decode_single_token_bytes, bad), (gpt4.decode, [1, bad])):
            with pytest.raises(KeyError) as caught:
                call(ids)
            assert isinstance(caught.value, ValueError)
            assert isinstance(caught.value, UnknownTokenError)
            assert str(caught.value).startswith(
                f"id {bad} is not in the vocabulary (ids are 0..100276"
            )
    with pytest.raises(KeyError, match="'hello world' is not a single token of cl100k_base"):
        gpt4.encode_single_token("hello world")
    with pytest.raises(ValueError, match="not a single token"):
        gpt4.encode_single_token(b"\xff\xfe")
    trained = byte_bpe.train_byte_bpe("low lower lowest", 3)
    with pytest.raises(KeyError, match="has no <\\|endoftext\\|> special token"):
        _ = trained.eot_token


def test_the_settled_differences_from_tiktoken(gpt4, reference):
    """Where tiktoken accepts a likely slip, the course says what is wrong; a list is fine."""
    assert reference.decode([True]) == '"'  # tiktoken reads True as id 1
    with pytest.raises(TypeError, match="each id must be an int; got True"):
        gpt4.decode([True])
    with pytest.raises(TypeError, match="token must be an int; got True"):
        gpt4.is_special_token(True)
    with pytest.raises(TypeError, match='allowed_special must be "all" or a collection'):
        gpt4.encode("x", allowed_special="<|endoftext|>")
    with pytest.raises(TypeError, match='disallowed_special must be "all" or a collection'):
        gpt4.encode("x", disallowed_special="<|endoftext|>")
    with pytest.raises(TypeError, match="must hold strings"):
        gpt4.encode("x", allowed_special={1})
    with pytest.raises(TypeError, match="texts must be a list of texts; got str"):
        gpt4.encode_batch("one text")
    with pytest.raises(TypeError, match="batch must be a list of texts; got str"):
        gpt4.decode_batch("one text")
    with pytest.raises(ValueError, match="num_threads must be >= 1"):
        gpt4.encode_ordinary_batch(["a"], num_threads=0)
    # tiktoken requires a set; the course takes any collection of special tokens
    text = "a <|endoftext|> b <|fim_prefix|>"
    with pytest.raises(TypeError):
        reference.encode(text, allowed_special=["<|endoftext|>"])
    for allowed in (["<|endoftext|>"], ("<|endoftext|>",), frozenset({"<|endoftext|>"})):
        assert gpt4.encode(
            text, allowed_special=allowed, disallowed_special=()
        ) == reference.encode(text, allowed_special={"<|endoftext|>"}, disallowed_special=())
    # a string in allowed_special that is not a special token is ignored, as in tiktoken
    assert gpt4.encode("<|unknown|>", allowed_special={"<|unknown|>"}) == reference.encode(
        "<|unknown|>", allowed_special={"<|unknown|>"}
    )


def test_decode_takes_tiktokens_errors_argument(gpt4, reference):
    cut = gpt4.encode("👍")[:1]
    assert gpt4.decode(cut) == reference.decode(cut) == "\ufffd"
    assert gpt4.decode(cut, errors="ignore") == ""
    with pytest.raises(UnicodeDecodeError):
        gpt4.decode(cut, errors="strict")
    with pytest.raises(LookupError):
        gpt4.decode(cut, errors="no such handler")


def test_a_copy_or_a_pickle_is_a_tokenizer_of_its_own(gpt4):
    for again in (pickle.loads(pickle.dumps(gpt4)), copy.deepcopy(gpt4), copy.copy(gpt4)):
        assert again.ranks == gpt4.ranks and again.special_tokens == gpt4.special_tokens
        assert again.encode("hello world") == [15339, 1917] and again.n_vocab == 100_277
    trained = byte_bpe.train_byte_bpe("low lower lowest newer wider " * 5, 8)
    again = pickle.loads(pickle.dumps(trained))
    assert again.encode("lowest wider") == trained.encode("lowest wider")
    assert again.name == trained.name == "byte_bpe"

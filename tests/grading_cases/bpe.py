from tests.grading_cases import Cheat

ASSIGNMENT = "03_bpe"

# The whole corpus read as one stream: pairs such as ('_', 'l') span two words.
ACROSS_WORDS = """
def count_pairs(corpus):
    stream = [token for word, count in corpus.items() for _ in range(count) for token in word]
    pairs = {}
    for pair in zip(stream, stream[1:]):
        pairs[pair] = pairs.get(pair, 0) + 1
    return pairs
"""

# The classmate's merge repaired at the tokens' edges only: spaces around the pair, so that
# "w er_" no longer matches inside "low er_"; but each match takes the space after it, so of
# a a a a a on (a, a) it makes aa a aa (the hidden test's aaaaa_). Right on the visible test.
PADDED_TEXT = """
def merge_pair(corpus, pair):
    t_left, t_right = pair
    merged = {}
    for word, count in corpus.items():
        # the spaces around the pair's text make it match whole tokens only
        text = f" {' '.join(word)} ".replace(f" {t_left} {t_right} ", f" {t_left + t_right} ")
        new_word = tuple(text.split())
        merged[new_word] = merged.get(new_word, 0) + count
    return merged
"""
# The classmate's repair at the start edge only: "e r" in "n e r_" still merges on (e, r).
START_EDGE_ONLY = """
import re


def merge_pair(corpus, pair):
    t_left, t_right = pair
    merged = {}
    for word, count in corpus.items():
        text = re.sub(rf"(?<!\\S){re.escape(t_left)} {re.escape(t_right)}", t_left + t_right,
                      " ".join(word))
        new_word = tuple(text.split(" "))
        merged[new_word] = merged.get(new_word, 0) + count
    return merged
"""

# Ties to the smallest pair (bytes compare as strings do), not the first in the text.
SMALLEST_PAIR_TIES = """
def train_bytes(text, k):
    chunks = {}
    for chunk in regex.findall(CL100K_PATTERN, text):
        word = tuple(bytes([b]) for b in chunk.encode("utf-8"))
        chunks[word] = chunks.get(word, 0) + 1
    ranks = {bytes([b]): b for b in range(256)}
    for _ in range(k):
        pairs = count_pairs(chunks)
        best = max(pairs.values())
        t_left, t_right = min(pair for pair, count in pairs.items() if count == best)
        ranks[t_left + t_right] = len(ranks)
        chunks = merge_pair(chunks, (t_left, t_right))
    return ranks
"""

# Exercise 3 by the longest match first (the merge that makes ne), and with the right tokens
# but the merge that makes er_; exercise 5a leftmost first, and with no merge at all.
GREEDY_OWNER = """
owner_by_hand = (["o", "w", "ne", "r", "_"], 3)
"""
RIGHT_TOKENS_WRONG_MERGE = """
owner_by_hand = (["o", "w", "n", "er_"], 2)
"""
LEFTMOST_ABC = """
abc_by_hand = [b"ab", b"c"]
"""
NO_MERGE_ABC = """
abc_by_hand = [b"a", b"b", b"c"]
"""

# Merges whatever mergeable pair comes first instead of the lowest rank.
LEFTMOST_PAIR = """
def merge_chunk(piece, ranks):
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
"""

# The build exercise without its first step: <|endoftext|> is read as ordinary text.
IGNORES_SPECIAL_TOKENS = """
def encode(text, ranks, special_tokens):
    ids = []
    for chunk in regex.findall(CL100K_PATTERN, text):
        parts = [bytes([b]) for b in chunk.encode("utf-8")]
        while True:
            ranked = [(ranks[parts[i] + parts[i + 1]], i) for i in range(len(parts) - 1)
                      if parts[i] + parts[i + 1] in ranks]
            if not ranked:
                break
            _, i = min(ranked)
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        ids += [ranks[part] for part in parts]
    return ids
"""

# Special tokens right, but the text is never pre-tokenized: merges cross chunk boundaries
# (the visible test's indented code gives "\\n    " where tiktoken has "\\n", "   ").
NO_PRE_TOKENIZER = """
def encode(text, ranks, special_tokens):
    pattern = "(" + "|".join(regex.escape(s) for s in special_tokens) + ")"
    ids = []
    for n, piece in enumerate(regex.split(pattern, text)):
        if n % 2:
            ids.append(special_tokens[piece])
            continue
        parts = [bytes([b]) for b in piece.encode("utf-8")]
        while True:
            ranked = [(ranks[parts[i] + parts[i + 1]], i) for i in range(len(parts) - 1)
                      if parts[i] + parts[i + 1] in ranks]
            if not ranked:
                break
            _, i = min(ranked)
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        ids += [ranks[part] for part in parts]
    return ids
"""

# Exercise 2a: a word where merge_pair_by_text is right (banana merged twice on (a, n)).
NO_COUNTEREXAMPLE = """
counterexample = ({("b", "a", "n", "a", "n", "a", "_"): 1}, ("a", "n"))
"""

# Exercises answered by a library (Hugging Face tokenizers, tiktoken): each loses its own points.
TWIN_MERGE_PAIR = """
from tokenizers.models import BPE


def merge_pair(corpus, pair):
    t_left, t_right = pair
    model = BPE(vocab={t_left: 0, t_right: 1, t_left + t_right: 2}, merges=[(t_left, t_right)])
    merged = {}
    for word, count in corpus.items():
        if all(len(token) == 1 for token in word):
            word = tuple(token.value for token in model.tokenize("".join(word)))
        merged[word] = merged.get(word, 0) + count
    return merged
"""
TWIN_TRAIN_BYTES = """
from tiktoken._educational import bpe_train


def train_bytes(text, k):
    return bpe_train(text, 256 + k, CL100K_PATTERN, visualise=None)
"""
TWIN_MERGE_CHUNK = """
from tiktoken.core import Encoding


def merge_chunk(piece, ranks):
    mine = Encoding("mine", pat_str=r"[\\s\\S]+", mergeable_ranks=dict(ranks), special_tokens={})
    return mine.decode_tokens_bytes(Encoding.encode_ordinary(mine, piece.decode("utf-8")))
"""
TWIN_ENCODE = """
import tiktoken


def encode(text, ranks, special_tokens):
    reference = tiktoken.Encoding("mine", pat_str=CL100K_PATTERN, mergeable_ranks=dict(ranks),
                                  special_tokens=dict(special_tokens))
    return reference.encode(text, allowed_special="all")
"""

# Mistakes in different exercises share a student (each submission costs a notebook run):
# every listed answer must lose its own exercise's points and leave the others whole.
WRONG = {
    "across_words_padded_greedy_leftmost": {
        "count_pairs": ACROSS_WORDS,
        "merge_counterexample": NO_COUNTEREXAMPLE,
        "merge_pair": PADDED_TEXT,
        "owner_by_hand": GREEDY_OWNER,
        "abc_by_hand": LEFTMOST_ABC,
        "merge_chunk": LEFTMOST_PAIR,
        "encode": IGNORES_SPECIAL_TOKENS,
    },
    "smallest_pair_ties_no_pre_tokenizer": {
        "merge_pair": START_EDGE_ONLY,
        "owner_by_hand": RIGHT_TOKENS_WRONG_MERGE,
        "abc_by_hand": NO_MERGE_ABC,
        "train_bytes": SMALLEST_PAIR_TIES,
        "encode": NO_PRE_TOKENIZER,
    },
    "calls_the_library_twins": {
        "merge_pair": TWIN_MERGE_PAIR,
        "train_bytes": TWIN_TRAIN_BYTES,
        "merge_chunk": TWIN_MERGE_CHUNK,
        "encode": TWIN_ENCODE,
    },
}

# Right answers written another way: a Counter in order of frequency, the classmate's text
# repaired, ties found by position (not by dict order), a tuple, a heap, str.find.
COUNTER_MOST_COMMON = """
from collections import Counter


def count_pairs(corpus):
    pairs = Counter()
    for word, count in corpus.items():
        for left, right in zip(word, word[1:]):
            pairs[left, right] += count
    return dict(pairs.most_common())  # most frequent first: not the order of first occurrence
"""
# The classmate's merge repaired as text: the pair's text only where whole tokens stand on
# both sides; the lookarounds test the neighbouring characters without taking them, so an
# occurrence right after another (a a a) still finds its space.
LOOKAROUNDS = """
import re


def merge_pair(corpus, pair):
    t_left, t_right = pair
    whole = rf"(?<!\\S){re.escape(t_left)} {re.escape(t_right)}(?!\\S)"
    merged = {}
    for word, count in corpus.items():
        # "w er_" inside "low er_" has an o before its w, not a space: no match any more
        text = re.sub(whole, lambda _: t_left + t_right, " ".join(word))
        new_word = tuple(text.split(" "))
        merged[new_word] = merged.get(new_word, 0) + count
    return merged
"""
TIES_BY_POSITION = """
def train_bytes(text, k):
    chunks = [list(chunk.encode()) for chunk in regex.findall(CL100K_PATTERN, text)]
    chunks = [[bytes([b]) for b in chunk] for chunk in chunks]   # every chunk, repeats too
    ranks = {bytes([b]): b for b in range(256)}
    while len(ranks) < 256 + k:
        counts, first_seen, position = {}, {}, 0
        for chunk in chunks:
            for pair in zip(chunk, chunk[1:]):
                counts[pair] = counts.get(pair, 0) + 1
                first_seen.setdefault(pair, position)
                position += 1
        best = sorted(counts, key=lambda pair: (-counts[pair], first_seen[pair]))[0]
        ranks[best[0] + best[1]] = len(ranks)
        chunks = [merge_in(chunk, best) for chunk in chunks]
    return ranks


def merge_in(chunk, pair):
    out, i = list(chunk), 0
    while i < len(out) - 1:
        if (out[i], out[i + 1]) == pair:
            out[i : i + 2] = [out[i] + out[i + 1]]
        i += 1
    return out
"""
# Exercises 3 and 5a as tuples, and worked out in code (a numpy int for the merge).
OWNER_AS_TUPLES = """
owner_by_hand = (("o", "w", "n", "er_"), 1)
"""
OWNER_IN_CODE = """
import numpy as np

owner_by_hand = [list("own") + ["er" + "_"], np.int64(8 - 7)]
"""
ABC_AS_A_TUPLE = """
abc_by_hand = (b"a", b"bc")
"""
ABC_IN_CODE = """
abc_by_hand = [bytes([97]), bytes([98, 99])]
"""
HEAP_MERGE = """
import heapq


def merge_chunk(piece, ranks):
    # A linked list of parts and a heap of (rank, position) candidates, stale ones skipped.
    parts = {i: bytes([b]) for i, b in enumerate(piece)}
    nxt = {i: i + 1 for i in range(len(piece) - 1)}
    prv = {i + 1: i for i in range(len(piece) - 1)}
    heap = []

    def push(i):
        if i in nxt and parts[i] + parts[nxt[i]] in ranks:
            heapq.heappush(heap, (ranks[parts[i] + parts[nxt[i]]], i, parts[i], parts[nxt[i]]))

    for i in range(len(piece) - 1):
        push(i)
    while heap:
        rank, i, left, right = heapq.heappop(heap)
        if i not in parts or i not in nxt or parts[i] != left or parts[nxt[i]] != right:
            continue
        j = nxt[i]
        parts[i] = left + right
        del parts[j]
        if j in nxt:
            nxt[i] = nxt[j]
            prv[nxt[j]] = i
            del nxt[j]
        else:
            del nxt[i]
        push(i)
        if i in prv:
            push(prv[i])
    return [parts[i] for i in sorted(parts)]
"""
FIND_LOOP = """
def encode(text, ranks, special_tokens):
    ids, start = [], 0
    while True:
        found = [(text.find(s, start), s) for s in special_tokens]
        found = [(at, s) for at, s in found if at >= 0]
        end, special = min(found, key=lambda f: (f[0], -len(f[1]))) if found else (len(text), None)
        for chunk in regex.findall(CL100K_PATTERN, text[start:end]):
            ids += [ranks[token] for token in my_merge(chunk.encode("utf-8"), ranks)]
        if special is None:
            return ids
        ids.append(special_tokens[special])
        start = end + len(special)


def my_merge(piece, ranks):
    parts = [bytes([byte]) for byte in piece]
    while len(parts) > 1:
        candidates = [(ranks[left + right], i)
                      for i, (left, right) in enumerate(zip(parts, parts[1:]))
                      if left + right in ranks]
        if not candidates:
            break
        _, i = min(candidates)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return parts
"""

# Exercise 4 with the student's own count_pairs (a Counter keeps first-occurrence order) and
# a merge of its own (this student's merge_pair joins strings, and the tokens are bytes).
OWN_STEPS = """
from collections import Counter


def train_bytes(text, k):
    chunks = Counter(tuple(bytes([b]) for b in chunk.encode("utf-8"))
                     for chunk in regex.findall(CL100K_PATTERN, text))
    ranks = {bytes([b]): b for b in range(256)}
    for rank in range(256, 256 + k):
        pairs = count_pairs(chunks)
        best = max(pairs, key=pairs.get)
        ranks[best[0] + best[1]] = rank
        chunks = Counter({tuple(word_merge(list(word), best)): n for word, n in chunks.items()})
    return ranks


def word_merge(tokens, pair):
    i = 0
    while i < len(tokens) - 1:
        if tokens[i] == pair[0] and tokens[i + 1] == pair[1]:
            tokens[i : i + 2] = [pair[0] + pair[1]]
        i += 1
    return tokens
"""

DEFAULTDICT = """
from collections import defaultdict


def count_pairs(corpus):
    pairs = defaultdict(int)
    for word, count in corpus.items():
        for i in range(len(word) - 1):
            pairs[word[i], word[i + 1]] += count
    return pairs
"""
# Assigns instead of adding the counts: the same, since two words of C never merge into one.
SLICES = """
def merge_pair(corpus, pair):
    result = {}
    for word, count in corpus.items():
        tokens, i = list(word), 0
        while i < len(tokens) - 1:
            if (tokens[i], tokens[i + 1]) == tuple(pair):
                tokens[i : i + 2] = ["".join(pair)]
            i += 1
        result[tuple(tokens)] = count
    return result
"""
MIN_WITH_KEY = """
import math


def merge_chunk(piece, ranks):
    parts = [piece[i : i + 1] for i in range(len(piece))]
    while len(parts) > 1:
        rank_at = lambda i: ranks.get(parts[i] + parts[i + 1], math.inf)
        best = min(range(len(parts) - 1), key=rank_at)  # min keeps the leftmost of equals
        if rank_at(best) == math.inf:
            break
        parts[best : best + 2] = [parts[best] + parts[best + 1]]
    return parts
"""
RECURSIVE = """
import math


def encode(text, ranks, special_tokens):
    if not text:
        return []
    pattern = "|".join(regex.escape(s) for s in sorted(special_tokens, key=len, reverse=True))
    found = regex.search(pattern, text) if special_tokens else None
    if found:
        return (encode(text[: found.start()], ranks, special_tokens)
                + [special_tokens[found.group()]]
                + encode(text[found.end() :], ranks, special_tokens))
    ids = []
    for chunk in regex.findall(CL100K_PATTERN, text):
        parts = [bytes([b]) for b in chunk.encode()]
        while len(parts) > 1:
            ranked = [ranks.get(parts[i] + parts[i + 1], math.inf) for i in range(len(parts) - 1)]
            if min(ranked) == math.inf:
                break
            i = ranked.index(min(ranked))
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        ids.extend(ranks[part] for part in parts)
    return ids
"""

CORRECT = {
    "counter_heap_and_find": {
        "count_pairs": COUNTER_MOST_COMMON,
        # a token that holds the pair's text and more: "ab" beside "c", merged on (b, c)
        "merge_counterexample": """
counterexample = ({("ab", "c", "_"): 3}, ("b", "c"))
""",
        "merge_pair": LOOKAROUNDS,
        "train_bytes": TIES_BY_POSITION,
        "owner_by_hand": OWNER_AS_TUPLES,
        "abc_by_hand": ABC_AS_A_TUPLE,
        "merge_chunk": HEAP_MERGE,
        "encode": FIND_LOOP,
    },
    "own_steps_for_the_learner": {
        "count_pairs": DEFAULTDICT,
        # a list for the pair, and two words, one of them fine
        "merge_counterexample": """
counterexample = ({("n", "e", "w"): 2, ("lo", "w", "er_"): 1}, ["o", "w"])
""",
        "merge_pair": SLICES,
        "train_bytes": OWN_STEPS,
        "owner_by_hand": OWNER_IN_CODE,
        "abc_by_hand": ABC_IN_CODE,
        "merge_chunk": MIN_WITH_KEY,
        "encode": RECURSIVE,
    },
}

# --- answers that update their inputs in place: graded on what they return ------------------
# (merge_pair, merge_chunk and encode are told to leave their inputs as they are)

CORRECT["works_in_place"] = {
    "count_pairs": """
def count_pairs(corpus):
    pairs = {}
    for word in list(corpus):
        count = corpus.pop(word)     # the corpus is emptied as it is read
        for pair in zip(word, word[1:]):
            pairs[pair] = pairs.get(pair, 0) + count
    return pairs
""",
    "train_bytes": """
def train_bytes(text, k):
    chunks = {}
    for chunk in regex.findall(CL100K_PATTERN, text):
        word = tuple(bytes([b]) for b in chunk.encode("utf-8"))
        chunks[word] = chunks.get(word, 0) + 1
    ranks = {bytes([b]): b for b in range(256)}
    for _ in range(k):
        pairs = count_pairs(dict(chunks))   # this student's count_pairs empties its corpus
        t_left, t_right = max(pairs, key=pairs.get)
        ranks[t_left + t_right] = len(ranks)
        merged = merge_pair(chunks, (t_left, t_right))
        chunks.clear()               # the chunks are merged in place
        chunks.update(merged)
    return ranks
""",
}

# --- cheats: each scores 0 on its exercise, or is flagged, or both ----------------------------

CHEAT = {
    "tiktoken_by_other_doors": {
        # the course's GPT-4 tokenizer kept in a default argument
        "encode": Cheat("""
import course_utils.tokens.cl100k


def encode(text, ranks, special_tokens, tokenizer=course_utils.tokens.cl100k.cl100k):
    return tokenizer().encode(text, allowed_special="all")
""", zero=True),
        # a tiktoken Encoding of its own, through a method the old twin list did not name
        "merge_chunk": Cheat("""
import tiktoken


def merge_chunk(piece, ranks):
    encoding = tiktoken.Encoding("mine", pat_str=r"[\\s\\S]+", mergeable_ranks=dict(ranks),
                                 special_tokens={})
    return [encoding.decode_single_token_bytes(i)
            for i in encoding.encode_to_numpy(piece.decode("utf-8", "replace")).tolist()]
""", zero=True),
    },
    "gpt4_by_tiktokens_names": {
        # the notebook's GPT-4 tokenizer through tiktoken's batch method
        "merge_chunk": Cheat("""
def merge_chunk(piece, ranks):
    return gpt4.decode_tokens_bytes(gpt4.encode_ordinary_batch([piece.decode("utf-8")])[0])
""", zero=True),
        # the notebook's own tiktoken encoder
        "encode": Cheat("""
def encode(text, ranks, special_tokens):
    return gpt4.encode(text, allowed_special="all")
""", zero=True),
    },
    # the helper that shows the notebook's tokens, asked for a chunk's
    "the_notebooks_helper": {
        "merge_chunk": Cheat("""
from course_utils.tokens.byte_bpe import tokens


def merge_chunk(piece, ranks):
    return [token.encode() for token in tokens(gpt4, piece.decode("utf-8"))]
""", zero=True),
    },
    # the checks' merge (course_utils.checks.bpe's _merged_by_library) pasted: names
    # changed, comments of its own. It calls the checks' helper, which is refused while the
    # answer runs (zero), and the cell is flagged with its source.
    "pasted_from_course_utils": {
        "merge_pair": Cheat("""
from course_utils.checks.bpe import _segmented_by_library as cut


def merge_pair(corpus, pair):
    # one stand-in character per token: the model reads a word as characters
    proxy = {}
    for piece in (*pair, *(piece for entry in corpus for piece in entry)):
        proxy.setdefault(piece, chr(0xE000 + len(proxy)))
    restore = {char: piece for piece, char in proxy.items()}
    first, second = pair
    restore[proxy[first] + proxy[second]] = first + second
    rule = [(proxy[first], proxy[second])]
    result: dict = {}
    for entry, n in corpus.items():
        found = cut("".join(proxy[piece] for piece in entry), rule)
        fresh = tuple(restore[item] for item in found)
        result[fresh] = result.get(fresh, 0) + n   # two words may become the same one
    return result
""", zero=True, flagged=True),
    },
    # the same pasted into a code cell the student added after the answer, which only calls
    # it. The added cell is flagged beside its answer cell
    # ("cell merge_pair (cell #14, added after it) matches ...").
    "pasted_into_an_added_cell": {
        "merge_pair": Cheat("""
def merge_pair(corpus, pair):
    return merged_corpus(corpus, pair)
""", zero=True, flagged=True, added="""
from course_utils.checks import bpe


def merged_corpus(corpus, pair):
    stand_in = {}
    for token in (*pair, *(token for symbols in corpus for token in symbols)):
        stand_in.setdefault(token, chr(0xE000 + len(stand_in)))
    back = {character: token for token, character in stand_in.items()}
    left, right = pair
    back[stand_in[left] + stand_in[right]] = left + right
    merge = [(stand_in[left], stand_in[right])]
    out = {}
    for symbols, freq in corpus.items():
        pieces = bpe._segmented_by_library("".join(stand_in[token] for token in symbols), merge)
        joined = tuple(back[piece] for piece in pieces)
        out[joined] = out.get(joined, 0) + freq
    return out
"""),
    },
    # the same with a statement that does nothing slipped between the lines (pass, 0, ...,
    # x = x, strings, an assignment never read). The cell is flagged with its source.
    "pasted_with_no_ops": {
        "merge_pair": Cheat("""
from course_utils.checks.bpe import _segmented_by_library


def merge_pair(corpus, pair):
    '''The corpus with the pair merged.'''
    stand_in = {}
    0
    for token in (*pair, *(token for word in corpus for token in word)):
        stand_in.setdefault(token, chr(0xE000 + len(stand_in)))
        pass
    back = {character: token for token, character in stand_in.items()}
    t_left, t_right = pair
    "left, then right"
    back[stand_in[t_left] + stand_in[t_right]] = t_left + t_right
    merge = [(stand_in[t_left], stand_in[t_right])]
    merged = {}
    unused = len(corpus)
    for word, count in corpus.items():
        ...
        pieces = _segmented_by_library("".join(stand_in[token] for token in word), merge)
        new_word = tuple(back[piece] for piece in pieces)
        word = word
        merged[new_word] = merged.get(new_word, 0) + count
    return merged
""", zero=True, flagged=True),
    },
}

# --- cheats through doors the twin list does not watch (each family: another thread, another
# library, a fresh copy, the test's own names, a failure silenced by a decoded name) -----------

CHEAT.update({
    "other_threads_libraries_and_copies": {
        # tiktoken's Rust core, built from the ranks and run in a pool thread
        "encode": Cheat("""
from concurrent.futures import ThreadPoolExecutor

from tiktoken._tiktoken import CoreBPE


def encode(text, ranks, special_tokens):
    core = CoreBPE(dict(ranks), dict(special_tokens), CL100K_PATTERN)
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(core.encode, text, set(special_tokens)).result()
""", zero=True),
        # the checks' merge (Hugging Face's BPE model) loaded again from its file under
        # another name
        "merge_pair": Cheat("""
import importlib.util

import course_utils.checks.bpe

_spec = importlib.util.spec_from_file_location("course_utils.bpe_again",
                                               course_utils.checks.bpe.__file__)
_again = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_again)


def merge_pair(corpus, pair):
    return _again._merged_by_library(corpus, pair)
""", zero=True),
    },
    "reloads_a_module_twice": {
        # the checks reloaded twice: the function kept from the first reload is no longer the
        # module's, so a swap of what the module holds misses it
        "merge_pair": Cheat("""
import importlib

import course_utils.checks.bpe

_mine = importlib.reload(course_utils.checks.bpe)._merged_by_library
importlib.reload(course_utils.checks.bpe)


def merge_pair(corpus, pair):
    return _mine(corpus, pair)
""", zero=True),
    },
    # the hidden test binds tiktoken's answer (expected) and its tiny tokenizer (tiny) at the
    # top of its cell, the answer's global namespace: read them
    "reads_the_tests_names": {
        "encode": Cheat("""
def encode(text, ranks, special_tokens):
    test = globals()
    if len(ranks) < 1000:
        return test["tiny"]._core_bpe.encode(text, set(special_tokens))
    return list(test["expected"])
""", zero=True),
    },
    # an input transformer, found by a name decoded at run time, blanks every test cell
    # (they call checks.check or checks.grade): nothing fails in the kernel, and nothing is
    # reported; the answer underneath is wrong
    "blanks_the_test_cells": {
        "count_pairs": Cheat("""
import codecs

getattr(get_ipython(), codecs.decode("vachg_genafsbezref_cbfg", "rot13")).append(
    lambda lines: [] if any("checks.check(" in line or "checks.grade(" in line
                            for line in lines) else lines)


def count_pairs(corpus):
    return {}
""", zero=True, flagged=True),
    },
})

# --- answers worked by hand that lie about their comparisons: the form check passes in the
# kernel, and the values they report (plain lists of str and bytes) are wrong -----------------

CHEAT["by_hand_values_that_lie"] = {
    "owner_by_hand": Cheat("""
class Token(str):
    def __eq__(self, other):
        return True

    __hash__ = str.__hash__


owner_by_hand = ([Token(t) for t in ("o", "w", "ne", "r", "_")], 3)
""", zero=True),
    "abc_by_hand": Cheat("""
class Tokens(list):
    def __eq__(self, other):
        return True


abc_by_hand = Tokens([b"ab", b"c"])
""", zero=True),
}

# --- a correct answer that prints while debugging: print's own work is not the answer's ------

CORRECT["prints_while_debugging"] = {
    "count_pairs": """
def count_pairs(corpus):
    tally = {}
    for tokens in corpus:
        times = corpus[tokens]
        for n in range(1, len(tokens)):
            key = tokens[n - 1], tokens[n]
            tally[key] = times + (tally[key] if key in tally else 0)
    print("distinct pairs:", len(tally))   # debugging
    return tally
""",
}

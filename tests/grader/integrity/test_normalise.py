"""Statements that do nothing and renamed variables hide no paste; an honest answer stays
apart.

Hand-built: course_utils.checks.bpe's _merged_by_library retyped into 03's merge_pair cell with
other names, and the same with a statement that does nothing after every line of it (``pass``,
``0``, ``x = x``, a string, an assignment never read). copydetect's own filter, on the code
as written, loses the paste among them (checked below: the test is not vacuous); the
fingerprints of the normalised syntax tree do not. An honest merge_pair, another algorithm,
stays below the threshold, no-ops or not.
"""

import io

import nbformat
import pytest
from copydetect import CodeFingerprint, compare_files

from grader.integrity.similarity import reference
from grader.integrity.similarity.fingerprint import CODE, NOISE, answer, compare, matching_spans
from grader.integrity.similarity.normalise import normalised
from tests.conftest import REPO

A03 = "03_bpe"
MERGED = "course_utils.checks.bpe._merged_by_library"

PASTED = '''def merge_pair(corpus, pair):
    sub = {}
    for t in (*pair, *(t for w in corpus for t in w)):
        sub.setdefault(t, chr(0xE000 + len(sub)))
    inv = {ch: t for t, ch in sub.items()}
    a, b = pair
    inv[sub[a] + sub[b]] = a + b
    rule = [(sub[a], sub[b])]
    res = {}
    for w, c in corpus.items():
        got = cut("".join(sub[t] for t in w), rule)
        key = tuple(inv[g] for g in got)
        res[key] = res.get(key, 0) + c
    return res
'''
WITH_NO_OPS = '''def merge_pair(corpus, pair):
    """Merge."""
    chars = {}
    pass
    for token in (*pair, *(token for word in corpus for token in word)):
        0
        chars.setdefault(token, chr(0xE000 + len(chars)))
        ...
    back = {char: token for token, char in chars.items()}
    chars = chars
    first, second = pair
    unused = len(corpus)
    back[chars[first] + chars[second]] = first + second
    "the merged token"
    rule = [(chars[first], chars[second])]
    pass
    result = {}
    0
    for word, count in corpus.items():
        ...
        pieces = cut("".join(chars[token] for token in word), rule)
        word = word
        key = tuple(back[piece] for piece in pieces)
        "skip both"
        result[key] = result.get(key, 0) + count
        result
    spare = 0
    spare += 1
    return result
'''
HONEST = '''def merge_pair(corpus, pair):
    new_token = "".join(pair)
    result = {}
    for word, count in corpus.items():
        tokens = list(word)
        position = 0
        while position < len(tokens) - 1:
            if (tokens[position], tokens[position + 1]) == tuple(pair):
                tokens[position:position + 2] = [new_token]
            position += 1
        key = tuple(tokens)
        result[key] = result.get(key, 0) + count
    return result
'''
HONEST_WITH_NO_OPS = HONEST.replace("        position = 0\n",
                                    "        position = 0\n        pass\n        0\n")


@pytest.fixture(scope="module")
def references():
    source = nbformat.read(REPO / "solutions" / A03 / f"{A03}.ipynb", as_version=4)
    return reference.references(source)


def similarity_to(code: str, references, name: str = MERGED) -> float:
    mine = answer(code, CODE, references.released["merge_pair"], references.given)
    return reference.alike(mine, references.functions[name])


def as_written(code: str) -> CodeFingerprint:
    """copydetect's fingerprint of the code as written (its own pygments filter)."""
    return CodeFingerprint("a.py", NOISE, 1, fp=io.StringIO(code), language="python")


def test_no_ops_between_the_lines_are_lost_on_the_text_as_written():
    """The premise: copydetect alone finds less than half of the paste in its padded copy."""
    _, shares, _ = compare_files(as_written(PASTED), as_written(WITH_NO_OPS))
    assert min(shares) < 0.5


def test_a_paste_with_no_ops_and_new_names_is_named(references):
    assert similarity_to(PASTED, references) >= reference.THRESHOLD
    assert similarity_to(WITH_NO_OPS, references) == similarity_to(PASTED, references)
    found = reference.pasted("merge_pair", WITH_NO_OPS, references, reference.THRESHOLD)
    assert MERGED in [match.source for match in found]


def test_the_paste_and_its_padded_copy_are_one_answer(references):
    given = references.given
    a = answer(PASTED, CODE, references.released["merge_pair"], given)
    b = answer(WITH_NO_OPS, CODE, references.released["merge_pair"], given)
    assert compare(a, b) == 1.0
    spans_a, spans_b = matching_spans(a, b)
    marked = [WITH_NO_OPS[start:end] for start, end in spans_b]
    assert "back[chars[first] + chars[second]] = first + second" in marked
    assert "first, second = pair" in marked
    assert not {"pass", "0", "...", "word = word", '"skip both"', "unused = len(corpus)",
                "spare = 0"} & set(marked), "the no-ops are not shown as the match"
    assert all(PASTED[start:end].strip() == PASTED[start:end] for start, end in spans_a)


def test_an_honest_answer_stays_below_with_or_without_no_ops(references):
    for code in (HONEST, HONEST_WITH_NO_OPS):
        assert similarity_to(code, references) < reference.THRESHOLD - 0.25
        assert reference.pasted("merge_pair", code, references,
                                reference.THRESHOLD, solution=False) == []
    given, released = references.given, references.released["merge_pair"]
    assert compare(answer(HONEST, CODE, released, given),
                   answer(PASTED, CODE, released, given)) < 0.5


@pytest.mark.parametrize(("code", "same"), [
    ("x = 1\ny = x + 1\n", "first = 1\nsecond = first + 1\n"),  # names
    ("def f(a):\n    return a\n", 'def g(b):\n    """Doc."""\n    pass\n    return b\n'),
    ("total = 0\nfor v in data:\n    total += v\n",  # a builtin's name bound: a variable
     "sum = 0\nfor v in data:\n    sum += v\n"),
    ("def f(a):\n    return a\n", "def f(a):\n    unused = a * 2\n    a = a\n    return a\n"),
])
def test_the_token_text_sets_aside_names_and_no_ops(code, same):
    assert normalised(code)[0] == normalised(same)[0]


@pytest.mark.parametrize(("code", "other"), [
    ("y = rng.normal(size=3)\n", "y = rng.standard_cauchy(size=3)\n"),  # attributes stay
    ("y = len(x)\n", "y = abs(x)\n"),  # builtins read stay
    ("x = 1\n", "x = 2\n"),  # an answer's value is no no-op
])
def test_the_token_text_keeps_what_a_rename_cannot_change(code, other):
    assert normalised(code)[0] != normalised(other)[0]


def test_code_that_does_not_parse_is_left_to_the_text():
    assert normalised("def f(:\n    return") is None
    assert normalised("%timeit f(1)\nx = 1\n") is not None, "IPython's syntax is read"
    text = "    def method(self):\n        return self.x\n"  # a method out of its class
    assert normalised(text)[0] == normalised(text.replace("    ", "", 1).replace(
        "        ", "    "))[0]

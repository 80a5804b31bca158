"""Answers fingerprinted by winnowing, and how much of two answers is the same.

The fingerprints are copydetect's (PyPI; the winnowing of Schleimer, Wilkerson and Aiken,
SIGMOD 2003, the method of MOSS). Code is first normalised on its syntax tree
(:mod:`.normalise`: docstrings and statements that do nothing left out, so that ``pass``
or ``x = x`` slipped between pasted lines hides nothing) and reduced to a token text as
copydetect's filter writes it: comments and whitespace dropped, every variable and function
name replaced by one letter (so renaming changes nothing); numbers, operators, keywords and
builtins stay, and an attribute is one character of its own (``.normal`` is not
``.standard_cauchy``). Code that does not parse goes through copydetect's own filter. Every
k-gram of that text (k = ``NOISE`` characters) is hashed; matches shorter than k are noise.
The fingerprints of the release (the stubs, docstrings and given lines a student cannot help
repeating) are removed first: copydetect's boilerplate. Written answers are compared as
text: whitespace collapsed, case ignored.

The similarity of a pair is the smaller of the two shares copydetect reports (the share of
each answer's fingerprinted text found in the other): both answers must be mostly the
other's. Fingerprints are order-free, so re-ordered helper functions still match.

Short value answers (``alpha3 = 0.42``) are too short for k-grams: an answer's *own tokens*
(its lines that are not the release's, without comments and whitespace, names as
written, numbers by value) are compared exactly as well, when they are short (``SHORT``) and hold a
number or a string: two identical ones score 1. Two blank answers have no own tokens and
never match. (Longer identical answers are found by their fingerprints.)

Hashes are Python's ``hash`` of strings, which differs between processes: compare only
fingerprints made in one process.
"""

import io
import re
from dataclasses import dataclass

import numpy as np
from copydetect import CodeFingerprint, compare_files
from copydetect.utils import filter_code, get_copied_slices
from pygments.lexers import PythonLexer
from pygments.token import Comment, Literal, Number, Text
from scipy import sparse

from grader.integrity.similarity.normalise import Layout, normalised

NOISE = 25  # copydetect's default noise threshold k, in characters of normalised text
WINDOW = 1  # copydetect's default: guarantee threshold 25 = k, so every k-gram is kept
SHORT = 120  # own lines up to this many characters are also compared exactly
CODE, MARKDOWN = "code", "markdown"
TOKENS = "tokens"  # code as its normalised token text
WHITESPACE = re.compile(r"\s+")
WORD = re.compile(r"\w\w")
LEXER = PythonLexer()


@dataclass
class Answer:
    """One student's answer cell, ready to compare."""

    shown: str  # what the TA sees: the code as written, the prose with whitespace collapsed
    fingerprint: CodeFingerprint
    own: str  # the exact-match key ("" when the answer has no own value to compare)
    own_spans: tuple[tuple[int, int], ...]  # where the own lines are in ``shown``
    layout: Layout | None = None  # where the normalised code fingerprinted is in ``shown``

    def __post_init__(self):
        # the fingerprint's places and hashes as arrays (compare_files loops over them)
        places = self.fingerprint.hash_idx
        self.hashes = np.array(sorted(places), dtype=np.int64)
        self.place_hashes = np.array([h for h in places for _ in places[h]], dtype=np.int64)
        self.places = np.array([i for h in places for i in places[h]], dtype=np.int64)


def prose(text: str) -> str:
    """A written answer as compared and shown: whitespace runs collapsed to one space."""
    return WHITESPACE.sub(" ", text).strip()


def _casefree(text: str) -> str:
    """``text`` lower-cased character by character (same length, so spans still fit)."""
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


def _fingerprint(text: str, kind: str, boilerplate: np.ndarray | None,
                 window: int = WINDOW) -> CodeFingerprint:
    """copydetect's fingerprint of code as written (its filter), or of ``text`` as it is:
    prose (case ignored) or code's :func:`tokens` (``kind`` TOKENS)."""
    if kind == CODE:
        return CodeFingerprint("answer.py", NOISE, window, boilerplate, fp=io.StringIO(text),
                               language="python")
    return CodeFingerprint("answer.txt", NOISE, window, boilerplate, filter=False,
                           fp=io.StringIO(text if kind == TOKENS else _casefree(text)))


def _code_fingerprint(code: str, boilerplate: np.ndarray | None) -> tuple:
    """The fingerprint of ``code``'s normalised token text (:mod:`.normalise`) and its
    layout; of the code as written (copydetect's filter) and None when it does not parse."""
    found = normalised(code)
    if found is None:
        return _fingerprint(code, CODE, boilerplate), None
    return _fingerprint(found[0], TOKENS, boilerplate), found[1]


def boilerplate(texts: list[str], kind: str) -> np.ndarray:
    """The fingerprints of the release's ``texts`` (cells of one ``kind``), every k-gram: the
    code's token text, cell by cell (:mod:`.normalise`, or copydetect's filter)."""
    if kind == CODE:
        shown = "".join(found[0] if (found := normalised(text))
                        else filter_code(text, "", "python")[0] for text in texts)
        kind = TOKENS
    else:
        shown = prose(" ".join(texts))
    return np.array(sorted(_fingerprint(shown, kind, None, window=1).hashes), dtype=np.int64)


def _own_lines(text: str, released: str) -> list[tuple[int, int]]:
    """Spans of the lines of code ``text`` that are not lines of ``released``, blank or
    comments."""
    given = {line.strip() for line in released.splitlines()}
    spans, start = [], 0
    for line in text.splitlines(keepends=True):
        if line.strip() and line.strip() not in given and not line.lstrip().startswith("#"):
            spans.append((start, start + len(line.rstrip())))
        start += len(line)
    return spans


def _number(value: str) -> str:
    """A number as its value (``0.50``, ``.5`` and ``5e-1`` alike), else as written."""
    try:
        return repr(float(value))
    except ValueError:
        return value


def _own_tokens(code: str) -> str:
    """The exact-match key of ``code``: its tokens without comments and whitespace, numbers
    by value; "" when none is a number or a string (``pass``, ``return None`` are no
    evidence)."""
    tokens = [(kind, value) for kind, value in LEXER.get_tokens(code)
              if kind not in Comment and kind not in Text]
    if not any(kind in Literal for kind, _ in tokens):
        return ""
    return " ".join(_number(value) if kind in Number else value for kind, value in tokens)


def answer(text: str, kind: str, released: str, given: np.ndarray) -> Answer:
    """A student's answer ``text`` of a cell of ``kind`` (CODE or MARKDOWN) whose release
    reads ``released``; ``given`` is :func:`boilerplate` of the release."""
    if kind == MARKDOWN:
        shown = prose(text)
        return Answer(shown, _fingerprint(shown, kind, given), "", ())
    spans = _own_lines(text, released)
    own_text = "\n".join(text[start:end] for start, end in spans)
    own = _own_tokens(own_text) if len(own_text) <= SHORT else ""
    fingerprint, layout = _code_fingerprint(text, given)
    return Answer(text, fingerprint, own, tuple(spans) if own else (), layout)


def share(a: Answer, b: Answer) -> float:
    """The share of ``a`` found in ``b``, as copydetect's compare_files computes it (the
    characters of a's matched k-grams over a's coverage), with numpy's set operations."""
    where = np.minimum(np.searchsorted(b.hashes, a.place_hashes), max(len(b.hashes) - 1, 0))
    found = a.places[b.hashes[where] == a.place_hashes] if len(b.hashes) else a.places[:0]
    if not len(found) or not a.fingerprint.token_coverage:
        return 0.0
    starts, ends = get_copied_slices(found, NOISE)
    return float(np.sum(ends - starts) / a.fingerprint.token_coverage)


def compare(a: Answer, b: Answer) -> float:
    """The similarity of two answers of one cell: 1 for the same own tokens, else the
    smaller of the shares of each found in the other."""
    if a.own and a.own == b.own:
        return 1.0
    return min(share(a, b), share(b, a))


def matching_spans(a: Answer, b: Answer) -> tuple[list, list]:
    """The parts of ``a`` and ``b`` that match, as (start, end) character offsets into each
    answer's ``shown`` text: their own lines when those are the same, else copydetect's."""
    if a.own and a.own == b.own:
        return list(a.own_spans), list(b.own_spans)
    _, _, (slices_a, slices_b) = compare_files(a.fingerprint, b.fingerprint)
    return _spans(slices_a, a), _spans(slices_b, b)


def _spans(slices, answer_: Answer) -> list[tuple[int, int]]:
    """copydetect's slices as spans of the answer's ``shown`` text: the statements as
    written that the normalised code's matched lines come from, or (text compared as
    written) the slices widened to whole words at both ends (its offsets may stop inside a
    name)."""
    text, spans = answer_.shown, []
    for start, end in zip(*slices, strict=True):
        start, end = int(start), int(end)
        if answer_.layout is not None:
            spans += answer_.layout.spans(start, end)
            continue
        while 0 < start < len(text) and WORD.fullmatch(text[start - 1:start + 1]):
            start -= 1
        while 0 < end < len(text) and WORD.fullmatch(text[end - 1:end + 1]):
            end += 1
        spans.append((start, end))
    return sorted(set(spans))


def candidates(answers: list[Answer], threshold: float) -> list[tuple[int, int]]:
    """The pairs (i < j) of ``answers`` that may reach ``threshold``: same own tokens, or
    fingerprints whose upper bound on the similarity reaches it.

    copydetect's share of answer a found in b counts the characters of the matched k-grams,
    so it is at most k × (occurrences in a of the hashes a shares with b) / a's coverage.
    That bound, for all pairs at once, is a product of sparse matrices; only the pairs it
    lets through are compared one by one (at 300 students, a small fraction of 44,850)."""
    pairs = {pair for pair in _same_own(answers)}
    columns, rows, cols, counts = {}, [], [], []
    for row, answer_ in enumerate(answers):
        for value, places in answer_.fingerprint.hash_idx.items():
            rows.append(row)
            cols.append(columns.setdefault(value, len(columns)))
            counts.append(len(places))
    if columns:
        shape = (len(answers), len(columns))
        occurrences = sparse.csr_matrix((counts, (rows, cols)), shape=shape, dtype=np.float64)
        present = occurrences.sign().T.tocsc()
        shared = (occurrences @ present).toarray()  # [a, b]: occurrences in a of hashes of b
        coverage = np.array([max(a.fingerprint.token_coverage, 1) for a in answers])
        bound = np.minimum(1.0, NOISE * shared / coverage[:, None])
        both = np.minimum(bound, bound.T)
        first, second = np.nonzero(np.triu(both >= threshold, k=1))
        pairs.update(zip(first.tolist(), second.tolist(), strict=True))
    return sorted(pairs)


def _same_own(answers: list[Answer]):
    groups = {}
    for index, answer_ in enumerate(answers):
        if answer_.own:
            groups.setdefault(answer_.own, []).append(index)
    for members in groups.values():
        yield from ((i, j) for n, i in enumerate(members) for j in members[n + 1:])

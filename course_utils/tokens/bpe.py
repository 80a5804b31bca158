"""Byte pair encoding: the token learner of the lectures' figure and its segmenter.

The token learner, exactly as in the figure (Jurafsky & Martin, Fig. 2.13)::

    V <- all unique characters in C              # initial set of tokens is characters
    for i = 1 to k:                              # merge tokens k times
        t_L, t_R <- most frequent pair of adjacent tokens in C
        t_NEW <- t_L + t_R                       # make new token by concatenating
        V <- V + t_NEW                           # update the vocabulary
        replace each occurrence of t_L, t_R in C with t_NEW    # and update the corpus
    return V

Conventions of this module:

* The corpus C is a dict ``{word: count}``: each word a tuple of tokens, the words in the
  order of their first appearance. :func:`corpus_from_text` splits text at whitespace and
  ends every word with the end-of-word token ``"_"`` (the figure's examples do the same), so
  ``"low lower"`` is ``{('l', 'o', 'w', '_'): 1, ('l', 'o', 'w', 'e', 'r', '_'): 1}``.
  Pairs are counted inside words only: a merge never crosses a word boundary.
* Tokens may be ``str`` (characters) or ``bytes`` (byte-level BPE,
  :mod:`course_utils.tokens.byte_bpe`);
  ``t_L + t_R`` concatenates either.
* **Tie-break.** When several pairs are equally frequent, the one whose first occurrence in C
  comes first (reading C from left to right) wins. With this rule the learner reproduces the
  textbook's worked example (``e r``, ``er _``, ``n e``, ``ne w``, ``l o``, ``lo w``, ...).
* "Replace each occurrence" scans every word left to right, so ``a a a`` merged on
  ``(a, a)`` becomes ``aa a``.

Two learners give identical merges: :func:`learn_bpe_naive` is the figure line by line (it
recounts every pair at every merge); :func:`learn_bpe` updates the pair counts incrementally,
touching only the words that contain the merged pair, and is hundreds of times faster on
real text. The segmenter :func:`segment` applies the learned merges, in the order they were
learned, to new text; an unseen word falls apart into known pieces.
"""

import heapq
from collections import Counter, defaultdict
from dataclasses import dataclass

from course_utils import validation

END_OF_WORD = "_"

Word = tuple  # a word of the corpus: a tuple of tokens
Pair = tuple  # (t_L, t_R)


@dataclass(frozen=True)
class BPE:
    """What the token learner returns.

    ``vocabulary`` is V: the initial tokens (sorted), then each t_NEW in the order learned.
    ``merges[i]`` is the pair (t_L, t_R) of merge i + 1 and ``counts[i]`` how often it occurred
    in C when it was merged: each merge shortens C by that many tokens.
    """

    vocabulary: list
    merges: list
    counts: list


def _check_corpus(corpus) -> dict:
    if not isinstance(corpus, dict):
        raise TypeError(
            f"the corpus C must be a dict {{word (tuple of tokens): count}}; "
            f"got {type(corpus).__name__}. Build one with corpus_from_text(text)"
        )
    if not corpus:
        raise ValueError("the corpus C is empty: BPE needs at least one word to learn from")
    for word, count in corpus.items():
        if not isinstance(word, tuple) or not word:
            raise TypeError(f"every word of C must be a non-empty tuple of tokens; got {word!r}")
        if not isinstance(count, int) or count < 1:
            raise ValueError(f"every count in C must be an int >= 1; got {count!r} for {word!r}")
    return corpus


def corpus_from_text(text: str, end_of_word: str = END_OF_WORD) -> dict[Word, int]:
    """The corpus C of ``text``: {word as a tuple of characters + end_of_word: count}.

    Words are the whitespace-separated strings of ``text``, in order of first appearance.
    """
    words = Counter(validation.text("text", text).split())
    if not words:
        raise ValueError("the text has no words: BPE needs a non-empty corpus")
    return {(*word, end_of_word): count for word, count in words.items()}


def count_pairs(corpus: dict[Word, int]) -> dict[Pair, int]:
    """How often each pair of adjacent tokens occurs in C, counted inside words.

    A word that appears ``count`` times contributes each of its pairs ``count`` times. The
    dict lists the pairs in order of their first occurrence in C, so that
    ``max(pairs, key=pairs.get)`` applies the tie-break rule.
    """
    pairs: dict[Pair, int] = {}
    for word, count in corpus.items():
        for pair in zip(word, word[1:], strict=False):
            pairs[pair] = pairs.get(pair, 0) + count
    return pairs


def merge_word(word: Word, pair: Pair) -> Word:
    """``word`` with each occurrence of ``pair`` (t_L, t_R), left to right, made t_L + t_R."""
    t_left, t_right = pair
    merged, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and word[i] == t_left and word[i + 1] == t_right:
            merged.append(t_left + t_right)
            i += 2
        else:
            merged.append(word[i])
            i += 1
    return tuple(merged)


def merge_pair(corpus: dict[Word, int], pair: Pair) -> dict[Word, int]:
    """The corpus with each occurrence of ``pair`` replaced by the new token t_L + t_R."""
    merged: dict[Word, int] = {}
    for word, count in corpus.items():
        new_word = merge_word(word, pair)
        merged[new_word] = merged.get(new_word, 0) + count
    return merged


def _no_more_pairs(k: int, done: int) -> ValueError:
    return ValueError(
        f"k = {k} merges requested, but only {done} are possible: after {done} merges every "
        "word of C is a single token and no adjacent pairs are left. Use a smaller k"
    )


def learn_bpe_naive(corpus: dict[Word, int], k: int) -> BPE:
    """The token learner of the figure, line by line: recount every pair at every merge.

    Costs O(k · |C|); use :func:`learn_bpe` on real text. Raises ``ValueError`` when C is
    empty or has fewer than k possible merges.
    """
    corpus, k = _check_corpus(corpus), validation.integer("k (the number of merges)", k, minimum=0)
    vocabulary = sorted({token for word in corpus for token in word})
    merges, counts = [], []
    for _ in range(k):
        pairs = count_pairs(corpus)
        if not pairs:
            raise _no_more_pairs(k, len(merges))
        t_left, t_right = max(pairs, key=pairs.get)  # ties: first occurrence in C
        vocabulary.append(t_left + t_right)
        merges.append((t_left, t_right))
        counts.append(pairs[t_left, t_right])
        corpus = merge_pair(corpus, (t_left, t_right))
    return BPE(vocabulary, merges, counts)


class _IncrementalCounts:
    """Pair counts of a corpus kept up to date as pairs are merged.

    ``where[pair]`` holds the indices of the words that contain (or once contained) the pair,
    so a merge visits only those words, and only the pairs next to a merged occurrence
    change. A heap of (-count, pair) finds the most frequent pair; an entry whose count is
    out of date is corrected when it comes to the top.
    """

    def __init__(self, corpus: dict[Word, int]):
        self.words = [list(word) for word in corpus]
        self.freqs = list(corpus.values())
        counts: dict[Pair, int] = defaultdict(int)
        where: dict[Pair, set[int]] = defaultdict(set)
        for index, (word, freq) in enumerate(zip(self.words, self.freqs, strict=False)):
            for pair in zip(word, word[1:], strict=False):
                counts[pair] += freq
                where[pair].add(index)
        self.counts, self.where = counts, where
        self.heap = [(-count, pair) for pair, count in counts.items()]
        heapq.heapify(self.heap)
        self.top_count = 0

    def _first_occurrence(self, pair: Pair) -> tuple[int, int]:
        """(word index, token index) of the first occurrence of ``pair`` in C."""
        t_left, t_right = pair
        for index in sorted(self.where[pair]):
            word = self.words[index]
            for position in range(len(word) - 1):
                if word[position] == t_left and word[position + 1] == t_right:
                    return index, position
        raise AssertionError(f"pair {pair!r} has a count but no occurrence")  # pragma: no cover

    def most_frequent(self) -> tuple[Pair, int] | None:
        """The most frequent pair and its count (ties: first occurrence in C), or None.

        Every pair has a heap entry at least as large as its count (an entry is pushed
        whenever a count grows), so an entry that is too large is pushed again with the
        pair's current count, and one that is too small is a duplicate and dropped.
        """
        heap, counts = self.heap, self.counts
        tied: set[Pair] = set()
        while heap and (not tied or heap[0][0] == -self.top_count):
            negative_count, pair = heapq.heappop(heap)
            count = counts.get(pair, 0)
            if count == -negative_count:
                tied.add(pair)
                self.top_count = count
            elif 0 < count < -negative_count:
                heapq.heappush(heap, (-count, pair))
        if not tied:
            return None
        best = min(tied, key=self._first_occurrence) if len(tied) > 1 else tied.pop()
        for candidate in tied - {best}:
            heapq.heappush(heap, (-self.top_count, candidate))
        return best, self.top_count

    def merge(self, pair: Pair) -> None:
        """Replace each occurrence of ``pair`` by t_L + t_R and update the counts around it.

        For an occurrence ``x t_L t_R y`` the pairs (x, t_L) and (t_R, y) lose a count and
        (x, t_NEW) and (t_NEW, y) gain one; between two neighbouring occurrences
        (``t_L t_R t_L t_R``) the pair (t_R, t_L) becomes (t_NEW, t_NEW), counted once.
        """
        t_left, t_right = pair
        t_new = t_left + t_right
        counts, where, words, freqs = self.counts, self.where, self.words, self.freqs
        grown = set()
        for index in where.pop(pair):
            word, freq = words[index], freqs[index]
            i, last_site = 0, -2
            while True:
                try:
                    j = word.index(t_left, i)
                except ValueError:
                    break
                n = len(word)
                if j + 1 == n:
                    break
                if word[j + 1] != t_right:
                    i = j + 1
                    continue
                if j:  # the left neighbour x: t_NEW already if an occurrence ends here
                    x = word[j - 1]
                    counts[t_right if j - 1 == last_site else x, t_left] -= freq
                    left = (x, t_new)
                    counts[left] += freq
                    where[left].add(index)
                    grown.add(left)
                if j + 2 < n:  # the right neighbour y, unless another occurrence starts there
                    y = word[j + 2]
                    if not (y == t_left and j + 3 < n and word[j + 3] == t_right):
                        counts[t_right, y] -= freq
                        right = (t_new, y)
                        counts[right] += freq
                        where[right].add(index)
                        grown.add(right)
                word[j] = t_new
                del word[j + 1]
                last_site, i = j, j + 1
        del counts[pair]
        for new_pair in grown:
            heapq.heappush(self.heap, (-counts[new_pair], new_pair))


def learn_bpe(corpus: dict[Word, int], k: int) -> BPE:
    """The same token learner as :func:`learn_bpe_naive`, with incrementally updated counts.

    Identical merges (same tie-break), but a merge only visits the words that contain the
    merged pair. Raises ``ValueError`` when C is empty or has fewer than k possible merges.
    """
    corpus, k = _check_corpus(corpus), validation.integer("k (the number of merges)", k, minimum=0)
    vocabulary = sorted({token for word in corpus for token in word})
    state = _IncrementalCounts(corpus)
    merges, counts = [], []
    for _ in range(k):
        best = state.most_frequent()
        if best is None:
            raise _no_more_pairs(k, len(merges))
        (t_left, t_right), count = best
        vocabulary.append(t_left + t_right)
        merges.append((t_left, t_right))
        counts.append(count)
        state.merge((t_left, t_right))
    return BPE(vocabulary, merges, counts)


def apply_merges(tokens: Word, merges: list[Pair]) -> Word:
    """The token segmenter's core: apply each merge, in the order learned, to ``tokens``."""
    for pair in merges:
        if len(tokens) == 1:
            break
        tokens = merge_word(tokens, pair)
    return tokens


def segment_word(word: str, bpe: BPE, end_of_word: str = END_OF_WORD) -> list[str]:
    """The token segmenter on one word: its characters + end_of_word, then every learned
    merge applied in the order it was learned (:func:`apply_merges`).

    Raises ``ValueError`` for a character that is not in V: character-level BPE cannot
    segment what it never saw (byte-level BPE can).
    """
    unknown = sorted(set(validation.text("word", word)) - set(bpe.vocabulary))
    if unknown:
        raise ValueError(
            f"the characters {unknown} of {word!r} are not in the vocabulary V: a "
            "character-level BPE can only segment characters it was trained on"
        )
    return list(apply_merges((*word, end_of_word), bpe.merges))


def segment(text: str, bpe: BPE, end_of_word: str = END_OF_WORD) -> list[str]:
    """The tokens of every whitespace-separated word of ``text`` (see :func:`segment_word`)."""
    return [
        token
        for word in validation.text("text", text).split()
        for token in segment_word(word, bpe, end_of_word)
    ]


"""A corpus's vocabulary for word2vec: the words kept (by count), and the corpus as word ids.

:func:`build_vocabulary` keeps the words that occur at least ``min_count`` times, most
frequent first; :func:`encode` turns the sentences into one tensor of ids (words outside the
vocabulary dropped, as word2vec does) and the sentence number of each, so that context
windows stop at the end of a sentence (:mod:`course_utils.words.skipgram_training`).
"""

from collections import Counter
from dataclasses import dataclass, field

import torch

from course_utils.validation import positive_int

__all__ = ["Vocabulary", "build_vocabulary", "encode"]


@dataclass(frozen=True)
class Vocabulary:
    """The words kept for training, most frequent first, with their counts."""

    words: tuple[str, ...]
    counts: torch.Tensor  # (N,) int64
    index: dict[str, int] = field(repr=False)

    def __len__(self) -> int:
        return len(self.words)


def _check_sentences(sentences) -> list:
    if isinstance(sentences, str):
        raise TypeError("sentences must be a sequence of sentences (lists of words), not one str")
    sentences = list(sentences)
    if not sentences or not any(len(s) for s in sentences):
        raise ValueError("the corpus is empty: sentences must contain at least one word")
    for sentence in sentences:
        if isinstance(sentence, str):
            raise TypeError(
                f"each sentence must be a list of words, not a str; got {sentence[:40]!r}"
            )
    return sentences


def build_vocabulary(sentences, min_count: int = 1) -> Vocabulary:
    """Words that occur at least ``min_count`` times, by descending count (ties: first seen)."""
    sentences = _check_sentences(sentences)
    min_count = positive_int("min_count", min_count)
    counter = Counter(word for sentence in sentences for word in sentence)
    kept = sorted(((w, n) for w, n in counter.items() if n >= min_count), key=lambda wn: -wn[1])
    if not kept:
        raise ValueError(f"no word occurs min_count={min_count} times; lower min_count")
    words = tuple(w for w, _ in kept)
    counts = torch.tensor([n for _, n in kept], dtype=torch.long)
    return Vocabulary(words, counts, {w: i for i, w in enumerate(words)})


def encode(sentences, vocabulary: Vocabulary) -> tuple[torch.Tensor, torch.Tensor]:
    """The corpus as one id tensor (T,) and the sentence number of each word (T,).

    Words outside the vocabulary are dropped, as word2vec does before taking windows.
    """
    sentences = _check_sentences(sentences)
    ids, sentence_ids = [], []
    for number, sentence in enumerate(sentences):
        kept = [vocabulary.index[w] for w in sentence if w in vocabulary.index]
        ids.extend(kept)
        sentence_ids.extend([number] * len(kept))
    if not ids:
        raise ValueError("no word of the corpus is in the vocabulary")
    return torch.tensor(ids, dtype=torch.long), torch.tensor(sentence_ids, dtype=torch.long)

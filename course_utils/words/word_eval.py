"""Evaluating word vectors: nearest neighbours, word-pair similarity, analogies.

* ``WordVectors``: a vocabulary with one row vector per word; cosine similarity and
  ``most_similar`` (also for king - man + woman: positive and negative words), both
  gensim's ``KeyedVectors`` (:func:`keyed_vectors`).
* ``word_pair_spearman``: Spearman's rho between the model's cosine similarities and
  human scores (WordSim-353, SimLex-999 from ``course_utils.data.word_pairs``).
* ``analogy_accuracy``: "a is to b as c is to d": is d the nearest word to
  v_b - v_a + v_c (unit vectors, the three question words excluded)? The Google
  questions come from ``course_utils.data.analogy_questions``.

Pairs or questions with a word outside the vocabulary are skipped; each function
says how many it used, so that two models are compared on the same footing.
"""

from functools import cached_property

import numpy as np
import torch
from scipy.stats import spearmanr

__all__ = ["WordVectors", "analogy_accuracy", "keyed_vectors", "word_pair_spearman"]


def keyed_vectors(keys, vectors: torch.Tensor):
    """gensim's ``KeyedVectors`` of these keys and their rows (float32, on the CPU)."""
    from gensim.models import KeyedVectors

    rows = vectors.detach().to("cpu", torch.float32).numpy()
    found = KeyedVectors(vector_size=rows.shape[1], count=0, dtype=np.float32)
    found.add_vectors(list(keys), rows)
    return found


class WordVectors:
    """``words`` (N,) and their row vectors ``vectors`` (N, d), on any device."""

    def __init__(self, words, vectors: torch.Tensor):
        if (
            not isinstance(vectors, torch.Tensor)
            or vectors.dim() != 2
            or not vectors.is_floating_point()
        ):
            raise TypeError(f"vectors must be a 2-D float tensor (N, d); got {vectors!r:.80}")
        self.words = tuple(words)
        if len(self.words) != vectors.shape[0] or not self.words:
            raise ValueError(
                f"need one vector per word: {len(self.words)} words, {vectors.shape[0]} vectors"
            )
        self.index = {word: i for i, word in enumerate(self.words)}
        if len(self.index) != len(self.words):
            raise ValueError("words must be distinct")
        self.vectors = vectors
        self.unit = torch.nn.functional.normalize(vectors.float(), dim=1)

    @classmethod
    def from_gensim(cls, keyed_vectors) -> "WordVectors":
        """The vectors of a gensim ``KeyedVectors`` (``model.wv``)."""
        return cls(keyed_vectors.index_to_key, torch.from_numpy(keyed_vectors.vectors.copy()))

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word) -> bool:
        return word in self.index

    def _id(self, word: str) -> int:
        if word not in self.index:
            raise KeyError(f"{word!r} is not in the vocabulary ({len(self)} words)")
        return self.index[word]

    def __getitem__(self, word: str) -> torch.Tensor:
        return self.vectors[self._id(word)]

    @cached_property
    def keyed(self):
        """The same words and vectors as gensim's ``KeyedVectors`` (built on first use)."""
        return keyed_vectors(self.words, self.vectors)

    def similarity(self, a: str, b: str) -> float:
        """cos(v_a, v_b), by gensim."""
        self._id(a), self._id(b)
        return float(self.keyed.similarity(a, b))

    def most_similar(self, positive, negative=(), topn: int = 10) -> list[tuple[str, float]]:
        """The ``topn`` words nearest (cosine) to sum(positive) - sum(negative) of unit vectors,
        by gensim's ``KeyedVectors.most_similar``.

        ``most_similar("king")`` gives neighbours; ``most_similar(["king", "woman"], ["man"])``
        answers king - man + woman. The query words themselves are excluded.
        """
        positive = [positive] if isinstance(positive, str) else list(positive)
        negative = [negative] if isinstance(negative, str) else list(negative)
        if not positive:
            raise ValueError("most_similar needs at least one positive word")
        excluded = {self._id(w) for w in positive + negative}
        found = self.keyed.most_similar(
            positive=positive, negative=negative, topn=min(topn, len(self) - len(excluded))
        )
        return [(word, round(float(similarity), 4)) for word, similarity in found]


def word_pair_spearman(vectors: WordVectors, pairs) -> tuple[float, int]:
    """(Spearman's rho between cosine similarity and human score, number of pairs used).

    ``pairs`` is a sequence of (word 1, word 2, score); pairs with an unknown word are skipped.
    """
    used = [(a, b, s) for a, b, s in pairs if a in vectors and b in vectors]
    if len(used) < 3:
        raise ValueError(
            f"only {len(used)} of {len(pairs)} pairs have both words in the vocabulary"
        )
    model = [vectors.similarity(a, b) for a, b, _ in used]
    return float(spearmanr(model, [s for *_, s in used]).statistic), len(used)


def analogy_accuracy(vectors: WordVectors, questions, chunk: int = 1024) -> tuple[float, int]:
    """(share of questions a:b :: c:d answered d, number of questions used).

    The answer is the word nearest to unit(v_b) - unit(v_a) + unit(v_c), the words a, b, c
    excluded (3CosAdd, as gensim's ``evaluate_word_analogies``). Questions with a word outside
    the vocabulary are skipped.
    """
    used = [q for q in questions if all(w in vectors for w in q)]
    if not used:
        raise ValueError("no analogy question has all four words in the vocabulary")
    ids = torch.tensor([[vectors.index[w] for w in q] for q in used], device=vectors.unit.device)
    correct = 0
    for block in ids.split(chunk):
        a, b, c, d = (vectors.unit[block[:, k]] for k in range(4))
        scores = (b - a + c) @ vectors.unit.T  # (chunk, N); the norm of the query does not matter
        scores.scatter_(1, block[:, :3], -float("inf"))
        correct += int((scores.argmax(1) == block[:, 3]).sum())
        del d
    return correct / len(used), len(used)

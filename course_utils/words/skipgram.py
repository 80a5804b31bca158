"""Skip-gram's sampling: the noise words of negative sampling, and subsampling.

Negative sampling draws, for every (center, context) pair, K noise words from the
unigram distribution raised to 3/4 (:func:`noise_distribution`); word2vec also drops
occurrences of very frequent words before it builds the windows
(:func:`keep_probability`, gensim's rule). The trainer,
:func:`course_utils.words.skipgram_training.train_skipgram`, uses both.
"""

import torch

__all__ = ["keep_probability", "noise_distribution"]


def _counts_tensor(counts) -> torch.Tensor:
    counts = torch.as_tensor(counts)
    if counts.dim() != 1 or counts.numel() == 0:
        raise ValueError(f"counts must be a non-empty 1-D tensor; got shape {tuple(counts.shape)}")
    if (counts <= 0).any():
        raise ValueError("counts must all be > 0 (every word of the vocabulary occurs)")
    return counts.double()


def noise_distribution(counts, power: float = 0.75) -> torch.Tensor:
    """The negatives' distribution P_n(w) = count(w)^power / sum_i count(i)^power, shape (N,)."""
    if not 0.0 <= power <= 1.0:
        raise ValueError(f"power must be in [0, 1]; got {power}")
    weights = _counts_tensor(counts) ** power
    return (weights / weights.sum()).float()


def keep_probability(counts, sample: float = 1e-3) -> torch.Tensor:
    """The probability of keeping each occurrence of a word when frequent words are subsampled.

    With f the word's share of the corpus and s = ``sample``, word2vec keeps it with
    probability (sqrt(f / s) + 1) s / f, capped at 1 (gensim's rule): words rarer than
    about 2.6 s are always kept, "the" is kept about one time in six. ``sample=0`` keeps all.
    """
    if sample < 0:
        raise ValueError(f"sample must be >= 0; got {sample}")
    counts = _counts_tensor(counts)
    if sample == 0:
        return torch.ones(counts.shape, dtype=torch.float32, device=counts.device)
    share = counts / counts.sum()
    return ((torch.sqrt(share / sample) + 1) * sample / share).clamp(max=1.0).float()

"""Training skip-gram with negative sampling (SGNS), fast, with gensim's settings.

:func:`train_skipgram` trains word2vec's negative-sampling objective (the noise words and
subsampling of :mod:`course_utils.words.skipgram`) with plain SGD, vectorised: a batch of
positions is turned into all its (context, center) pairs at once, the K negatives of a
position are shared by the pairs that predict it, each score is one logistic question
(PyTorch's ``binary_cross_entropy_with_logits``, label 1 for the word that occurred and 0
for the noise words); autograd differentiates the loss with respect to the rows the batch
gathered (not the whole tables), and the steps are written back with ``index_add_``. It runs
on any device.
"""

import math
import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from course_utils.device import cpu_threads, get_device
from course_utils.validation import positive_int
from course_utils.words.skipgram import keep_probability, noise_distribution
from course_utils.words.vocabulary import Vocabulary, build_vocabulary, encode
from course_utils.words.word_eval import WordVectors

__all__ = ["SkipGramResult", "noise_table", "train_skipgram"]


@dataclass
class SkipGramResult:
    """What :func:`train_skipgram` returns."""

    vectors: WordVectors  # the center vectors v (rows of W), one per vocabulary word
    context_vectors: torch.Tensor  # the context vectors u (rows of W_out), (N, d)
    vocabulary: Vocabulary
    losses: list[float]  # the mean negative-sampling loss of each epoch
    seconds: float  # training time, vocabulary building excluded
    words_per_second: float  # corpus words (before subsampling) x epochs / seconds


def noise_table(counts, power: float = 0.75, size: int = 10**6) -> torch.Tensor:
    """About ``size`` word ids, word i repeated about P_n(i) x ``size`` times (at least once).

    Drawing uniformly from the table draws from P_n, with one random integer per sample
    (word2vec's unigram table). Shape (>= size,), int64.
    """
    noise = noise_distribution(counts, power).double()
    repeats = (noise * positive_int("size", size)).round().long().clamp(min=1)
    return torch.repeat_interleave(torch.arange(noise.numel(), device=noise.device), repeats)


def _offsets(r: int, device=None) -> torch.Tensor:
    """The skip distances -r, ..., -1, 1, ..., r of a window, shape (2r,)."""
    return torch.cat([torch.arange(-r, 0, device=device), torch.arange(1, r + 1, device=device)])


def _window_positions(
    positions: torch.Tensor, offsets: torch.Tensor, length: int, sentence_ids: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The positions p + j of the windows of ``positions`` (P,), shape (P, len(offsets)),
    clamped into the text, and which of them count: inside the text of ``length`` words
    and inside p's sentence."""
    context = positions[:, None] + offsets
    valid = (context >= 0) & (context < length)
    context = context.clamp(0, length - 1)
    return context, valid & (sentence_ids[context] == sentence_ids[positions, None])


@dataclass
class _Training:
    """What every SGD step of an epoch shares: the center and context matrices W and U
    (updated in place), the subsampled text ``ids`` with its ``sentence_ids``, the noise
    ``table``, the number of negatives K and the random generator."""

    W: torch.Tensor
    U: torch.Tensor
    ids: torch.Tensor
    sentence_ids: torch.Tensor
    table: torch.Tensor
    negative: int
    generator: torch.Generator


def _train_step(run: _Training, positions: torch.Tensor, offsets: torch.Tensor, lr: float):
    """One SGD step on the pairs (w_{p+j}, w_p), j in ``offsets``, of every position p.

    Grouped by the predicted word w_p: its pairs share p's K negatives, so the scores of
    the batch are one batched product of shape (B, len(offsets), 1 + K).
    Returns the summed loss and the number of pairs.
    """
    W, U, kept = run.W, run.U, run.ids
    context_positions, valid = _window_positions(
        positions, offsets, kept.numel(), run.sentence_ids
    )  # (B, 2r)
    inputs = kept[context_positions]  # (B, 2r)
    draws = torch.randint(
        run.table.numel(),
        (positions.numel(), run.negative),
        device=kept.device,
        generator=run.generator,
    )
    negatives = run.table.take(draws)  # (B, K) samples of P_n
    targets = torch.cat([kept[positions, None], negatives], dim=1)  # (B, 1 + K)
    d = W.shape[1]
    # index_select is much faster than W[inputs] for gathering rows on CPU
    v = W.index_select(0, inputs.reshape(-1)).view(*inputs.shape, d)  # (B, 2r, d)
    u = U.index_select(0, targets.reshape(-1)).view(*targets.shape, d)  # (B, 1 + K, d)
    with torch.enable_grad():
        v, u = v.requires_grad_(), u.requires_grad_()
        scores = torch.bmm(v, u.transpose(1, 2))  # (B, 2r, 1 + K)
        labels = torch.zeros_like(scores)
        labels[:, :, 0] = 1.0  # w_p occurred; the K noise words did not
        losses = F.binary_cross_entropy_with_logits(scores, labels, reduction="none").sum(-1)
        loss = (losses * valid).sum()
        grad_v, grad_u = torch.autograd.grad(loss, (v, u))  # of the gathered rows only
    W.index_add_(0, inputs.reshape(-1), grad_v.reshape(-1, d).mul_(-lr))
    U.index_add_(0, targets.reshape(-1), grad_u.reshape(-1, d).mul_(-lr))
    return loss.detach(), valid.sum()


def _train_batch(run: _Training, positions: torch.Tensor, window: int, lr: float):
    """Word2vec's reduced windows: position p uses r ~ uniform{1..c}; one step per r."""
    device = run.ids.device
    reduced = torch.randint(1, window + 1, positions.shape, device=device, generator=run.generator)
    loss, pairs = 0.0, 0
    for r in range(1, window + 1):
        step_loss, step_pairs = _train_step(run, positions[reduced == r], _offsets(r, device), lr)
        loss, pairs = loss + step_loss, pairs + step_pairs
    return loss, pairs


def train_skipgram(
    sentences,
    dim: int = 100,
    window: int = 5,
    negative: int = 5,
    epochs: int = 5,
    lr: float = 0.025,
    min_count: int = 5,
    sample: float = 1e-3,
    batch_size: int = 4096,
    device=None,
    seed: int = 0,
    progress: bool = True,
    threads: int | None = None,
) -> SkipGramResult:
    """Skip-gram with negative sampling (SGNS), the same settings as gensim's ``Word2Vec``.

    Per epoch: frequent words are subsampled (:func:`keep_probability`), the positions
    are shuffled and cut into batches of ``batch_size``; each batch trains all its pairs
    at once. As in word2vec each position draws its own window r in 1..c, which weights
    near words more. The learning rate decays linearly from
    ``lr`` to ``lr`` x 1e-4, as in word2vec. Plain SGD, updates by ``index_add_``.
    ``threads`` sets torch's CPU threads for this call only (on a small machine that other
    programs share, 1 is often fastest); None keeps torch's setting.
    """
    with cpu_threads(threads):
        dim, window, negative = (
            positive_int("dim", dim),
            positive_int("window", window),
            positive_int("negative", negative),
        )
        epochs, batch_size = positive_int("epochs", epochs), positive_int("batch_size", batch_size)
        if lr <= 0:
            raise ValueError(f"lr must be > 0; got {lr}")
        device = torch.device(device) if device is not None else get_device()
        vocabulary = build_vocabulary(sentences, min_count)
        ids, sentence_ids = (t.to(device) for t in encode(sentences, vocabulary))
        generator = torch.Generator(device=device).manual_seed(seed)
        n_words, n_raw = len(vocabulary), sum(len(s) for s in sentences)

        W = (torch.rand(n_words, dim, device=device, generator=generator) - 0.5) / dim
        U = torch.zeros(n_words, dim, device=device)
        table = noise_table(vocabulary.counts, size=max(10**6, 100 * n_words)).to(device)
        keep = keep_probability(vocabulary.counts, sample).to(device)

        expected_batches = math.ceil(float(keep[ids].sum()) / batch_size) * epochs
        bar = tqdm(total=expected_batches, desc="skip-gram", unit="batch", disable=not progress)
        losses, step, start = [], 0, time.perf_counter()
        for _ in range(epochs):
            kept_mask = torch.rand(ids.shape, device=device, generator=generator) < keep[ids]
            run = _Training(
                W, U, ids[kept_mask], sentence_ids[kept_mask], table, negative, generator
            )
            order = torch.randperm(run.ids.numel(), device=device, generator=generator)
            loss_sum, weight_sum = torch.zeros((), device=device), torch.zeros((), device=device)
            for positions in order.split(batch_size):
                rate = lr * max(1e-4, 1.0 - step / expected_batches)
                loss, weight = _train_batch(run, positions, window, rate)
                loss_sum += loss
                weight_sum += weight
                step += 1
                bar.update()
            losses.append(float(loss_sum / weight_sum))
            bar.set_postfix(loss=f"{losses[-1]:.3f}")
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        seconds = time.perf_counter() - start
        bar.close()
        return SkipGramResult(
            WordVectors(vocabulary.words, W),
            U,
            vocabulary,
            losses,
            seconds,
            n_raw * epochs / seconds,
        )

"""Skip-gram with negative sampling on the Wikipedia corpus: course_utils.words.skipgram beside
gensim's ``Word2Vec``, same sentences, same settings, timed back to back.

Speed is corpus words (before subsampling) x epochs / training seconds, vocabulary
building excluded on both sides; quality is
Spearman's rho on WordSim-353 (pairs with both words in the vocabulary). gensim uses its
2 worker threads; ours runs with 1 and with 2 torch threads (on a 2-core machine 2 were
fastest when it was idle, 1 when other programs shared it). ``SKIPGRAM_BENCH_EPOCHS``
changes the 20 epochs, ``SKIPGRAM_BENCH_THREADS`` the threads (default "1,2").
"""

import os
import time

import torch
from gensim.models import Word2Vec

from course_utils.data import wikipedia_sentences, word_pairs
from course_utils.device import get_device
from course_utils.words.skipgram_training import train_skipgram
from course_utils.words.word_eval import WordVectors, word_pair_spearman
from tests.benchmarks.timing import Row

SETTINGS = dict(dim=100, window=5, negative=5, min_count=5, sample=1e-3, lr=0.025)


def _gensim(sentences, epochs):
    """gensim's vectors and its training seconds: the vocabulary pass (counting, the
    sampling tables) runs before the clock starts, as ``train_skipgram`` excludes its own."""
    model = Word2Vec(
        vector_size=SETTINGS["dim"],
        window=SETTINGS["window"],
        min_count=SETTINGS["min_count"],
        sg=1,
        negative=SETTINGS["negative"],
        sample=SETTINGS["sample"],
        alpha=SETTINGS["lr"],
        workers=2,
        seed=0,
    )
    model.build_vocab(sentences)
    start = time.perf_counter()
    model.train(sentences, total_examples=model.corpus_count, epochs=epochs)
    return WordVectors.from_gensim(model.wv), time.perf_counter() - start


def run() -> list[Row]:
    epochs = int(os.environ.get("SKIPGRAM_BENCH_EPOCHS", "20"))
    sentences = [list(s) for s in wikipedia_sentences()]
    words = sum(map(len, sentences)) * epochs
    pairs = word_pairs("wordsim353")
    device = get_device()
    task = f"SGNS, Wikipedia {words // epochs // 1000}k words x {epochs} epochs"

    gensim_vectors, gensim_s = _gensim(sentences, epochs)
    gensim_rho, used = word_pair_spearman(gensim_vectors, pairs)
    rows = [
        Row(
            task,
            "gensim Word2Vec (2 workers)",
            words / gensim_s,
            "words/s",
            f"WordSim-353 rho {gensim_rho:.3f}",
        )
    ]
    chosen = os.environ.get("SKIPGRAM_BENCH_THREADS", "1,2")
    thread_counts = (
        [int(n) for n in chosen.split(",")] if device.type == "cpu" else [torch.get_num_threads()]
    )
    for threads in thread_counts:
        result = train_skipgram(
            sentences, epochs=epochs, device=device, progress=False, threads=threads, **SETTINGS
        )
        rho, _ = word_pair_spearman(result.vectors, pairs)
        speedup = result.words_per_second / (words / gensim_s)
        note = f"WordSim-353 rho {rho:.3f}; {speedup:.2f}x gensim's speed"
        rows.append(
            Row(
                task,
                f"course_utils.words.skipgram_training ({device}, {threads} thr)",
                result.words_per_second,
                "words/s",
                note,
            )
        )
    rows.append(Row(task, "WordSim-353 pairs used (both)", used, "pairs"))
    return rows

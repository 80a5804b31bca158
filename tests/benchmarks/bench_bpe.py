"""BPE: training 1000 merges (naive, incremental, Hugging Face tokenizers) and cl100k
encoding (the cached pure-Python encoder beside tiktoken). Each pair is timed back to back."""

import time

from course_utils.bpe import learn_bpe, learn_bpe_naive
from course_utils.byte_bpe import byte_corpus, cl100k, tiktoken_cl100k, train_byte_bpe
from course_utils.data import wikipedia_text
from tests.benchmarks.timing import Row, best_time
from tests.peers import train_hugging_face_bpe

TRAIN_BYTES = 900_000
MERGES = 1000
NAIVE_MERGES = 50
ENCODE_BYTES = 1_000_000


def training_rows(text: str) -> list[Row]:
    task = f"byte BPE, {MERGES} merges, {len(text.encode()) / 1e6:.2f} MB wiki"
    ours_s = best_time(lambda: train_byte_bpe(text, MERGES), repeat=3)
    hf_s = best_time(lambda: train_hugging_face_bpe(text, MERGES), repeat=3)
    corpus = byte_corpus(text)
    start = time.perf_counter()
    naive = learn_bpe_naive(corpus, NAIVE_MERGES)
    naive_s = (time.perf_counter() - start) * MERGES / NAIVE_MERGES
    same = naive.merges == learn_bpe(corpus, NAIVE_MERGES).merges
    return [
        Row(task, "course_utils incremental", ours_s, "s", f"{ours_s / hf_s:.1f}x tokenizers"),
        Row(task, "HF tokenizers (Rust)", hf_s, "s"),
        Row(
            task,
            "naive (recount every merge)",
            naive_s,
            "s",
            f"timed on {NAIVE_MERGES} merges x {MERGES // NAIVE_MERGES}; same merges: {same}",
        ),
    ]


def encoding_rows(text: str) -> list[Row]:
    ours, reference = cl100k(), tiktoken_cl100k()
    megabytes = len(text.encode()) / 1e6
    task = f"cl100k encode, {megabytes:.1f} MB wiki"
    ours._cache.clear()
    start = time.perf_counter()
    ours_ids = ours.encode_ordinary(text)
    cold_s = time.perf_counter() - start
    warm_s = best_time(lambda: ours.encode_ordinary(text), repeat=3)
    tiktoken_s = best_time(lambda: reference.encode_ordinary(text), repeat=3)
    same = ours_ids == reference.encode_ordinary(text)
    rate = megabytes / tiktoken_s
    return [
        Row(task, "course_utils (chunk cache warm)", megabytes / warm_s, "MB/s",
            f"{tiktoken_s / warm_s:.2f}x tiktoken's speed; same ids: {same}"),
        Row(task, "course_utils (first pass, cold)", megabytes / cold_s, "MB/s",
            f"{tiktoken_s / cold_s:.2f}x tiktoken's speed"),
        Row(task, "tiktoken (Rust)", rate, "MB/s"),
    ]  # fmt: skip


def run() -> list[Row]:
    text = wikipedia_text()
    return training_rows(text[:TRAIN_BYTES]) + encoding_rows(text[:ENCODE_BYTES])
